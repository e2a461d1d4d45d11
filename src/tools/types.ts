/**
 * Contracts of the tool system. A tool is data plus a handler; the registry owns validation,
 * serialisation, error capture and truncation so each tool stays small.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import type { SkillWriteSink } from "../knowledge/skills/types.js";
import type { SessionStore } from "../state/types.js";

/** A dangerous command (or other risky action) waiting for the user's decision. */
export interface ApprovalRequest {
  /** The exact command or action text shown to the user. */
  command: string;
  /** Why it needs approval, e.g. "recursive delete". */
  reason: string;
  /** Pattern key, used to remember "approve for this session". */
  patternKey: string;
  /** The action touches a protected path; only an explicit answer from the user approves it. */
  protectedPath?: boolean;
}

export type ApprovalDecision = "once" | "session" | "always" | "deny";

export interface ClarifyRequest {
  question: string;
  choices?: string[];
}

/**
 * Process-wide resources shared by every agent in one process (persistent shells, background
 * processes). Created lazily by key, disposed when the surface shuts down.
 */
export interface ToolRuntime {
  get<T>(key: string, create: () => T): T;
  onDispose(fn: () => void | Promise<void>): void;
  /**
   * Registers cleanup for one task id (its shell, its background processes): run by
   * `releaseTask(taskId)` when a subagent finishes, and by `dispose` for tasks never released.
   */
  onTaskRelease(taskId: string, fn: () => void | Promise<void>): void;
  /** Runs and forgets the task's cleanups (best effort), and drops its `get` entries keyed `...:${taskId}`. */
  releaseTask(taskId: string): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * Something the agent should hear about between or during turns: a background process ended or
 * printed a watched line, a background subagent finished. Delivered to the model at the start of
 * its next turn; an idle REPL or chat may start that turn itself.
 */
export interface AgentNotice {
  /** What produced it. */
  source: "process" | "delegation" | "cron" | "system";
  /** The producer's id (process session_id, child id), so repeats can be collapsed. */
  id: string;
  /** The text the model reads. */
  text: string;
  /** Wake an idle surface to run a turn for it now (notify_on_complete, watch_patterns, background children). */
  wake?: boolean;
  /**
   * Withdraws this producer's notice if it still waits (`text` is ignored): the model already read
   * the news through a tool (`process wait` returned the exit), so a turn for it would be wasted.
   */
  retract?: boolean;
}

/** What a tool handler may use. The agent fills it in; tools never import the agent. */
export interface ToolContext {
  /**
   * Terminal task id: the persistent shell, cwd and background processes in the active
   * environment belong to it. Each subagent has its own.
   */
  taskId: string;
  /** The id of the model's tool call being run (absent outside the agent loop). */
  callId?: string;
  sessionId: string;
  /** Working directory that relative paths resolve against. */
  cwd: string;
  /** HERMES_HOME of this run. */
  home: string;
  /** The effective configuration (typed as `HermesConfig` by callers that need it). */
  config: Readonly<Record<string, unknown>>;
  /** Environment for subprocesses, already stripped of Hermes's own secrets. */
  env: Readonly<Record<string, string | undefined>>;
  /**
   * The agent's whole environment, API keys included, for tools that call a service in-process
   * (web search backends, image and speech APIs). Never hand it to a subprocess. Read it through
   * `keyEnv(ctx)` (src/tools/key-env.ts); absent in contexts built without an agent.
   */
  secrets?: Readonly<Record<string, string | undefined>> | undefined;
  /** Aborted when the user interrupts the turn; long-running tools must stop promptly. */
  signal: AbortSignal;
  /**
   * Ask for approval of a dangerous action under the session's approval policy (approvals.mode,
   * --yolo, cron_mode, the surface). Resolves with how it was approved. A denial made by the
   * agent's policy rejects with `ApprovalDeniedError` (src/tools/approval/denial.ts), whose message
   * tells the model who refused and why; let it propagate so the model reads it. Contexts built
   * without an agent may resolve "deny" instead: treat that as a refusal too.
   */
  requestApproval(request: ApprovalRequest): Promise<ApprovalDecision>;
  /** Ask the user a question; undefined when no surface can answer (the tool must say so). */
  ask?: (request: ClarifyRequest) => Promise<string>;
  /**
   * Tells the registry that what this call ran failed although the tool worked (a command that
   * exited non-zero or was killed by its timeout). The outcome gets `failed: true`, which the
   * tool-loop guardrails count. Absent in contexts built without the registry.
   */
  reportFailure?: (reason: string) => void;
  /**
   * Queues a notice for the agent (see `AgentNotice`); absent where nothing can deliver one. May
   * be called after the tool call returned (a background process that ends later).
   */
  notify?: (notice: AgentNotice) => void;
  /** Short progress note shown while the tool runs (not sent to the model). */
  progress(message: string): void;
  /**
   * Raw output of a running command, as it arrives, for the surface to show live (not sent to the
   * model; redacted before anyone sees it). Absent where nothing shows it.
   */
  output?: (chunk: string) => void;
  /** Per-session state shared by tools of one session (the todo list, read-file tracking...). */
  session: Map<string, unknown>;
  runtime: ToolRuntime;
  /** The home's session store; absent when sessions are not recorded. */
  sessionStore?: SessionStore;
  /** The tools offered to the model this session, after toolset resolution and checks. */
  enabledTools?: readonly string[];
  /**
   * Who the agent is acting for, recorded on writes staged for approval (`memory.write_approval`,
   * `skills.write_approval`): the user's turn (default), or the post-turn background review.
   */
  writeOrigin?: "foreground" | "background_review" | "curator";
  /** Where skill changes are also kept when skills live in PostgreSQL (`SkillWriteSink`); absent for a file home. */
  skillSink?: SkillWriteSink;
  /**
   * Runs another tool of this session the way a model's call runs: the same registry validation,
   * approvals, task id, terminal and output limits. Surfaces see it as a nested call of the
   * current one; it is never added to the model's context. `signal` (besides the turn's) stops
   * the nested call, e.g. when the script that made it has ended. Absent where nested calls are
   * not allowed (used by `execute_code`).
   */
  callTool?: (
    name: string,
    args: Record<string, unknown>,
    options?: { signal?: AbortSignal },
  ) => Promise<ToolOutcome>;
  /**
   * Runs child agents (`delegate_task`). Absent when this agent may not delegate (a leaf child,
   * or the depth limit is reached).
   */
  delegate?: (request: DelegationRequest) => Promise<DelegationResult[]>;
}

/** One child task for `delegate_task`. */
export interface DelegationTask {
  goal: string;
  context?: string;
  /** Toolsets the child may use, intersected with the parent's; default: the parent's. */
  toolsets?: string[];
  /** "orchestrator" children may delegate further (within `delegation.max_spawn_depth`). */
  role?: "leaf" | "orchestrator";
  /**
   * Run the task in an external Agent Client Protocol agent (`acp_command`/`acp_args`) instead of
   * a Hermes child: the program is started with these arguments and driven over stdio.
   */
  acp?: { command: string; args: string[] };
}

export interface DelegationRequest {
  tasks: DelegationTask[];
  /** The `delegate_task` call id, so surfaces can show a live line per child. */
  callId: string;
  /**
   * Start the children and return at once (status `started`); each child's report reaches the
   * agent later through `notify` (`delegation.max_async_children` caps how many run).
   */
  background?: boolean;
  /** Where background children's reports go: the calling tool's `ctx.notify`. */
  notify?: (notice: AgentNotice) => void;
}

export interface DelegationResult {
  index: number;
  /** The subagent's id (`/agents`, the id of its notice when it ran in the background). */
  id: string;
  goal: string;
  /** `timeout`: stopped by `delegation.child_timeout_seconds`; `started`: running in the background. */
  status: "completed" | "failed" | "interrupted" | "max_iterations" | "timeout" | "started";
  /** The child's final summary (what it did, found, changed, problems), capped. */
  summary: string;
  sessionId: string;
  iterations: number;
  durationMs: number;
  error?: string;
}

/** Context for availability checks, which run without a session. */
export interface CheckContext {
  env: Readonly<Record<string, string | undefined>>;
  config: Readonly<Record<string, unknown>>;
  /** The active home (its OAuth logins may make a model available); absent outside a home. */
  home?: string | undefined;
}

export interface ToolDefinition<P extends TSchema = TSchema> {
  name: string;
  toolset: string;
  /** What the model reads. Long descriptions live in a sibling `.md` file imported as text. */
  description: string;
  /** JSON Schema (TypeBox). Arguments are validated before the handler runs. */
  parameters: P;
  /**
   * Does the work. Returns a string (passed to the model as-is) or a JSON-serialisable value.
   * Throwing is fine: the registry turns the error into `{"error": message}` for the model, so
   * write messages the model can act on.
   */
  handler(args: Static<P>, ctx: ToolContext): unknown | Promise<unknown>;
  /** Availability check (cached 30 s). A tool whose check fails is not offered to the model. */
  check?(ctx: CheckContext): boolean | Promise<boolean>;
  /** Environment variables that must be set for the tool to be offered. */
  requiresEnv?: string[];
  /** Read-only: may run in parallel with other parallel-safe calls. */
  parallelSafe?: boolean;
  /**
   * The call changes nothing outside the session (a read, a search, the session's own todo list):
   * a crash while it runs loses only a read that is redone, so its call is stored together with
   * its result, in one commit, instead of before it runs. Leave unset for anything that writes,
   * runs commands, sends, spends or acts: such calls are on disk before they run.
   */
  sideEffectFree?: boolean;
  /** `sideEffectFree` decided per call (memory's `read`), when it is not set. Must not throw. */
  sideEffectFreeCall?(args: Static<P>): boolean;
  /**
   * For tools that touch files: the absolute paths this call reads or writes. Calls whose paths
   * do not overlap may run in parallel.
   */
  pathScoped?(args: Static<P>, cwd: string): string[];
  /** Needs the user (clarify): the whole batch of calls runs sequentially. */
  interactive?: boolean;
  /**
   * The description for a session's configuration (limits that depend on config.yaml), used
   * instead of `description` when the session's schemas are built.
   */
  describe?(ctx: CheckContext): string;
  /** Per-tool cap on result characters, instead of the global tool_output limits. */
  maxResultChars?: number;
  emoji?: string;
}

/** Identity helper that keeps the handler's argument type tied to its schema. */
export function defineTool<P extends TSchema>(def: ToolDefinition<P>): ToolDefinition<P> {
  return def;
}

/** What executing one tool call produced, as the model will see it. */
export interface ToolOutcome {
  /** The serialised result (or error JSON) sent to the model. */
  content: string;
  ok: boolean;
  /** Error message when `ok` is false. */
  error?: string;
  /**
   * The tool worked but what it ran failed (a command's non-zero exit code, a timeout): `ok`
   * stays true, since the result is the useful answer, yet the tool-loop guardrails count it
   * as a failure. Set by the registry when the handler called `ctx.reportFailure`.
   */
  failed?: boolean;
  /** Set when the registry cut the result to fit the limits. */
  truncated?: boolean;
}
