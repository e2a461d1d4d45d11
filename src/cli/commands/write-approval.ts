/**
 * `hermes memory pending|approve|reject` and `hermes skills pending|approve|reject|diff`: the
 * agent's staged writes (`memory.write_approval`, `skills.write_approval`) from the command line.
 * The logic, apart from argument parsing, so either command's parser can call it. Results go to
 * stdout (`--json` for scripts); exit 0 when everything asked for was done, 1 when something was
 * not (unknown id, refused, stale, failed to apply).
 */
import type { HermesConfig } from "../../config/defaults.js";
import { writeApprovalEnabled } from "../../knowledge/write-approval/gate.js";
import type { Subsystem } from "../../knowledge/write-approval/pending.js";
import { listWrites } from "../../knowledge/write-approval/pending-shared.js";
import {
  type ApplyContext,
  approvePending,
  type DecisionOutcome,
  pendingDiff,
  rejectPending,
} from "../../tools/write-approval/apply.js";
import type { CliIo } from "../io.js";

/** What the pending subcommands need: the home, its config and where to write. */
export interface PendingCliContext {
  home: string;
  config: HermesConfig;
  io: CliIo;
}

function applyContext(ctx: PendingCliContext): ApplyContext {
  return { home: ctx.home, config: ctx.config as unknown as Record<string, unknown>, env: ctx.io.env };
}

/** `pending [--json]`: the staged writes, oldest first. */
export async function pendingListCli(
  ctx: PendingCliContext,
  subsystem: Subsystem,
  flags: { json?: boolean },
): Promise<number> {
  const records = await listWrites(ctx.home, subsystem);
  const on = writeApprovalEnabled(ctx.config as unknown as Record<string, unknown>, subsystem);
  if (flags.json) {
    const items = records.map((r) =>
      r.ok
        ? {
            id: r.record.id,
            action: r.record.action,
            summary: r.record.summary,
            origin: r.record.origin,
            created_at: r.record.created_at,
          }
        : { id: r.id, error: r.error },
    );
    ctx.io.out(JSON.stringify({ write_approval: on, pending: items }, null, 2));
    return 0;
  }
  if (records.length === 0) {
    ctx.io.out(`No pending ${subsystem} writes. (${subsystem}.write_approval is ${on ? "on" : "off"})`);
    return 0;
  }
  for (const r of records) {
    if (!r.ok) {
      ctx.io.out(`${r.id}  (unreadable: ${r.error})`);
      continue;
    }
    const when = new Date(r.record.created_at * 1000).toISOString().slice(0, 16).replace("T", " ");
    const auto = r.record.origin === "background_review" ? " [auto]" : "";
    ctx.io.out(`${r.record.id}${auto}  ${when}  ${r.record.summary}`);
  }
  const diff = subsystem === "skills" ? `, review with: hermes skills diff <id>` : "";
  ctx.io.err(
    `Apply with: hermes ${subsystem} approve <id>; reject with: hermes ${subsystem} reject <id>${diff}`,
  );
  return 0;
}

function report(
  ctx: PendingCliContext,
  outcomes: readonly DecisionOutcome[],
  json: boolean | undefined,
): number {
  if (json) ctx.io.out(JSON.stringify(outcomes, null, 2));
  else for (const o of outcomes) (o.ok ? ctx.io.out : ctx.io.err)(`${o.id}: ${o.message}`);
  return outcomes.length > 0 && outcomes.every((o) => o.ok) ? 0 : 1;
}

/** `approve <id|all> [--force] [--json]`. */
export async function approveCli(
  ctx: PendingCliContext,
  subsystem: Subsystem,
  id: string,
  flags: { force?: boolean; json?: boolean },
): Promise<number> {
  const outcomes = await approvePending(applyContext(ctx), subsystem, id, { force: flags.force === true });
  if (outcomes.length === 0) {
    ctx.io.err(`No pending ${subsystem} writes.`);
    return 0;
  }
  return report(
    ctx,
    outcomes.map((o) =>
      o.stale ? { ...o, message: o.message.replace(/\/skills (diff|approve) /g, "hermes skills $1 ") } : o,
    ),
    flags.json,
  );
}

/** `reject <id|all> [--json]`. */
export async function rejectCli(
  ctx: PendingCliContext,
  subsystem: Subsystem,
  id: string,
  flags: { json?: boolean },
): Promise<number> {
  const outcomes = await rejectPending(applyContext(ctx), subsystem, id);
  if (outcomes.length === 0) {
    ctx.io.err(`No pending ${subsystem} writes.`);
    return 0;
  }
  return report(ctx, outcomes, flags.json);
}

/** `diff <id>`: the full new SKILL.md of a create, or a unified diff against the current file. */
export async function diffCli(ctx: PendingCliContext, subsystem: Subsystem, id: string): Promise<number> {
  const diff = await pendingDiff(applyContext(ctx), subsystem, id);
  if ("error" in diff) {
    ctx.io.err(diff.error);
    return 1;
  }
  ctx.io.err(`# ${diff.record.id}: ${diff.record.summary}`);
  if (diff.stale) ctx.io.err(`# changed since staged: ${diff.stale}; approving needs --force`);
  ctx.io.out(diff.text);
  return 0;
}
