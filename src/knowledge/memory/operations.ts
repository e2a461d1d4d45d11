/**
 * The memory tool's rules as pure functions over a list of entries: validating an operation
 * (required fields, the limit, the injection scan), finding the entry `old_text` names, and
 * planning a write (all or nothing, dedupe, the limit on the final state) with the result the
 * model sees. The file store (`store.ts`) and the PostgreSQL store (`knowledge/postgres/`) both
 * apply writes through `planMemoryWrite`, so the two backends answer the same calls the same way.
 */
import { threatRefusal } from "../threats.js";
import {
  codePoints,
  dedupe,
  displayEntry,
  FILE_NAMES,
  hasDelimiterLine,
  normalizeNewlines,
  preview,
  pyStrip,
  thousands,
  usageLine,
  usageShort,
  usedChars,
} from "./format.js";
import type { MemoryOperation, MemoryResult, MemoryTarget } from "./types.js";

export const NOTHING_APPLIED = " No operations were applied (a batch is all or nothing).";

/** An operation that passed `validate`: trimmed text, newlines normalised. */
export type Validated = { action: MemoryOperation["action"]; content: string; oldText: string };

/**
 * Validates every operation before anything is read; `{result}` is the first refusal (with
 * `showEntries` when the model should be shown the current entries to pick from).
 */
export function validateOperations(
  target: MemoryTarget,
  limit: number,
  operations: readonly MemoryOperation[],
  batch: boolean,
): { ops: Validated[] } | { result: MemoryResult; showEntries: boolean } {
  const ops: Validated[] = [];
  for (const [i, op] of operations.entries()) {
    const where = batch ? `Operation ${i + 1} (${String(op.action)}): ` : "";
    const checked = validate(op, target, limit);
    if ("error" in checked) {
      return {
        result: fail(target, where + checked.error + (batch ? NOTHING_APPLIED : "")),
        showEntries: checked.showEntries === true,
      };
    }
    ops.push(checked);
  }
  return { ops };
}

/** What applying `ops` to `current` does: refused (nothing changes), unchanged, or the new list. */
export type MemoryPlan =
  | { kind: "refused"; result: MemoryResult }
  | { kind: "unchanged"; result: MemoryResult }
  | { kind: "changed"; result: MemoryResult; next: string[]; skipped: number };

/**
 * Applies validated operations to the entries read under the writer's lock, in order, all or
 * nothing. Only the final state must fit `limit`; a duplicate add is skipped, not an error.
 */
export function planMemoryWrite(
  target: MemoryTarget,
  limit: number,
  current: readonly string[],
  ops: readonly Validated[],
  batch: boolean,
): MemoryPlan {
  const working = [...current];
  let skipped = 0;
  for (const [i, op] of ops.entries()) {
    const where = batch ? `Operation ${i + 1} (${op.action}): ` : "";
    if (op.action === "add") {
      if (working.includes(op.content)) skipped++;
      else working.push(op.content);
      continue;
    }
    const found = findEntry(working, op.oldText, target);
    if (found.kind === "none") {
      const what = `${where}No entry contains "${op.oldText}".`;
      return {
        kind: "refused",
        result: stateError(
          target,
          limit,
          current,
          `${what} Use a short substring copied from one of current_entries.${batch ? NOTHING_APPLIED : ""}`,
        ),
      };
    }
    if (found.kind === "many") {
      return {
        kind: "refused",
        result: {
          ...fail(
            target,
            `${where}"${op.oldText}" matches ${found.matches.length} different entries (see matches); ` +
              `use a longer substring that only one of them contains.${batch ? NOTHING_APPLIED : ""}`,
          ),
          matches: found.matches.map((e) => preview(displayEntry(e, target))),
        },
      };
    }
    if (op.action === "remove") working.splice(found.index, 1);
    else working[found.index] = op.content;
  }
  const next = dedupe(working);
  const total = usedChars(next);
  if (total > limit) {
    return {
      kind: "refused",
      result: stateError(target, limit, current, overBudget(target, ops, batch, current, total, limit)),
    };
  }
  if (sameList(next, current)) {
    return { kind: "unchanged", result: success(target, unchangedMessage(ops, batch), next, limit) };
  }
  return {
    kind: "changed",
    result: success(target, changedMessage(ops, batch, skipped), next, limit),
    next,
    skipped,
  };
}

/** A refusal that shows the model the current entries and usage, so it can fix the call. */
export function stateError(
  target: MemoryTarget,
  limit: number,
  entries: readonly string[],
  message: string,
): MemoryResult {
  return {
    ...fail(target, message),
    usage: usageShort(usedChars(entries), limit),
    current_entries: entries.map((e) => displayEntry(e, target)),
  };
}

export type Invalid = { error: string; showEntries?: boolean };

