/**
 * The write-approval staging area, in Python Hermes's format (`tools/write_approval.py`): one JSON
 * record per staged write at `<home>/pending/<subsystem>/<id>.json`,
 *
 *   {"id": "1f0c9a2b", "subsystem": "skills", "action": "create", "summary": "create 'x' — …",
 *    "origin": "foreground" | "background_review", "created_at": <unix seconds, float>,
 *    "payload": {…the exact tool arguments to replay…}}
 *
 * so a write a Python Hermes staged can be approved here and the other way round. We add one key
 * Python ignores, `base`: the fingerprint of the file the write replaces, to refuse approving a
 * write whose target changed since it was staged (see `stale.ts`).
 *
 * Ids are user input on approve/reject: only {@link isPendingId} names become paths, so `../x`
 * or `a/b` never leave the folder. Approving claims a record by renaming it to `<id>.json.applying`
 * (atomic), so two processes can never apply the same write twice; Python lists only `*.json`.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../../util/atomic-write.js";

export type Subsystem = "memory" | "skills";
export const SUBSYSTEMS: readonly Subsystem[] = ["memory", "skills"];

/** Who asked for the write: the user's turn, or the post-turn background review. */
/** Who asked for the write; the curator stages its consolidation merges too. */
export type WriteOrigin = "foreground" | "background_review" | "curator";

/** What the file the write replaces looked like when it was staged (absent: not recorded). */
export interface PendingBase {
  /** The file, relative to the skill folder (`SKILL.md`, `references/x.md`) or the memories folder. */
  file: string;
  /** sha256 hex of its bytes, or null when it did not exist. */
  sha256: string | null;
}

export interface PendingRecord {
  id: string;
  subsystem: Subsystem;
  action: string;
  summary: string;
  origin: WriteOrigin | string;
  /** Unix seconds (Python's `time.time()`). */
  created_at: number;
  payload: Record<string, unknown>;
  base?: PendingBase | null;
}

