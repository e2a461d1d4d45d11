/**
 * MemoryStore: bounded, file-backed memory shared with Python Hermes (`memories/MEMORY.md` and
 * `memories/USER.md`). Every read-modify-write holds the same flock Python takes and re-reads the
 * file under it, so a write by another process (either implementation) is never lost, and the
 * file is replaced atomically, so readers never need the lock.
 *
 * Nothing a person wrote is ever lost: a file edited by hand so that rewriting it from its parsed
 * entries would change its text is copied to `<file>.bak.<unix seconds>` and left untouched, and
 * the call is refused with instructions. `add` still works on such a file when it is valid UTF-8,
 * because it appends to the existing text instead of rewriting it.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Asynchronous, asyncView } from "../../state/async-view.js";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { withFileLock } from "../../util/file-lock.js";
import { StampedFileCache } from "../../util/stamped-cache.js";
import { FAMILY_NAMES, scanThreats } from "../threats.js";
import {
  codePoints,
  decodeMemoryFile,
  dedupe,
  displayEntry,
  entryBlockReason,
  FILE_NAMES,
  parseEntries,
  pyRstrip,
  renderMemoryBlock,
  roundTrips,
  serializeEntries,
  splitEntries,
  thousands,
  usageLine,
  usedChars,
} from "./format.js";
import { fail, planMemoryWrite, stateError, type Validated, validateOperations } from "./operations.js";
import {
  ENTRY_DELIMITER,
  type MemoryLimits,
  type MemoryOperation,
  type MemoryResult,
  type MemoryTarget,
} from "./types.js";

export const DEFAULT_MEMORY_LIMITS: Readonly<MemoryLimits> = { memory: 2200, user: 1375 };

export interface MemoryStoreOptions {
  /** The `memories/` folder. Created on first write. */
  dir: string;
  /** Character limits per target; missing or invalid values fall back to the defaults. */
  limits?: Partial<MemoryLimits>;
  /** Clock in ms (names backups). */
  now?: () => number;
  /** How long a write waits for another process's lock (default 10 s). */
  lockTimeoutMs?: number;
}

/** The `memory:` section of config.yaml that the store reads. */
export interface MemoryLimitConfig {
  memory_char_limit?: number;
  user_char_limit?: number;
}

/** What is on disk for one target, read under the lock before a write. */
interface FileState {
  bytes: Buffer | undefined;
  /** Decoded text (newlines normalised), "" when the file is missing. */
  text: string;
  validUtf8: boolean;
  entries: string[];
  /** Why rewriting the file from `entries` could lose text; undefined when it is safe. */
  drift: string | undefined;
}

export class MemoryStore {
  readonly dir: string;
  readonly limits: Readonly<MemoryLimits>;
  private readonly now: () => number;
  private readonly lockTimeoutMs: number;

  constructor(options: MemoryStoreOptions) {
    this.dir = options.dir;
    this.limits = {
      memory: validLimit(options.limits?.memory) ?? DEFAULT_MEMORY_LIMITS.memory,
      user: validLimit(options.limits?.user) ?? DEFAULT_MEMORY_LIMITS.user,
    };
    this.now = options.now ?? Date.now;
    this.lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
  }

  /** The store of a Hermes home (`<home>/memories`), with limits from config.yaml's `memory:`. */
  static forHome(home: string, memoryConfig: MemoryLimitConfig = {}): MemoryStore {
    return new MemoryStore({
      dir: join(home, "memories"),
      limits: { memory: memoryConfig.memory_char_limit, user: memoryConfig.user_char_limit },
    });
  }

  path(target: MemoryTarget): string {
    return join(this.dir, FILE_NAMES[target]);
  }

  /** The entries on disk now, as written (not sanitised); [] when the file is missing or empty. */
  entries(target: MemoryTarget): string[] {
    const bytes = readBytes(this.path(target));
    return bytes ? parseEntries(decodeMemoryFile(bytes).text) : [];
  }

