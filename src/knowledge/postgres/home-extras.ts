/**
 * The last per-home pieces of a postgres home, shared by every instance (migration 440):
 *
 * - the opt-out lists of bundled skills (`skill_opt_outs`, one row): every change is made under
 *   one advisory lock and announced on the skills channel in its transaction, so each instance's
 *   refresh writes the two files (`.no-bundled-skills`, `skills/.curator_suppressed`) that seeding
 *   and the CLI read. Until the lists were first shared there is no row and the files rule; the
 *   first change starts from the changing instance's files, so a home's earlier "no" is kept;
 * - writes staged for approval (`pending_writes`): the record is the JSON text its file would
 *   hold, claimed by a conditional update (a claim older than ten minutes was left by a process
 *   that died and may be taken again);
 * - the curator's run reports (`curator_reports`), by their folder name.
 *
 * Rows are read back through the same checks as the files (`parseRecord`, name rules), so a row
 * written by anyone cannot name a path: the only files written here are the two fixed ones.
 */
import type { PgDatabase } from "../../state/postgres/database.js";
import type {
  CuratorReportEntry,
  CuratorReportRecords,
  OptOutLists,
  PendingWriteRecords,
  SharedOptOuts,
} from "../home-extras-types.js";
import { isOptedOut, readSuppressed, setOptedOut, writeSuppressed } from "../skills/bundled-opt-out.js";
import {
  isPendingId,
  type PendingRecord,
  parseRecord,
  pendingRecordText,
  type ReadRecord,
  type Subsystem,
} from "../write-approval/pending.js";

/** The advisory lock every change of the opt-out lists takes (the row may not exist yet). */
const OPT_OUT_LOCK = "hermes-skill-opt-outs";
/** Seconds after which a claim on a staged write counts as abandoned. */
export const PENDING_CLAIM_TTL_SECONDS = 600;

/** Whether `name` may stand on a line of `.curator_suppressed` (one line, not a comment). */
export function suppressibleName(name: string): boolean {
  return (
    name.length > 0 &&
    name.length <= 200 &&
    name === name.trim() &&
    !name.startsWith("#") &&
    !/[\u0000-\u001f\u007f]/.test(name)
  );
}

function listsOf(row: { all_skills: boolean; suppressed: string } | undefined): OptOutLists | undefined {
  if (!row) return undefined;
  let names: unknown;
  try {
    names = JSON.parse(row.suppressed);
  } catch {
    names = [];
  }
  const skills = Array.isArray(names)
    ? names.filter((n): n is string => typeof n === "string" && suppressibleName(n))
    : [];
  return { all: row.all_skills === true, skills: [...new Set(skills)].sort() };
}

export function pgOptOuts(
  db: PgDatabase,
  home: string,
  options: { channel: string; now?: () => number },
): SharedOptOuts {
  const now = options.now ?? Date.now;
  const read = async () =>
    listsOf(
      (
        await db.query<{ all_skills: boolean; suppressed: string }>(
          "SELECT all_skills, suppressed FROM skill_opt_outs WHERE id",
        )
      )[0],
    );

  async function materialize(): Promise<void> {
    const lists = await read();
    if (!lists) return; // Never shared: this home's files are the lists.
    if (isOptedOut(home) !== lists.all) setOptedOut(home, lists.all);
    const onDisk = readSuppressed(home);
    const same = onDisk.size === lists.skills.length && lists.skills.every((n) => onDisk.has(n));
    if (!same) writeSuppressed(home, lists.skills);
  }

  async function change(edit: (lists: OptOutLists) => OptOutLists): Promise<boolean> {
    const changed = await db.tx(async (client) => {
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [OPT_OUT_LOCK]);
      const rows = await client.query<{ all_skills: boolean; suppressed: string }>(
        "SELECT all_skills, suppressed FROM skill_opt_outs WHERE id",
      );
      const before = listsOf(rows[0]) ?? { all: isOptedOut(home), skills: [...readSuppressed(home)].sort() };
      const after = edit(before);
      const same = after.all === before.all && after.skills.join("\n") === before.skills.join("\n");
      if (same && rows[0]) return false;
      await client.query(
        `INSERT INTO skill_opt_outs (id, all_skills, suppressed, updated_at) VALUES (true, $1, $2, $3)
         ON CONFLICT (id) DO UPDATE SET all_skills = EXCLUDED.all_skills, suppressed = EXCLUDED.suppressed,
           updated_at = EXCLUDED.updated_at`,
        [after.all, JSON.stringify(after.skills), now() / 1000],
      );
      await client.query("SELECT pg_notify($1, $2)", [options.channel, JSON.stringify({ op: "opt-out" })]);
      return !same;
    });
    await materialize();
    return changed;
  }

  return {
    read,
    materialize,
    setAll: (optedOut) => change((lists) => ({ ...lists, all: optedOut })),
    async setSkill(name, suppressed) {
      if (!suppressibleName(name)) throw new Error(`"${name}" is not a skill name that can be opted out of.`);
      return change((lists) => {
        const names = new Set(lists.skills);
        if (suppressed) names.add(name);
        else names.delete(name);
        return { ...lists, skills: [...names].sort() };
      });
    },
  };
}

