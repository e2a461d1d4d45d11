/**
 * Writing PostgreSQL's gateway stores back out as a file home: what instances wrote into the
 * database is there for the file stores to read (a code still approves, a Response continues),
 * secrets stay in 0600 files, hostile keys stay plain keys, and exporting twice gives the same files.
 */
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ResponseStore } from "../../../../src/gateway/api-server/response-store.js";
import { configCommandAllowlist } from "../../../../src/state/gateway/command-allowlist.js";
import { PairingStore } from "../../../../src/state/gateway/pairing.js";
import { SessionIndex } from "../../../../src/state/gateway/session-index.js";
import { WebhookSubscriptionStore } from "../../../../src/state/gateway/webhook-subscriptions.js";
import { exportGatewayHome } from "../../../../src/state/postgres/gateway-export.js";
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
const source = { platform: "telegram", chatType: "dm", chatId: "7", userId: "7" };

describe.skipIf(!BACKENDS.includes("postgres"))(
  "exporting PostgreSQL's gateway stores to a file home",
  () => {
    it("writes every store so the file stores read what the instances wrote", async () => {
      const db = await (await storage("postgres")).pool();
      const pairing = pgPairingRecords(db, { now: () => T0 });
      const first = await pairing.requestCode("telegram", { id: "7", name: "alice" });
      const second = await pairing.requestCode("telegram", { id: "__proto__", name: "odd" });
      if (first.status !== "created" || second.status !== "created") throw new Error("no code");
      await pairing.approve("telegram", first.code);
      await pgChatSessionIndex(db).set("agent:main:telegram:dm:7", "s7", source, at);
      await pgWebhookSubscriptions(db).save("gh", { secret: "s3cret", prompt: "{action}" });
      const responses = pgResponseRecords(db, { capacity: 3 });
      for (const n of [1, 2, 3]) {
        await responses.put(`resp_${n}`, {
          sessionId: `s${n}`,
          response: { id: n },
          conversationHistory: [],
          instructions: null,
        });
      }
      await responses.get("resp_1");
      await responses.setConversation("chat", "resp_3");
      await pgCommandAllowlist(db).add("recursive_delete");

      const home = mkdtempSync(join(tmpdir(), "hermes-gw-export-"));
      expect(await exportGatewayHome(db, home)).toEqual({
        chats: 1,
        pairingPending: 1,
        pairingApproved: 1,
        webhookSubscriptions: 1,
        responses: 3,
        conversations: 1,
        commandAllowlist: 1,
      });
      const files = new PairingStore({ home, now: () => T0 + 60 });
      expect(files.listApproved("telegram")).toEqual([
        { platform: "telegram", userId: "7", userName: "alice", approvedAt: T0 },
      ]);
      expect(await files.requestCode("telegram", { id: "__proto__" })).toMatchObject({
        status: "rate_limited",
      });
      expect(await files.approve("telegram", second.code)).toMatchObject({
        status: "approved",
        userId: "__proto__",
      });
      expect(new SessionIndex(home).get("agent:main:telegram:dm:7")).toMatchObject({ session_id: "s7" });
      expect(new WebhookSubscriptionStore({ home }).get("gh")).toEqual({
        secret: "s3cret",
        prompt: "{action}",
      });
      for (const f of [
        "webhook_subscriptions.json",
        "pairing/telegram-pending.json",
        "pairing/_rate_limits.json",
      ]) {
        expect(statSync(join(home, f)).mode & 0o777).toBe(0o600);
      }
      expect(readFileSync(join(home, "pairing", "telegram-pending.json"), "utf8")).not.toContain(second.code);
      const store = new ResponseStore(home, 3);
      expect(store.get(store.conversation("chat") ?? "")).toMatchObject({ sessionId: "s3" });
      // resp_2 was the least recently used in the database, so it is the first to go in the file.
      store.put("resp_4", { sessionId: "s4", response: {}, conversationHistory: [], instructions: null });
      expect(store.get("resp_2")).toBeUndefined();
      expect(store.get("resp_1")).toBeDefined();
      store.close();
      expect(await configCommandAllowlist(home).list()).toEqual(["recursive_delete"]);
    });

    it("replaces a stale pairing file of the home, and exporting twice writes the same files", async () => {
      const db = await (await storage("postgres")).pool();
      await pgPairingRecords(db, { now: () => T0 }).requestCode("discord", { id: "1" });
      await pgChatSessionIndex(db).set("k", "s", source, at);
      const home = mkdtempSync(join(tmpdir(), "hermes-gw-export-"));
      await exportGatewayHome(db, home);
      const read = () =>
        [
          "sessions/sessions.json",
          "pairing/discord-pending.json",
          "pairing/_rate_limits.json",
          "webhook_subscriptions.json",
        ].map((f) => readFileSync(join(home, f), "utf8"));
      const before = read();
      await exportGatewayHome(db, home);
      expect(read()).toEqual(before);
    });
  },
);
