/**
 * One subagent from start to cleanup. The child gets its own terminal task id, so its own shell,
 * cwd and background processes; whatever way it ends (its answer, a failure, its iteration
 * budget, `delegation.child_timeout_seconds`, the parent's interrupt, `/agents stop`) its task is
 * released, which ends that shell and every process it started. It is listed in the runtime's
 * subagent registry while it runs and its session is recorded under the parent's.
 */
import { randomUUID } from "node:crypto";
import type { DelegationResult, DelegationTask } from "../../tools/types.js";
import { newSessionId } from "../../util/session-id.js";
import { sessionRecorder } from "../session-recorder.js";
import { runAcpChild } from "./acp-child.js";
import { type ChildModel, childModel } from "./child-model.js";
import {
  type ChildAgent,
  childRole,
  childSystemPrompt,
  childToolNames,
  type DelegationHost,
  type Limits,
  taskMessage,
} from "./host.js";
import { type SubagentKind, subagentRegistry } from "./registry.js";

/** How long a stopped child may take to wind down before its result is given up on. */
const STOP_GRACE_MS = 5_000;

export interface ChildSpec {
  kind: SubagentKind;
  /** The `delegate_task` call id (for the surfaces' live lines); "" outside a tool call. */
  callId: string;
  index: number;
  task: DelegationTask;
  /** Its registry id and session id when already handed out (a background start returns them first). */
  id?: string;
  sessionId?: string;
  /** Tool names instead of the delegation defaults (`/background` keeps the chat's tools). */
  tools?: string[];
  systemPrompt?: string;
}

type Outcome = { text: string; reason: string; iterations: number; error?: string };

/** Runs one child to its end and always cleans up after it; never rejects. */
export async function runChild(
  host: DelegationHost,
  spec: ChildSpec,
  limits: Limits,
): Promise<DelegationResult> {
  const registry = subagentRegistry(host.runtime);
  const id = spec.id ?? registry.nextId();
  const started = Date.now();
  const goal = spec.task.goal.trim();
  const base = { index: spec.index, id, goal };
  const failed = (sessionId: string, error: string): DelegationResult => ({
    ...base,
    status: "failed",
    summary: "",
    sessionId,
    iterations: 0,
    durationMs: Date.now() - started,
    error,
  });
  if (host.signal.aborted) {
    const sessionId = spec.sessionId ?? newSessionId();
    return { ...base, status: "interrupted", summary: "", sessionId, iterations: 0, durationMs: 0 };
  }
  if (spec.task.acp) {
    // An external ACP agent: its own program, driven over the SDK (acp-child.ts).
    return runAcpChild(host, spec, limits, base, spec.sessionId ?? newSessionId());
  }
  const depth = host.depth + 1;
  const role = childRole(spec.task, limits, depth);
  let model: ChildModel;
  try {
    model = childModel({
      config: host.config,
      env: host.env,
      parent: host.resolved,
      parentModel: host.model,
      home: host.home,
    });
  } catch (error) {
    return failed(
      spec.sessionId ?? newSessionId(),
      `The subagent's model (delegation.*) cannot be used: ${message(error)}`,
    );
  }
  const taskId = `subagent-${randomUUID()}`;
  const child = host.spawn({
    config: model.config,
    home: host.home,
    cwd: host.cwd,
    taskId,
    sessionId: spec.sessionId ?? newSessionId(),
    toolsets:
      spec.tools ?? childToolNames(host.enabledTools, spec.task, { canSpawn: role === "orchestrator" }),
    registry: host.registry,
    runtime: host.runtime,
    env: host.env,
    maxTurns: limits.maxIterations,
    approvals: host.approvals.child({ autoApprove: limits.autoApprove, unattended: spec.kind !== "child" }),
    systemPrompt: spec.systemPrompt ?? childSystemPrompt(host.cwd, role),
    skipContextFiles: true,
    skipMemory: true,
    platform: "subagent",
    delegationDepth: depth,
    delegationRole: role,
    ...(model.resolved ? { resolved: model.resolved } : { transport: host.transport, model: model.model }),
    ...(host.sessionStore ? { sessionStore: host.sessionStore } : {}),
    ...(host.hooks ? { hooks: host.hooks } : {}),
  });
  const hookBase = host.hookInfo && { ...host.hookInfo(), child_session_id: child.sessionId, goal };
  if (hookBase) await host.hooks?.notify("subagent_start", hookBase);

  let stopped: "interrupted" | "timeout" | undefined;
  let wakeStopped: () => void = () => undefined;
  const stoppedLong = new Promise<void>((resolve) => {
    wakeStopped = () => setTimeout(resolve, STOP_GRACE_MS).unref();
  });
  const stop = (why: "interrupted" | "timeout") => {
    if (stopped) return;
    stopped = why;
    child.interrupt();
    wakeStopped();
  };
  registry.add(
    {
      id,
      kind: spec.kind,
      goal,
      parentSessionId: host.sessionId,
      sessionId: child.sessionId,
      taskId,
      depth,
      startedAt: started,
    },
    () => stop("interrupted"),
  );
  const detach = watch(host, spec, child, id, limits, registry);
  const onAbort = () => stop("interrupted");
  host.signal.addEventListener("abort", onAbort, { once: true });
  const timer =
    limits.childTimeoutMs > 0 ? setTimeout(() => stop("timeout"), limits.childTimeoutMs) : undefined;
  timer?.unref();
  host.emit({
    type: "subagent",
    callId: spec.callId,
    index: spec.index,
    goal,
    state: "start",
    detail: "starting",
  });

  let result: DelegationResult;
  try {
    const run = child.run(taskMessage(spec.task)).result;
    const outcome = await Promise.race([run, stoppedLong.then((): Outcome | undefined => undefined)]);
    result = outcome
      ? fromOutcome(base, child.sessionId, outcome, stopped, limits, started)
      : {
          ...failed(
            child.sessionId,
            "The subagent did not stop in time after it was told to; its work was abandoned.",
          ),
          status: stopped ?? "interrupted",
        };
  } catch (error) {
    result = failed(child.sessionId, message(error));
  } finally {
    if (timer) clearTimeout(timer);
    host.signal.removeEventListener("abort", onAbort);
    for (const off of detach) off();
    await child.close().catch(() => undefined);
    // Its shell, cwd and background processes end with it.
    await host.runtime.releaseTask(taskId).catch(() => undefined);
  }
  registry.finish(id, result.status, result.iterations, Date.now());
  if (hookBase)
    await host.hooks?.notify("subagent_stop", {
      ...hookBase,
      status: result.status,
      summary: result.summary,
      duration_ms: result.durationMs,
    });
  host.emit({
    type: "subagent",
    callId: spec.callId,
    index: spec.index,
    goal,
    state: "end",
    detail: result.status,
    durationMs: result.durationMs,
    iterations: result.iterations,
  });
  return result;
}

