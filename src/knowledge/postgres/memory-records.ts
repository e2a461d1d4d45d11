/**
 * MEMORY.md / USER.md entries in PostgreSQL (`memory_targets`, one row per target holding its
 * entries as JSON text), behind the `MemoryRecords` contract. Every write validates first (the
 * same limits, delimiter rule and injection scan as the file store, `memory/operations.ts`), then
 * takes the target's row lock (`SELECT … FOR UPDATE`) and applies the operations to the entries it
 * reads under that lock: two instances writing at once queue on the row, so nothing is lost and
 * the limit holds for the final state whichever commits first.
 *
 * There is no hand-edited file here, so the file store's drift rules (backups, append-only
 * writes) do not apply: every write rewrites the list.
 */
import type { PgDatabase, PgQueryable } from "../../state/postgres/database.js";
import { displayEntry, renderMemoryBlock, usageLine, usedChars } from "../memory/format.js";
import { fail, planMemoryWrite, stateError, validateOperations } from "../memory/operations.js";
import {
  blockedOf,
  DEFAULT_MEMORY_LIMITS,
  type MemoryLimitConfig,
  type MemoryRecords,
} from "../memory/store.js";
import type { MemoryLimits, MemoryOperation, MemoryResult, MemoryTarget } from "../memory/types.js";

const TARGETS: readonly MemoryTarget[] = ["memory", "user"];

/** `MemoryRecords` plus the prompt's reads and what moving a home needs. */
export interface PgMemoryRecords extends MemoryRecords {
  readonly limits: Readonly<MemoryLimits>;
  /** The prompt block and the entries it shows as `[BLOCKED: ...]` placeholders, from one read. */
  promptBlock(target: MemoryTarget): Promise<{
    block: string | undefined;
    blocked: Array<{ entry: string; reason: string }>;
  }>;
  /** Entries the prompt shows as placeholders, each with why. */
  blockedEntries(target: MemoryTarget): Promise<Array<{ entry: string; reason: string }>>;
  /** The refusal a write would get before anything is read (see `MemoryStore.precheck`), or undefined. */
  precheck(
    target: MemoryTarget,
    operations: readonly MemoryOperation[],
    batch: boolean,
  ): Promise<MemoryResult | undefined>;
  /**
   * Sets a target's entries as they are (for `hermes state migrate`: a home's files copied in),
   * replacing what the database held. Entries are taken as written; nothing is scanned or cut.
   */
  importEntries(target: MemoryTarget, entries: readonly string[]): Promise<void>;
  /** Erases every entry of a target (`hermes memory reset`), under its row lock; answers how many went. */
  clear(target: MemoryTarget): Promise<number>;
  /** When a target last changed (the file store's modification time), or undefined before any write. */
  updatedAt(target: MemoryTarget): Promise<Date | undefined>;
}

function validLimit(value: number | undefined): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}

function checkTarget(target: MemoryTarget): void {
  if (!TARGETS.includes(target)) {
    throw new Error(`Unknown memory target "${String(target)}": use "memory" or "user".`);
  }
}

function parseStored(text: string | undefined): string[] {
  if (text === undefined) return [];
  const data: unknown = JSON.parse(text);
  return Array.isArray(data) ? data.filter((e): e is string => typeof e === "string") : [];
}

async function readEntries(db: PgQueryable, target: MemoryTarget, lock: boolean): Promise<string[]> {
  const rows = await db.query<{ entries: string }>(
    `SELECT entries FROM memory_targets WHERE target = $1${lock ? " FOR UPDATE" : ""}`,
    [target],
  );
  return parseStored(rows[0]?.entries);
}

/**
 * Memory entries in `db` with the file store's limits, given as `{memory, user}` or as config.yaml's
 * `memory:` section (`memory_char_limit`, `user_char_limit`); missing or invalid: the defaults.
 */
