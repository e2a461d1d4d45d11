/**
 * `delegate_task`: hands self-contained work to child agents that start with a fresh
 * conversation, so the parent's context receives only their summaries. The agent does the
 * spawning (`ctx.delegate`); this tool validates the request and shapes the result.
 */
import { Type } from "@sinclair/typebox";
import type { CheckContext, DelegationTask } from "./types.js";
import { defineTool } from "./types.js";

/** Tasks one call may carry; larger batches wait for free slots (max_concurrent_children). */
export const MAX_BATCH_TASKS = 10;

interface DelegationLimits {
  maxIterations: number;
  maxConcurrent: number;
  maxAsync: number;
}

function limits(config: Readonly<Record<string, unknown>>): DelegationLimits {
  const section = (config["delegation"] ?? {}) as Record<string, unknown>;
  const num = (key: string, fallback: number, min = 1) => {
    const value = section[key];
    return typeof value === "number" && value >= min ? Math.floor(value) : fallback;
  };
  return {
    maxIterations: num("max_iterations", 50),
    maxConcurrent: num("max_concurrent_children", 3),
    maxAsync: num("max_async_children", 3, 0),
  };
}

/** The description with this configuration's limits in it. */
export function delegateDescription(ctx: Pick<CheckContext, "config">): string {
  const { maxIterations, maxConcurrent, maxAsync } = limits(ctx.config);
  return (
    "Hand self-contained work to subagents (fresh context: pass `context`; own terminal); " +
    "you get summaries. One task: " +
    `\`goal\`; several: \`tasks\` (max ${MAX_BATCH_TASKS}, ${maxConcurrent} at a time), ${maxIterations} ` +
    "model calls each. Leaves never delegate." +
    (maxAsync > 0 ? " `background: true`: reports come later as messages." : "")
  );
}

const Role = Type.Union([Type.Literal("leaf"), Type.Literal("orchestrator")]);

// One external ACP agent for the whole call (every task), so the schema stays small.
const AcpCommand = Type.String({ description: "An external ACP agent to run it in instead." });
const AcpArgs = Type.Array(Type.String());

const TaskSchema = Type.Object({
  goal: Type.String(),
  context: Type.Optional(Type.String()),
  toolsets: Type.Optional(Type.Array(Type.String())),
  role: Type.Optional(Role),
});

/** The external ACP agent of a call, from `acp_command`/`acp_args`. */
function acpOf(call: {
  acp_command?: string | undefined;
  acp_args?: string[] | undefined;
}): DelegationTask["acp"] | undefined {
  const command = call.acp_command?.trim();
  if (!command) return undefined;
  return { command, args: [...(call.acp_args ?? [])] };
}

export const delegateTaskTool = defineTool({
  name: "delegate_task",
  toolset: "delegation",
  description: delegateDescription({ config: {} }),
  describe: delegateDescription,
  parameters: Type.Object({
    goal: Type.Optional(Type.String({ description: "The task, specific and checkable." })),
    context: Type.Optional(Type.String({ description: "Facts, paths and constraints it needs." })),
    toolsets: Type.Optional(Type.Array(Type.String(), { description: "Limit it to these toolsets." })),
    tasks: Type.Optional(Type.Array(TaskSchema, { minItems: 1, maxItems: MAX_BATCH_TASKS })),
    background: Type.Optional(Type.Boolean()),
    acp_command: Type.Optional(AcpCommand),
    acp_args: Type.Optional(AcpArgs),
  }),
  emoji: "🔀",
  async handler(args, ctx) {
    const single = acpOf(args);
    const tasks: DelegationTask[] = args.tasks
      ? args.tasks.map((t) => (single ? { ...t, acp: single } : t))
      : args.goal?.trim()
        ? [
            {
              goal: args.goal,
              ...(args.context ? { context: args.context } : {}),
              ...(args.toolsets ? { toolsets: args.toolsets } : {}),
              ...(single ? { acp: single } : {}),
            },
          ]
        : [];
    if (tasks.length === 0) {
      return { error: "Give a `goal` (one task) or `tasks` (a list of {goal, context}) to delegate." };
    }
    if (tasks.some((t) => !t.goal.trim())) return { error: "Every task needs a non-empty `goal`." };
    if (!ctx.delegate) {
      return {
        error:
          "Delegation is not available here (subagents cannot spawn further subagents at this depth). Do the work yourself.",
      };
    }
    const started = Date.now();
    if (args.background) {
      if (!ctx.notify) {
        return {
          error:
            "Background delegation is not available here (nothing can deliver the report later). Delegate without background.",
        };
      }
      const results = await ctx.delegate({
        tasks,
        callId: ctx.callId ?? "",
        background: true,
        notify: ctx.notify,
      });
      return {
        started: results.map((r) => ({ task_index: r.index, id: r.id, goal: r.goal, status: r.status })),
        note: "Each child's report will arrive as a message when it ends. Carry on meanwhile; do not wait or poll.",
      };
    }
    const results = await ctx.delegate({ tasks, callId: ctx.callId ?? "" });
    return {
      results: results.map((r) => ({
        task_index: r.index,
        id: r.id,
        goal: r.goal,
        status: r.status,
        summary: r.summary,
        iterations: r.iterations,
        duration_seconds: Math.round(r.durationMs / 100) / 10,
        ...(r.error ? { error: r.error } : {}),
      })),
      total_duration_seconds: Math.round((Date.now() - started) / 100) / 10,
    };
  },
});
