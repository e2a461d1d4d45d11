/**
 * The CLI on a postgres home keeps its memory and cron jobs in the shared database, as the gateway
 * instances do: a memory a one-shot chat saves is in the next session prompt of another home on
 * the same database (and in `hermes memory status`, `hermes journey` there), a cron job the chat's
 * tool creates is listed by `hermes cron list` on that other home, and nothing lands in the first
 * home's files. A SQLite home keeps writing its files as before.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPgDatabase } from "../../src/state/postgres/database.js";
import { migrate } from "../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../src/state/postgres/migrations/index.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";

type Sent = { messages?: Array<{ role: string; content: unknown }> };

function systemPrompt(llm: FakeLlm): string {
  const sent = (llm.chatRequests.at(-1)?.body ?? {}) as Sent;
  return String(sent.messages?.find((m) => m.role === "system")?.content ?? "");
}

function toolResults(llm: FakeLlm): string[] {
  const sent = (llm.chatRequests.at(-1)?.body ?? {}) as Sent;
  return (sent.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));
}

describe.skipIf(postgresSkipReason)("the CLI's memory and cron on a postgres home", () => {
  let pg: PostgresFixture;
  let llm: FakeLlm;
  beforeAll(async () => {
    [pg, llm] = await Promise.all([startPostgres(), startFakeLlm()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([pg?.dispose(), llm?.close()]);
  });

  it("shares a chat's memory and cron job with another home on the same database", async () => {
    const url = await pg.createDatabase();
    const config = fakeProviderConfig(llm.url, "state:\n  backend: postgres\n");
    const a = tempHome(config);
    const b = tempHome(config);
    const env = { HERMES_DATABASE_URL: url };

    llm.enqueue(
      reply().toolCall("memory", {
        action: "add",
        target: "user",
        content: "Keeps bees on the roof in Utrecht",
      }),
      reply().toolCall("cronjob", {
        action: "create",
        schedule: "every 2h",
        prompt: "check the hive temperature",
        name: "hive-check",
      }),
      reply().text("Noted, and the hive check is scheduled."),
    );
    const chat = await runHermes(["-z", "remember my bees and check the hive every two hours"], {
      ...a,
      env,
    });
    expect(chat.code, chat.stderr).toBe(0);
    expect(toolResults(llm).join("\n")).not.toMatch(/error|refused/i);
    // Nothing in the first home's files: the database holds it.
    expect(existsSync(join(a.home, "memories", "USER.md"))).toBe(false);
    expect(existsSync(join(a.home, "cron", "jobs.json"))).toBe(false);

    // Another home on the same database: its next session prompt carries the memory.
    llm.enqueue(reply().text("You keep bees."));
    const next = await runHermes(["-z", "what do I keep?"], { ...b, env });
    expect(next.code, next.stderr).toBe(0);
    expect(systemPrompt(llm)).toContain("Keeps bees on the roof in Utrecht");

    const jobs = await runHermes(["cron", "list", "--json"], { ...b, env });
    expect(jobs.code, jobs.stderr).toBe(0);
    const listed = (JSON.parse(jobs.stdout) as { jobs: Array<{ name: string; prompt: string }> }).jobs;
    expect(listed.map((j) => [j.name, j.prompt])).toEqual([["hive-check", "check the hive temperature"]]);

    // `hermes cron run` on the other home runs it there and records the run in the shared sessions.
    llm.enqueue(reply().text("Hive at 34 degrees."));
    const ran = await runHermes(["cron", "run", "hive-check"], { ...b, env });
    expect(ran.code, ran.stderr).toBe(0);
    expect(existsSync(join(b.home, "state.db"))).toBe(false);
    const runs = await runHermes(["sessions", "list", "--source", "cron", "--json"], { ...a, env });
    expect(runs.code, runs.stderr).toBe(0);
    expect(JSON.parse(runs.stdout)).toHaveLength(1);

    const status = await runHermes(["memory", "status", "--json"], { ...b, env });
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as { builtin: { user: { entries: number; path: string } } };
    expect(report.builtin.user.entries).toBe(1);
    expect(report.builtin.user.path).not.toContain(b.home);

    // The journey on the other home finds the call in the shared sessions, with its session's source.
    const journey = await runHermes(["journey", "--json"], { ...b, env });
    expect(journey.code, journey.stderr).toBe(0);
    const events = JSON.parse(journey.stdout) as Array<{
      kind: string;
      action: string;
      subject: string;
      source: string;
    }>;
    expect(events).toContainEqual(
      expect.objectContaining({
        kind: "user",
        action: "added",
        subject: "Keeps bees on the roof in Utrecht",
        source: "cli",
      }),
    );

    // `hermes memory reset` on the other home erases it for everyone.
    const reset = await runHermes(["memory", "reset", "--target", "user", "-y"], { ...b, env });
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain("Erased USER.md (1 entries).");
    llm.enqueue(reply().text("I do not know."));
    const after = await runHermes(["-z", "what do I keep?"], { ...a, env });
    expect(after.code, after.stderr).toBe(0);
    expect(systemPrompt(llm)).not.toContain("Keeps bees");

    // `hermes cron list` is not a gateway instance: none is listed live.
    const db = await openPgDatabase(url);
    await migrate(db, MIGRATIONS);
    expect(await db.query("SELECT * FROM coord_instances")).toEqual([]);
    await db.close();
  }, 120_000);

  it("refuses memory writes with the reason when the database does not answer (no local file)", async () => {
    const h = tempHome(fakeProviderConfig(llm.url, "state:\n  backend: postgres\n"));
    llm.enqueue(
      reply().toolCall("memory", { action: "add", target: "memory", content: "Parked on level 3" }),
      reply().text("Could not save it."),
    );
    const chat = await runHermes(["-z", "remember where I parked"], {
      ...h,
      env: { HERMES_DATABASE_URL: "postgres://hermes:hunter2@127.0.0.1:1/hermes" },
    });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stderr).toContain("memory and cron jobs are not available");
    expect(toolResults(llm)[0]).toContain("shared database is not available");
    expect(toolResults(llm)[0]).not.toContain("hunter2");
    expect(existsSync(join(h.home, "memories", "MEMORY.md"))).toBe(false);
  }, 60_000);

  it("keeps a SQLite home's memory and cron jobs in its files", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(
      reply().toolCall("memory", { action: "add", target: "user", content: "Prefers tea to coffee" }),
      reply().toolCall("cronjob", {
        action: "create",
        schedule: "every 1h",
        prompt: "water the basil",
        name: "basil",
      }),
      reply().text("Saved."),
    );
    const chat = await runHermes(["-z", "remember tea, water the basil hourly"], h);
    expect(chat.code, chat.stderr).toBe(0);
    expect(readFileSync(join(h.home, "memories", "USER.md"), "utf8")).toContain("Prefers tea to coffee");
    const jobs = JSON.parse(readFileSync(join(h.home, "cron", "jobs.json"), "utf8")) as {
      jobs: Array<{ name: string }>;
    };
    expect(jobs.jobs.map((j) => j.name)).toEqual(["basil"]);
    const status = await runHermes(["memory", "status", "--json"], h);
    expect(JSON.parse(status.stdout).builtin.user).toEqual({
      entries: 1,
      path: join(h.home, "memories", "USER.md"),
    });
  }, 60_000);
});