export function pgMemoryRecords(
  db: PgDatabase,
  limits: Partial<MemoryLimits> & MemoryLimitConfig = {},
  options: { now?: () => number } = {},
): PgMemoryRecords {
  const now = options.now ?? Date.now;
  const resolved: Readonly<MemoryLimits> = {
    memory: validLimit(limits.memory) ?? validLimit(limits.memory_char_limit) ?? DEFAULT_MEMORY_LIMITS.memory,
    user: validLimit(limits.user) ?? validLimit(limits.user_char_limit) ?? DEFAULT_MEMORY_LIMITS.user,
  };

  const write = (client: PgQueryable, target: MemoryTarget, entries: readonly string[]) =>
    client.query(
      `INSERT INTO memory_targets (target, entries, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (target) DO UPDATE SET entries = EXCLUDED.entries, updated_at = EXCLUDED.updated_at`,
      [target, JSON.stringify(entries), now() / 1000],
    );

  const run = async (
    target: MemoryTarget,
    operations: readonly MemoryOperation[],
    batch: boolean,
  ): Promise<MemoryResult> => {
    checkTarget(target);
    const limit = resolved[target];
    if (batch && operations.length === 0) {
      return fail(target, "operations is empty: pass at least one {action, content?, old_text?}.");
    }
    const checked = validateOperations(target, limit, operations, batch);
    if ("result" in checked) {
      if (!checked.showEntries) return checked.result;
      const entries = await readEntries(db, target, false);
      const { usage, current_entries } = stateError(target, limit, entries, "");
      return { ...checked.result, usage, current_entries };
    }
    return db.tx(async (client) => {
      // The row exists before it is locked, so a first write on an empty database is serialised too.
      await client.query(
        `INSERT INTO memory_targets (target, entries, updated_at) VALUES ($1, '[]', $2)
         ON CONFLICT (target) DO NOTHING`,
        [target, now() / 1000],
      );
      const current = await readEntries(client, target, true);
      const plan = planMemoryWrite(target, limit, current, checked.ops, batch);
      if (plan.kind === "changed") await write(client, target, plan.next);
      return plan.result;
    });
  };

  const entries = async (target: MemoryTarget): Promise<string[]> => {
    checkTarget(target);
    return readEntries(db, target, false);
  };

  return {
    limits: resolved,
    entries,
    async read(target) {
      const list = await entries(target);
      return {
        success: true,
        target,
        usage: usageLine(usedChars(list), resolved[target]),
        entry_count: list.length,
        current_entries: list.map((e) => displayEntry(e, target)),
      };
    },
    async renderBlock(target) {
      return renderMemoryBlock(target, await entries(target), resolved[target]);
    },
    async promptBlock(target) {
      const list = await entries(target);
      return { block: renderMemoryBlock(target, list, resolved[target]), blocked: blockedOf(list) };
    },
    async blockedEntries(target) {
      return blockedOf(await entries(target));
    },
    async precheck(target, operations, batch) {
      checkTarget(target);
      if (batch && operations.length === 0) {
        return fail(target, "operations is empty: pass at least one {action, content?, old_text?}.");
      }
      const checked = validateOperations(target, resolved[target], operations, batch);
      return "result" in checked ? checked.result : undefined;
    },
    add: (target, content) => run(target, [{ action: "add", content }], false),
    replace: (target, oldText, content) =>
      run(target, [{ action: "replace", old_text: oldText, content }], false),
    remove: (target, oldText) => run(target, [{ action: "remove", old_text: oldText }], false),
    apply: (target, operations) => run(target, operations, true),
    async importEntries(target, list) {
      checkTarget(target);
      await write(db, target, [...list]);
    },
    async clear(target) {
      checkTarget(target);
      return db.tx(async (client) => {
        const before = await readEntries(client, target, true);
        if (before.length > 0) await write(client, target, []);
        return before.length;
      });
    },
    async updatedAt(target) {
      checkTarget(target);
      const rows = await db.query<{ updated_at: number }>(
        "SELECT updated_at FROM memory_targets WHERE target = $1",
        [target],
      );
      return rows[0] ? new Date(Number(rows[0].updated_at) * 1000) : undefined;
    },
  };
}