export function pgPendingWrites(db: PgDatabase, options: { now?: () => number } = {}): PendingWriteRecords {
  const now = () => (options.now ?? Date.now)() / 1000;
  const free = `(claimed_at IS NULL OR claimed_at < $2::double precision - ${PENDING_CLAIM_TTL_SECONDS})`;
  const toRead = (subsystem: Subsystem, row: { id: string; record: string }): ReadRecord =>
    parseRecord(row.record, subsystem, row.id);

  return {
    async add(record: PendingRecord) {
      if (!isPendingId(record.id)) throw new Error(`"${record.id}" is not a pending write id.`);
      await db.query(
        "INSERT INTO pending_writes (subsystem, id, record, created_at) VALUES ($1, $2, $3, $4)",
        [record.subsystem, record.id, pendingRecordText(record), record.created_at],
      );
    },
    async get(subsystem, id) {
      if (!isPendingId(id)) return undefined;
      const rows = await db.query<{ id: string; record: string }>(
        `SELECT id, record FROM pending_writes WHERE subsystem = $1 AND ${free} AND id = $3`,
        [subsystem, now(), id],
      );
      return rows[0] ? toRead(subsystem, rows[0]) : undefined;
    },
    async list(subsystem) {
      const rows = await db.query<{ id: string; record: string }>(
        `SELECT id, record FROM pending_writes WHERE subsystem = $1 AND ${free} ORDER BY created_at, id`,
        [subsystem, now()],
      );
      return rows.map((row) => toRead(subsystem, row));
    },
    async count(subsystem) {
      const rows = await db.query<{ n: string }>(
        `SELECT count(*) AS n FROM pending_writes WHERE subsystem = $1 AND ${free}`,
        [subsystem, now()],
      );
      return Number(rows[0]?.n ?? 0);
    },
    async claim(subsystem, id) {
      if (!isPendingId(id)) return false;
      const at = now();
      const rows = await db.query(
        `UPDATE pending_writes SET claimed_at = $2 WHERE subsystem = $1 AND ${free} AND id = $3 RETURNING id`,
        [subsystem, at, id],
      );
      return rows.length > 0;
    },
    async release(subsystem, id) {
      await db.query("UPDATE pending_writes SET claimed_at = NULL WHERE subsystem = $1 AND id = $2", [
        subsystem,
        id,
      ]);
    },
    async finish(subsystem, id) {
      await db.query("DELETE FROM pending_writes WHERE subsystem = $1 AND id = $2", [subsystem, id]);
    },
  };
}

/** A curator report folder name: `YYYYMMDD-HHMMSS`, with `-N` for a later run in the same second. */
const REPORT_ID = /^\d{8}-\d{6}(-\d+)?$/;

export function isCuratorReportId(id: string): boolean {
  return REPORT_ID.test(id);
}

export function pgCuratorReports(db: PgDatabase, options: { now?: () => number } = {}): CuratorReportRecords {
  const now = options.now ?? Date.now;
  return {
    async add(id, report) {
      if (!isCuratorReportId(id)) throw new Error(`"${id}" is not a curator report name.`);
      const base = id.slice(0, "YYYYMMDD-HHMMSS".length);
      const startedAt = typeof report["started_at"] === "string" ? report["started_at"] : "";
      for (let n = 1; ; n++) {
        const candidate = n === 1 ? id : `${base}-${n}`;
        if (n > 1 && candidate === id) continue;
        const rows = await db.query(
          `INSERT INTO curator_reports (id, started_at, record, created_at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (id) DO NOTHING RETURNING id`,
          [candidate, startedAt, `${JSON.stringify(report, null, 2)}\n`, now() / 1000],
        );
        if (rows.length > 0) return candidate;
      }
    },
    async list() {
      const rows = await db.query<{ id: string; record: string }>(
        `SELECT id, record FROM curator_reports ORDER BY id COLLATE "C"`,
      );
      const out: CuratorReportEntry[] = [];
      for (const row of rows) {
        if (!isCuratorReportId(row.id)) continue;
        try {
          const report = JSON.parse(row.record) as unknown;
          if (report && typeof report === "object" && !Array.isArray(report))
            out.push({ id: row.id, report: report as Record<string, unknown> });
        } catch {
          // A row that is not a JSON object is not a report; the others are listed.
        }
      }
      return out;
    },
  };
}
