/**
 * Reviewing the agent's staged memory and skill writes (`memory.write_approval`,
 * `skills.write_approval`): `/memory [pending | approve ID|all [--force] | reject ID|all |
 * approval on|off]` and the same verbs under `/skills` (plus `diff ID`). Deciding is the user's:
 * in a chat only an admin may approve, reject or switch the gate.
 */
import { setConfigValue } from "../config/write.js";
import { writeApprovalEnabled } from "../knowledge/write-approval/gate.js";
import type { Subsystem } from "../knowledge/write-approval/pending.js";
import { listWrites } from "../knowledge/write-approval/pending-shared.js";
import {
  approvePending,
  type DecisionOutcome,
  pendingDiff,
  rejectPending,
} from "../tools/write-approval/apply.js";
import type { CommandContext, CommandDef, Paint } from "./types.js";

/** The verbs this module answers under /memory and /skills. */
const VERBS = new Set(["pending", "approve", "apply", "reject", "deny", "drop", "diff", "approval", "mode"]);

/** Whether `/skills <args>` is a write-approval verb (otherwise it is the skills list filter). */
export function isWriteApprovalVerb(args: string): boolean {
  return VERBS.has((args.trim().split(/\s+/)[0] ?? "").toLowerCase());
}

/** The pending list as lines: id, [auto] for the background review's, and the summary. */
export async function pendingLines(
  home: string,
  subsystem: Subsystem,
  paint: Pick<Paint, "bold" | "dim">,
): Promise<string[]> {
  const records = await listWrites(home, subsystem);
  if (records.length === 0) return [paint.dim(`No pending ${subsystem} writes.`)];
  const lines = [paint.bold(`Pending ${subsystem} writes (${records.length}):`)];
  for (const read of records) {
    if (!read.ok) {
      lines.push(`  ${read.id}  ${paint.dim(`(unreadable: ${read.error})`)}`);
      continue;
    }
    const auto = read.record.origin === "background_review" ? " [auto]" : "";
    lines.push(`  ${read.record.id}${auto}  ${read.record.summary}`);
  }
  const diff = subsystem === "skills" ? `   Review: /skills diff <id>` : "";
  lines.push(paint.dim(`Apply: /${subsystem} approve <id>   Reject: /${subsystem} reject <id>${diff}`));
  return lines;
}

function outcomeLines(outcomes: readonly DecisionOutcome[], paint: Paint): string[] {
  return outcomes.map((o) =>
    o.ok ? `${paint.green("✓")} ${o.id}: ${o.message}` : `${paint.yellow("✗")} ${o.id}: ${o.message}`,
  );
}

function mayDecide(ctx: CommandContext, subsystem: Subsystem): boolean {
  if (ctx.surface.isAdmin) return true;
  ctx.reply(ctx.paint.yellow(`Only an admin of this chat may decide on pending ${subsystem} writes.`));
  return false;
}

/** `approval on|off`: writes `<subsystem>.write_approval` to config.yaml and applies it to this session now. */
function setApproval(subsystem: Subsystem, value: string | undefined, ctx: CommandContext): void {
  const config = ctx.session.agent.config as unknown as Record<string, Record<string, unknown>>;
  const state = `${subsystem}.write_approval is ${writeApprovalEnabled(config, subsystem) ? "on" : "off"}`;
  if (!value) {
    ctx.reply(state, ctx.paint.dim(`Set with /${subsystem} approval on|off.`));
    return;
  }
  const on = /^(on|true|yes|1|enable|enabled)$/i.test(value);
  if (!on && !/^(off|false|no|0|disable|disabled)$/i.test(value)) {
    ctx.reply(ctx.paint.yellow(`"${value}" is not on or off. Use /${subsystem} approval on|off.`));
    return;
  }
  if (!mayDecide(ctx, subsystem)) return;
  setConfigValue(ctx.session.agent.home, `${subsystem}.write_approval`, on ? "true" : "false");
  // The session's tools read this same config object, so the gate changes from the next tool call.
  const section = config[subsystem];
  if (section) section.write_approval = on;
  ctx.reply(
    `${subsystem}.write_approval is now ${on ? "on" : "off"} (saved to config.yaml)` +
      (on ? `: the agent's ${subsystem} writes wait for /${subsystem} approve.` : "."),
  );
}

/** Runs a write-approval verb of `/memory` or `/skills`. */
export async function runWriteApproval(
  subsystem: Subsystem,
  args: string,
  ctx: CommandContext,
): Promise<void> {
  const words = args.trim().split(/\s+/).filter(Boolean);
  const verb = (words[0] ?? "").toLowerCase();
  const force = words.some((w) => w === "--force" || w === "force");
  const target = words.slice(1).find((w) => w !== "--force" && w !== "force");
  const { home, config } = ctx.session.agent;
  const apply = { home, config: config as unknown as Record<string, unknown> };
  const p = ctx.paint;
  switch (verb) {
    case "":
    case "pending": {
      const state = writeApprovalEnabled(apply.config, subsystem) ? "on" : "off";
      ctx.reply(
        ...(await pendingLines(home, subsystem, p)),
        p.dim(`${subsystem}.write_approval is ${state}.`),
      );
      return;
    }
    case "approve":
    case "apply":
      if (!target) return ctx.reply(p.yellow(`Usage: /${subsystem} approve <id>|all [--force]`));
      if (!mayDecide(ctx, subsystem)) return;
      ctx.reply(...outcomeLines(await approvePending(apply, subsystem, target, { force }), p));
      return;
    case "reject":
    case "deny":
    case "drop":
      if (!target) return ctx.reply(p.yellow(`Usage: /${subsystem} reject <id>|all`));
      if (!mayDecide(ctx, subsystem)) return;
      ctx.reply(...outcomeLines(await rejectPending(apply, subsystem, target), p));
      return;
    case "diff": {
      if (!target) return ctx.reply(p.yellow(`Usage: /${subsystem} diff <id>`));
      const diff = await pendingDiff(apply, subsystem, target);
      if ("error" in diff) return ctx.reply(p.yellow(diff.error));
      const head = p.bold(`Pending ${subsystem} write ${diff.record.id}: ${diff.record.summary}`);
      const stale = diff.stale
        ? [p.yellow(`Changed since staged: ${diff.stale}. Approving needs --force.`)]
        : [];
      const body = ctx.surface.kind === "chat" ? ["```", diff.text, "```"] : [diff.text];
      ctx.reply(head, ...stale, ...body);
      return;
    }
    case "approval":
    case "mode":
      setApproval(subsystem, target, ctx);
      return;
    default:
      ctx.reply(
        p.yellow(`Unknown /${subsystem} command "${verb}".`),
        p.dim(
          `Use /${subsystem} pending | approve <id> | reject <id>${subsystem === "skills" ? " | diff <id>" : ""} | approval on|off`,
        ),
      );
  }
}

const memoryCommand: CommandDef = {
  name: "memory",
  args: "[pending | approve ID | reject ID | approval on|off]",
  description: "review the agent's memory writes waiting for approval (memory.write_approval)",
  category: "Info",
  availableWhileRunning: true,
  completeArgs: (prefix) =>
    ["pending", "approve ", "reject ", "approval "].filter((v) => v.startsWith(prefix.toLowerCase())),
  run: (args, ctx) => runWriteApproval("memory", args, ctx),
};

export const WRITE_APPROVAL_COMMANDS: readonly CommandDef[] = [memoryCommand];