/** Ids Python makes are 8 hex digits; accept any short word of letters, digits, `_` and `-`. */
const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Whether `id` may name a pending record (never a path: no `/`, `\`, `.` or empty). */
export function isPendingId(id: string): boolean {
  return ID_PATTERN.test(id);
}

export function pendingDir(home: string, subsystem: Subsystem): string {
  return join(home, "pending", subsystem);
}

function recordPath(home: string, subsystem: Subsystem, id: string): string {
  if (!isPendingId(id)) throw new Error(`"${id}" is not a pending write id.`);
  return join(pendingDir(home, subsystem), `${id}.json`);
}

export interface StageInput {
  payload: Record<string, unknown>;
  summary: string;
  origin?: WriteOrigin | undefined;
  base?: PendingBase | null | undefined;
  /** Clock in ms (tests). */
  now?: () => number;
}

/** Writes a new pending record atomically and returns it. Throws when the folder cannot be written. */
export async function stagePending(
  home: string,
  subsystem: Subsystem,
  input: StageInput,
): Promise<PendingRecord> {
  const dir = pendingDir(home, subsystem);
  mkdirSync(dir, { recursive: true });
  const record = newPendingRecord(subsystem, input);
  await atomicWriteFile(recordPath(home, subsystem, record.id), pendingRecordText(record));
  return record;
}

/** A new record with a fresh id, as `stagePending` writes it. */
export function newPendingRecord(subsystem: Subsystem, input: StageInput): PendingRecord {
  return {
    id: randomBytes(4).toString("hex"),
    subsystem,
    action: typeof input.payload.action === "string" ? input.payload.action : "",
    summary: input.summary.trim(),
    origin: input.origin ?? "foreground",
    created_at: (input.now ?? Date.now)() / 1000,
    payload: input.payload,
    ...(input.base !== undefined ? { base: input.base } : {}),
  };
}

/** The file text of a record (what `<id>.json` holds). */
export function pendingRecordText(record: PendingRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

/** A record read from disk, or why it could not be used. */
export type ReadRecord = { ok: true; record: PendingRecord } | { ok: false; id: string; error: string };

/** A record's text read back, checked against the id and subsystem it was found under. */
export function parseRecord(text: string, subsystem: Subsystem, id: string): ReadRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch {
    return { ok: false, id, error: "the file is not valid JSON" };
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw))
    return { ok: false, id, error: "not a JSON object" };
  const r = raw as Record<string, unknown>;
  const payload = r.payload;
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) {
    return { ok: false, id, error: "it has no payload object" };
  }
  // The file name is the id that was approved; a record claiming another id or subsystem is refused.
  if (r.id !== undefined && r.id !== id)
    return { ok: false, id, error: `its id field says "${String(r.id)}"` };
  if (r.subsystem !== undefined && r.subsystem !== subsystem) {
    return { ok: false, id, error: `it belongs to ${String(r.subsystem)}, not ${subsystem}` };
  }
  const p = payload as Record<string, unknown>;
  const base = r.base;
  return {
    ok: true,
    record: {
      id,
      subsystem,
      action: typeof r.action === "string" ? r.action : typeof p.action === "string" ? p.action : "",
      summary: typeof r.summary === "string" ? r.summary : "",
      origin: typeof r.origin === "string" ? r.origin : "foreground",
      created_at: typeof r.created_at === "number" ? r.created_at : 0,
      payload: p,
      ...(isBase(base) ? { base } : base === null ? { base: null } : {}),
    },
  };
}

function isBase(value: unknown): value is PendingBase {
  if (!value || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return typeof v.file === "string" && (v.sha256 === null || typeof v.sha256 === "string");
}

/** One pending record, or undefined when there is none with that id (or the id is not an id). */
export function readPending(home: string, subsystem: Subsystem, id: string): ReadRecord | undefined {
  if (!isPendingId(id)) return undefined;
  let text: string;
  try {
    text = readFileSync(recordPath(home, subsystem, id), "utf8");
  } catch {
    return undefined;
  }
  return parseRecord(text, subsystem, id);
}

/** Every pending record of `subsystem`, oldest first; unreadable files come back as errors. */
export function listPending(home: string, subsystem: Subsystem): ReadRecord[] {
  let names: string[];
  try {
    names = readdirSync(pendingDir(home, subsystem));
  } catch {
    return [];
  }
  const out: ReadRecord[] = [];
  for (const name of names) {
    if (!name.endsWith(".json")) continue;
    const id = name.slice(0, -".json".length);
    if (!isPendingId(id)) continue;
    const read = readPending(home, subsystem, id);
    if (read) out.push(read);
  }
  const time = (r: ReadRecord) => (r.ok ? r.record.created_at : 0);
  return out.sort((a, b) => time(a) - time(b));
}

/** How many writes wait for review (cheap: counts files). */
export function pendingCount(home: string, subsystem: Subsystem): number {
  try {
    return readdirSync(pendingDir(home, subsystem)).filter(
      (n) => n.endsWith(".json") && isPendingId(n.slice(0, -5)),
    ).length;
  } catch {
    return 0;
  }
}

/**
 * Takes a record out of the queue for applying: renames it to `<id>.json.applying`, so no other
 * process can claim it. Undefined when it is gone (rejected, or claimed by someone else).
 */
export function claimPending(home: string, subsystem: Subsystem, id: string): string | undefined {
  const path = recordPath(home, subsystem, id);
  const claimed = `${path}.applying`;
  try {
    renameSync(path, claimed);
    return claimed;
  } catch {
    return undefined;
  }
}

/** Puts a claimed record back in the queue (the apply failed; the user may retry or reject it). */
export function releaseClaim(claimed: string): void {
  try {
    renameSync(claimed, claimed.replace(/\.applying$/, ""));
  } catch {
    // Already gone: nothing to put back.
  }
}

/** Removes a claimed record for good (applied or rejected). */
export function finishClaim(claimed: string): void {
  try {
    unlinkSync(claimed);
  } catch {
    // Already gone.
  }
}