  /**
   * The live entries for the model: entries that would be blocked from the prompt show as their
   * `[BLOCKED: ...]` placeholder here too, so a poisoned file cannot reach the model this way.
   */
  read(target: MemoryTarget): MemoryResult {
    const entries = this.entries(target);
    const limit = this.limits[target];
    return {
      success: true,
      target,
      usage: usageLine(usedChars(entries), limit),
      entry_count: entries.length,
      current_entries: entries.map((e) => displayEntry(e, target)),
    };
  }

  /**
   * The system-prompt block for what is on disk now, or undefined when there are no entries.
   * The caller freezes it for the session (prompt-cache invariant). Throws, like every read here,
   * when the file exists but cannot be read (a directory, no permission); a missing file is empty.
   */
  renderBlock(target: MemoryTarget): string | undefined {
    return renderMemoryBlock(target, this.entries(target), this.limits[target]);
  }

  /**
   * The entries on disk that the prompt shows as `[BLOCKED: ...]` placeholders, each with why, for
   * the warning at session start. Hand-edited lines are held to what a tool write is: a flagged
   * line stays in the file (the user sees and removes it) but never reaches the model.
   */
  blockedEntries(target: MemoryTarget): Array<{ entry: string; reason: string }> {
    return blockedOf(this.entries(target));
  }

  /**
   * `renderBlock` and `blockedEntries` together, for a session's prompt: the file is parsed and its
   * entries scanned once and kept while the file stays the same (inode, mtime, size: see
   * util/stamped-cache.ts), so a server starting a session per request pays one `stat` per file.
   */
  promptBlock(target: MemoryTarget): {
    block: string | undefined;
    blocked: Array<{ entry: string; reason: string }>;
  } {
    const path = this.path(target);
    let parts: PromptParts | undefined;
    try {
      parts = promptParts.read(path);
    } catch (error) {
      throw unreadable(path, error);
    }
    const limit = this.limits[target];
    if (!parts) return { block: renderMemoryBlock(target, [], limit), blocked: [] };
    if (!parts.blocks.has(limit)) parts.blocks.set(limit, renderMemoryBlock(target, parts.entries, limit));
    parts.blocked ??= blockedOf(parts.entries);
    return { block: parts.blocks.get(limit), blocked: parts.blocked };
  }

  /** Appends an entry. An exact duplicate succeeds without being added twice. */
  add(target: MemoryTarget, content: string): Promise<MemoryResult> {
    return this.run(target, [{ action: "add", content }], false);
  }

  /** Replaces the one entry containing `oldText` with `content`. */
  replace(target: MemoryTarget, oldText: string, content: string): Promise<MemoryResult> {
    return this.run(target, [{ action: "replace", old_text: oldText, content }], false);
  }

  /** Removes the one entry containing `oldText`. */
  remove(target: MemoryTarget, oldText: string): Promise<MemoryResult> {
    return this.run(target, [{ action: "remove", old_text: oldText }], false);
  }

  /**
   * Applies operations in order, all or nothing. Only the final state must fit the limit, so one
   * call can free space and add. A duplicate add is skipped, not an error.
   */
  apply(target: MemoryTarget, operations: readonly MemoryOperation[]): Promise<MemoryResult> {
    if (operations.length === 0) {
      return Promise.resolve(
        fail(target, "operations is empty: pass at least one {action, content?, old_text?}."),
      );
    }
    return this.run(target, operations, true);
  }

  /**
   * The error a write of `operations` fails with before the file is read (a missing field, an
   * entry over the limit, text the injection scan refuses), or undefined when they pass. Writes
   * staged for approval are checked with this first, so a write that can never apply is refused
   * at once instead of waiting for the user.
   */
  precheck(
    target: MemoryTarget,
    operations: readonly MemoryOperation[],
    batch: boolean,
  ): MemoryResult | undefined {
    if (batch && operations.length === 0) {
      return fail(target, "operations is empty: pass at least one {action, content?, old_text?}.");
    }
    const checked = this.validateAll(target, operations, batch);
    return "result" in checked ? checked.result : undefined;
  }

