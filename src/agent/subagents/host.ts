/**
 * What delegation is made of: the host a parent hands its children, the options a child is built
 * with, the limits of `delegation.*`, roles, tool lists and the child's prompt. Pure; the running
 * lives in child-run.ts and background.ts, the entry in ../delegation.ts.
 */
import type { ResolvedRuntime } from "../../ai/resolve.js";
import type { Transport } from "../../ai/types.js";
import type { HermesConfig } from "../../config/defaults.js";
import type { SessionStore } from "../../state/types.js";
import type { ToolRegistry } from "../../tools/registry.js";
import { resolveToolsets } from "../../tools/toolsets.js";
import type { DelegationTask, ToolRuntime } from "../../tools/types.js";
import type { ApprovalPolicy } from "../approval-policy.js";
import type { AgentEvent } from "../events.js";
import type { HookBus, HookSessionInfo } from "../hooks.js";

/** Tools a child never gets: it cannot ask the user, write memory, message people or run scripts. */
export const CHILD_BLOCKED_TOOLS: readonly string[] = [
  "clarify",
  "memory",
  "send_message",
  "execute_code",
  "delegate_task",
];

/** What a child agent needs from its parent; the parent builds it per call. */
export interface DelegationHost {
  config: HermesConfig;
  home: string;
  cwd: string;
  taskId: string;
  /** The parent's session (children record `parent_session_id` = this). */
  sessionId: string;
  /** The parent's depth: 0 for a top-level agent. */
  depth: number;
  env: Record<string, string | undefined>;
  runtime: ToolRuntime;
  registry: ToolRegistry;
  /** The parent's provider, so children talk to the same model. */
  resolved: ResolvedRuntime | undefined;
  transport: Transport;
  model: string;
  sessionStore: SessionStore | undefined;
  /** The parent's tools this session. */
  enabledTools: readonly string[];
  emit(event: AgentEvent): void;
  /** The parent's turn: aborting it cancels every child. */
  signal: AbortSignal;
  /** The parent's approval policy; children use a view of it. */
  approvals: ApprovalPolicy;
  /** The parent's hook bus: `subagent_start`/`subagent_stop` fire there, and children use it too. */
  hooks?: HookBus;
  /** The parent's side of a hook payload. */
  hookInfo?(): HookSessionInfo;
  /** Builds the child agent (the parent passes its own class, avoiding an import cycle). */
  spawn(options: ChildAgentOptions): ChildAgent;
}

/** The options a child agent is built with (a subset of AIAgentOptions). */
export interface ChildAgentOptions {
  config: HermesConfig;
  home: string;
  cwd: string;
  taskId: string;
  sessionId: string;
  toolsets: string[];
  registry: ToolRegistry;
  runtime: ToolRuntime;
  env: Record<string, string | undefined>;
  maxTurns: number;
  /** A child view of the parent's approval policy. */
  approvals: ApprovalPolicy;
  systemPrompt: string;
  skipContextFiles: true;
  skipMemory: true;
  platform: string;
  delegationDepth: number;
  /** A leaf never delegates, whatever the depth allows. */
  delegationRole: "leaf" | "orchestrator";
  resolved?: ResolvedRuntime;
  transport?: Transport;
  model?: string;
  sessionStore?: SessionStore;
  hooks?: HookBus;
}

/** The part of AIAgent delegation drives. */
export interface ChildAgent {
  readonly sessionId: string;
  on(listener: (event: AgentEvent) => void): () => void;
  run(input: string): {
    result: Promise<{ text: string; reason: string; iterations: number; error?: string }>;
  };
  interrupt(): void;
  close(): Promise<void>;
}

export interface Limits {
  maxIterations: number;
  maxConcurrent: number;
  maxAsync: number;
  maxDepth: number;
  orchestratorEnabled: boolean;
  /** 0: no time limit. */
  childTimeoutMs: number;
  autoApprove: boolean;
  maxSummaryChars: number;
}

