/**
 * A home configured with `state.backend: postgres` as a user meets it from the CLI: a one-shot chat
 * is recorded in the shared database (nothing in the home's state.db), `hermes sessions` and
 * `hermes insights` read it from any machine with the same config, and a database that does not
 * answer costs the chat its record with a clear warning, never the answer. The chat's skill usage
 * is the database's: its views are counted there and a pin set there refuses its delete.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgSkillUsageRecords } from "../../src/knowledge/postgres/skill-usage.js";
import { openPgDatabase } from "../../src/state/postgres/database.js";
import { migrate } from "../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../src/state/postgres/migrations/index.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";

describe.skipIf(postgresSkipReason)("the CLI on a postgres home", () => {
  let pg: PostgresFixture;
  let llm: FakeLlm;
  beforeAll(async () => {
    [pg, llm] = await Promise.all([startPostgres(), startFakeLlm()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([pg?.dispose(), llm?.close()]);
  });

  it("records a one-shot chat in the database, where another home with the same config finds it", async () => {
    const url = await pg.createDatabase();
    const db = await openPgDatabase(url);
    await migrate(db, MIGRATIONS);
    await db.close();
    const config = fakeProviderConfig(llm.url, "state:\n  backend: postgres\n");
    const a = tempHome(config);
    const b = tempHome(config);
    const env = { HERMES_DATABASE_URL: url };

    llm.enqueue(reply().text("Kept in PostgreSQL."));
    const chat = await runHermes(["-z", "remember the lighthouse keeper"], { ...a, env });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain("Kept in PostgreSQL.");
    expect(existsSync(join(a.home, "state.db"))).toBe(false);

    const found = await runHermes(["sessions", "search", "lighthouse", "--json"], { ...b, env });
    expect(found.code, found.stderr).toBe(0);
    const hits = JSON.parse(found.stdout) as Array<{ snippet: string; source: string }>;
    expect(hits.map((h) => [h.source, h.snippet])).toEqual([["cli", "remember the >>>lighthouse<<< keeper"]]);
    const insights = await runHermes(["insights", "--json"], { ...b, env });
    expect(insights.code, insights.stderr).toBe(0);
    expect(JSON.parse(insights.stdout).sessions).toBe(1);
  }, 60_000);

  it("counts a chat's skill views in the database and holds a pin set there", async () => {
    const url = await pg.createDatabase();
    const db = await openPgDatabase(url);
    await migrate(db, MIGRATIONS);
    const usage = pgSkillUsageRecords(db);
    await usage.record("ferry-times", "create");
    await usage.mutate((data) => {
      data["ferry-times"] = { ...data["ferry-times"], pinned: true };
    });
    const h = tempHome(fakeProviderConfig(llm.url, "state:\n  backend: postgres\n"));
    mkdirSync(join(h.home, "skills", "travel", "ferry-times"), { recursive: true });
    writeFileSync(
      join(h.home, "skills", "travel", "ferry-times", "SKILL.md"),
      "---\nname: ferry-times\ndescription: Looks up ferry times.\n---\n# Ferry times\n\nAsk the harbour office.\n",
    );
    llm.enqueue(
      reply().toolCall("skill_view", { name: "ferry-times" }),
      reply().toolCall("skill_manage", { action: "delete", name: "ferry-times" }),
      reply().text("Viewed, and it is pinned."),
    );
    const chat = await runHermes(["-z", "check the ferry skill, then remove it"], {
      ...h,
      env: { HERMES_DATABASE_URL: url },
    });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain("Viewed, and it is pinned.");
    const sent = (llm.chatRequests.at(-1)?.body ?? {}) as {
      messages?: Array<{ role: string; content: unknown }>;
    };
    const tool = (sent.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(tool[1]).toContain("is pinned");
    expect(existsSync(join(h.home, "skills", "travel", "ferry-times", "SKILL.md"))).toBe(true);
    expect((await usage.read())["ferry-times"]).toMatchObject({ view_count: 1, pinned: true });
    expect(existsSync(join(h.home, "skills", ".usage.json"))).toBe(false);
    await db.close();
  }, 60_000);

  it("answers but says the chat is not saved when the database does not answer", async () => {
    const h = tempHome(fakeProviderConfig(llm.url, "state:\n  backend: postgres\n"));
    llm.enqueue(reply().text("Still answered."));
    const chat = await runHermes(["-z", "hello"], {
      ...h,
      env: { HERMES_DATABASE_URL: "postgres://hermes:hunter2@127.0.0.1:1/hermes" },
    });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain("Still answered.");
    expect(chat.stderr).toContain("this conversation will not be saved");
    expect(chat.stderr).not.toContain("hunter2");
    expect(existsSync(join(h.home, "state.db"))).toBe(false);
  }, 60_000);
});
