/**
 * The adapters' half of at-least-once feed delivery, on a real PostgreSQL with the Telegram Bot API
 * emulator and the signal-cli fake: an update taken by an instance that dies before the router
 * called its receipt's `done` is handed on again by the next receiving instance, once, marked
 * `redelivered`; updates with nothing for the router are done at once; Signal events are taken
 * once across instances under their sender-and-timestamp id, whatever the daemon replays.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { feedIdOf } from "../../../../src/gateway/platforms/feed-delivery.js";
import { createSignalAdapter } from "../../../../src/gateway/platforms/signal.js";
import { createTelegramAdapter } from "../../../../src/gateway/platforms/telegram.js";
import type { FeedLedger, InboundMessage, PlatformAdapter } from "../../../../src/gateway/platforms/types.js";
import { pgFeedLedger } from "../../../../src/state/postgres/coordination-feeds.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { type FakeSignalCli, startFakeSignalCli } from "../../../support/fake-signal-cli.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { startTelegramEmulator, type TelegramEmulator } from "../../../support/telegram-emulator.js";

const until = async <T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  ms = 10_000,
): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe.skipIf(postgresSkipReason)("feed messages handed on again after their taker died", () => {
  let pg: PostgresFixture;
  let db: PgDatabase;
  let root: string;
  let tg: TelegramEmulator | undefined;
  let signal: FakeSignalCli | undefined;
  const adapters: PlatformAdapter[] = [];

  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterEach(async () => {
    for (const adapter of adapters.splice(0)) await adapter.disconnect();
    await tg?.stop();
    await signal?.stop();
    tg = signal = undefined;
    await db?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });
  afterAll(async () => {
    await pg?.dispose();
  });

  async function setup(): Promise<void> {
    db = await openPgDatabase(await pg.createDatabase(), { max: 6 });
    await migrate(db, MIGRATIONS);
    root = mkdtempSync(join(tmpdir(), "hermes-feed-redelivery-"));
  }

  /** `id` alive now (or its heartbeat `ageMs` old: dead past the 2 s TTL used here). */
  async function instance(id: string, ageMs = 0): Promise<FeedLedger> {
    await db.query(
      `INSERT INTO coord_instances (id, host, pid, last_seen_at)
       VALUES ($1, 'h', 1, clock_timestamp() - ($2::double precision * interval '1 millisecond'))
       ON CONFLICT (id) DO UPDATE SET last_seen_at = EXCLUDED.last_seen_at`,
      [id, ageMs],
    );
    return pgFeedLedger(db, tg ? `telegram:${tg.bot.id}` : "signal:test", id, { instanceTtlMs: 2_000 });
  }

  async function receive(adapter: PlatformAdapter, feed: FeedLedger) {
    adapters.push(adapter);
    const got: InboundMessage[] = [];
    await adapter.connect(
      { onMessage: (m) => got.push(m), onAction: () => undefined, onError: () => undefined },
      { feed },
    );
    return got;
  }

  const telegram = () =>
    createTelegramAdapter(
      {
        home: root,
        env: { TELEGRAM_BOT_TOKEN: tg!.token, TELEGRAM_API_ROOT: tg!.apiRoot },
        settings: {},
        mediaDir: join(root, "media"),
        maxInboundMediaBytes: 1024 * 1024,
      },
      { pollingTimeoutSeconds: 1 },
    );

  const undone = async () =>
    (
      await db.query<{ id: string }>(
        "SELECT update_id::text AS id FROM coord_feed_seen WHERE done_at IS NULL ORDER BY update_id",
      )
    ).map((r) => Number(r.id));

  it("Telegram: a message whose taker died mid-turn comes again once; one it finished does not", async () => {
    await setup();
    tg = await startTelegramEmulator();
    const ann = tg.client({ userId: 501, firstName: "Ann" });
    const gotA = await receive(telegram(), await instance("a"));
    await ann.sendText("answered before the crash");
    await ann.sendText("in flight at the crash");
    await until(() => gotA.length === 2, "both messages at a");
    // The router finished the first turn; the second's was still running when a was killed.
    gotA[0]!.receipt!.done();
    expect(gotA[1]!.receipt!.redelivered).toBeUndefined();
    await until(async () => (await undone()).length === 1, "the first marked done");
    await adapters.shift()!.disconnect();
    await instance("a", 60_000);

    const gotB = await receive(telegram(), await instance("b"));
    await until(() => gotB.length === 1, "the unfinished message at b");
    expect(gotB[0]!.text).toBe("in flight at the crash");
    expect(gotB[0]!.receipt!.redelivered?.attempts).toBe(2);
    // New messages still flow at b, and nothing comes twice.
    await ann.sendText("after the hand-over");
    await until(() => gotB.length === 2, "the next message at b");
    expect(gotB.map((m) => m.text)).toEqual(["in flight at the crash", "after the hand-over"]);
    for (const m of gotB) m.receipt!.done();
    await until(async () => (await undone()).length === 0, "every update done");
  });

  it("Telegram: an update with nothing for the agent (an edit) is done when taken; only the message waits", async () => {
    await setup();
    tg = await startTelegramEmulator();
    const got = await receive(telegram(), await instance("a"));
    await tg.sendUpdate({
      edited_message: {
        message_id: 9,
        date: 1,
        chat: { id: 501, type: "private" },
        from: { id: 501, is_bot: false, first_name: "Ann" },
        text: "edited",
      },
    });
    await tg.client({ userId: 501, firstName: "Ann" }).sendText("hi");
    await until(() => got.length === 1, "the message");
    await new Promise((r) => setTimeout(r, 300));
    // Only the message waits for the router.
    expect(await undone()).toHaveLength(1);
  });

  it("Signal: two instances reading the same event stream hand each event on once; a dead taker's comes again", async () => {
    await setup();
    signal = await startFakeSignalCli();
    const adapter = () =>
      createSignalAdapter(
        {
          home: root,
          env: { SIGNAL_HTTP_URL: signal!.url, SIGNAL_ACCOUNT: signal!.account },
          settings: {},
          mediaDir: join(root, "media"),
          maxInboundMediaBytes: 1024 * 1024,
        },
        { retryInitialMs: 50 },
      );
    // A stalled old holder and the new one both read the stream for a while.
    const gotA = await receive(adapter(), await instance("a"));
    const gotB = await receive(adapter(), await instance("b"));
    const stamps = [signal.dm("+15550002222", "one"), signal.dm("+15550002222", "two")];
    await until(() => gotA.length + gotB.length === 2, "both events handed on");
    await new Promise((r) => setTimeout(r, 300));
    expect([...gotA, ...gotB].map((m) => m.text).sort()).toEqual(["one", "two"]);
    const ids = stamps.map((ts) => feedIdOf(`+15550002222:${ts}`));
    expect(ids.every((id) => Number.isSafeInteger(id) && id >= 0)).toBe(true);

    // The instance holding "one"'s receipt dies before done; a replay of the whole buffer to a new
    // connection is dropped (taken), and the unfinished one comes again at the survivor.
    const holderOfOne = gotA.some((m) => m.text === "one") ? "a" : "b";
    const survivorGot = holderOfOne === "a" ? gotB : gotA;
    for (const m of [...gotA, ...gotB]) if (m.text !== "one") m.receipt!.done();
    await adapters[holderOfOne === "a" ? 0 : 1]!.disconnect();
    await instance(holderOfOne, 60_000);
    await until(
      () => survivorGot.some((m) => m.text === "one" && m.receipt?.redelivered),
      "one again",
      10_000,
    );
    signal.dropStreams({ forgetIds: true });
    signal.dm("+15550002222", "three");
    await until(() => survivorGot.some((m) => m.text === "three"), "three");
    await new Promise((r) => setTimeout(r, 500));
    expect(survivorGot.filter((m) => m.text === "one")).toHaveLength(1);
    expect([...gotA, ...gotB].filter((m) => m.text === "two")).toHaveLength(1);
    expect([...gotA, ...gotB].filter((m) => m.text === "three")).toHaveLength(1);
  });
});
