/**
 * Telegram updates across instances: a poller that died after fetching a batch never confirmed it
 * to Telegram (the confirmation is the offset of its next getUpdates), so the next lease holder is
 * given the same updates again. The feed's position and the ids taken live in PostgreSQL
 * (`coord_feed_offsets`, `coord_feed_seen`): the next poller resumes after them and hands on only
 * updates nobody took. The Telegram Bot API emulator keeps unconfirmed updates exactly as
 * Telegram does.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTelegramAdapter } from "../../../../src/gateway/platforms/telegram.js";
import type { FeedLedger, InboundMessage, PlatformAdapter } from "../../../../src/gateway/platforms/types.js";
import { pgFeedLedger, pruneFeeds } from "../../../../src/state/postgres/coordination-feeds.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { startTelegramEmulator, type TelegramEmulator } from "../../../support/telegram-emulator.js";

const FEED = "telegram:777";

describe.skipIf(postgresSkipReason)("Telegram's update feed shared through PostgreSQL", () => {
  let pg: PostgresFixture;
  let tg: TelegramEmulator;
  let root: string;
  const pools: PgDatabase[] = [];
  const adapters: PlatformAdapter[] = [];

  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterEach(async () => {
    for (const adapter of adapters.splice(0)) await adapter.disconnect();
    await tg?.stop();
    for (const db of pools.splice(0)) await db.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });
  afterAll(async () => {
    await pg?.dispose();
  });

  async function database() {
    const db = await openPgDatabase(await pg.createDatabase(), { max: 4 });
    pools.push(db);
    await migrate(db, MIGRATIONS);
    return db;
  }

  /** A receiving Telegram adapter (another instance's poller) with `feed`; what it hands on. */
  async function poller(feed: FeedLedger | undefined) {
    const adapter = createTelegramAdapter(
      {
        home: root,
        env: { TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.apiRoot },
        settings: {},
        mediaDir: join(root, "media"),
        maxInboundMediaBytes: 1024 * 1024,
      },
      { pollingTimeoutSeconds: 1 },
    );
    adapters.push(adapter);
    const got: InboundMessage[] = [];
    const errors: string[] = [];
    await adapter.connect(
      { onMessage: (m) => got.push(m), onAction: () => undefined, onError: (e) => errors.push(String(e)) },
      feed ? { feed } : {},
    );
    return { adapter, texts: () => got.map((m) => m.text), errors };
  }

  async function emulator() {
    tg = await startTelegramEmulator();
    root = mkdtempSync(join(tmpdir(), "hermes-tg-feed-"));
    return tg.client({ userId: 501, firstName: "Ann" });
  }

  it("hands each id to one instance when two take the same batch at once, and keeps the furthest position", async () => {
    const db = await database();
    const a = pgFeedLedger(db, FEED, "a");
    const b = pgFeedLedger(db, FEED, "b");
    expect(await a.resumeAt()).toBeUndefined();
    const ids = Array.from({ length: 200 }, (_, i) => 1_000 + i);
    const [byA, byB] = await Promise.all([a.take(ids, 1_200), b.take([...ids].reverse(), 1_200)]);
    expect([...byA, ...byB].sort((x, y) => x - y)).toEqual(ids);
    expect(byA.filter((id) => byB.includes(id))).toEqual([]);
    // Answers keep the caller's order.
    expect(byB).toEqual([...byB].sort((x, y) => y - x));
    // A late writer never moves the position back.
    expect(await b.take([999], 1_000)).toEqual([999]);
    expect(await a.resumeAt()).toBe(1_200);
    // Another bot's feed is its own.
    expect(await pgFeedLedger(db, "telegram:888", "a").take([1_000], 1_001)).toEqual([1_000]);
    await expect(a.take([1.5], 2)).rejects.toThrow(/update ids must be integers/);
    // Taken ids are forgotten after two days (Telegram itself keeps an update one day).
    await db.query(
      "UPDATE coord_feed_seen SET taken_at = clock_timestamp() - interval '3 days' WHERE update_id = 1000",
    );
    await pruneFeeds(db);
    expect(await b.take([1_000, 1_001], 1_200)).toEqual([1_000]);
  });

  it("a poller taking over after one that died with an unconfirmed batch hands on only what came after", async () => {
    const db = await database();
    const ann = await emulator();
    const sent = [await ann.sendText("one"), await ann.sendText("two"), await ann.sendText("three")];
    const ids = sent.map((m) => m.update_id);
    // The dead poller fetched them and recorded them, then died before its next getUpdates.
    expect(await pgFeedLedger(db, FEED, "dead").take(ids, Math.max(...ids) + 1)).toEqual(ids);
    expect(tg.pendingUpdates()).toBe(3);

    const next = await poller(pgFeedLedger(db, FEED, "next"));
    await ann.sendText("four");
    await tg.waitFor(() => next.texts().includes("four"), { what: "the new message handed on" });
    expect(next.texts()).toEqual(["four"]);
    // Resuming at the kept position confirmed the dead poller's batch to Telegram.
    await tg.waitFor(() => tg.pendingUpdates() === 0, { what: "every update confirmed" });
    expect(tg.calls("getUpdates")[0]?.params["offset"]).toBe(Math.max(...ids) + 1);
  });

  it("without the kept position the batch comes again and is handed on once; with no feed at all, twice", async () => {
    const db = await database();
    const ann = await emulator();
    const sent = [await ann.sendText("one"), await ann.sendText("two")];
    const ids = sent.map((m) => m.update_id);
    await pgFeedLedger(db, FEED, "dead").take(ids, Math.max(...ids) + 1);
    const real = pgFeedLedger(db, FEED, "next");
    const forgetful: FeedLedger = { resumeAt: async () => undefined, take: (i, n) => real.take(i, n) };
    const next = await poller(forgetful);
    await ann.sendText("three");
    await tg.waitFor(() => next.texts().includes("three"), { what: "the new message" });
    expect(next.texts()).toEqual(["three"]);
    expect(tg.calls("getUpdates")[0]?.params["offset"]).toBeUndefined();
    await next.adapter.disconnect();

    // The same situation with no shared feed (what a poller did before): the taken batch again.
    const ben = tg.client({ userId: 502, firstName: "Ben" });
    const again = [await ben.sendText("five"), await ben.sendText("six")].map((m) => m.update_id);
    await pgFeedLedger(db, FEED, "dead").take(again, Math.max(...again) + 1);
    const lone = await poller(undefined);
    await tg.waitFor(() => lone.texts().includes("six"), { what: "the lone poller's messages" });
    expect(lone.texts()).toEqual(["five", "six"]);
  });

  it("hands nothing on while the taken ids cannot be recorded, then each update once", async () => {
    const db = await database();
    const ann = await emulator();
    const real = pgFeedLedger(db, FEED, "next");
    let failures = 2;
    const flaky: FeedLedger = {
      resumeAt: () => real.resumeAt(),
      async take(i, n) {
        if (failures-- > 0) throw new Error("connection terminated unexpectedly");
        return real.take(i, n);
      },
    };
    const next = await poller(flaky);
    await ann.sendText("hello");
    await ann.sendText("again");
    await tg.waitFor(() => next.texts().length >= 2, { what: "both messages", timeoutMs: 15_000 });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(next.texts()).toEqual(["hello", "again"]);
    expect(next.errors.join("\n")).toMatch(
      /could not record Telegram updates as taken: Error: connection terminated/,
    );
  }, 30_000);
});
