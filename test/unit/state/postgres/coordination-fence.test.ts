/**
 * Fenced chat claims on a real PostgreSQL: a holder that stalls or loses the database past the
 * instance TTL finds its claim invalid before anything else happens, `ensure()` rejects and `lost`
 * fires once another instance took the chat, and a renewal racing a take-over never leaves both
 * instances believing they hold it.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChatClaim, ChatClaimLostError, type Coordinator } from "../../../../src/state/coordination.js";
import { openPgCoordinator, type PgCoordinatorTiming } from "../../../../src/state/postgres/coordination.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";

const TTL = 800;
const MARGIN = 200;
const FAST: PgCoordinatorTiming = {
  heartbeatMs: 100,
  instanceTtlMs: TTL,
  claimMarginMs: MARGIN,
  leaseTtlMs: TTL,
  pollMs: 50,
  maxReconnectMs: 300,
};
const WORKER = resolve(import.meta.dirname, "../../../support/chat-fence-worker.ts");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `db` with its statements held back (a hung connection) or failing (the server gone) on demand. */
function cuttable(db: PgDatabase) {
  let mode: "open" | "hang" | "fail" = "open";
  let matches: (sql: string) => boolean = () => true;
  const waiters: Array<() => void> = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  const wrapped = new Proxy(db, {
    get(target, prop) {
      if (prop === "query")
        return async (sql: string, params?: unknown[]) => {
          while (mode !== "open" && matches(sql)) {
            if (mode === "fail") throw new Error("connect ECONNREFUSED (cut off by the test)");
            await new Promise<void>((r) => waiters.push(r));
          }
          return target.query(sql, params);
        };
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    db: wrapped,
    hang(which: (sql: string) => boolean = () => true) {
      mode = "hang";
      matches = which;
      wake(); // statements held back so far are judged again
    },
    fail() {
      mode = "fail";
      matches = () => true;
      wake();
    },
    open() {
      mode = "open";
      wake();
    },
  };
}

async function claimOf(c: Coordinator, key: string): Promise<ChatClaim> {
  const result = await c.claimChat(key);
  if (!("claimed" in result)) throw new Error(`${key} is held by ${result.heldBy}`);
  return result.claimed;
}

async function takeOver(c: Coordinator, key: string, timeoutMs = 10_000): Promise<ChatClaim> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const result = await c.claimChat(key);
    if ("claimed" in result) return result.claimed;
    if (Date.now() > end) throw new Error(`${key} still held by ${result.heldBy}`);
    await sleep(25);
  }
}

