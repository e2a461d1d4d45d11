/**
 * `hermes cron` through the built CLI: create a job, run due jobs with `tick` against the fake
 * LLM, and find the model's answer in the job's output file; bad schedules exit 2 and write nothing.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

describe("hermes cron", () => {
  it("create + run: the fake model's answer lands in cron/output/<id>/", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    const created = await runHermes(["cron", "create", "every 1h", "say", "hello", "--name", "greeter"], h);
    expect(created.code, created.stderr).toBe(0);
    const id = /Created ([0-9a-f]{12})/.exec(created.stdout)?.[1] ?? "";
    expect(id).not.toBe("");

    const listed = await runHermes(["cron", "list"], h);
    expect(listed.stdout).toContain("greeter");

    // Nothing is due yet: tick runs nothing.
    const idle = await runHermes(["cron", "tick"], h);
    expect(idle.code, idle.stderr).toBe(0);
    expect(idle.stderr).toContain("No jobs were due");

    llm.enqueue(reply().text("Hello from cron"));
    const ran = await runHermes(["cron", "run", id], h);
    expect(ran.code, ran.stderr).toBe(0);
    const dir = join(h.home, "cron", "output", id);
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(readFileSync(join(dir, files[0] ?? ""), "utf8")).toContain("Hello from cron");

    const jobs = JSON.parse(readFileSync(join(h.home, "cron", "jobs.json"), "utf8")).jobs;
    expect(jobs[0]).toMatchObject({ id, last_status: "ok", repeat: { completed: 1 } });
    const status = await runHermes(["cron", "status"], h);
    expect(status.stdout).toMatch(/Ticker: not running/);
  }, 60_000);

  it("a one-shot time in the past is refused and nothing is written", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    const created = await runHermes(["cron", "create", "2000-01-01T00:00", "x"], h);
    expect(created.code).toBe(2);
    expect(created.stderr).toMatch(/in the past/);
    expect(existsSync(join(h.home, "cron", "jobs.json"))).toBe(false);
  });

  it("a schedule that does not parse exits 2 with the accepted forms", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    const r = await runHermes(["cron", "create", "every fortnight", "x"], h);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Invalid schedule "every fortnight".*"every 30m"/s);
    const missing = await runHermes(["cron", "run", "nope"], h);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No cron job with id or name "nope"/);
  });
});