  private validateAll(
    target: MemoryTarget,
    operations: readonly MemoryOperation[],
    batch: boolean,
  ): { ops: Validated[] } | { result: MemoryResult } {
    const checked = validateOperations(target, this.limits[target], operations, batch);
    if ("ops" in checked) return checked;
    // Without old_text the model must pick an entry: show it the choices.
    return { result: checked.showEntries ? this.withEntries(checked.result, target) : checked.result };
  }

  private async run(
    target: MemoryTarget,
    operations: readonly MemoryOperation[],
    batch: boolean,
  ): Promise<MemoryResult> {
    const limit = this.limits[target];
    const checked = this.validateAll(target, operations, batch);
    if ("result" in checked) return checked.result;
    const { ops } = checked;

    const path = this.path(target);
    mkdirSync(this.dir, { recursive: true });
    return withFileLock(
      path,
      async () => {
        const state = this.load(target);
        const appendOnly = ops.every((op) => op.action === "add");
        if (!state.validUtf8 || (state.drift !== undefined && !appendOnly)) {
          return this.refuseDrift(target, state);
        }
        const plan = planMemoryWrite(target, limit, state.entries, ops, batch);
        if (plan.kind !== "changed") return plan.result;
        // On a hand-edited file, adds go after its existing text instead of rewriting it.
        const text =
          state.drift !== undefined
            ? appendEntries(state.text, plan.next.slice(state.entries.length))
            : serializeEntries(plan.next);
        await atomicWriteFile(path, text);
        return plan.result;
      },
      { timeoutMs: this.lockTimeoutMs },
    );
  }

  private load(target: MemoryTarget): FileState {
    const bytes = readBytes(this.path(target));
    if (!bytes) return { bytes, text: "", validUtf8: true, entries: [], drift: undefined };
    const { text, validUtf8 } = decodeMemoryFile(bytes);
    const all = splitEntries(text);
    const limit = this.limits[target];
    let drift: string | undefined;
    if (!validUtf8) drift = "it is not valid UTF-8";
    else if (!roundTrips(text)) {
      drift =
        "its text is not exactly entries separated by lines holding only §: there are blank " +
        "entries, spaces or blank lines around entries, or a stray separator";
    } else {
      const longest = all.reduce((max, e) => Math.max(max, codePoints(e)), 0);
      if (longest > limit) {
        drift =
          `one entry is ${thousands(longest)} chars, longer than the whole ${thousands(limit)}-char ` +
          "limit, so text was probably added to it by hand";
      }
    }
    return { bytes, text, validUtf8, entries: dedupe(all), drift };
  }

  private refuseDrift(target: MemoryTarget, state: FileState): MemoryResult {
    const name = FILE_NAMES[target];
    const limit = thousands(this.limits[target]);
    let saved: string;
    let backup: string | undefined;
    try {
      backup = this.backup(this.path(target), state.bytes ?? Buffer.alloc(0));
      saved = `A copy was saved to ${backup}.`;
    } catch (error) {
      saved = `Saving a copy failed (${error instanceof Error ? error.message : String(error)}).`;
    }
    const fix = state.validUtf8
      ? `Fix ${name} by hand or with the file tools: make it a plain list of entries, each under ` +
        `${limit} chars, separated by lines holding only §, with no blank entries or spaces around ` +
        "them (split long text into several entries or move it elsewhere); then retry. Adding new " +
        "entries still works meanwhile."
      : `Re-save ${name} as UTF-8 text, then retry.`;
    return {
      ...fail(
        target,
        `${name} was left unchanged: ${state.drift ?? "it was edited outside the memory tool"}, ` +
          `so rewriting it could lose text someone wrote. ${saved} ${fix}`,
      ),
      ...(backup ? { backup } : {}),
    };
  }