/** The operation with trimmed text, or what is wrong with it. */
export function validate(op: MemoryOperation, target: MemoryTarget, limit: number): Validated | Invalid {
  const action = op.action;
  if (action !== "add" && action !== "replace" && action !== "remove") {
    return { error: `Unknown action "${String(action)}". Use add, replace or remove.` };
  }
  const content = pyStrip(normalizeNewlines(op.content ?? ""));
  const oldText = pyStrip(normalizeNewlines(op.old_text ?? ""));
  if (action !== "add" && oldText === "") {
    return {
      error: `old_text is required for ${action}: a short substring of the entry to ${action}, copied from current_entries.`,
      showEntries: true,
    };
  }
  if (action === "remove") return { action, content, oldText };
  if (content === "") {
    return {
      error:
        action === "add"
          ? "content is required for add: the text of the new entry."
          : "content is required for replace: the new text of the entry (use remove to delete it).",
    };
  }
  if (hasDelimiterLine(content)) {
    return {
      error:
        'content has a line holding only "§", which separates entries in the file. Save each entry ' +
        "with its own add (operations can carry several).",
    };
  }
  const size = codePoints(content);
  if (size > limit) {
    return {
      error:
        `The entry is ${thousands(size)} chars but ${FILE_NAMES[target]} holds at most ` +
        `${thousands(limit)} chars in all. Keep only the durable fact, in a sentence or two.`,
    };
  }
  const refusal = threatRefusal(content, "strict");
  return refusal ? { error: refusal } : { action, content, oldText };
}

export type Found = { kind: "one"; index: number } | { kind: "none" } | { kind: "many"; matches: string[] };

/**
 * The entry `oldText` names. It may match an entry's text or, for an entry blocked from the
 * prompt, its placeholder, so "Use memory remove to delete it" works on what the model was shown.
 * Matches that look the same to the model (identical entries or identical placeholders) count as
 * one and the first is used.
 */
export function findEntry(entries: readonly string[], oldText: string, target: MemoryTarget): Found {
  const hits: Array<{ index: number; shown: string; entry: string }> = [];
  entries.forEach((entry, index) => {
    const shown = displayEntry(entry, target);
    if (entry.includes(oldText) || (shown !== entry && shown.includes(oldText))) {
      hits.push({ index, shown, entry });
    }
  });
  const first = hits[0];
  if (!first) return { kind: "none" };
  if (new Set(hits.map((h) => h.shown)).size > 1) return { kind: "many", matches: hits.map((h) => h.entry) };
  return { kind: "one", index: first.index };
}

export function overBudget(
  target: MemoryTarget,
  ops: readonly Validated[],
  batch: boolean,
  current: readonly string[],
  total: number,
  limit: number,
): string {
  const name = FILE_NAMES[target];
  const now = usageShort(usedChars(current), limit);
  const after = usageShort(total, limit);
  const only = ops[0];
  if (!batch && only?.action === "add") {
    return (
      `${name} is at ${now} chars; adding this entry (${thousands(codePoints(only.content))} chars) would ` +
      "exceed the limit. Consolidate first: replace overlapping entries with one shorter entry, or remove " +
      "stale ones (see current_entries). Or do it in one call: operations with the removes/replaces and " +
      "this add."
    );
  }
  if (!batch && only) {
    return (
      `Replacing would put ${name} at ${after} chars (now ${now}). Shorten the new text, or send ` +
      "operations that also remove stale entries (see current_entries)."
    );
  }
  return (
    `After all ${ops.length} operations ${name} would be at ${after} chars (now ${now}). Remove or ` +
    `shorten more entries in the same batch (see current_entries).${NOTHING_APPLIED}`
  );
}

export function changedMessage(ops: readonly Validated[], batch: boolean, skipped: number): string {
  if (batch) {
    const dup = skipped > 0 ? ` (${skipped} duplicate add${skipped === 1 ? "" : "s"} skipped)` : "";
    return `Applied ${ops.length} operation${ops.length === 1 ? "" : "s"}${dup}. Saved for future sessions.`;
  }
  const verb = ops[0]?.action === "add" ? "added" : ops[0]?.action === "replace" ? "replaced" : "removed";
  return `Entry ${verb}. Saved for future sessions.`;
}

export function unchangedMessage(ops: readonly Validated[], batch: boolean): string {
  if (!batch && ops[0]?.action === "add") return "Entry already exists; it was not added twice.";
  return "Nothing changed: the entries already read that way.";
}

export function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((e, i) => e === b[i]);
}

export function fail(target: MemoryTarget, error: string): MemoryResult {
  return { success: false, target, error };
}

export function success(
  target: MemoryTarget,
  message: string,
  entries: readonly string[],
  limit: number,
): MemoryResult {
  return {
    success: true,
    target,
    message,
    usage: usageLine(usedChars(entries), limit),
    entry_count: entries.length,
  };
}
