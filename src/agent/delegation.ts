/**
 * Subagents for `delegate_task`: each task runs in a child `AIAgent` with a fresh conversation, a
 * focused system prompt, the parent's terminal task (same shell, same files), a restricted tool
 * list and its own iteration budget. Children cannot ask questions (`clarify`), but their dangerous
 * commands go through the parent's approval policy (the same prompt, --yolo, approvals.mode and
 * session approvals); `delegation.subagent_auto_approve` approves them where --yolo would, never
 * protected paths. The parent sees one summary per child; surfaces see `subagent` events to draw a live line per child.
 */
import type { ResolvedRuntime } from "../ai/resolve.js";
import type { Transport } from "../ai/types.js";
import type { HermesConfig } from "../config/defaults.js";
import type { SessionStore } from "../state/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import { resolveToolsets } from "../tools/toolsets.js";
import type { DelegationRequest, DelegationResult, DelegationTask, ToolRuntime } from "../tools/types.js";
import { newSessionId } from "../util/session-id.js";
import type { ApprovalPolicy } from "./approval-policy.js";
import type { AgentEvent } from "./events.js";
import { sessionRecorder } from "./session-recorder.js";

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
  resolved?: ResolvedRuntime;
  transport?: Transport;
  model?: string;
  sessionStore?: SessionStore;
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

interface Limits {
  maxIterations: number;
  maxConcurrent: number;
  maxDepth: number;
  autoApprove: boolean;
  maxSummaryChars: number;
}

function delegationLimits(config: HermesConfig): Limits {
  const d = config.delegation as Record<string, unknown>;
  const num = (key: string, fallback: number, min = 1) => {
    const value = d[key];
    return typeof value === "number" && Number.isFinite(value) && value >= min ? Math.floor(value) : fallback;
  };
  return {
    maxIterations: num("max_iterations", 50),
    maxConcurrent: num("max_concurrent_children", 3),
    maxDepth: num("max_spawn_depth", 1, 0),
    autoApprove: d["subagent_auto_approve"] === true,
    maxSummaryChars: num("max_summary_chars", 24_000, 200),
  };
}

/** True when an agent at `depth` may start children at all. */
export function mayDelegate(config: HermesConfig, depth: number): boolean {
  return depth < delegationLimits(config).maxDepth;
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
export function childSystemPrompt(cwd: string): string {
  return [
    "You are a subagent: another agent delegated one task to you. Work on it on your own with your",
    "tools; nobody can answer questions, so make reasonable assumptions and state them.",
    "Stay within the task. Do not undo or redo work outside it.",
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

function taskMessage(task: DelegationTask): string {
  return task.context?.trim() ? `${task.goal.trim()}\n\nContext:\n${task.context.trim()}` : task.goal.trim();
}

/** Runs the request's tasks in child agents, at most `max_concurrent_children` at once. */
export async function runDelegation(
  host: DelegationHost,
  request: DelegationRequest,
): Promise<DelegationResult[]> {
  const limits = delegationLimits(host.config);
  const results: DelegationResult[] = new Array(request.tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < request.tasks.length) {
      const index = next++;
      const task = request.tasks[index] as DelegationTask;
      results[index] = await runChild(host, request.callId, index, task, limits);
    }
  };
  const workers = Array.from({ length: Math.min(limits.maxConcurrent, request.tasks.length) }, worker);
  await Promise.all(workers);
  return results;
}

async function runChild(
  host: DelegationHost,
  callId: string,
  index: number,
  task: DelegationTask,
  limits: Limits,
): Promise<DelegationResult> {
  const started = Date.now();
  const goal = task.goal.trim();
  const sessionId = newSessionId();
  if (host.signal.aborted) {
    return { index, goal, status: "interrupted", summary: "", sessionId, iterations: 0, durationMs: 0 };
  }
  const depth = host.depth + 1;
  const tools = childToolNames(host.enabledTools, task, { canSpawn: depth < limits.maxDepth });
  const child = host.spawn({
    config: host.config,
    home: host.home,
    cwd: host.cwd,
    taskId: host.taskId,
    sessionId,
    toolsets: tools,
    registry: host.registry,
    runtime: host.runtime,
    env: host.env,
    maxTurns: limits.maxIterations,
    approvals: host.approvals.child({ autoApprove: limits.autoApprove }),
    systemPrompt: childSystemPrompt(host.cwd),
    skipContextFiles: true,
    skipMemory: true,
    platform: "subagent",
    delegationDepth: depth,
    ...(host.resolved ? { resolved: host.resolved } : { transport: host.transport, model: host.model }),
    ...(host.sessionStore ? { sessionStore: host.sessionStore } : {}),
  });
  const detach: Array<() => void> = [];
  if (host.sessionStore) {
    detach.push(
      child.on(
        sessionRecorder({
          store: host.sessionStore,
          source: "subagent",
          cwd: host.cwd,
          parentSessionId: host.sessionId,
          onError: (message) => host.emit({ type: "warning", message: `Subagent ${index + 1}: ${message}` }),
        }),
      ),
    );
  }
  detach.push(
    child.on((event) => {
      if (event.type === "tool_start" && !event.parentCallId)
        host.emit({ type: "subagent", callId, index, goal, state: "progress", detail: event.name });
      else if (event.type === "turn_start")
        host.emit({ type: "subagent", callId, index, goal, state: "progress", detail: "thinking" });
    }),
  );
  const onAbort = () => child.interrupt();
  host.signal.addEventListener("abort", onAbort, { once: true });
  host.emit({ type: "subagent", callId, index, goal, state: "start", detail: "starting" });
  let result: DelegationResult;
  try {
    const outcome = await child.run(taskMessage(task)).result;
    const status: DelegationResult["status"] =
      outcome.reason === "completed" || outcome.reason === "guardrail"
        ? "completed"
        : outcome.reason === "max_turns"
          ? "max_iterations"
          : outcome.reason === "interrupted"
            ? "interrupted"
            : "failed";
    result = {
      index,
      goal,
      status,
      summary: capSummary(outcome.text, limits.maxSummaryChars),
      sessionId: child.sessionId,
      iterations: outcome.iterations,
      durationMs: Date.now() - started,
      ...(outcome.error ? { error: outcome.error } : {}),
    };
  } catch (error) {
    result = {
      index,
      goal,
      status: "failed",
      summary: "",
      sessionId: child.sessionId,
      iterations: 0,
      durationMs: Date.now() - started,
      error: error instanceof Error ? error.message : String(error),
    };
  } finally {
    host.signal.removeEventListener("abort", onAbort);
    for (const off of detach) off();
    await child.close().catch(() => undefined);
  }
  host.emit({
    type: "subagent",
    callId,
    index,
    goal,
    state: "end",
    detail: result.status,
    durationMs: result.durationMs,
    iterations: result.iterations,
  });
  return result;
}

function capSummary(text: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  return `${trimmed.slice(0, max)}\n[summary truncated: ${trimmed.length - max} more characters]`;
}
