/**
 * Telegram's getUpdates allows one consumer per bot, so with two real `hermes gateway run`
 * processes over one PostgreSQL exactly one of them polls, under the `telegram` lease (issue 27).
 * A message is answered; then the lease holder is killed with SIGKILL (no drain, no release), and
 * a message sent right after is answered by the other instance within 15 s (plus slack for a
 * loaded test machine), exactly once. The Telegram Bot API emulator speaks the real protocol.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type GatewayCluster, startCluster, waitUntil } from "../support/gateway-cluster.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.js";

const OWNER = 4242;
/** The bound for a fail-over, and what a loaded 2-core test machine may add to it. */
const FAILOVER_MS = 15_000;
const SLACK_MS = 5_000;

let pg: PostgresFixture;
let llm: FakeLlm;
let tg: TelegramEmulator;
let cluster: GatewayCluster;

beforeAll(async () => {
  if (postgresSkipReason) return;
  pg = await startPostgres();
  llm = await startFakeLlm();
  tg = await startTelegramEmulator({ botUsername: "hermes_cluster_bot" });
  llm.respondWith((request) => {
    const text = JSON.stringify(request.body);
    const word = /say (\w+)/g;
    const last = [...text.matchAll(word)].at(-1)?.[1] ?? "nothing";
    return reply().text(`You said ${last}.`).usage({ prompt: 10, completion: 3 });
  });
  cluster = await startCluster(
    {
      databaseUrl: await pg.createDatabase(),
      llmUrl: llm.url,
      apiServer: false,
      config: 'display:\n  tool_progress: "off"\n',
      env: {
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.apiRoot,
        TELEGRAM_ALLOWED_USERS: String(OWNER),
      },
    },
    2,
  );
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await tg?.stop();
  await llm?.close();
  await pg?.dispose();
}, 60_000);

const owner = () => tg.client({ userId: OWNER, username: "owner", firstName: "Owner" });
const answersTo = (word: string) => tg.botMessages(OWNER).filter((m) => m.text === `You said ${word}.`);

describe.skipIf(postgresSkipReason)("the Telegram poller across two instances", () => {
  it("is held by one instance and fails over within 15 s when that one is killed -9", async () => {
    const holder = await waitUntil(
      () => cluster.holderOf("telegram"),
      "a holder of the telegram lease",
      20_000,
    );
    const other = cluster.instances.find((i) => i !== holder)!;
    // One consumer: the other instance is not polling.
    await waitUntil(() => tg.activePolls() === 1, "one getUpdates poll", 10_000);

    const first = tg.nextBotMessage(OWNER);
    await owner().sendText("please say alpha");
    expect((await first(20_000)).text).toBe("You said alpha.");

    await holder.kill9();
    const killedAt = Date.now();
    const next = tg.nextBotMessage(OWNER);
    await owner().sendText("please say bravo");
    const answer = await next(FAILOVER_MS + SLACK_MS);
    const elapsed = Date.now() - killedAt;
    expect(answer.text).toBe("You said bravo.");
    expect(elapsed).toBeLessThan(FAILOVER_MS + SLACK_MS);

    // The survivor holds the lease now, and each message was answered once.
    expect((await cluster.holderOf("telegram"))?.pid).toBe(other.pid);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(answersTo("alpha")).toHaveLength(1);
    expect(answersTo("bravo")).toHaveLength(1);
  }, 90_000);

  it("hands the poller over at once when its holder drains on SIGTERM", async () => {
    const holder = await waitUntil(() => cluster.holderOf("telegram"), "the telegram lease holder", 20_000);
    const fresh = await cluster.add();
    const stopped = holder.stop();
    const stoppedAt = Date.now();
    // A drain releases the lease instead of letting it lapse: the new instance polls well before a
    // dead holder's lease would have expired.
    const taken = await waitUntil(
      async () => (await cluster.holderOf("telegram"))?.pid === fresh.pid,
      "the new instance holding the lease",
      FAILOVER_MS,
    );
    expect(taken).toBe(true);
    // The lease is renewed every 2 s with an 8 s TTL: a lapse takes at least 6 s, a release less.
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
    expect(await stopped).toBe(0);
    const next = tg.nextBotMessage(OWNER);
    await owner().sendText("please say charlie");
    expect((await next(FAILOVER_MS)).text).toBe("You said charlie.");
    expect(Date.now() - stoppedAt).toBeLessThan(FAILOVER_MS + SLACK_MS);
    expect(answersTo("charlie")).toHaveLength(1);
  }, 60_000);
});
