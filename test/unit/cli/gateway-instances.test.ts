import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatInstances, sharedInstances } from "../../../src/cli/commands/gateway-instances.js";
import { openPgCoordinator } from "../../../src/state/postgres/coordination.js";
import { openPgDatabase } from "../../../src/state/postgres/database.js";
import { migrate } from "../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../src/state/postgres/migrations/index.js";
import { postgresSkipReason } from "../../support/postgres.js";
import { postgresForSuite } from "../../support/postgres-suite.js";

function home(config: string): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-instances-"));
  writeFileSync(join(dir, "config.yaml"), config);
  return dir;
}

describe("hermes gateway status: instances", () => {
  it("has nothing to add for a SQLite home, and says what is wrong with a postgres one", async () => {
    expect(await sharedInstances(home("model:\n  default: x\n"), {})).toBeUndefined();
    const report = await sharedInstances(home("state:\n  backend: postgres\n"), {});
    expect(report).toMatchObject({ error: expect.stringMatching(/HERMES_DATABASE_URL/) });
    expect(formatInstances(report!)).toMatch(/could not list them/);
  });
});

describe.skipIf(postgresSkipReason)("hermes gateway status over PostgreSQL", () => {
  const pg = postgresForSuite();

  it("lists each live instance with what it holds, from HERMES_DATABASE_URL", async () => {
    const url = await pg().createDatabase();
    const h = home("state:\n  backend: postgres\n");
    expect(await sharedInstances(h, { HERMES_DATABASE_URL: url })).toMatchObject({
      error: expect.stringMatching(/no coordination tables/),
    });
    const db = await openPgDatabase(url);
    await migrate(db, MIGRATIONS);
    const a = await openPgCoordinator(
      db,
      {
        host: "web-1",
        pid: 11,
        instanceId: "web-1-11",
        healthUrl: "http://web-1:8643/health",
      },
      { heartbeatMs: 100 },
    );
    const b = await openPgCoordinator(db, { host: "web-2", pid: 22, instanceId: "web-2-22" });
    await a.tryLease("telegram");
    await a.claimChat("telegram:5");
    // A continued API-server session's claim is a turn, not a chat; each running turn is counted.
    await a.claimChat("api_server:20261127_ferry");
    const turn = a.trackTurn();
    const other = a.trackTurn();
    other();
    other();
    await b.claimCronSlot("digest", "2026-11-27T08:00:00.000Z");
    await b.drain();
    // The count reaches the database with the next heartbeat.
    await new Promise((r) => setTimeout(r, 400));
    const report = await sharedInstances(h, { HERMES_DATABASE_URL: url });
    if (!report || !("instances" in report)) throw new Error(`no instances: ${JSON.stringify(report)}`);
    expect(report.database).toBe(url);
    const text = formatInstances(report, Date.now());
    expect(text).toMatch(/^Instances \(postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+\): 2 live$/m);
    expect(text).toMatch(/^ {2}web-1-11 {2}serving {2}web-1 pid 11, since .+, seen \d+ s ago$/m);
    expect(text).toContain(
      "    holds: telegram; chats: 1; api/webhook turns: 1; health: http://web-1:8643/health",
    );
    expect(text).toMatch(/^ {2}web-2-22 {2}draining {2}web-2 pid 22/m);
    expect(text).toContain("    holds: cron:digest; chats: 0; api/webhook turns: 0");
    turn();
    await new Promise((r) => setTimeout(r, 400));
    const ended = await sharedInstances(h, { HERMES_DATABASE_URL: url });
    expect(ended && "instances" in ended && ended.instances.map((i) => i.turns)).toEqual([0, 0]);
    await a.close();
    await b.close();
    const after = await sharedInstances(h, { HERMES_DATABASE_URL: url });
    expect(after && "instances" in after && after.instances).toEqual([]);
    await db.close();
  });
});
