/**
 * Subagents for `delegate_task`: each task runs in a child `AIAgent` with a fresh conversation, a
 * focused system prompt, a restricted tool list, its own iteration budget and timeout, and its
 * own terminal task id, so its own shell, cwd and background processes in the active environment
 * (released when it ends, however it ends). A child's `cd` moves neither its parent nor its
 * siblings, and children of one batch run truly in parallel (`max_concurrent_children` at once).
 * Children cannot ask questions (`clarify`), but their dangerous commands go through the parent's
 * approval policy (the same prompt, --yolo, approvals.mode and session approvals);
 * `delegation.subagent_auto_approve` approves them where --yolo would, never protected paths.
 * `background: true` returns ids at once; each report reaches the parent as a notice. The parent
 * sees one summary per child; surfaces see `subagent` events to draw a live line per child, and
 * `/agents` lists them (subagents/registry.ts).
 */
import type { DelegationRequest, DelegationResult, DelegationTask } from "../tools/types.js";
import { startBackgroundChildren } from "./subagents/background.js";
import { runChild } from "./subagents/child-run.js";
import { type DelegationHost, delegationLimits } from "./subagents/host.js";

export {
  CHILD_BLOCKED_TOOLS,
  type ChildAgent,
  type ChildAgentOptions,
  childRole,
  childSystemPrompt,
  childToolNames,
  type DelegationHost,
  delegationLimits,
  mayDelegate,
} from "./subagents/host.js";

/**
 * Runs the request's tasks in child agents, at most `max_concurrent_children` at once, and
 * returns their results; with `background`, starts them and returns their ids at once.
 */
export async function runDelegation(
  host: DelegationHost,
  request: DelegationRequest,
): Promise<DelegationResult[]> {
  const limits = delegationLimits(host.config);
  if (request.background) return startBackgroundChildren(host, request, limits);
  const results: DelegationResult[] = new Array(request.tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < request.tasks.length) {
      const index = next++;
      const task = request.tasks[index] as DelegationTask;
      results[index] = await runChild(host, { kind: "child", callId: request.callId, index, task }, limits);
    }
  };
  const workers = Array.from({ length: Math.min(limits.maxConcurrent, request.tasks.length) }, worker);
  await Promise.all(workers);
  return results;
}