describe.skipIf(postgresSkipReason)("PostgreSQL coordinator: fenced chat claims", () => {
  let pg: PostgresFixture;
  const dbs: PgDatabase[] = [];
  const coordinators: Coordinator[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const c of coordinators) await c.close().catch(() => {});
    for (const db of dbs) await db.close();
    await pg?.dispose();
  });

  async function pair() {
    const url = await pg.createDatabase();
    const admin = await openPgDatabase(url, { max: 2 });
    dbs.push(admin);
    await migrate(admin, MIGRATIONS);
    const open = async (id: string) => {
      const db = await openPgDatabase(url, { max: 4 });
      dbs.push(db);
      const lines: string[] = [];
      const c = await openPgCoordinator(
        db,
        { host: id, pid: 1, instanceId: id },
        { ...FAST, log: (l) => lines.push(l) },
      );
      coordinators.push(c);
      return { c, lines };
    };
    const aDb = await openPgDatabase(url, { max: 4 });
    dbs.push(aDb);
    const cut = cuttable(aDb);
    const aLines: string[] = [];
    const a = await openPgCoordinator(
      cut.db,
      { host: "a", pid: 1, instanceId: "a" },
      { ...FAST, log: (l) => aLines.push(l) },
    );
    coordinators.push(a);
    const { c: b } = await open("b");
    return { url, admin, a, b, cut, aLines };
  }

  it("keeps a live holder's claim valid past many TTLs, without a database round trip per check", async () => {
    const { a, b } = await pair();
    const claim = await claimOf(a, "telegram:1");
    for (let i = 0; i < 8; i++) {
      await sleep(TTL / 2);
      expect(claim.valid()).toBe(true);
      expect(await b.claimChat("telegram:1")).toEqual({ heldBy: "a" });
    }
    expect(claim.lost.aborted).toBe(false);
    await claim.ensure();
    await claim.release();
    expect(claim.valid()).toBe(false);
    await expect(claim.ensure()).rejects.toBeInstanceOf(ChatClaimLostError);
    expect(claim.lost.aborted).toBe(false);
  });

  it("a holder cut off past the TTL: invalid before another can take over; ensure rejects and lost fires once one did", async () => {
    const { a, b, cut, aLines } = await pair();
    const claim = await claimOf(a, "slack:C1");
    await sleep(300);
    const cutAt = Date.now();
    cut.hang();
    while (claim.valid()) await sleep(5);
    const invalidAt = Date.now();
    const invalidAfter = invalidAt - cutAt;
    // Invalid here no later than the TTL minus the margin after the last confirmation.
    expect(invalidAfter).toBeLessThanOrEqual(TTL - MARGIN + 50);
    expect(await b.claimChat("slack:C1")).toEqual({ heldBy: "a" });
    let settled: string | undefined;
    const ensuring = claim.ensure().then(
      () => {
        settled = "resolved";
      },
      (error: unknown) => {
        settled = error instanceof ChatClaimLostError ? "lost" : String(error);
      },
    );
    const taken = await takeOver(b, "slack:C1");
    // Not before the TTL had passed since a's last confirmation: at least the margin after a
    // stopped trusting its claim.
    expect(Date.now() - invalidAt).toBeGreaterThanOrEqual(MARGIN - 50);
    expect(taken.valid()).toBe(true);
    expect(settled).toBeUndefined(); // a waits for the database, it does not guess
    cut.open();
    await ensuring;
    expect(settled).toBe("lost");
    expect(claim.lost.aborted).toBe(true);
    expect(claim.lost.reason).toBeInstanceOf(ChatClaimLostError);
    expect(claim.valid()).toBe(false);
    expect(aLines.join("\n")).toMatch(/lost chat slack:C1: another instance took it over/);
    // The new holder is untouched by a's discovery.
    await sleep(TTL);
    expect(taken.valid()).toBe(true);
    expect(await a.claimChat("slack:C1")).toEqual({ heldBy: "b" });
  });

  it("a holder that stalled past the TTL keeps its chat when nobody took it", async () => {
    const { a, cut } = await pair();
    const claim = await claimOf(a, "discord:7");
    cut.hang();
    await sleep(TTL + 300);
    expect(claim.valid()).toBe(false);
    const ensuring = claim.ensure();
    cut.open();
    await ensuring;
    expect(claim.valid()).toBe(true);
    expect(claim.lost.aborted).toBe(false);
  });

  it("gives a claim up by itself once the database fails past its expiry", async () => {
    const { a, b, cut } = await pair();
    const claim = await claimOf(a, "signal:9");
    cut.fail();
    const lost = new Promise<number>((r) => claim.lost.addEventListener("abort", () => r(Date.now())));
    const cutAt = Date.now();
    const gaveUpAt = await lost;
    expect(gaveUpAt - cutAt).toBeGreaterThanOrEqual(TTL - MARGIN);
    expect(gaveUpAt - cutAt).toBeLessThan(TTL + 500);
    await expect(claim.ensure()).rejects.toBeInstanceOf(ChatClaimLostError);
    cut.open();
    await takeOver(b, "signal:9");
  });

  it("a renewal racing a take-over never leaves both instances holding the chat (200 races or more)", async () => {
    const { a, b, admin, cut } = await pair();
    let aWon = 0;
    let bWon = 0;
    let rounds = 0;
    // Five rounds, then more (up to ten, each with a wider head start) while one side has won
    // none: a loaded machine can tip the fixed head starts one way.
    for (let round = 0; round < 10 && (round < 5 || aWon === 0 || bWon === 0); round++) {
      rounds++;
      const favour = round < 5 ? (round % 2 === 0 ? "a" : "b") : aWon === 0 ? "a" : "b";
      const extra = round < 5 ? 0 : 50 * (round - 4);
      const keys = Array.from({ length: 40 }, (_, i) => `race:${round}:${i}`);
      const claims = await Promise.all(keys.map((k) => claimOf(a, k)));
      // a's heartbeat stops for good (its instance row goes stale); its confirmations wait.
      cut.hang();
      await sleep(TTL + 100);
      cut.hang((sql) => sql.includes("coord_instances"));
      // Now a confirms (one statement for all) while b takes over key by key, interleaved; a
      // starts first in even rounds, b 30 ms ahead in odd ones, so each side wins some.
      const aStart = favour === "a" ? 0 : 30 + extra;
      const aSide = sleep(aStart).then(() =>
        Promise.all(
          claims.map((c) =>
            c.ensure().then(
              () => c.valid(),
              () => false,
            ),
          ),
        ),
      );
      const bSide = Promise.all(
        keys.map(async (k, i) => {
          await sleep((favour === "a" ? 2 + extra : 0) + (i % 7));
          const result = await b.claimChat(k);
          return "claimed" in result ? result.claimed : undefined;
        }),
      );
      const [aHolds, bClaims] = await Promise.all([aSide, bSide]);
      const rows = await admin.query<{ key: string; holder: string }>(
        "SELECT key, holder FROM coord_chat_claims WHERE key = ANY($1::text[])",
        [keys],
      );
      const holder = new Map(rows.map((r) => [r.key, r.holder]));
      keys.forEach((k, i) => {
        const aBelieves = aHolds[i] === true;
        const bBelieves = bClaims[i] !== undefined;
        expect(aBelieves && bBelieves, `both hold ${k}`).toBe(false);
        expect(aBelieves || bBelieves, `nobody holds ${k}`).toBe(true);
        expect(holder.get(k)).toBe(aBelieves ? "a" : "b");
        if (!aBelieves) expect(claims[i]!.lost.aborted).toBe(true);
        if (aBelieves) aWon++;
        else bWon++;
      });
      for (const c of [...claims, ...bClaims]) await c?.release();
      cut.open();
      await sleep(3 * FAST.heartbeatMs!);
    }
    expect(aWon + bWon).toBe(40 * rounds);
    // Both sides won some: the races were real.
    expect(aWon).toBeGreaterThan(0);
    expect(bWon).toBeGreaterThan(0);
  }, 60_000);

  it("a holder whose event loop stalled meets an invalid claim in its first callback, and loses it to the instance that took over", async () => {
    const { url, b } = await pair();
    const child = spawn(
      process.execPath,
      ["--import", "tsx", WORKER, url, "telegram:55", JSON.stringify(FAST), String(TTL * 3)],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    try {
      const lines = createInterface({ input: child.stdout! });
      const next = () =>
        new Promise<Record<string, unknown>>((r) => lines.once("line", (l) => r(JSON.parse(l))));
      const ready = await next();
      expect(ready["validBefore"]).toBe(true);
      expect(await b.claimChat("telegram:55")).toEqual({ heldBy: ready["instanceId"] });
      const report = next();
      child.stdin!.write("stall\n");
      const taken = await takeOver(b, "telegram:55");
      expect(taken.valid()).toBe(true);
      expect(await report).toEqual({
        validAtWake: false,
        lostAtWake: false,
        ensured: "ChatClaimLostError",
        lost: true,
        validAfter: false,
      });
      expect(await b.claimChat("telegram:55")).toEqual({ heldBy: "b" });
    } finally {
      child.kill("SIGKILL");
    }
  }, 30_000);
});
