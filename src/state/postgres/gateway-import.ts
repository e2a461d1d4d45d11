/**
 * Copies a file home's gateway stores into PostgreSQL, for `hermes state migrate --to postgres`:
 * the chat index (`sessions/sessions.json`), pairing (`pairing/*.json`), webhook subscriptions,
 * the Responses store (`response_store.db`) and `command_allowlist` from config.yaml.
 *
 * Idempotent and resumable: each store is copied in one transaction that also records it in
 * `gateway_imports`, so an interrupted run copies again only the stores it had not finished, and a
 * later run copies nothing of a store copied before (a user revoked since is not approved again,
 * a rotated secret not rolled back); rows already present are kept (`ON CONFLICT DO NOTHING`).
 * Afterwards every item of the files is looked up in the database, and the report gives both
 * counts per store. Pending pairing requests from old Hermes
 * versions (plaintext codes) are not copied: they can never be approved and expire within an hour.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadDriver } from "../connection.js";
import { readConfigAllowlist } from "../gateway/command-allowlist.js";
import {
  type ApprovedFile,
  approvedPath,
  createdAt,
  isHashedEntry,
  type PendingFile,
  pairingDir,
  pendingPath,
  platformsWithFile,
  rateLimitsPath,
  readJsonObject,
} from "../gateway/pairing-files.js";
import { loadSubscriptions } from "../gateway/webhook-subscriptions.js";
import type { PgDatabase, PgQueryable } from "./database.js";
import { keyDigest, parseObject, storableText } from "./gateway-common.js";

/** Per store: items in the files, and how many of them the database now holds. */
export interface GatewayImportCount {
  inFiles: number;
  inDatabase: number;
}

export interface GatewayImportReport {
  chats: GatewayImportCount;
  pairingPending: GatewayImportCount;
  pairingApproved: GatewayImportCount;
  webhookSubscriptions: GatewayImportCount;
  responses: GatewayImportCount;
  conversations: GatewayImportCount;
  commandAllowlist: GatewayImportCount;
  /** Items left out, one line each (legacy pairing codes, values PostgreSQL cannot store). */
  skipped: string[];
  /** Stores an earlier run copied, left as they are now (`chats`, `pairing`, ...). */
  earlier: string[];
}

/** A client that writes nothing: what a store copied by an earlier run is walked with. */
const DRY: PgQueryable = { query: async () => [] };

/**
 * Runs `copy` in a transaction that records `store` as copied, or, when an earlier run copied
 * it, against a client that writes nothing (so the walk still counts the files' items). Answers
 * whether it wrote.
 */
async function once(
  db: PgDatabase,
  store: string,
  copy: (c: PgQueryable) => Promise<void>,
): Promise<boolean> {
  return db.tx(async (c) => {
    const first = await c.query(
      "INSERT INTO gateway_imports (store) VALUES ($1) ON CONFLICT DO NOTHING RETURNING 1 AS x",
      [store],
    );
    await copy(first.length > 0 ? c : DRY);
    return first.length > 0;
  });
}

/** Per store name, whether this run copied it. */
type Copied = Record<string, boolean>;

