/**
 * Work that outlives the turn that started it: `delegate_task` with `background: true` (each
 * child's report reaches the parent as a `delegation` notice, which wakes an idle surface) and the
 * user's `/background PROMPT` (the answer goes back to the user). Both count against
 * `delegation.max_async_children`, and both run like any subagent: own task id, budget, timeout
 * and cleanup (child-run.ts). They stop with `/agents stop <id>` or when the process ends.
 */
import type { AgentNotice, DelegationRequest, DelegationResult, DelegationTask } from "../../tools/types.js";
import { newSessionId } from "../../util/session-id.js";
import { runChild } from "./child-run.js";
import { childRole, type DelegationHost, type Limits } from "./host.js";
import { subagentRegistry } from "./registry.js";

/** Thrown when starting more background work than `delegation.max_async_children` allows. */
export class BackgroundLimitError extends Error {
  constructor(running: number, wanted: number, max: number) {
    super(
      max === 0
        ? "Background subagents are off (delegation.max_async_children is 0). Run the task in the foreground."
        : `${running} background subagent${running === 1 ? "" : "s"} already running and delegation.max_async_children is ${max}, so ${wanted} more cannot start. Wait for a running one's report, stop one (/agents stop <id>), or run this in the foreground.`,
    );
    this.name = "BackgroundLimitError";
  }
}

/** Background children outlive the turn: a signal nobody aborts, and no live lines in the turn. */
function detached(host: DelegationHost): DelegationHost {
  return { ...host, signal: new AbortController().signal, emit: () => undefined };
}

function checkCapacity(host: DelegationHost, wanted: number, limits: Limits): void {
  const running = subagentRegistry(host.runtime).runningBackground();
  if (running + wanted > limits.maxAsync) throw new BackgroundLimitError(running, wanted, limits.maxAsync);
}

/** Starts `request.tasks` in the background; returns one `started` result per task at once. */
export function startBackgroundChildren(
  host: DelegationHost,
  request: DelegationRequest,
  limits: Limits,
): DelegationResult[] {
  const notify = request.notify;
  if (!notify) {
    throw new Error(
      "Background delegation is not available here: nothing can deliver the report later. Delegate without background.",
    );
  }
  checkCapacity(host, request.tasks.length, limits);
  const registry = subagentRegistry(host.runtime);
  const bg = detached(host);
  return request.tasks.map((task, index) => {
    const id = registry.nextId();
    const sessionId = newSessionId();
    void runChild(bg, { kind: "async", callId: request.callId, index, task, id, sessionId }, limits).then(
      (result) => deliver(() => notify(childNotice(result))),
    );
    return {
      index,
      id,
      goal: task.goal.trim(),
      status: "started",
      summary: `Running in the background as ${id}; its report will arrive as a message when it ends.`,
      sessionId,
      iterations: 0,
      durationMs: 0,
    };
  });
}

/** Hands a finished child's result on; a failing receiver must not become an unhandled rejection. */
function deliver(fn: () => void): void {
  try {
    fn();
  } catch {
    // The receiver (a surface gone meanwhile) cannot take it; the session store still has it.
  }
}

/** The notice the parent reads when a background child ends. */
export function childNotice(result: DelegationResult): AgentNotice {
  const seconds = Math.round(result.durationMs / 100) / 10;
  const lines = [
    `[Background subagent ${result.id} ended: ${result.status} after ${seconds} s, ${result.iterations} model call${result.iterations === 1 ? "" : "s"}]`,
    `Goal: ${result.goal}`,
    ...(result.error ? [`Error: ${result.error}`] : []),
    "Report:",
    result.summary || "(no report)",
  ];
  return { source: "delegation", id: result.id, text: lines.join("\n"), wake: true };
}

/** The `/background` agent's prompt: the user's request, worked on while the chat goes on. */
export function backgroundSystemPrompt(cwd: string): string {
  return [
    "You are working in the background on a request the user made while their conversation goes",
    "on elsewhere. Nobody can answer questions: make reasonable assumptions and state them.",
    "You have your own terminal session (working directory and background processes); the files",
    "are the user's. When you are done, reply with the answer or result the user asked for, and",
    "the files you created or changed.",
    "",
    `Workspace (working directory): ${cwd}`,
  ].join("\n");
}

/** Tools the `/background` agent keeps: the chat's, without asking the user (nobody watches). */
export function backgroundTools(enabled: readonly string[], mayDelegate: boolean): string[] {
  return enabled.filter((t) => t !== "clarify" && (mayDelegate || t !== "delegate_task"));
}

export interface BackgroundStart {
  id: string;
  sessionId: string;
}

/**
 * `/background PROMPT`: a separate agent works on `prompt` with the chat's tools (not clarify);
 * `onDone` gets its result when it ends. Throws `BackgroundLimitError` when the limit is reached.
 */
export function startBackgroundAgent(
  host: DelegationHost,
  prompt: string,
  limits: Limits,
  onDone: (result: DelegationResult) => void,
): BackgroundStart {
  checkCapacity(host, 1, limits);
  const registry = subagentRegistry(host.runtime);
  const id = registry.nextId();
  const sessionId = newSessionId();
  const task: DelegationTask = { goal: prompt.trim() };
  const canSpawn = childRole(task, limits, host.depth + 1) === "orchestrator";
  void runChild(
    detached(host),
    {
      kind: "background",
      callId: "",
      index: 0,
      task,
      id,
      sessionId,
      tools: backgroundTools(host.enabledTools, canSpawn),
      systemPrompt: backgroundSystemPrompt(host.cwd),
    },
    limits,
  ).then((result) => deliver(() => onDone(result)));
  return { id, sessionId };
}
