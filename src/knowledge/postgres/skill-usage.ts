/**
 * Skill usage records in PostgreSQL (`skill_usage`, one row per skill holding the record as JSON
 * text, fields Python adds later kept as they are), behind `SkillUsageRecords`. One event locks
 * its skill's row; `mutate` (the curator) locks the whole table, so the two never interleave.
 * As with `.usage.json`, bundled and hub-installed skills are not recorded (judged from this
 * instance's home: seeding and hub installs are per install), and recording is best effort.
 *
 * Every change bumps `skill_usage_version` in its own transaction (a trigger, migration 410), so a
 * reader knows whether what it read before still holds: `read()` answers from the records it read
 * last while the version stands (one single-row query), and `version()` is what the prompt's skills
 * index is keyed on, so a use recorded on another instance reaches this one's next session.
 */
import type { PgDatabase, PgQueryable } from "../../state/postgres/database.js";
import { applyUsageEvent, isoNow, isUntrackedSkill, type SkillUsageRecord } from "../skills/provenance.js";
import type { SkillUsageRecords } from "../skills/usage.js";

export interface PgSkillUsageOptions {
  /** This instance's home, for the bundled manifest and hub lock (untracked skills). */
  home?: string;
  now?: () => Date;
}

/** `SkillUsageRecords` plus what moving a home needs. */
export interface PgSkillUsageRecords extends SkillUsageRecords {
  /** Writes records as they are (a home's `.usage.json`), replacing those with the same names. */
  importRecords(records: Record<string, SkillUsageRecord>): Promise<number>;
}

function parseRecord(text: string): SkillUsageRecord | undefined {
  try {
    const data: unknown = JSON.parse(text);
    return data && typeof data === "object" && !Array.isArray(data) ? (data as SkillUsageRecord) : undefined;
  } catch {
    return undefined;
  }
}

const readVersion = async (db: PgQueryable): Promise<string> => {
  const rows = await db.query<{ version: string }>(
    "SELECT version::text AS version FROM skill_usage_version",
  );
  // A database without the counter row (removed by hand) reads as always changed.
  return rows[0]?.version ?? "";
};

async function readAll(db: PgQueryable, lock: boolean): Promise<Record<string, SkillUsageRecord>> {
  const rows = await db.query<{ name: string; record: string }>(
    `SELECT name, record FROM skill_usage ORDER BY name${lock ? " FOR UPDATE" : ""}`,
  );
  const out: Record<string, SkillUsageRecord> = {};
  for (const row of rows) {
    const record = parseRecord(row.record);
    if (record) out[row.name] = record;
  }
  return out;
}

/** Advisory-lock key `mutate` holds for the table ("HERSKUSE" in ASCII). */
const TABLE_LOCK = "5207659061823492933";
/** First half of the two-key advisory lock one skill's events take (the second is the name's hash). */
const SKILL_LOCK_CLASS = 0x48534b55; // "HSKU"

export function pgSkillUsageRecords(db: PgDatabase, options: PgSkillUsageOptions = {}): PgSkillUsageRecords {
  const now = options.now ?? (() => new Date());
  const upsert = (client: PgQueryable, name: string, record: SkillUsageRecord) =>
    client.query(
      `INSERT INTO skill_usage (name, record, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE SET record = EXCLUDED.record, updated_at = EXCLUDED.updated_at`,
      [name, JSON.stringify(record), now().getTime() / 1000],
    );

  // The records as of `version`, read after the version: they are at least that new, so a later
  // change always shows as a different version and is never hidden behind this copy.
  let cached: { version: string; records: Record<string, SkillUsageRecord> } | undefined;

  const read = async () => {
    const version = await readVersion(db);
    if (version !== "" && cached?.version === version) return structuredClone(cached.records);
    const records = await readAll(db, false);
    cached = version === "" ? undefined : { version, records: structuredClone(records) };
    return records;
  };
  // After this instance's own change, so `snapshot()` shows it (a failure leaves the older copy).
  const reread = () =>
    read().then(
      () => undefined,
      () => undefined,
    );

  return {
    read,

    version: () => readVersion(db),

    snapshot: () => cached?.records,

    async record(name, kind, recordOptions = {}) {
      if (!name) return false;
      const at = isoNow(recordOptions.now ?? now);
      try {
        if (kind !== "create" && kind !== "delete" && options.home && isUntrackedSkill(options.home, name)) {
          return false;
        }
        await db.tx(async (client) => {
          // Shared with `mutate`'s exclusive lock: a whole-table change never interleaves with one event.
          await client.query("SELECT pg_advisory_xact_lock_shared($1)", [TABLE_LOCK]);
          // One event per skill at a time, a skill's first too: with no row yet, FOR UPDATE locks
          // nothing, and two first events would each write a fresh record (one count lost).
          await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [SKILL_LOCK_CLASS, name]);
          if (kind === "delete") {
            await client.query("DELETE FROM skill_usage WHERE name = $1", [name]);
            return;
          }
          const rows = await client.query<{ record: string }>(
            "SELECT record FROM skill_usage WHERE name = $1 FOR UPDATE",
            [name],
          );
          const current = rows[0] ? parseRecord(rows[0].record) : undefined;
          if (rows[0] && !current) throw new Error(`the usage record of ${name} is not JSON`);
          await upsert(client, name, applyUsageEvent(current, kind, at, recordOptions.createdBy ?? null));
        });
        await reread();
        return true;
      } catch {
        return false;
      }
    },

    async mutate(change) {
      await db.tx(async (client) => {
        await client.query("SELECT pg_advisory_xact_lock($1)", [TABLE_LOCK]);
        const before = await readAll(client, true);
        const data = structuredClone(before);
        if (change(data) === false) return;
        for (const name of Object.keys(before)) {
          if (!(name in data)) await client.query("DELETE FROM skill_usage WHERE name = $1", [name]);
        }
        for (const [name, record] of Object.entries(data)) {
          if (JSON.stringify(record) !== JSON.stringify(before[name])) await upsert(client, name, record);
        }
      });
      await reread();
    },

    async importRecords(records) {
      let n = 0;
      await db.tx(async (client) => {
        // Whole-table, as `mutate`: events wait, so no event's row lock meets this batch's.
        await client.query("SELECT pg_advisory_xact_lock($1)", [TABLE_LOCK]);
        for (const [name, record] of Object.entries(records)) {
          if (!name || !record || typeof record !== "object") continue;
          await upsert(client, name, record);
          n++;
        }
      });
      return n;
    },
  };
}
