/**
 * The handoff ledger on a real PostgreSQL: of a receiver taking a forwarded chat message and its
 * sender taking it back, exactly one wins, however the two race; and two chat relays whose
 * receipts always come too late (a 1 ms receipt wait) still handle every forwarded message once.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatRelay } from "../../../../src/gateway/coordination/chat-relay.js";
import type { Coordinator } from "../../../../src/state/coordination.js";
import { openPgCoordinator } from "../../../../src/state/postgres/coordination.js";
import { openPgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(postgresSkipReason)("PostgreSQL handoff ledger", () => {
  let pg: PostgresFixture;
  const closers: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => {});
    await pg?.dispose();
  });

  async function two(): Promise<[Coordinator, Coordinator]> {
    const url = await pg.createDatabase();
    const dbs = [await openPgDatabase(url, { max: 6 }), await openPgDatabase(url, { max: 6 })];
    await migrate(dbs[0]!, MIGRATIONS);
    const timing = { heartbeatMs: 200, instanceTtlMs: 2_000 };
    const a = await openPgCoordinator(dbs[0]!, { host: "a", pid: 1, instanceId: "a" }, timing);
    const b = await openPgCoordinator(dbs[1]!, { host: "b", pid: 2, instanceId: "b" }, timing);
    closers.push(async () => {
      await a.close();
      await b.close();
      for (const db of dbs) await db.close();
    });
    return [a, b];
  }

  it("a take and a withdrawal racing for the same message: exactly one wins, every time", async () => {
    const [a, b] = await two();
    const ids = Array.from({ length: 150 }, (_, i) => `race-${i}`);
    for (const id of ids) await b.handoffs!.offer(id, "a");
    const results = await Promise.all(
      ids.map(async (id) => {
        const [taken, withdrawn] = await Promise.all([a.handoffs!.take(id), b.handoffs!.withdraw(id)]);
        return { taken, withdrawn };
      }),
    );
    for (const r of results) {
      expect(["taken", "withdrawn"]).toContain(r.taken);
      expect(r.taken === "taken").toBe(!r.withdrawn);
    }
    // Once settled, it stays settled.
    const first = ids[0]!;
    const settledTaken = results[0]!.taken === "taken";
    expect(await a.handoffs!.take(first)).toBe(settledTaken ? "again" : "withdrawn");
    expect(await b.handoffs!.withdraw(first)).toBe(false);
  });

  it("only the addressee takes a message, and only its sender takes it back", async () => {
    const [a, b] = await two();
    await b.handoffs!.offer("m1", "a");
    expect(await b.handoffs!.take("m1")).toBe("withdrawn");
    expect(await a.handoffs!.withdraw("m1")).toBe(false);
    expect(await a.handoffs!.take("m1")).toBe("taken");
    expect(await a.handoffs!.take("m1")).toBe("again");
    expect(await a.handoffs!.take("never-offered")).toBe("withdrawn");
  });

  it("relays whose receipts always arrive too late still handle each forwarded message exactly once", async () => {
    const [a, b] = await two();
    const home = () => mkdtempSync(join(tmpdir(), "hermes-handoff-pg-"));
    const relayA = new ChatRelay(a, { home: home(), receiptWaitMs: 1 });
    const relayB = new ChatRelay(b, { home: home(), receiptWaitMs: 1 });
    const handled: string[] = [];
    relayA.attach(() => ({ onMessage: (m) => void handled.push(`a:${m.text}`), onAction: () => undefined }));
    relayB.attach(() => ({ onMessage: (m) => void handled.push(`b:${m.text}`), onAction: () => undefined }));
    const source = { platform: "telegram", chatType: "dm" as const, chatId: "9", userId: "9" };
    const release = await relayA.admit("telegram:9", { source, text: "first" });
    expect(release).not.toBeNull();
    const texts = Array.from({ length: 40 }, (_, i) => `m${i}`);
    for (const text of texts) expect(await relayB.admit("telegram:9", { source, text })).toBeNull();
    const end = Date.now() + 15_000;
    while (handled.length < texts.length && Date.now() < end) await sleep(25);
    await sleep(500);
    expect(handled.map((h) => h.slice(2)).sort()).toEqual([...texts].sort());
    release?.();
    relayA.close();
    relayB.close();
  }, 30_000);
});
