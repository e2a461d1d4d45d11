/**
 * Deciding staged writes: approve (replay the payload through the same code as a direct write:
 * the memory store's locks, limits and injection scan; manage.ts's validation and ownership
 * rules), reject, and the diff to review first. Surfaces (slash commands, `hermes memory|skills
 * pending|approve|reject|diff`) call these; nothing here is reachable from a model's tool call,
 * so the model cannot approve its own writes.
 */

import type { MemoryOperation, MemoryTarget } from "../../knowledge/memory/types.js";
import type { SkillWriteOrigin } from "../../knowledge/skills/usage.js";
import type { PendingRecord, ReadRecord, Subsystem } from "../../knowledge/write-approval/pending.js";
import { claimWrite, listWrites, readWrite } from "../../knowledge/write-approval/pending-shared.js";
import { skillPendingDiff, skillStaleReason } from "../../knowledge/write-approval/skill-diff.js";
import { memoryStoreFor, runMemoryWrite } from "../memory.js";
import { skillsConfigOf } from "../skills/shared.js";
import { runSkillManage, type SkillManageArgs, skillManageContext } from "../skills/skill-manage.js";

/** Where staged writes are applied: the home and its effective config. */
export interface ApplyContext {
  home: string;
  config: Readonly<Record<string, unknown>>;
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** What became of one pending write. */
export interface DecisionOutcome {
  id: string;
  ok: boolean;
  /** One line for the user: what was applied, or why not and what to do. */
  message: string;
  /** Approval was refused because the target changed since staging (approve with force to apply anyway). */
  stale?: boolean;
}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** The records `target` names: one id, or every pending one for "all". */
async function selected(
  ctx: ApplyContext,
  subsystem: Subsystem,
  target: string,
): Promise<ReadRecord[] | DecisionOutcome> {
  if (target.toLowerCase() === "all") return listWrites(ctx.home, subsystem);
  const read = await readWrite(ctx.home, subsystem, target);
  if (!read) return { id: target, ok: false, message: `No pending ${subsystem} write with id "${target}".` };
  return [read];
}

function memoryArgs(payload: Readonly<Record<string, unknown>>) {
  const target: MemoryTarget = payload.target === "user" ? "user" : "memory";
  if (payload.target !== undefined && payload.target !== "memory" && payload.target !== "user") {
    return { error: `its target is "${String(payload.target)}", not memory or user` };
  }
  const operations = Array.isArray(payload.operations)
    ? payload.operations
        .filter((op): op is Record<string, unknown> => !!op && typeof op === "object")
        .map(
          (op): MemoryOperation => ({
            action: str(op.action) as MemoryOperation["action"],
            content: str(op.content),
            old_text: str(op.old_text),
          }),
        )
    : undefined;
  const action = str(payload.action);
  if (action === "batch" && !operations) return { error: "it is a batch without operations" };
  return {
    target,
    args: { action, content: str(payload.content), old_text: str(payload.old_text), operations },
  };
}

function skillArgs(payload: Readonly<Record<string, unknown>>): SkillManageArgs | { error: string } {
  const action = str(payload.action);
  const name = str(payload.name);
  if (!action || !name) return { error: "its payload has no action or name" };
  return {
    action,
    name,
    category: str(payload.category),
    content: str(payload.content),
    old_string: str(payload.old_string),
    new_string: str(payload.new_string),
    replace_all: payload.replace_all === true,
    file_path: str(payload.file_path),
    file_content: str(payload.file_content),
  };
}

/** Applies one record's payload; `{ok, message}` from the store or manage.ts. */
async function applyRecord(
  ctx: ApplyContext,
  record: PendingRecord,
): Promise<{ ok: boolean; message: string }> {
  if (record.subsystem === "memory") {
    const parsed = memoryArgs(record.payload);
    if ("error" in parsed) return { ok: false, message: `cannot apply: ${parsed.error}.` };
    const result = await runMemoryWrite(memoryStoreFor(ctx.home, ctx.config), parsed.target, parsed.args);
    return { ok: result.success, message: (result.success ? result.message : result.error) ?? "" };
  }
  const args = skillArgs(record.payload);
  if ("error" in args) return { ok: false, message: `cannot apply: ${args.error}.` };
  // The write keeps the origin it was staged with: a skill the background review or the curator
  // proposed is the agent's own (`created_by: agent`, curator-managed) once approved.
  const writeOrigin: SkillWriteOrigin =
    record.origin === "background_review" || record.origin === "curator" ? record.origin : "foreground";
  try {
    const change = await runSkillManage(
      skillManageContext({ ...ctx, env: ctx.env ?? process.env, writeOrigin }),
      args,
    );
    return { ok: true, message: change.message };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Approves `target` (an id, or "all"). A skill write whose file changed since it was staged is
 * refused unless `force` (the user reviewed the new diff). A failed apply puts the write back in
 * the queue, so the user can fix things and retry, or reject it.
 */
export async function approvePending(
  ctx: ApplyContext,
  subsystem: Subsystem,
  target: string,
  options: { force?: boolean } = {},
): Promise<DecisionOutcome[]> {
  const records = await selected(ctx, subsystem, target);
  if (!Array.isArray(records)) return [records];
  const out: DecisionOutcome[] = [];
  for (const read of records) {
    if (!read.ok) {
      out.push({ id: read.id, ok: false, message: `unreadable (${read.error}); reject it to remove it.` });
      continue;
    }
    const record = read.record;
    const lookup = { home: ctx.home, config: skillsConfigOf(ctx.config), env: ctx.env ?? process.env };
    const stale = subsystem === "skills" && !options.force ? skillStaleReason(lookup, record) : undefined;
    if (stale) {
      out.push({
        id: record.id,
        ok: false,
        stale: true,
        message:
          `not applied: ${stale}. Review the write against the current file with /skills diff ${record.id}, ` +
          `then approve it with force (/skills approve ${record.id} --force) or reject it.`,
      });
      continue;
    }
    const claimed = await claimWrite(ctx.home, subsystem, record.id);
    if (!claimed) {
      out.push({ id: record.id, ok: false, message: "no longer pending (approved or rejected elsewhere)." });
      continue;
    }
    const applied = await applyRecord(ctx, record).catch((error: unknown) => ({
      ok: false,
      message: error instanceof Error ? error.message : String(error),
    }));
    if (applied.ok) await claimed.finish();
    else await claimed.release();
    out.push({
      id: record.id,
      ok: applied.ok,
      message: applied.ok ? applied.message : `not applied, still pending: ${applied.message}`,
    });
  }
  return out;
}

/** Rejects `target` (an id, or "all"): the staged write is dropped unapplied. */
export async function rejectPending(
  ctx: ApplyContext,
  subsystem: Subsystem,
  target: string,
): Promise<DecisionOutcome[]> {
  const records = await selected(ctx, subsystem, target);
  if (!Array.isArray(records)) return [records];
  const out: DecisionOutcome[] = [];
  for (const read of records) {
    const id = read.ok ? read.record.id : read.id;
    const claimed = await claimWrite(ctx.home, subsystem, id);
    if (!claimed) {
      out.push({ id, ok: false, message: "no longer pending." });
      continue;
    }
    await claimed.finish();
    out.push({ id, ok: true, message: "rejected; nothing was written." });
  }
  return out;
}

/**
 * What approving `id` would change: the new SKILL.md of a create, a unified diff against the
 * current file otherwise, the operation for memory; with `stale` when the target changed since.
 */
export async function pendingDiff(
  ctx: ApplyContext,
  subsystem: Subsystem,
  id: string,
): Promise<{ record: PendingRecord; text: string; stale?: string } | { error: string }> {
  const read = await readWrite(ctx.home, subsystem, id);
  if (!read) return { error: `No pending ${subsystem} write with id "${id}".` };
  if (!read.ok)
    return { error: `Pending write ${id} is unreadable (${read.error}); reject it to remove it.` };
  const record = read.record;
  if (subsystem === "memory") return { record, text: JSON.stringify(record.payload, null, 2) };
  const lookup = { home: ctx.home, config: skillsConfigOf(ctx.config), env: ctx.env ?? process.env };
  const stale = skillStaleReason(lookup, record);
  return { record, text: skillPendingDiff(lookup, record), ...(stale ? { stale } : {}) };
}