async function present(c: PgQueryable, table: string, column: string, digests: Buffer[]): Promise<number> {
  if (digests.length === 0) return 0;
  // `table` and `column` are constants of this file, never input.
  const [row] = await c.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${table} WHERE ${column} = ANY($1::bytea[])`,
    [digests],
  );
  return row?.n ?? 0;
}

function readJsonFile(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  const text = readFileSync(path, "utf8").replace(/^\uFEFF/, "");
  if (text.trim() === "") return {};
  const value = parseObject(text);
  if (!value) throw new Error(`${path} is not a JSON object; fix or move it aside, then migrate again`);
  return value;
}

/** Whether PostgreSQL can store every string (NUL is the one character it cannot). */
function storable(...values: string[]): boolean {
  return values.every((v) => !v.includes("\u0000"));
}

async function importChats(
  db: PgDatabase,
  home: string,
  skipped: string[],
  copied: Copied,
): Promise<GatewayImportCount> {
  const file = readJsonFile(join(home, "sessions", "sessions.json"));
  const digests: Buffer[] = [];
  copied["chats"] = await once(db, "chats", async (c) => {
    for (const [key, entry] of Object.entries(file)) {
      const sessionId = (entry as Record<string, unknown> | null)?.["session_id"];
      if (typeof sessionId !== "string") continue;
      if (!storable(key, sessionId)) {
        skipped.push(`chat index entry ${JSON.stringify(key)}: holds a NUL character`);
        continue;
      }
      digests.push(keyDigest(key));
      await c.query(
        `INSERT INTO gateway_chat_index (key_digest, session_key, session_id, entry) VALUES ($1, $2, $3, $4)
         ON CONFLICT (key_digest) DO NOTHING`,
        [keyDigest(key), key, sessionId, JSON.stringify(entry)],
      );
    }
  });
  return {
    inFiles: digests.length,
    inDatabase: await present(db, "gateway_chat_index", "key_digest", digests),
  };
}

async function importPairing(
  db: PgDatabase,
  home: string,
  skipped: string[],
  copied: Copied,
): Promise<{ pending: GatewayImportCount; approved: GatewayImportCount }> {
  const dir = pairingDir(home);
  const pending = { platforms: [] as string[], ids: [] as string[] };
  const approved = { platforms: [] as string[], digests: [] as Buffer[] };
  copied["pairing"] = await once(db, "pairing", async (c) => {
    const limits = readJsonObject<Record<string, unknown>>(rateLimitsPath(dir));
    const platforms = new Set([...platformsWithFile(dir, "pending"), ...platformsWithFile(dir, "approved")]);
    for (const p of platforms) {
      const failures = Number(limits[`_failures:${p}`] ?? 0);
      const lockout = Number(limits[`_lockout:${p}`] ?? 0);
      await c.query(
        `INSERT INTO gateway_pairing_platforms (platform, failures, locked_until) VALUES ($1, $2, $3)
         ON CONFLICT (platform) DO NOTHING`,
        [p, Number.isInteger(failures) ? failures : 0, Number.isFinite(lockout) ? lockout : 0],
      );
      for (const [id, entry] of Object.entries(readJsonObject<PendingFile>(pendingPath(dir, p)))) {
        const created = createdAt(entry);
        const userId = String(entry.user_id ?? "");
        const userName = String(entry.user_name ?? "");
        if (!isHashedEntry(entry) || created === undefined || !storable(id, userId, userName)) {
          skipped.push(
            `pending pairing request on ${p}: ${isHashedEntry(entry) ? "unreadable" : "a legacy code"}`,
          );
          continue;
        }
        pending.platforms.push(p);
        pending.ids.push(id);
        await c.query(
          `INSERT INTO gateway_pairing_pending (platform, request_id, hash, salt, user_id, user_name, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (platform, request_id) DO NOTHING`,
          [p, id, entry.hash, entry.salt, userId, userName, created],
        );
        const last = limits[`${p}:${userId}`];
        if (typeof last === "number" && Number.isFinite(last)) {
          await c.query(
            `INSERT INTO gateway_pairing_requests (platform, user_digest, user_id, last_request)
             VALUES ($1, $2, $3, $4) ON CONFLICT (platform, user_digest) DO NOTHING`,
            [p, keyDigest(userId), userId, last],
          );
        }
      }
      for (const [userId, info] of Object.entries(readJsonObject<ApprovedFile>(approvedPath(dir, p)))) {
        const userName = typeof info?.user_name === "string" ? info.user_name : "";
        if (!storable(userId, userName)) {
          skipped.push(`approved user on ${p}: holds a NUL character`);
          continue;
        }
        approved.platforms.push(p);
        approved.digests.push(keyDigest(userId));
        await c.query(
          `INSERT INTO gateway_pairing_approved (platform, user_digest, user_id, user_name, approved_at)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT (platform, user_digest) DO NOTHING`,
          [
            p,
            keyDigest(userId),
            userId,
            userName,
            typeof info?.approved_at === "number" ? info.approved_at : null,
          ],
        );
      }
    }
  });
  const [pendingHere] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM gateway_pairing_pending t
       JOIN unnest($1::text[], $2::text[]) AS f(platform, request_id) USING (platform, request_id)`,
    [pending.platforms, pending.ids],
  );
  const [approvedHere] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM gateway_pairing_approved t
       JOIN unnest($1::text[], $2::bytea[]) AS f(platform, user_digest) USING (platform, user_digest)`,
    [approved.platforms, approved.digests],
  );
  return {
    pending: { inFiles: pending.ids.length, inDatabase: pendingHere?.n ?? 0 },
    approved: { inFiles: approved.digests.length, inDatabase: approvedHere?.n ?? 0 },
  };
}

async function importSubscriptions(
  db: PgDatabase,
  home: string,
  skipped: string[],
  copied: Copied,
): Promise<GatewayImportCount> {
  const digests: Buffer[] = [];
  copied["webhook_subscriptions"] = await once(db, "webhook_subscriptions", async (c) => {
    for (const [name, route] of loadSubscriptions(home).routes) {
      if (!storable(name)) {
        skipped.push(`webhook subscription ${JSON.stringify(name)}: holds a NUL character`);
        continue;
      }
      digests.push(keyDigest(name));
      await c.query(
        `INSERT INTO gateway_webhook_subscriptions (name_digest, name, route) VALUES ($1, $2, $3)
         ON CONFLICT (name_digest) DO NOTHING`,
        [keyDigest(name), name, JSON.stringify(route)],
      );
    }
  });
  return {
    inFiles: digests.length,
    inDatabase: await present(db, "gateway_webhook_subscriptions", "name_digest", digests),
  };
}

async function importResponses(
  db: PgDatabase,
  home: string,
  skipped: string[],
  copied: Copied,
): Promise<{ responses: GatewayImportCount; conversations: GatewayImportCount }> {
  const path = join(home, "response_store.db");
  const none = { inFiles: 0, inDatabase: 0 };
  if (!existsSync(path)) return { responses: none, conversations: none };
  const Driver = loadDriver();
  const file = new Driver(path, { readonly: true, fileMustExist: true });
  let responses: { response_id: string; data: string; accessed_at: number }[];
  let conversations: { name: string; response_id: string }[];
  try {
    const has = (t: string) =>
      file.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(t) !== undefined;
    responses = has("responses")
      ? (file
          .prepare("SELECT response_id, data, accessed_at FROM responses ORDER BY accessed_at")
          .all() as typeof responses)
      : [];
    conversations = has("conversations")
      ? (file.prepare("SELECT name, response_id FROM conversations").all() as typeof conversations)
      : [];
  } finally {
    file.close();
  }
  const ids: Buffer[] = [];
  const names: Buffer[] = [];
  copied["responses"] = await once(db, "responses", async (c) => {
    // Oldest access first, so the database's recency order is the file's.
    for (const r of responses) {
      if (!storable(String(r.response_id), String(r.data))) {
        skipped.push(`stored response ${JSON.stringify(r.response_id)}: holds a NUL character`);
        continue;
      }
      ids.push(keyDigest(String(r.response_id)));
      await c.query(
        `INSERT INTO gateway_responses (id_digest, response_id, data, accessed_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id_digest) DO NOTHING`,
        [keyDigest(String(r.response_id)), String(r.response_id), String(r.data), Number(r.accessed_at) || 0],
      );
    }
    for (const v of conversations) {
      if (!storable(String(v.name), String(v.response_id))) {
        skipped.push(`conversation ${JSON.stringify(v.name)}: holds a NUL character`);
        continue;
      }
      names.push(keyDigest(String(v.name)));
      await c.query(
        `INSERT INTO gateway_conversations (name_digest, name, response_id) VALUES ($1, $2, $3)
         ON CONFLICT (name_digest) DO NOTHING`,
        [
          keyDigest(String(v.name)),
          storableText("The conversation name", String(v.name)),
          String(v.response_id),
        ],
      );
    }
  });
  return {
    responses: { inFiles: ids.length, inDatabase: await present(db, "gateway_responses", "id_digest", ids) },
    conversations: {
      inFiles: names.length,
      inDatabase: await present(db, "gateway_conversations", "name_digest", names),
    },
  };
}

async function importAllowlist(db: PgDatabase, home: string, copied: Copied): Promise<GatewayImportCount> {
  const entries = readConfigAllowlist(home).filter((e) => e.trim() !== "" && storable(e));
  copied["command_allowlist"] = await once(db, "command_allowlist", async (c) => {
    for (const entry of entries) {
      await c.query(
        `INSERT INTO gateway_command_allowlist (entry_digest, entry) VALUES ($1, $2)
         ON CONFLICT (entry_digest) DO NOTHING`,
        [keyDigest(entry), entry],
      );
    }
  });
  const digests = [...new Set(entries)].map((e) => keyDigest(e));
  return {
    inFiles: digests.length,
    inDatabase: await present(db, "gateway_command_allowlist", "entry_digest", digests),
  };
}

/** Copies the gateway stores of the file home `home` into `db` (migrated to 300 or later). */
export async function importGatewayHome(db: PgDatabase, home: string): Promise<GatewayImportReport> {
  const skipped: string[] = [];
  const copied: Copied = {};
  const chats = await importChats(db, home, skipped, copied);
  const pairing = await importPairing(db, home, skipped, copied);
  const webhookSubscriptions = await importSubscriptions(db, home, skipped, copied);
  const { responses, conversations } = await importResponses(db, home, skipped, copied);
  const commandAllowlist = await importAllowlist(db, home, copied);
  return {
    chats,
    pairingPending: pairing.pending,
    pairingApproved: pairing.approved,
    webhookSubscriptions,
    responses,
    conversations,
    commandAllowlist,
    skipped,
    earlier: Object.keys(copied).filter((store) => !copied[store]),
  };
}