  /** Saves `bytes` to `<file>.bak.<unix seconds>`, never over a backup with other content. */
  private backup(path: string, bytes: Buffer): string {
    const base = `${path}.bak.${Math.floor(this.now() / 1000)}`;
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? base : `${base}.${n}`;
      try {
        writeFileSync(candidate, bytes, { flag: "wx" });
        return candidate;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        if (readFileSync(candidate).equals(bytes)) return candidate;
      }
    }
  }

  private withEntries(result: MemoryResult, target: MemoryTarget): MemoryResult {
    const entries = this.entries(target);
    const { usage, current_entries } = stateError(target, this.limits[target], entries, "");
    return { ...result, usage, current_entries };
  }
}

function validLimit(value: number | undefined): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}

function readBytes(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw unreadable(path, error);
  }
}

/** Never treat an unreadable file as empty: the next write would replace it. */
function unreadable(path: string, error: unknown): Error {
  return new Error(
    `Cannot read ${path}: ${error instanceof Error ? error.message : String(error)}. ` +
      "Memory was not changed; fix the file's permissions or type and retry.",
  );
}

/** The entries the prompt shows as `[BLOCKED: ...]` placeholders, each with why. */
export function blockedOf(entries: readonly string[]): Array<{ entry: string; reason: string }> {
  const out: Array<{ entry: string; reason: string }> = [];
  for (const entry of entries) {
    const reason = entryBlockReason(entry);
    if (reason !== undefined) {
      const families = [...new Set(scanThreats(entry, "strict").map((f) => FAMILY_NAMES[f.family]))];
      out.push({ entry, reason: families.length > 0 ? `${families.join(", ")}: ${reason}` : reason });
    }
  }
  return out;
}

/** A memory file's entries, its prompt block per limit and its blocked entries, computed once. */
interface PromptParts {
  entries: string[];
  blocks: Map<number, string | undefined>;
  blocked?: Array<{ entry: string; reason: string }>;
}

const promptParts = new StampedFileCache<PromptParts>(
  (bytes) => ({ entries: parseEntries(decodeMemoryFile(bytes).text), blocks: new Map() }),
  { max: 64 },
);

/** `text` with `added` entries appended, keeping every character already there. */
function appendEntries(text: string, added: readonly string[]): string {
  let base = pyRstrip(text);
  for (const entry of added) {
    if (base === "") base = entry;
    // A file ending in a separator line already has the delimiter's first half.
    else if (base === "§" || base.endsWith("\n§")) base = `${base}\n${entry}`;
    else base = `${base}${ENTRY_DELIMITER}${entry}`;
  }
  return base;
}

const MEMORY_METHODS = [
  "entries",
  "read",
  "renderBlock",
  "promptBlock",
  "blockedEntries",
  "precheck",
  "add",
  "replace",
  "remove",
  "apply",
] as const;

/**
 * MEMORY.md / USER.md entries as a backend other than the files provides them (asynchronous, see
 * async-view.ts); `memoryRecords` puts `MemoryStore` behind it.
 */
export type MemoryRecords = Asynchronous<Pick<MemoryStore, (typeof MEMORY_METHODS)[number]>> & {
  /** The character limit of each target. */
  readonly limits: Readonly<MemoryLimits>;
  /**
   * Erases a target's entries (`hermes memory reset`), answering how many went. Absent for the
   * files, which the command empties under their own lock.
   */
  clear?(target: MemoryTarget): Promise<number>;
  /** When a target last changed; absent for the files (their modification time says it). */
  updatedAt?(target: MemoryTarget): Promise<Date | undefined>;
};

export function memoryRecords(store: MemoryStore): MemoryRecords {
  return { ...asyncView(store, MEMORY_METHODS), limits: store.limits };
}
