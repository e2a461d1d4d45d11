/**
 * Moving a file home's gateway stores into PostgreSQL: everything a running gateway reads comes
 * across and behaves the same there (a pending code approves, a rate limit still holds, a stored
 * Response continues), counts are verified, and running it again adds nothing and overwrites
 * nothing instances wrote since.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ResponseStore } from "../../../../src/gateway/api-server/response-store.js";
import { configCommandAllowlist } from "../../../../src/state/gateway/command-allowlist.js";
import { PairingStore } from "../../../../src/state/gateway/pairing.js";
import { SessionIndex } from "../../../../src/state/gateway/session-index.js";
import { WebhookSubscriptionStore } from "../../../../src/state/gateway/webhook-subscriptions.js";
import { importGatewayHome } from "../../../../src/state/postgres/gateway-import.js";
import {
  pgChatSessionIndex,
  pgCommandAllowlist,
  pgPairingRecords,
  pgResponseRecords,
  pgWebhookSubscriptions,
} from "../../../../src/state/postgres/gateway-stores.js";
import { BACKENDS, useStorages } from "./gateway-harness.js";

const storage = useStorages();
const T0 = 1_700_000_000;
const at = new Date("2026-11-27T01:00:00.000Z");

async function fileHome(): Promise<{ home: string; code: string }> {
  const home = mkdtempSync(join(tmpdir(), "hermes-gw-import-"));
  const pairing = new PairingStore({ home, now: () => T0 });
  const approvedCode = await pairing.requestCode("telegram", { id: "7", name: "alice" });
  if (approvedCode.status !== "created") throw new Error(approvedCode.status);
  await pairing.approve("telegram", approvedCode.code);
  const pending = await pairing.requestCode("telegram", { id: "8", name: "bob" });
  if (pending.status !== "created") throw new Error(pending.status);
  // A plaintext code from an old Hermes: listed by the files until it expires, never approvable.
  const pendingFile = join(home, "pairing", "discord-pending.json");
  writeFileSync(pendingFile, JSON.stringify({ ABCDEFGH: { user_id: "9", user_name: "", created_at: T0 } }));
  const index = new SessionIndex(home);
  index.set(
    "agent:main:telegram:dm:7",
    "s7",
    { platform: "telegram", chatType: "dm", chatId: "7", userId: "7" },
    at,
  );
  await new WebhookSubscriptionStore({ home }).save("gh", {
    secret: "s",
    prompt: "{action}",
    filters: { x: 1 },
  });
  const responses = new ResponseStore(home, 100);
  for (const n of [1, 2, 3]) {
    responses.put(`resp_${n}`, {
      sessionId: `s${n}`,
      response: { id: `resp_${n}` },
      conversationHistory: [],
      instructions: null,
    });
  }
  responses.get("resp_1");
  responses.setConversation("chat", "resp_3");
  responses.close();
  mkdirSync(home, { recursive: true });
  await configCommandAllowlist(home).add("recursive_delete");
  return { home, code: pending.code };
}

describe.skipIf(!BACKENDS.includes("postgres"))(
  "importing a file home's gateway stores into PostgreSQL",
  () => {
    it("copies every store, verifies the counts, and the copies behave as the files did", async () => {
      const { home, code } = await fileHome();
      const db = await (await storage("postgres")).pool();
      const report = await importGatewayHome(db, home);
      expect(report).toEqual({
        chats: { inFiles: 1, inDatabase: 1 },
        pairingPending: { inFiles: 1, inDatabase: 1 },
        pairingApproved: { inFiles: 1, inDatabase: 1 },
        webhookSubscriptions: { inFiles: 1, inDatabase: 1 },
        responses: { inFiles: 3, inDatabase: 3 },
        conversations: { inFiles: 1, inDatabase: 1 },
        commandAllowlist: { inFiles: 1, inDatabase: 1 },
        skipped: ["pending pairing request on discord: a legacy code"],
        earlier: [],
      });
      const pairing = pgPairingRecords(db, { now: () => T0 + 60 });
      expect(await pairing.listApproved("telegram")).toEqual([
        { platform: "telegram", userId: "7", userName: "alice", approvedAt: T0 },
      ]);
      expect(await pairing.requestCode("telegram", { id: "8" })).toEqual({
        status: "rate_limited",
        retryAt: T0 + 600,
      });
      expect(await pairing.approve("telegram", code)).toMatchObject({
        status: "approved",
        userId: "8",
        userName: "bob",
      });
      expect(await pgChatSessionIndex(db).get("agent:main:telegram:dm:7")).toMatchObject({
        session_id: "s7",
      });
      expect(await pgWebhookSubscriptions(db).get("gh")).toEqual({
        secret: "s",
        prompt: "{action}",
        filters: { x: 1 },
      });
      const responses = pgResponseRecords(db, { capacity: 3 });
      expect(await responses.get((await responses.conversation("chat")) ?? "")).toMatchObject({
        sessionId: "s3",
      });
      // Recency came across: resp_2 was the least recently used in the file, so it goes first.
      await responses.put("resp_4", {
        sessionId: "s4",
        response: {},
        conversationHistory: [],
        instructions: null,
      });
      expect(await responses.get("resp_2")).toBeUndefined();
      expect(await responses.get("resp_1")).toBeDefined();
      expect(await pgCommandAllowlist(db).list()).toEqual(["recursive_delete"]);
    });

    it("running it again copies nothing again: a user revoked since stays revoked", async () => {
      const { home } = await fileHome();
      const db = await (await storage("postgres")).pool();
      await importGatewayHome(db, home);
      await pgPairingRecords(db).revoke("telegram", "7");
      await pgWebhookSubscriptions(db).save("gh", { secret: "rotated" });
      const again = await importGatewayHome(db, home);
      expect(again.chats).toEqual({ inFiles: 1, inDatabase: 1 });
      expect(await pgWebhookSubscriptions(db).get("gh")).toMatchObject({ secret: "rotated" });
      expect(await pgPairingRecords(db).isApproved("telegram", "7")).toBe(false);
      expect(again.pairingApproved).toEqual({ inFiles: 1, inDatabase: 0 });
      expect(again.earlier).toEqual([
        "chats",
        "pairing",
        "webhook_subscriptions",
        "responses",
        "command_allowlist",
      ]);
      const [{ n }] = (await db.query("SELECT count(*)::int AS n FROM gateway_responses")) as [{ n: number }];
      expect(n).toBe(3);
    });

    it("resumes after an interruption: finished stores are not copied twice, the rest are", async () => {
      const { home } = await fileHome();
      const db = await (await storage("postgres")).pool();
      const dbFile = join(home, "response_store.db");
      const good = readFileSync(dbFile);
      writeFileSync(dbFile, "this is not a database, it was cut short");
      await expect(importGatewayHome(db, home)).rejects.toThrow();
      expect(await db.query("SELECT count(*)::int AS n FROM gateway_responses")).toEqual([{ n: 0 }]);
      writeFileSync(dbFile, good);
      const resumed = await importGatewayHome(db, home);
      expect(resumed.earlier).toEqual(["chats", "pairing", "webhook_subscriptions"]);
      expect(resumed.responses).toEqual({ inFiles: 3, inDatabase: 3 });
      expect(resumed.commandAllowlist).toEqual({ inFiles: 1, inDatabase: 1 });
      expect(await db.query("SELECT count(*)::int AS n FROM gateway_chat_index")).toEqual([{ n: 1 }]);
    });

    it("an empty home imports nothing, and a broken file stops the import with its name", async () => {
      const db = await (await storage("postgres")).pool();
      const empty = mkdtempSync(join(tmpdir(), "hermes-gw-empty-"));
      const report = await importGatewayHome(db, empty);
      const { skipped, earlier, ...counts } = report;
      expect(Object.values(counts).filter((v) => v.inFiles > 0)).toEqual([]);
      expect([skipped, earlier]).toEqual([[], []]);
      mkdirSync(join(empty, "sessions"));
      writeFileSync(join(empty, "sessions", "sessions.json"), "[1, 2");
      await expect(importGatewayHome(db, empty)).rejects.toThrow(/sessions\.json is not a JSON object/);
    });
  },
);
