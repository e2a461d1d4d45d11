/**
 * Messages sent while an instance's listening connection is down are not lost: once it listens
 * again it reads back what it missed from `coord_messages`, each message once. The outage is made
 * for real: the listening instance connects as its own role, which is refused new logins while
 * its connections are terminated (or while the whole server is killed with SIGKILL and started
 * again), so it cannot listen again until the test lets it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CoordinationMessage } from "../../../../src/state/coordination.js";
import { openPgCoordinator, type PgCoordinatorTiming } from "../../../../src/state/postgres/coordination.js";
import { openPgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";

const FAST: PgCoordinatorTiming = {
  heartbeatMs: 200,
  instanceTtlMs: 1_000,
  leaseTtlMs: 1_000,
  pollMs: 100,
  maxReconnectMs: 200,
};

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(postgresSkipReason)("PostgreSQL coordinator: messages missed while reconnecting", () => {
  let pg: PostgresFixture;
  const closers: Array<() => Promise<void>> = [];
  let roles = 0;
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => {});
    await pg?.dispose();
  });

  /** A migrated database; `listener` connects as a role of its own, `sender` as the superuser. */
  async function pair(timing: PgCoordinatorTiming = FAST) {
    const url = await pg.createDatabase();
    const admin = await openPgDatabase(url, { max: 2 });
    closers.push(() => admin.close());
    await migrate(admin, MIGRATIONS);
    const role = `listener_${process.pid}_${++roles}`;
    await admin.query(`CREATE ROLE ${role} LOGIN SUPERUSER`);
    const listenerDb = await openPgDatabase(url.replace("postgres@", `${role}@`), { max: 3 });
    const senderDb = await openPgDatabase(url, { max: 3 });
    const listener = await openPgCoordinator(
      listenerDb,
      { host: "l", pid: 1, instanceId: "listener" },
      timing,
    );
    const sender = await openPgCoordinator(senderDb, { host: "s", pid: 2, instanceId: "sender" }, timing);
    closers.push(async () => {
      await listener.close();
      await sender.close();
      await listenerDb.close();
      await senderDb.close();
    });
    const got: CoordinationMessage[] = [];
    listener.subscribe((m) => {
      if (m.from === "sender") got.push(m);
    });
    /** Refuses the role new connections and ends the ones it has: the listener is cut off. */
    const cut = async () => {
      await admin.query(`ALTER ROLE ${role} NOLOGIN`);
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", [role]);
      await until(
        async () =>
          (
            await admin.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1",
              [role],
            )
          )[0]!.n === 0,
      );
    };
    const restore = () => admin.query(`ALTER ROLE ${role} LOGIN`);
    return { admin, listener, sender, got, cut, restore, role };
  }

  const payloads = (got: CoordinationMessage[]) => got.map((m) => (m.payload as { n: number }).n);

  it("delivers directed and broadcast messages sent during the outage once it listens again, each once", async () => {
    const { listener, sender, got, cut, restore } = await pair();
    await sender.send("listener", "approval.answer", { n: 0 });
    await until(() => got.length === 1);
    expect(got[0]!.ageMs).toBeUndefined();

    await cut();
    await sender.send("listener", "approval.answer", { n: 1 });
    await sender.publish("reload.skills", { n: 2 });
    await sender.send("someone-else", "turn.stop", { n: 99 });
    // A message too large for a NOTIFY payload travels by its row alike.
    await sender.send("listener", "chat.input", { n: 3, text: "é".repeat(10_000) });
    await sleep(600);
    expect(payloads(got)).toEqual([0]);

    await restore();
    await until(() => got.length === 4, 10_000);
    expect(payloads(got)).toEqual([0, 1, 2, 3]);
    expect(got.slice(1).map((m) => m.topic)).toEqual(["approval.answer", "reload.skills", "chat.input"]);
    for (const m of got.slice(1)) expect(m.ageMs).toBeGreaterThanOrEqual(500);
    expect((got[3]!.payload as { text: string }).text).toHaveLength(10_000);

    // Live again: new messages come by NOTIFY, and nothing is delivered a second time.
    await sender.publish("reload.memory", { n: 4 });
    await until(() => got.length === 5);
    await sleep(800);
    expect(payloads(got)).toEqual([0, 1, 2, 3, 4]);
    expect(got[4]!.ageMs).toBeUndefined();
    // And a message the listener sends itself still reaches it.
    const own: string[] = [];
    listener.subscribe((m) => {
      if (m.from === "listener") own.push(m.topic);
    });
    await listener.publish("reload.webhooks", {});
    await until(() => own.length === 1);
  }, 30_000);

  it("reads back messages sent after a server crash before its listener reconnected, and none twice", async () => {
    const { sender, got, cut, restore } = await pair({ ...FAST, maxReconnectMs: 300 });
    for (let n = 0; n < 5; n++) await sender.publish("reload.skills", { n });
    await until(() => got.length === 5);

    await cut();
    await pg.kill();
    await pg.start();
    // The sender's pool reconnects at once; the listener is still refused.
    await until(() =>
      sender.publish("reload.skills", { n: 5 }).then(
        () => true,
        () => false,
      ),
    );
    for (let n = 6; n < 10; n++) await sender.publish("reload.skills", { n });
    await sleep(500);
    expect(payloads(got)).toEqual([0, 1, 2, 3, 4]);
    await restore();
    await until(() => got.length >= 10, 15_000);
    await sleep(800);
    // The five from before the crash lie inside the read-back's margin: still delivered once.
    expect(payloads(got)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  }, 60_000);

  it("keeps what it could not read back for the next reconnection", async () => {
    const { admin, sender, got, cut, restore } = await pair();
    await cut();
    await sender.publish("reload.skills", { n: 1 });
    // The listener can connect, but reading `coord_messages` fails until the table is back.
    await admin.query("ALTER TABLE coord_messages RENAME TO coord_messages_away");
    await restore();
    await sleep(1_000);
    expect(got).toEqual([]);
    await admin.query("ALTER TABLE coord_messages_away RENAME TO coord_messages");
    await until(() => got.length === 1, 10_000);
    expect(payloads(got)).toEqual([1]);
  }, 30_000);

  it("notifies with the row id, and a large message by a string ref an instance from before the outbox reads", async () => {
    const { admin, sender } = await pair();
    const raw = await admin.connect();
    const payloads: string[] = [];
    raw.on("notification", (note) => payloads.push(note.payload ?? ""));
    await raw.query("LISTEN hermes_coord");
    try {
      await sender.send("listener", "turn.stop", { chat: "x" });
      await sender.publish("chat.input", { text: "ü".repeat(6_000) });
      await until(() => payloads.length === 2);
      const [small, large] = payloads.map((p) => JSON.parse(p) as Record<string, unknown>);
      expect(small).toMatchObject({
        to: "listener",
        topic: "turn.stop",
        from: "sender",
        payload: { chat: "x" },
      });
      expect(large).toEqual({ id: large!["id"], ref: large!["id"] });
      const rows = await admin.query<{ id: string; recipient: string | null; body: string }>(
        "SELECT id::text AS id, recipient, body FROM coord_messages ORDER BY id",
      );
      expect(rows.map((r) => [r.id, r.recipient])).toEqual([
        [small!["id"], "listener"],
        [large!["id"], null],
      ]);
      expect(JSON.parse(rows[1]!.body)).toMatchObject({ topic: "chat.input", from: "sender" });
    } finally {
      raw.release();
    }
  });
});
