/**
 * The `hermes-agent` library: run conversations programmatically and reuse the pure helpers.
 *
 *   import { AIAgent } from "hermes-agent";
 *   const agent = new AIAgent({ provider: "openrouter", model: "anthropic/claude-sonnet-4" });
 *   console.log(await agent.chat("List the files here"));
 */
export { type AgentRun, AIAgent, type AIAgentOptions, type RunResult } from "../agent/agent.js";
export { ChatSession, type ChatSessionOptions, type UsageReport } from "../agent/chat-session.js";
export type { AgentEvent, AgentEventListener, StopReason } from "../agent/events.js";
export { type GuardrailSettings, type GuardrailVerdict, ToolLoopGuard } from "../agent/guardrails.js";
export { HookBus, processHooks } from "../agent/hooks.js";
export { loadProjectContext } from "../agent/prompt/context-files.js";
export { listPersonalities, resolvePersonality } from "../agent/prompt/personalities.js";
export { buildSessionPrompt, type SessionPrompt } from "../agent/prompt/session-prompt.js";
export { pathsOverlap, planWaves } from "../agent/tool-executor.js";
export { repairToolName } from "../agent/tool-name-repair.js";
export { saveTrajectory, toShareGpt } from "../agent/trajectory.js";
export { detectApiMode } from "../ai/api-mode.js";
export {
  type ClassifiedError,
  type ClassifyContext,
  classifyApiError,
  type FailoverReason,
} from "../ai/error-classifier.js";
export { findProvider } from "../ai/providers.js";
export { createTransport, NoProviderError, resolveRuntime } from "../ai/resolve.js";
export { extractTextToolCalls } from "../ai/text-tool-calls.js";
export {
  type ApiMode,
  type ChatRequest,
  type Message,
  messageText,
  ProviderError,
  type StreamEvent,
  type ToolCall,
  type ToolSchema,
  type Transport,
  type Usage,
} from "../ai/types.js";
export { type BatchRunOptions, type BatchSummary, runBatch } from "../batch/runner.js";
export { defaultConfig, type HermesConfig } from "../config/defaults.js";
export { ConfigError } from "../config/errors.js";
export { resolveHome } from "../config/home.js";
export { loadConfig } from "../config/load.js";
export { MemoryStore } from "../knowledge/memory/store.js";
export type { MemoryOperation, MemoryResult, MemoryTarget } from "../knowledge/memory/types.js";
export { discoverSkills, findSkill } from "../knowledge/skills/discovery.js";
export { renderSkillsIndex } from "../knowledge/skills/prompt-index.js";
export type { SkillMeta } from "../knowledge/skills/types.js";
export { scanThreats, type ThreatFinding, type ThreatScope } from "../knowledge/threats.js";
export { loadPlugins } from "../plugins/loader.js";
export { openSessionStore, sessionStorePath } from "../state/sqlite-store.js";
export {
  type ExportedSession,
  type Insights,
  type InsightsOptions,
  type ModelUsage,
  type NewSession,
  type OpenOptions,
  type RepairReport,
  type SearchHit,
  type SearchOptions,
  type SessionFilter,
  type SessionRecord,
  type SessionSource,
  type SessionStats,
  type SessionStore,
  SessionStoreError,
  type SessionStoreErrorCode,
  type SessionSummary,
  type StoredMessage,
  type UsageDelta,
} from "../state/types.js";
export { detectDangerousCommand, isCommandAllowlisted } from "../tools/approval/index.js";
export { createBuiltinRegistry } from "../tools/builtin.js";
export { type AnyTool, ToolRegistry } from "../tools/registry.js";
export { createToolRuntime } from "../tools/runtime.js";
export { resolveToolsets, TOOLSETS, type ToolsetSpec } from "../tools/toolsets.js";
export {
  type ApprovalDecision,
  type ApprovalRequest,
  defineTool,
  type ToolContext,
  type ToolDefinition,
} from "../tools/types.js";
export { type RepairResult, repairToolArguments } from "../util/json-repair.js";
export { truncateOutput } from "../util/truncate.js";
