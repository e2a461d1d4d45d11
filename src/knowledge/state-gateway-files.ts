/**
 * Counts a file home's gateway stores as the file-backed gateway reads them, so `hermes state
 * export` can check that the files it wrote hold what the database held: `sessions/sessions.json`,
 * `pairing/<platform>-{pending,approved}.json`, `webhook_subscriptions.json`, `response_store.db`
 * and config.yaml's `command_allowlist`.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadDriver } from "../state/connection.js";
import { readConfigAllowlist } from "../state/gateway/command-allowlist.js";
import {
  approvedPath,
  pairingDir,
  pendingPath,
  platformsWithFile,
  readJsonObject,
} from "../state/gateway/pairing-files.js";
import { loadSubscriptions } from "../state/gateway/webhook-subscriptions.js";

export interface FileGatewayCounts {
  chats: number;
  pairingPending: number;
  pairingApproved: number;
  webhookSubscriptions: number;
  responses: number;
  conversations: number;
  commandAllowlist: number;
}

function chatCount(home: string): number {
  const path = join(home, "sessions", "sessions.json");
  if (!existsSync(path)) return 0;
  const data: unknown = JSON.parse(readFileSync(path, "utf8"));
  return data && typeof data === "object" ? Object.keys(data).length : 0;
}

function responseCounts(home: string): { responses: number; conversations: number } {
  const path = join(home, "response_store.db");
  if (!existsSync(path)) return { responses: 0, conversations: 0 };
  const Driver = loadDriver();
  const file = new Driver(path, { readonly: true, fileMustExist: true });
  try {
    const count = (table: string) =>
      (file.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    return { responses: count("responses"), conversations: count("conversations") };
  } finally {
    file.close();
  }
}

export function countFileGateway(home: string): FileGatewayCounts {
  const dir = pairingDir(home);
  const entries = (paths: string[]) =>
    paths.reduce((n, path) => n + Object.keys(readJsonObject<Record<string, unknown>>(path)).length, 0);
  return {
    chats: chatCount(home),
    pairingPending: entries(platformsWithFile(dir, "pending").map((p) => pendingPath(dir, p))),
    pairingApproved: entries(platformsWithFile(dir, "approved").map((p) => approvedPath(dir, p))),
    webhookSubscriptions: loadSubscriptions(home).routes.size,
    ...responseCounts(home),
    commandAllowlist: readConfigAllowlist(home).length,
  };
}