/** Records the child's session under the parent's and follows its progress; returns the detachers. */
function watch(
  host: DelegationHost,
  spec: ChildSpec,
  child: ChildAgent,
  id: string,
  limits: Limits,
  registry: ReturnType<typeof subagentRegistry>,
): Array<() => void> {
  const detach: Array<() => void> = [];
  const goal = spec.task.goal.trim();
  if (host.sessionStore) {
    detach.push(
      child.on(
        sessionRecorder({
          store: host.sessionStore,
          source: "subagent",
          cwd: host.cwd,
          parentSessionId: host.sessionId,
          onError: (text) => host.emit({ type: "warning", message: `Subagent ${id}: ${text}` }),
        }),
      ),
    );
  }
  detach.push(
    child.on((event) => {
      let detail: string | undefined;
      if (event.type === "tool_start" && !event.parentCallId) detail = event.name;
      else if (event.type === "turn_start") {
        detail = "thinking";
        registry.progress(id, `thinking (${event.iteration}/${limits.maxIterations})`, event.iteration);
      }
      if (detail === undefined) return;
      if (event.type === "tool_start") registry.progress(id, detail);
      host.emit({
        type: "subagent",
        callId: spec.callId,
        index: spec.index,
        goal,
        state: "progress",
        detail,
      });
    }),
  );
  return detach;
}

function fromOutcome(
  base: { index: number; id: string; goal: string },
  sessionId: string,
  outcome: Outcome,
  stopped: "interrupted" | "timeout" | undefined,
  limits: Limits,
  started: number,
): DelegationResult {
  const status: DelegationResult["status"] =
    stopped === "timeout"
      ? "timeout"
      : outcome.reason === "completed" || outcome.reason === "guardrail"
        ? "completed"
        : outcome.reason === "max_turns"
          ? "max_iterations"
          : outcome.reason === "interrupted"
            ? "interrupted"
            : "failed";
  const error =
    status === "timeout"
      ? `Stopped after ${Math.round(limits.childTimeoutMs / 1000)} s (delegation.child_timeout_seconds); its commands and background processes were ended.`
      : outcome.error;
  return {
    ...base,
    status,
    summary: capSummary(outcome.text, limits.maxSummaryChars),
    sessionId,
    iterations: outcome.iterations,
    durationMs: Date.now() - started,
    ...(error ? { error } : {}),
  };
}

function capSummary(text: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  return `${trimmed.slice(0, max)}\n[summary truncated: ${trimmed.length - max} more characters]`;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