export function delegationLimits(config: HermesConfig): Limits {
  const d = (config.delegation ?? {}) as Record<string, unknown>;
  const num = (key: string, fallback: number, min = 1) => {
    const value = d[key];
    return typeof value === "number" && Number.isFinite(value) && value >= min ? Math.floor(value) : fallback;
  };
  const timeout = d["child_timeout_seconds"];
  return {
    maxIterations: num("max_iterations", 50),
    maxConcurrent: num("max_concurrent_children", 3),
    maxAsync: num("max_async_children", 3, 0),
    maxDepth: num("max_spawn_depth", 1, 0),
    orchestratorEnabled: d["orchestrator_enabled"] !== false,
    childTimeoutMs:
      typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0 ? timeout * 1000 : 0,
    autoApprove: d["subagent_auto_approve"] === true,
    maxSummaryChars: num("max_summary_chars", 24_000, 200),
  };
}

/** True when an agent at `depth` may start children at all. */
export function mayDelegate(config: HermesConfig, depth: number): boolean {
  return depth < delegationLimits(config).maxDepth;
}

/**
 * The role a child gets: `leaf` when asked, when `delegation.orchestrator_enabled` is off, or when
 * the depth limit leaves no room below it; otherwise an orchestrator (upstream's default when
 * `max_spawn_depth` leaves room).
 */
export function childRole(
  task: Pick<DelegationTask, "role">,
  limits: Pick<Limits, "maxDepth" | "orchestratorEnabled">,
  childDepth: number,
): "leaf" | "orchestrator" {
  if (task.role === "leaf" || !limits.orchestratorEnabled) return "leaf";
  return childDepth < limits.maxDepth ? "orchestrator" : "leaf";
}

/**
 * The tool names a child gets: the parent's tools (narrowed to `toolsets` when the task names
 * some), minus the blocked ones. A child keeps `delegate_task` when the depth limit
 * leaves it room (`delegation.max_spawn_depth` above the child's depth).
 */
export function childToolNames(
  parentTools: readonly string[],
  task: Pick<DelegationTask, "toolsets" | "role">,
  options: { canSpawn: boolean },
): string[] {
  let tools = [...parentTools];
  if (task.toolsets && task.toolsets.length > 0) {
    const wanted = new Set(resolveToolsets(task.toolsets).tools);
    tools = tools.filter((t) => wanted.has(t));
  }
  // Children are orchestrators when delegation.max_spawn_depth leaves room, unless asked to be leaves.
  const keepDelegate = task.role !== "leaf" && options.canSpawn;
  return tools.filter((t) => !CHILD_BLOCKED_TOOLS.includes(t) || (keepDelegate && t === "delegate_task"));
}

/** The child's system prompt: its situation and the shape of the report it owes. */
export function childSystemPrompt(cwd: string, role: "leaf" | "orchestrator" = "leaf"): string {
  return [
    "You are a subagent: another agent delegated one task to you. Work on it on your own with your",
    "tools; nobody can answer questions, so make reasonable assumptions and state them.",
    "Stay within the task. Do not undo or redo work outside it.",
    "You have your own terminal session: its working directory and background processes are yours",
    "alone and end with you. The files are shared with the delegating agent.",
    ...(role === "orchestrator"
      ? ["You may split your task further with delegate_task when parts are independent."]
      : []),
    "",
    "When you are done (or cannot go further), reply with a short report for the delegating agent:",
    "- what you did;",
    "- what you found (facts, numbers, paths, exact error messages);",
    "- files you created or changed;",
    "- problems left, or what remains to do.",
    "",
    `Workspace (working directory): ${cwd}`,
  ].join("\n");
}

export function taskMessage(task: DelegationTask): string {
  return task.context?.trim() ? `${task.goal.trim()}\n\nContext:\n${task.context.trim()}` : task.goal.trim();
}
