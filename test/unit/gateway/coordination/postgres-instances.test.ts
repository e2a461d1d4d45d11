/**
 * The gateway's coordination over a real PostgreSQL (the coordinator of state/postgres): chats
 * serialised across instances, `/stop` reaching the running turn, and the Telegram poller taken
 * over when the process holding its lease is killed -9.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { connectionLease, LeasedConnection } from "../../../../src/gateway/coordination/leased-connection.js";
import { createTelegramAdapter } from "../../../../src/gateway/platforms/telegram.js";
import type { InboundMessage } from "../../../../src/gateway/platforms/types.js";
import type { Coordinator } from "../../../../src/state/coordination.js";
import { openPgCoordinator, type PgCoordinatorTiming } from "../../../../src/state/postgres/coordination.js";
import { openPgDatabase, type PgDatabase } from "../../../../src/state/postgres/database.js";
import { migrate } from "../../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../../src/state/postgres/migrations/index.js";
import { type Instance, type Instances, startInstances, until } from "../../../support/gateway-instances.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { say } from "../../../support/scripted-transport.js";
import { startTelegramEmulator } from "../../../support/telegram-emulator.js";

const WORKER = resolve(import.meta.dirname, "../../../support/coordinator-worker.ts");
const FAST: PgCoordinatorTiming = {
  heartbeatMs: 200,
  instanceTtlMs: 1_000,
  leaseTtlMs: 1_000,
  cronLeaseMs: 1_000,
  pollMs: 100,
  maxReconnectMs: 300,
};

describe.skipIf(postgresSkipReason)("gateway instances over PostgreSQL", () => {
  let pg: PostgresFixture;
  const pools: PgDatabase[] = [];
  const coordinators: Coordinator[] = [];
  let running: Instances | undefined;

  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterEach(async () => {
    await running?.stop();
    running = undefined;
    for (const c of coordinators.splice(0)) await c.close().catch(() => undefined);
    for (const db of pools.splice(0)) await db.close().catch(() => undefined);
  });
  afterAll(async () => {
    await pg?.dispose();
  });

  async function coordinatorsOn(n: number) {
    const url = await pg.createDatabase();
    const admin = await openPgDatabase(url);
    pools.push(admin);
    await migrate(admin, MIGRATIONS);
    const list: Array<{ db: PgDatabase; coordinator: Coordinator; url: string }> = [];
    for (let i = 0; i < n; i++) {
      const db = await openPgDatabase(url, { max: 4 });
      const coordinator = await openPgCoordinator(
        db,
        { host: "test", pid: 2000 + i, instanceId: `g${i}` },
        FAST,
      );
      pools.push(db);
      coordinators.push(coordinator);
      list.push({ db, coordinator, url });
    }
    return list;
  }

  it("a chat's second message arriving at B while A runs the turn is queued on A; /stop via B stops A's next turn", async () => {
    const [x, y] = await coordinatorsOn(2);
    const config = { display: { ...defaultConfig().display, busy_input_mode: "queue" } };
    running = startInstances(["a", "b"], {
      config,
      coordinators: [x?.coordinator, y?.coordinator].filter((c): c is Coordinator => c !== undefined),
    });
    const [a, b] = running.list as [Instance, Instance];
    let open!: () => void;
    a.model.push(say("answer one"), new Promise<void>((r) => (open = r))).push(say("answer two"));
    a.adapter.from("100", "one");
    await until(() => a.model.requests.length === 1, "A's model call");
    b.adapter.from("100", "two");
    await until(() => a.adapter.texts().some((m) => m.startsWith("📥 Queued")), "A's queued notice", 15_000);
    open();
    await until(() => a.adapter.texts().includes("answer two"), "A's second answer", 15_000);
    expect(b.model.requests).toHaveLength(0);
    expect(running.overlap.max).toBe(1);
    // A long turn on A, stopped from B.
    a.model.push(say("never delivered"), new Promise(() => undefined));
    a.adapter.from("100", "work on it");
    await until(() => a.model.requests.length === 3, "A's third model call");
    b.adapter.from("100", "/stop");
    await until(() => a.adapter.texts().some((m) => /stop/i.test(m)), "the stop answered on A", 15_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(a.adapter.texts()).not.toContain("never delivered");
    expect(b.model.requests).toHaveLength(0);
  }, 60_000);

  it("the Telegram poller fails over to this instance within 15 s when the holding process is killed -9", async () => {
    const tg = await startTelegramEmulator();
    const root = mkdtempSync(join(tmpdir(), "hermes-pg-lease-"));
    const [member] = await coordinatorsOn(1);
    const lease = connectionLease("telegram", { TELEGRAM_BOT_TOKEN: tg.token }) ?? "";
    const worker = spawn(
      process.execPath,
      ["--import", "tsx", WORKER, member?.url ?? "", "lease", lease, JSON.stringify(FAST)],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
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
    const inbox: InboundMessage[] = [];
    const connection = new LeasedConnection({
      coordinator: member?.coordinator as Coordinator,
      lease,
      adapter,
      handlers: { onMessage: (m) => inbox.push(m), onAction: () => undefined, onError: () => undefined },
      ttlMs: 1_000,
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: worker.stdout }).once("line", resolve);
        worker.once("exit", (code) => reject(new Error(`worker exited ${code}`)));
      });
      expect(JSON.parse(line).held).toBe(true);
      await connection.start();
      await new Promise((r) => setTimeout(r, 1500));
      expect(connection.active).toBe(false);
      expect(tg.activePolls()).toBe(0);
      const killedAt = Date.now();
      worker.kill("SIGKILL");
      await tg.waitFor(() => connection.active, { what: "this instance taking over", timeoutMs: 15_000 });
      expect(Date.now() - killedAt).toBeLessThan(15_000);
      await tg.client({ userId: 77, username: "dora" }).sendText("after the fail-over");
      await tg.waitFor(() => inbox.some((m) => m.text === "after the fail-over"), { what: "the message" });
    } finally {
      worker.kill("SIGKILL");
      await connection.handOver();
      await adapter.disconnect();
      await tg.stop();
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});
