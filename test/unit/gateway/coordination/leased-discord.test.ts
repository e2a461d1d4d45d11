/**
 * Discord's gateway session on two instances: only the lease holder opens one (one IDENTIFY at
 * the fake Discord, a user's message reaches the holder alone); the other instance is connected
 * send-only over REST and still answers. A drained holder hands the session over at once: its own
 * session closes and the other instance identifies. Real discord.js against the local fake.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connectionLease, LeasedConnection } from "../../../../src/gateway/coordination/leased-connection.js";
import { createDiscordAdapter } from "../../../../src/gateway/platforms/discord.js";
import type { InboundMessage, PlatformAdapter } from "../../../../src/gateway/platforms/types.js";
import { coordinatorHub } from "../../../support/coordinator-hub.js";
import { type FakeDiscord, startFakeDiscord } from "../../../support/fake-discord.js";

const WAIT = { timeout: 15_000, interval: 20 };
let fake: FakeDiscord;
const adapters: PlatformAdapter[] = [];
const connections: LeasedConnection[] = [];

beforeEach(async () => {
  fake = await startFakeDiscord();
});
afterEach(async () => {
  for (const c of connections.splice(0)) await c.handOver();
  for (const a of adapters.splice(0)) await a.disconnect();
  await fake.stop();
});

function instance(hub: ReturnType<typeof coordinatorHub>, id: string) {
  const home = mkdtempSync(join(tmpdir(), `hermes-discord-${id}-`));
  const env = { DISCORD_BOT_TOKEN: fake.token, DISCORD_API_URL: fake.apiBase };
  const adapter = createDiscordAdapter({
    home,
    env,
    settings: {},
    mediaDir: join(home, "cache", "media"),
    maxInboundMediaBytes: 1024 * 1024,
  });
  adapters.push(adapter);
  const inbox: InboundMessage[] = [];
  const connection = new LeasedConnection({
    coordinator: hub.join(id),
    lease: connectionLease("discord", env)!,
    adapter,
    handlers: { onMessage: (m) => inbox.push(m), onAction: () => undefined, onError: () => undefined },
    ttlMs: 1_000,
  });
  connections.push(connection);
  return { id, adapter, inbox, connection };
}

describe("the Discord gateway session under a lease", () => {
  it("is opened by the holder alone, the standby sends over REST, and a drain hands it over at once", async () => {
    const hub = coordinatorHub({ leaseTtlMs: 1_000 });
    const a = instance(hub, "a");
    const b = instance(hub, "b");
    await a.connection.start();
    await b.connection.start();
    await vi.waitFor(() => expect(a.connection.active || b.connection.active).toBe(true), WAIT);
    const [holder, standby] = a.connection.active ? [a, b] : [b, a];
    await fake.waitForIdentify(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.identifies).toHaveLength(1);
    expect(fake.openSessions).toBe(1);

    const alice = fake.addUser("alice");
    const sent = fake.injectMessage({ author: alice, content: "who holds the gateway?" });
    await vi.waitFor(() => expect(holder.inbox).toHaveLength(1), WAIT);
    expect(standby.inbox).toHaveLength(0);
    // Send-only: the standby answers a chat whose turn it runs.
    await standby.adapter.send({ chatId: sent.channel_id as string }, "answered by the standby");
    await fake.waitForCall("POST", /\/channels\/\d+\/messages$/);

    const started = Date.now();
    await holder.connection.handOver();
    const lease = connectionLease("discord", { DISCORD_BOT_TOKEN: fake.token })!;
    await vi.waitFor(() => expect(hub.leaseHolder(lease)).toBe(standby.id), WAIT);
    // Released, not lapsed: inside the 1 s TTL a dead holder's lease would need.
    expect(Date.now() - started).toBeLessThan(1_000);
    await vi.waitFor(() => expect(standby.connection.active).toBe(true), WAIT);
    await fake.waitForIdentify(2);
    await vi.waitFor(() => expect(fake.openSessions).toBe(1), WAIT);
    fake.injectMessage({ author: alice, content: "and now?" });
    await vi.waitFor(() => expect(standby.inbox.map((m) => m.text)).toContain("and now?"), WAIT);
    expect(holder.inbox.map((m) => m.text)).toEqual(["who holds the gateway?"]);
  }, 40_000);
});
