/**
 * Two whole gateways (`startGateway`, each with its own home) as instances over one coordinator hub
 * and one Telegram bot on the emulator: the poller runs on exactly one, a drain (what SIGTERM
 * runs) hands it to the other at once, and a dead holder's poller fails over after its lease.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../../src/config/load.js";
import { connectionLease } from "../../../../src/gateway/coordination/index.js";
import { type RunningGateway, startGateway } from "../../../../src/gateway/runner.js";
import { fakeProviderConfig, tempHome } from "../../../support/cli.js";
import { type CoordinatorHub, coordinatorHub } from "../../../support/coordinator-hub.js";
import { type FakeLlm, reply, startFakeLlm } from "../../../support/fake-llm.js";
import { startTelegramEmulator, type TelegramEmulator } from "../../../support/telegram-emulator.js";

const OWNER = 4242;
let llm: FakeLlm;
let tg: TelegramEmulator;
let hub: CoordinatorHub;
const gateways: RunningGateway[] = [];

beforeEach(async () => {
  llm = await startFakeLlm();
  llm.respondWith(() => reply().text("answer from the model"));
  tg = await startTelegramEmulator();
  hub = coordinatorHub({ leaseTtlMs: 500 });
});

afterEach(async () => {
  for (const g of gateways.splice(0)) await g.stop();
  await tg.stop();
  await llm.close();
});

async function gateway(id: string): Promise<RunningGateway> {
  const h = tempHome(fakeProviderConfig(llm.url, 'display:\n  tool_progress: "off"\n'));
  const env = {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.apiRoot,
    TELEGRAM_ALLOWED_USERS: String(OWNER),
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
  };
  const running = await startGateway({
    home: h.home,
    config: loadConfig({ home: h.home, env }).config,
    env,
    coordinator: hub.join(id),
    cronIntervalSeconds: 3600,
  });
  gateways.push(running);
  return running;
}

const LEASE = () => connectionLease("telegram", { TELEGRAM_BOT_TOKEN: tg.token }) ?? "";

async function sampled<T>(work: () => Promise<T>): Promise<{ value: T; maxPolls: number }> {
  let maxPolls = 0;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      maxPolls = Math.max(maxPolls, tg.activePolls());
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const value = await work().finally(() => {
    done = true;
  });
  await sampler;
  return { value, maxPolls };
}

describe("gateway instances sharing one Telegram bot", () => {
  it("polls on exactly one instance; a drain hands the poller over at once and the other answers", async () => {
    const user = tg.client({ userId: OWNER, username: "owner" });
    const { value, maxPolls } = await sampled(async () => {
      const a = await gateway("a");
      const b = await gateway("b");
      const holder = await tg.waitFor(() => hub.leaseHolder(LEASE()), { what: "a lease holder" });
      await new Promise((r) => setTimeout(r, 700));
      const next = tg.nextBotMessage(String(OWNER));
      await user.sendText("hello");
      expect((await next(15_000)).text).toBe("answer from the model");
      const [first, second] = holder === "a" ? [a, b] : [b, a];
      const started = Date.now();
      await first.stop(); // what SIGTERM runs
      gateways.splice(gateways.indexOf(first), 1);
      const other = await tg.waitFor(() => hub.leaseHolder(LEASE()), {
        what: "the new holder",
        timeoutMs: 15_000,
      });
      return { holder, other, tookMs: Date.now() - started, second };
    });
    expect(maxPolls).toBe(1);
    expect(value.other).not.toBe(value.holder);
    // Handed over, not waited out: well under the 500 ms the hub would keep a dead holder's lease.
    expect(value.tookMs).toBeLessThan(3000);
    const next = tg.nextBotMessage(String(OWNER));
    await user.sendText("still there?");
    expect((await next(15_000)).text).toBe("answer from the model");
    expect(llm.chatRequests.length).toBe(2);
  }, 60_000);

  it("fails over when the holder dies: the other instance polls and answers within 15 s", async () => {
    await gateway("a");
    await tg.waitFor(() => hub.leaseHolder(LEASE()) === "a", { what: "a holding the poller" });
    await gateway("b");
    const killedAt = Date.now();
    hub.kill("a");
    await tg.waitFor(() => hub.leaseHolder(LEASE()) === "b", { what: "b taking over", timeoutMs: 15_000 });
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    const next = tg.nextBotMessage(String(OWNER));
    await tg.client({ userId: OWNER, username: "owner" }).sendText("after the failover");
    expect((await next(15_000)).text).toBe("answer from the model");
  }, 60_000);
});
