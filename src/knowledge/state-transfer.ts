/**
 * Moving a whole home between its files and PostgreSQL (`hermes state migrate --to postgres`,
 * `hermes state export DIR`): a list of parts (the session tables, the gateway stores, memories,
 * skills, skill usage, cron jobs and their outputs), each with a copy in, a copy out and the
 * counts it verifies. The command prints one row per counted item; a row that does not verify
 * makes it fail.
 *
 * Every part is idempotent and resumable on its own: what the target already has is counted as
 * "already there" and left alone, so running again after an interruption copies only what is
 * missing, and a second complete run copies nothing and still verifies. Nothing here prints or
 * returns a secret: rows are counts, notes name files and items, never pairing codes or hashes.
 *
 * This module loads the PostgreSQL stores but not `pg` itself; only the command imports it, lazily.
 */
import { existsSync } from "node:fs";
import { exportGatewayHome } from "../state/postgres/gateway-export.js";
import { type GatewayImportCount, importGatewayHome } from "../state/postgres/gateway-import.js";
import { copyPgToSqlite, copySqliteToPg, type TransferReport } from "../state/postgres/transfer.js";
import { sessionStorePath } from "../state/sqlite-store.js";
import { countFileGateway } from "./state-gateway-files.js";
import { HOME_EXTRA_PARTS } from "./state-home-extras-parts.js";
import { KNOWLEDGE_PARTS } from "./state-knowledge-parts.js";
import {
  countedRow,
  type HomePart,
  type HomeTransferReport,
  type PartReport,
  type TransferContext,
} from "./state-transfer-types.js";

export type {
  HomePart,
  HomeTransferReport,
  PartReport,
  PartRow,
  TransferContext,
} from "./state-transfer-types.js";

function fromTransfer(part: string, result: TransferReport): PartReport {
  return {
    part,
    rows: result.tables.map((t) => ({
      item: t.table,
      source: t.source,
      copied: t.copied,
      present: t.present,
      skipped: t.skipped,
      verified: result.verified,
    })),
    problems: result.problems,
    notes: [],
  };
}

const SESSIONS_PART: HomePart = {
  name: "state.db",
  async copyIn({ home, db, batch }) {
    const path = sessionStorePath(home);
    if (!existsSync(path)) {
      return { part: "state.db", rows: [], problems: [], notes: [`${path} does not exist: no sessions`] };
    }
    return fromTransfer("state.db", await copySqliteToPg(path, db, { batch }));
  },
  async copyOut({ home, db, batch }) {
    return fromTransfer("state.db", await copyPgToSqlite(db, sessionStorePath(home), { batch }));
  },
};

/** Store names of `importGatewayHome`'s report, with the row each gives and its skip-note prefix. */
const GATEWAY_ITEMS: Array<{
  key: keyof Omit<Awaited<ReturnType<typeof importGatewayHome>>, "skipped" | "earlier">;
  store: string;
  item: string;
  /** How `importGatewayHome` begins a note about an item of this row it left out. */
  skipPrefix?: string;
}> = [
  { key: "chats", store: "chats", item: "chat index", skipPrefix: "chat index entry" },
  { key: "pairingPending", store: "pairing", item: "pairing pending", skipPrefix: "pending pairing" },
  { key: "pairingApproved", store: "pairing", item: "pairing approved", skipPrefix: "approved user" },
  {
    key: "webhookSubscriptions",
    store: "webhook_subscriptions",
    item: "webhook subscriptions",
    skipPrefix: "webhook subscription",
  },
  { key: "responses", store: "responses", item: "responses", skipPrefix: "stored response" },
  { key: "conversations", store: "responses", item: "conversations", skipPrefix: "conversation" },
  { key: "commandAllowlist", store: "command_allowlist", item: "command allowlist" },
];

const GATEWAY_PART: HomePart = {
  name: "gateway",
  async copyIn({ home, db }) {
    const result = await importGatewayHome(db, home);
    const report: PartReport = { part: "gateway", rows: [], problems: [], notes: [...result.skipped] };
    for (const { key, store, item, skipPrefix } of GATEWAY_ITEMS) {
      const count: GatewayImportCount = result[key];
      const earlier = result.earlier.includes(store);
      const skipped = skipPrefix ? result.skipped.filter((s) => s.startsWith(skipPrefix)).length : 0;
      const ok = count.inDatabase === count.inFiles;
      if (!ok) {
        report.problems.push(
          `${item}: ${count.inFiles - count.inDatabase} of the home's ${count.inFiles} are not in the database` +
            (earlier ? " (copied by an earlier run and changed in the database since)" : ""),
        );
      }
      report.rows.push(
        countedRow(
          item,
          {
            source: count.inFiles + skipped,
            copied: earlier ? 0 : count.inDatabase,
            present: earlier ? count.inDatabase : 0,
            skipped,
          },
          ok,
        ),
      );
    }
    return report;
  },
  async copyOut({ home, db }) {
    const written = await exportGatewayHome(db, home);
    const onDisk = countFileGateway(home);
    const report: PartReport = { part: "gateway", rows: [], problems: [], notes: [] };
    for (const { key, item } of GATEWAY_ITEMS) {
      const n = written[key];
      const ok = onDisk[key] === n;
      if (!ok) report.problems.push(`${item}: the database holds ${n}, the written files ${onDisk[key]}`);
      report.rows.push(countedRow(item, { source: n, copied: n, present: 0, skipped: 0 }, ok));
    }
    return report;
  },
};

/** Every part, in the order they are copied. */
export const HOME_PARTS: readonly HomePart[] = [
  SESSIONS_PART,
  GATEWAY_PART,
  ...KNOWLEDGE_PARTS,
  ...HOME_EXTRA_PARTS,
];

function finish(parts: PartReport[]): HomeTransferReport {
  return { parts, verified: parts.every((p) => p.problems.length === 0 && p.rows.every((r) => r.verified)) };
}

/** Copies every part of the file home `ctx.home` into `ctx.db` (migrated) and verifies each. */
export async function migrateHome(
  ctx: TransferContext,
  parts: readonly HomePart[] = HOME_PARTS,
): Promise<HomeTransferReport> {
  const reports: PartReport[] = [];
  for (const part of parts) reports.push(await part.copyIn(ctx));
  return finish(reports);
}

/** Writes every part of `ctx.db` out to the file home `ctx.home` and verifies each. */
export async function exportHome(
  ctx: TransferContext,
  parts: readonly HomePart[] = HOME_PARTS,
): Promise<HomeTransferReport> {
  const reports: PartReport[] = [];
  for (const part of parts) reports.push(await part.copyOut(ctx));
  return finish(reports);
}
