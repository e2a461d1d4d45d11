/**
 * Writes the gateway stores held in PostgreSQL back out as a normal file home, for
 * `hermes state export DIR`: `sessions/sessions.json`, `pairing/*.json` (mode 0600, only the
 * codes' salted hashes), `webhook_subscriptions.json` (mode 0600, it holds secrets),
 * `response_store.db` and `command_allowlist` in config.yaml (comments kept). Each file present
 * in the home is replaced whole by the database's version of that store. Running it again writes
 * the same files.
 */
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setConfigValue } from "../../config/write.js";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { loadDriver } from "../connection.js";
import { readConfigAllowlist } from "../gateway/command-allowlist.js";
import {
  approvedPath,
  pairingDir,
  pendingPath,
  rateLimitsPath,
  writeJsonObject,
} from "../gateway/pairing-files.js";
import { RESPONSE_TABLES_SQL } from "../gateway/response-records.js";
import { subscriptionsPath } from "../gateway/webhook-subscriptions.js";
import type { PgDatabase } from "./database.js";
import { parseObject } from "./gateway-common.js";

export interface GatewayExportReport {
  chats: number;
  pairingPending: number;
  pairingApproved: number;
  webhookSubscriptions: number;
  responses: number;
  conversations: number;
  commandAllowlist: number;
}

/** Sets `key` as an own property (a key such as `__proto__` included). */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

async function exportPairing(db: PgDatabase, home: string): Promise<{ pending: number; approved: number }> {
  const dir = pairingDir(home);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const limits: Record<string, unknown> = {};
  const known: string[] = [];
  for (const r of await db.query<{ platform: string; failures: number; locked_until: number }>(
    "SELECT platform, failures, locked_until FROM gateway_pairing_platforms ORDER BY platform",
  )) {
    known.push(r.platform);
    if (r.failures) limits[`_failures:${r.platform}`] = r.failures;
    if (r.locked_until) limits[`_lockout:${r.platform}`] = r.locked_until;
  }
  for (const r of await db.query<{ platform: string; user_id: string; last_request: number }>(
    "SELECT platform, user_id, last_request FROM gateway_pairing_requests ORDER BY platform, last_request",
  )) {
    put(limits, `${r.platform}:${r.user_id}`, r.last_request);
  }
  await writeJsonObject(rateLimitsPath(dir), limits);
  const pending = await db.query<{
    platform: string;
    request_id: string;
    hash: string;
    salt: string;
    user_id: string;
    user_name: string;
    created_at: number;
  }>(
    "SELECT platform, request_id, hash, salt, user_id, user_name, created_at FROM gateway_pairing_pending ORDER BY platform, seq",
  );
  const approved = await db.query<{
    platform: string;
    user_id: string;
    user_name: string;
    approved_at: number | null;
  }>("SELECT platform, user_id, user_name, approved_at FROM gateway_pairing_approved ORDER BY platform, seq");
  // Both files of every platform the database knows, so a stale file of the home is replaced too.
  const platforms = new Set([
    ...known,
    ...pending.map((r) => r.platform),
    ...approved.map((r) => r.platform),
  ]);
  for (const platform of platforms) {
    const file: Record<string, unknown> = {};
    for (const r of pending.filter((row) => row.platform === platform)) {
      put(file, r.request_id, {
        hash: r.hash,
        salt: r.salt,
        user_id: r.user_id,
        user_name: r.user_name,
        created_at: r.created_at,
      });
    }
    await writeJsonObject(pendingPath(dir, platform), file);
  }
  for (const platform of platforms) {
    const file: Record<string, unknown> = {};
    for (const r of approved.filter((row) => row.platform === platform)) {
      put(file, r.user_id, {
        user_name: r.user_name,
        ...(r.approved_at === null ? {} : { approved_at: r.approved_at }),
      });
    }
    await writeJsonObject(approvedPath(dir, platform), file);
  }
  return { pending: pending.length, approved: approved.length };
}

async function exportResponses(
  db: PgDatabase,
  home: string,
): Promise<{ responses: number; conversations: number }> {
  const responses = await db.query<{ response_id: string; data: string; accessed_at: number }>(
    "SELECT response_id, data, accessed_at FROM gateway_responses ORDER BY access_seq",
  );
  const conversations = await db.query<{ name: string; response_id: string }>(
    "SELECT name, response_id FROM gateway_conversations",
  );
  const path = join(home, "response_store.db");
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
  const Driver = loadDriver();
  const file = new Driver(path);
  try {
    file.exec(RESPONSE_TABLES_SQL);
    const addResponse = file.prepare(
      "INSERT INTO responses (response_id, data, accessed_at) VALUES (?, ?, ?)",
    );
    const addConversation = file.prepare("INSERT INTO conversations (name, response_id) VALUES (?, ?)");
    file.transaction(() => {
      // Strictly increasing access times keep the database's recency order in the file.
      let last = 0;
      for (const r of responses) {
        last = Math.max(r.accessed_at, last + 1e-6);
        addResponse.run(r.response_id, r.data, last);
      }
      for (const c of conversations) addConversation.run(c.name, c.response_id);
    })();
  } finally {
    file.close();
  }
  return { responses: responses.length, conversations: conversations.length };
}

/** Writes the gateway stores of `db` into the file home `home` (created when missing). */
export async function exportGatewayHome(db: PgDatabase, home: string): Promise<GatewayExportReport> {
  mkdirSync(join(home, "sessions"), { recursive: true });
  const chats: Record<string, unknown> = {};
  for (const r of await db.query<{ session_key: string; entry: string }>(
    "SELECT session_key, entry FROM gateway_chat_index ORDER BY updated_at, session_key",
  )) {
    const entry = parseObject(r.entry);
    if (entry) put(chats, r.session_key, entry);
  }
  await atomicWriteFile(join(home, "sessions", "sessions.json"), `${JSON.stringify(chats, null, 2)}\n`);

  const pairing = await exportPairing(db, home);

  const subscriptions: Record<string, unknown> = {};
  const subRows = await db.query<{ name: string; route: string }>(
    "SELECT name, route FROM gateway_webhook_subscriptions ORDER BY seq",
  );
  for (const r of subRows) {
    const route = parseObject(r.route);
    if (route) put(subscriptions, r.name, route);
  }
  await atomicWriteFile(subscriptionsPath(home), `${JSON.stringify(subscriptions, null, 2)}\n`, {
    mode: 0o600,
  });
  chmodSync(subscriptionsPath(home), 0o600);

  const { responses, conversations } = await exportResponses(db, home);

  const allowlist = (
    await db.query<{ entry: string }>("SELECT entry FROM gateway_command_allowlist ORDER BY seq")
  ).map((r) => r.entry);
  if (allowlist.length > 0 || readConfigAllowlist(home).length > 0) {
    setConfigValue(home, "command_allowlist", JSON.stringify(allowlist));
  }
  return {
    chats: Object.keys(chats).length,
    pairingPending: pairing.pending,
    pairingApproved: pairing.approved,
    webhookSubscriptions: Object.keys(subscriptions).length,
    responses,
    conversations,
    commandAllowlist: allowlist.length,
  };
}
