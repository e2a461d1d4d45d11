/**
 * Discord's gateway session on two instances: only the lease holder opens one (one IDENTIFY at
 * the fake Discord, a user's message reaches the holder alone); the other instance is connected
 * send-only over REST and still answers. A drained holder hands the session over at once: its own
 * session closes and the other instance identifies. Real discord.js against the local fake.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connectionLease } from "../../../../src/gateway/coordination/leased-connection.js";
import { createDiscordAdapter } from "../../../../src/gateway/platforms/discord.js";
import { type FakeDiscord, startFakeDiscord } from "../../../support/fake-discord.js";
import { leasedInstances } from "../../../support/leased-instances.js";

const WAIT = { timeout: 15_000, interval: 20 };
let fake: FakeDiscord;
const leased = leasedInstances("discord", createDiscordAdapter, () => ({
  DISCORD_BOT_TOKEN: fake.token,
  DISCORD_API_URL: fake.apiBase,
}));

beforeEach(async () => {
  fake = await startFakeDiscord();
});
afterEach(async () => {
  await leased.stop();
  await fake.stop();
});

describe("the Discord gateway session under a lease", () => {
  it("is opened by the holder alone, the standby sends over REST, and a drain hands it over at once", async () => {
    const { hub, holder, standby } = await leased.pair(WAIT);
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
