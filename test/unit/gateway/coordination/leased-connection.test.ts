import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectionLease, LeasedConnection } from "../../../../src/gateway/coordination/leased-connection.js";
import { createTelegramAdapter } from "../../../../src/gateway/platforms/telegram.js";
import type { InboundMessage, PlatformAdapter } from "../../../../src/gateway/platforms/types.js";
import { type CoordinatorHub, coordinatorHub } from "../../../support/coordinator-hub.js";
import { startTelegramEmulator, type TelegramEmulator } from "../../../support/telegram-emulator.js";

let tg: TelegramEmulator;
let root: string;
let hub: CoordinatorHub;
const running: Array<{ connection: LeasedConnection; adapter: PlatformAdapter }> = [];

beforeEach(async () => {
  tg = await startTelegramEmulator();
  root = mkdtempSync(join(tmpdir(), "hermes-lease-"));
  hub = coordinatorHub({ leaseTtlMs: 400 });
});

afterEach(async () => {
  for (const { connection, adapter } of running.splice(0)) {
    await connection.handOver();
    await adapter.disconnect();
  }
  await tg.stop();
  rmSync(root, { recursive: true, force: true });
});

const LEASE = () => connectionLease("telegram", { TELEGRAM_BOT_TOKEN: tg.token }) ?? "";

async function instance(id: string) {
  const adapter = createTelegramAdapter(
    {
      home: root,
      env: { TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.apiRoot },
      settings: {},
      mediaDir: join(root, id, "media"),
      maxInboundMediaBytes: 1024 * 1024,
    },
    { pollingTimeoutSeconds: 1 },
  );
  const inbox: InboundMessage[] = [];
  const states: string[] = [];
  const coordinator = hub.join(id);
  const connection = new LeasedConnection({
    coordinator,
    lease: LEASE(),
    adapter,
    handlers: { onMessage: (m) => inbox.push(m), onAction: () => undefined, onError: () => undefined },
    ttlMs: 400,
    onState: (s) => states.push(s),
  });
  await connection.start();
  running.push({ connection, adapter });
  return { id, adapter, connection, inbox, states };
}

/** Samples the emulator while `work` runs: the most getUpdates polls open at once. */
async function maxPolls<T>(work: Promise<T>): Promise<{ value: T; max: number }> {
  let max = 0;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      max = Math.max(max, tg.activePolls());
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const value = await work.finally(() => {
    done = true;
  });
  await sampler;
  return { value, max };
}

describe("single-consumer connections under a lease", () => {
  it("names leases without secrets, and leaves webhook-style inputs to every instance", () => {
    expect(connectionLease("telegram", { TELEGRAM_BOT_TOKEN: "123456:secret-part" })).toBe("telegram:123456");
    const discord = connectionLease("discord", { DISCORD_BOT_TOKEN: "very-secret-token" });
    expect(discord).toMatch(/^discord:[0-9a-f]{12}:shard0$/);
    expect(discord).not.toContain("secret");
    expect(connectionLease("slack", { SLACK_BOT_TOKEN: "xoxb-1", SLACK_APP_TOKEN: "xapp-1" })).toMatch(
      /^slack:/,
    );
    expect(
      connectionLease("slack", { SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNING_SECRET: "s" }),
    ).toBeUndefined();
    expect(
      connectionLease("slack", { SLACK_BOT_TOKEN: "x", SLACK_APP_TOKEN: "y" }, { slack: { mode: "http" } }),
    ).toBeUndefined();
    for (const webhook of ["sms", "whatsapp_cloud", "api_server", "webhook"])
      expect(connectionLease(webhook, { TWILIO_ACCOUNT_SID: "AC1" })).toBeUndefined();
    for (const one of ["signal", "email", "mattermost", "matrix", "homeassistant", "whatsapp"])
      expect(connectionLease(one, { EMAIL_ADDRESS: "bot@example.org", SIGNAL_ACCOUNT: "+15550000" })).toMatch(
        new RegExp(`^${one}:`),
      );
  });

  it("polls on exactly one instance; a user's message reaches that one only; the other can still send", async () => {
    const { value, max } = await maxPolls(
      (async () => {
        const a = await instance("a");
        const b = await instance("b");
        await tg.waitFor(() => a.connection.active || b.connection.active, { what: "a receiver" });
        await new Promise((r) => setTimeout(r, 600));
        return { a, b };
      })(),
    );
    const { a, b } = value;
    expect(max).toBe(1);
    expect([a.connection.active, b.connection.active].filter(Boolean)).toHaveLength(1);
    const holder = a.connection.active ? a : b;
    const standby = holder === a ? b : a;
    expect(hub.leaseHolder(LEASE())).toBe(holder.id);
    await tg.client({ userId: 42, username: "alice" }).sendText("hello");
    await tg.waitFor(() => holder.inbox.length === 1, { what: "the message at the holder" });
    expect(standby.inbox).toHaveLength(0);
    // Send-only: the standby instance answers a chat whose turn it runs.
    await standby.adapter.send({ chatId: "42" }, "from the standby instance");
    await tg.waitForBotMessage((m) => m.text === "from the standby instance");
  });

  it("fails over when the holder dies: the other instance polls within the lease TTL, far inside 15 s", async () => {
    const a = await instance("a");
    await tg.waitFor(() => a.connection.active, { what: "a receiving" });
    const b = await instance("b");
    await new Promise((r) => setTimeout(r, 200));
    expect(b.connection.active).toBe(false);
    const killedAt = Date.now();
    hub.kill("a");
    await tg.waitFor(() => b.connection.active, { what: "b taking over", timeoutMs: 15_000 });
    const took = Date.now() - killedAt;
    expect(took).toBeLessThan(15_000);
    expect(took).toBeGreaterThanOrEqual(350); // not before the dead holder's lease ran out
    await tg.waitFor(() => !a.connection.active, { what: "a stopped receiving (its lease lapsed)" });
    await tg.client({ userId: 43, username: "bob" }).sendText("anyone there?");
    await tg.waitFor(() => b.inbox.some((m) => m.text === "anyone there?"), { what: "the message at b" });
    expect(a.inbox.some((m) => m.text === "anyone there?")).toBe(false);
    expect(hub.leaseHolder(LEASE())).toBe("b");
  });

  it("a drained holder hands the poller over at once, not after the TTL, and still sends", async () => {
    const a = await instance("a");
    await tg.waitFor(() => a.connection.active, { what: "a receiving" });
    const b = await instance("b");
    await tg.client({ userId: 44, username: "carol" }).sendText("start something long");
    await tg.waitFor(() => a.inbox.length === 1, { what: "the message at a" });
    const started = Date.now();
    const { max } = await maxPolls(
      (async () => {
        await a.connection.handOver();
        await tg.waitFor(() => b.connection.active, { what: "b taking over" });
      })(),
    );
    expect(Date.now() - started).toBeLessThan(400);
    expect(max).toBeLessThanOrEqual(1);
    expect(a.connection.active).toBe(false);
    expect(a.states).toEqual(["receiving", "standby"]);
    await a.adapter.send({ chatId: "44" }, "last words from a draining turn");
    await tg.waitForBotMessage((m) => m.text === "last words from a draining turn");
    await tg.client({ userId: 44, username: "carol" }).sendText("and now?");
    await tg.waitFor(() => b.inbox.some((m) => m.text === "and now?"), { what: "the next message at b" });
    expect(a.inbox).toHaveLength(1);
  });
});
