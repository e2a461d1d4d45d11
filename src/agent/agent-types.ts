/**
 * The public types of `AIAgent`: its options, a turn's result, and compression reports.
 */
import type { ResolvedRuntime } from "../ai/resolve.js";
import type { RetryPolicy } from "../ai/retry.js";
import type { Message, Transport, Usage } from "../ai/types.js";
import type { HermesConfig } from "../config/defaults.js";
import type { SessionStore } from "../state/types.js";
import type { ApprovalDeniedError } from "../tools/approval/denial.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { ApprovalRequest, ClarifyRequest, ToolRuntime } from "../tools/types.js";
import type { Redactor } from "../util/redact.js";
import type { ApprovalPolicy, ApprovalPrompt } from "./approval-policy.js";
import type { AgentEvent, StopReason } from "./events.js";
import type { HookBus } from "./hooks.js";
import type { TurnMemory } from "./memory-provider-hook.js";
import type { NoticeQueue } from "./notices.js";

export interface AIAgentOptions {
  /** Model id; with `provider`/`baseUrl`/`apiKey` resolved like the CLI flags (flags > config > env). */
  model?: string;
  provider?: string;
  baseUrl?: string;
  apiKey?: string;
  /** An already resolved provider (the CLI resolves it first to report configuration errors). */
  resolved?: ResolvedRuntime;
  /**
   * Per-request timeout of the resolved provider's transport (an auxiliary task's `timeout`, for
   * the background review). Absent: the transport's own default.
   */
  requestTimeoutMs?: number;
  /** A ready transport, bypassing provider resolution (tests, custom backends). */
  transport?: Transport;
  /** Effective configuration; defaults to the built-in defaults. */
  config?: HermesConfig;
  home?: string;
  cwd?: string;
  /** Toolset names; default `config.toolsets`. Pass `[]` for no tools. */
  toolsets?: string[];
  registry?: ToolRegistry;
  maxTurns?: number;
  /** Approve dangerous commands without asking (hardline commands stay refused). */
  yolo?: boolean;
  platform?: string;
  sessionId?: string;
  /** Terminal task id; defaults to the session id. Subagents pass their parent's. */
  taskId?: string;
  /**
   * Whose writes this agent makes, recorded on memory and skill writes staged for approval:
   * "background_review" for the post-turn review agent; default "foreground".
   */
  writeOrigin?: "foreground" | "background_review" | "curator";
  /** Replaces the built system prompt entirely. */
  systemPrompt?: string;
  /** Sent with every request but never stored or saved in trajectories. */
  ephemeralSystemPrompt?: string;
  env?: Record<string, string | undefined>;
  /**
   * Names the terminal must not inherit from `env` (unless `terminal.env_passthrough` names them):
   * what Hermes loaded itself, i.e. `loadEnvFile(...).loaded`. Default: the names `<home>/.env`
   * adds to the real process environment.
   */
  withheldEnv?: readonly string[];
  /** Redacts tool results; default the process-wide redactor (util/redact.ts). */
  redactor?: Redactor;
  /**
   * Asks the user about a dangerous command (and withdraws the question when its `signal` aborts:
   * `approvals.timeout` passed). Absent: nobody can be asked, so whatever needs the user is denied.
   */
  onApproval?: ApprovalPrompt;
  /** Persists the user's "always" answer to `command_allowlist` (never called for anything else). */
  persistAlwaysApproval?: (patternKey: string) => Promise<void> | void;
  /** Told about every approval denial (the CLI prints one line on stderr in non-interactive runs). */
  onApprovalDenied?: (request: ApprovalRequest, denial: ApprovalDeniedError) => void;
  /**
   * The approval policy to use instead of building one from `approvals.*`, `yolo`, `onApproval`:
   * subagents get a child view of their parent's (same prompt, yolo, session approvals).
   */
  approvals?: ApprovalPolicy;
  /** Answers `clarify` questions. Absent: the tool tells the model nobody can answer. */
  onClarify?: (request: ClarifyRequest) => Promise<string>;
  /** Write ShareGPT trajectories to the working directory (`agent.save_trajectories`). */
  saveTrajectories?: boolean;
  /** Shared process-wide tool resources; the agent creates (and disposes) its own when absent. */
  runtime?: ToolRuntime;
  retry?: Partial<RetryPolicy>;
  /** Earlier messages of this session (resume). */
  messages?: Message[];
  /** The home's session store, for tools that read past sessions (`session_search`). */
  sessionStore?: SessionStore;
  /** Personality overlay for this session, overriding `display.personality` ("none" for none). */
  personality?: string;
  /** Hermes's `skip_context_files` / `--ignore-rules`: no SOUL.md and no project context file. */
  skipContextFiles?: boolean;
  /** Hermes's `skip_memory`: no memory snapshot in the prompt (cron runs, `--ignore-rules`). */
  skipMemory?: boolean;
  /**
   * Settles when tools discovered at start-up (MCP servers) are registered. The tool list is
   * frozen after it settles, so it must settle on its own (servers time out); a rejection is
   * ignored here (the discovery reports its own failures).
   */
  toolsReady?: Promise<unknown>;
  /**
   * First entries of the per-session state tools share (`ToolContext.session`). The gateway puts
   * the chat a conversation serves under `cron.origin`, so jobs created there deliver back to it.
   */
  toolState?: Readonly<Record<string, unknown>>;
  /** How deep in a delegation tree this agent is: 0 at the top, 1 for a subagent... */
  delegationDepth?: number;
  /** A `leaf` subagent never delegates; an `orchestrator` may, within `delegation.max_spawn_depth`. */
  delegationRole?: "leaf" | "orchestrator";
  /**
   * The external memory provider (`memory.provider`, agent/memory-provider-hook.ts): recall added
   * to each user message, the finished turn synced. Absent: built-in memory only.
   */
  memory?: TurnMemory;
  /**
   * Where tools' notices wait for the next turn (agent/notices.ts). `ChatSession` shares one across
   * the agents of a conversation; absent: the agent keeps its own.
   */
  notices?: NoticeQueue;
  /** Where plugins' and shell hooks' handlers are (hooks.ts); default the process's bus. */
  hooks?: HookBus;
}

export interface RunResult {
  text: string;
  reason: StopReason;
  iterations: number;
  usage: Usage;
  error?: string;
}

/** A running turn: iterate it for events, or await `result`. */
export interface AgentRun extends AsyncIterable<AgentEvent> {
  result: Promise<RunResult>;
}

/** Outcome of a compression pass, as `compress()` reports it. */
export interface CompressionReport {
  status: "compressed" | "skipped_thrashing" | "failed" | "nothing_to_compress";
  tokensBefore: number;
  tokensAfter: number;
  /** Why nothing changed, for the user (a failed summary keeps every turn). */
  error?: string;
}
