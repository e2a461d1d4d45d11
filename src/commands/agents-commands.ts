/**
 * `/agents` (running subagents and background work, with their progress; `/agents stop <id|all>`)
 * and `/background PROMPT` (a separate agent works on the prompt while the chat goes on; its
 * answer arrives as a message: printed in the REPL, sent to the chat). Both read the process's
 * subagent registry (agent/subagents/registry.ts) through the session's tool runtime.
 */
import { type SubagentInfo, subagentRegistry } from "../agent/subagents/registry.js";
import type { DelegationResult } from "../tools/types.js";
import type { CommandContext, CommandDef, Paint } from "./types.js";

const KIND_LABEL: Record<SubagentInfo["kind"], string> = {
  child: "subagent",
  async: "background subagent",
  background: "/background",
};

function seconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

function goalText(goal: string, max = 60): string {
  const line = goal.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** What kind of agent an entry is: an external ACP agent says which program it is. */
function kindLabel(e: SubagentInfo): string {
  return e.acp ? `ACP agent ${goalText(e.acp, 40)}` : KIND_LABEL[e.kind];
}

/** The `/agents` listing: running ones (with what they do now), then the ones that ended lately. */
export function formatAgents(entries: readonly SubagentInfo[], nowMs: number, paint: Paint): string[] {
  const running = entries.filter((e) => e.status === "running");
  const ended = entries.filter((e) => e.status !== "running").slice(0, 5);
  if (entries.length === 0) return ["No subagents or background work in this session."];
  const lines: string[] = [];
  lines.push(paint.bold(running.length > 0 ? `Running (${running.length}):` : "Nothing running."));
  for (const e of running) {
    const indent = "  ".repeat(Math.max(0, e.depth - 1));
    lines.push(
      `  ${indent}${paint.cyan(e.id)}  ${kindLabel(e)} · ${seconds(nowMs - e.startedAt)} · ${e.detail}  ${paint.dim(goalText(e.goal))}`,
    );
  }
  if (ended.length > 0) {
    lines.push(paint.bold("Ended:"));
    for (const e of ended) {
      const took = seconds((e.endedAt ?? nowMs) - e.startedAt);
      const status = e.status === "completed" ? paint.green(e.status) : paint.yellow(e.status);
      lines.push(
        `  ${paint.cyan(e.id)}  ${kindLabel(e)} · ${status} after ${took}  ${paint.dim(goalText(e.goal))}`,
      );
    }
  }
  if (running.length > 0) lines.push(paint.dim("Stop one with /agents stop <id> (or /agents stop all)."));
  return lines;
}

const agentsCommand: CommandDef = {
  name: "agents",
  aliases: ["tasks"],
  args: "[stop <id>|all]",
  description: "running subagents and background work; /agents stop <id> stops one",
  category: "Info",
  availableWhileRunning: true,
  completeArgs: (prefix, ctx) => {
    const ids = subagentRegistry(ctx.session.toolRuntime)
      .list()
      .filter((e) => e.status === "running")
      .map((e) => `stop ${e.id}`);
    return [...ids, "stop all"].filter((c) => c.startsWith(prefix));
  },
  run(args, ctx) {
    const registry = subagentRegistry(ctx.session.toolRuntime);
    const [verb, target] = args.trim().split(/\s+/);
    if (!verb) {
      ctx.reply(...formatAgents(registry.list(), ctx.now() * 1000, ctx.paint));
      return;
    }
    if (verb.toLowerCase() !== "stop") throw new Error("Usage: /agents, or /agents stop <id|all>.");
    if (!target)
      throw new Error("Which one? /agents stop <id> (ids are listed by /agents), or /agents stop all.");
    if (target.toLowerCase() === "all") {
      const running = registry.list().filter((e) => e.status === "running");
      for (const e of running) registry.stop(e.id);
      ctx.reply(
        running.length > 0 ? `Stopping ${running.map((e) => e.id).join(", ")}.` : "Nothing is running.",
      );
      return;
    }
    if (registry.stop(target)) {
      ctx.reply(`Stopping ${target}: its commands and background processes end with it.`);
      return;
    }
    const known = registry.get(target);
    const running = registry
      .list()
      .filter((e) => e.status === "running")
      .map((e) => e.id);
    const others = running.length > 0 ? ` Running: ${running.join(", ")}.` : " Nothing is running.";
    ctx.reply(
      known ? `${target} already ended (${known.status}).${others}` : `No subagent ${target}.${others}`,
    );
  },
};

/** The message a finished `/background` run posts. */
export function formatBackgroundResult(result: DelegationResult, paint: Paint): string[] {
  const took = seconds(result.durationMs);
  const head =
    result.status === "completed"
      ? paint.green(`✓ Background task ${result.id} finished (${took}):`)
      : paint.yellow(`Background task ${result.id} ended: ${result.status} after ${took}.`);
  return [
    head,
    ...(result.error ? [paint.dim(result.error)] : []),
    ...(result.summary ? [result.summary] : []),
    paint.dim(`(session ${result.sessionId}; prompt: ${goalText(result.goal, 50)})`),
  ];
}

const backgroundCommand: CommandDef = {
  name: "background",
  aliases: ["bg", "btw"],
  args: "<prompt>",
  description: "run a prompt in a separate agent while the chat goes on; its answer arrives when done",
  category: "Turn",
  availableWhileRunning: true,
  async run(args, ctx: CommandContext) {
    const prompt = args.trim();
    if (!prompt) throw new Error("Usage: /background <prompt>: a separate agent works on it while we go on.");
    const start = ctx.session.agent.background;
    if (!start) throw new Error("Background tasks are not available here.");
    const paint = ctx.paint;
    const { id } = await start.call(ctx.session.agent, prompt, (result) =>
      ctx.reply(...formatBackgroundResult(result, paint)),
    );
    ctx.reply(
      `⏳ Background task ${id} started; its answer will arrive here when done (/agents to follow it).`,
    );
  },
};

export const AGENTS_COMMANDS: readonly CommandDef[] = [agentsCommand, backgroundCommand];
