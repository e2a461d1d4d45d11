import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CronScheduleError } from "../../../../src/knowledge/cron/schedule.js";
import { CronStore, CronStoreError } from "../../../../src/knowledge/cron/store.js";

const NOW = Date.parse("2026-03-01T10:00:00Z");

function home(): string {
  return mkdtempSync(join(tmpdir(), "hermes-cron-store-"));
}

/** A jobs.json as Python Hermes writes it (fields from cron/jobs.py create_job), plus unknown ones. */
const PYTHON_JOBS = {
  jobs: [
    {
      id: "a1b2c3d4e5f6",
      name: "Morning brief",
      prompt: "Summarise the news",
      skills: ["news"],
      skill: "news",
      model: null,
      provider: null,
      provider_snapshot: "openrouter",
      model_snapshot: "anthropic/claude-sonnet-4",
      base_url: null,
      script: null,
      no_agent: false,
      monitor_script: null,
      monitor_url: null,
      monitor_state: null,
      context_from: null,
      schedule: { kind: "cron", expr: "0 9 * * *", display: "0 9 * * *" },
      schedule_display: "0 9 * * *",
      repeat: { times: null, completed: 4 },
      enabled: true,
      state: "scheduled",
      paused_at: null,
      paused_reason: null,
      created_at: "2026-02-25T08:12:44.512345+00:00",
      next_run_at: "2026-03-02T09:00:00+00:00",
      last_run_at: "2026-03-01T09:00:03.101010+00:00",
      last_status: "ok",
      last_error: null,
      last_delivery_error: null,
      last_delivery_unverified: null,
      failure_streak: 0,
      deliver: "telegram:12345",
      origin: { platform: "telegram", chat_id: "12345", thread_id: null, chat_name: "me" },
      enabled_toolsets: ["web"],
      workdir: null,
      attach_to_session: true,
    },
  ],
  updated_at: "2026-03-01T09:00:05.000001+00:00",
};

describe("CronStore", () => {
  it("round-trips a Python Hermes jobs.json, keeping every field", async () => {
    const h = home();
    mkdirSync(join(h, "cron"));
    writeFileSync(join(h, "cron", "jobs.json"), JSON.stringify(PYTHON_JOBS, null, 2));
    const store = new CronStore({ home: h, now: () => NOW, timezone: "UTC" });
    expect(store.list()[0]).toMatchObject({ id: "a1b2c3d4e5f6", name: "Morning brief", skills: ["news"] });
    await store.pause("Morning brief");
    await store.resume("a1b2c3d4e5f6");
    const written = JSON.parse(readFileSync(store.path, "utf8"));
    expect(Object.keys(written)).toEqual(["jobs", "updated_at"]);
    expect(written.updated_at).toBe("2026-03-01T10:00:00+00:00");
    const job = written.jobs[0];
    expect(job).toEqual({ ...PYTHON_JOBS.jobs[0], next_run_at: "2026-03-02T09:00:00+00:00" });
    expect(statSync(store.path).mode & 0o777).toBe(0o600);
  });

  it("creates jobs in Hermes's record shape", async () => {
    const store = new CronStore({ home: home(), now: () => NOW, timezone: "UTC" });
    const job = await store.create({ schedule: "every 2h", prompt: "check the build", skills: ["ci", "ci"] });
    expect(job.id).toMatch(/^[0-9a-f]{12}$/);
    expect(job).toMatchObject({
      name: "check the build",
      skills: ["ci"],
      skill: "ci",
      schedule: { kind: "interval", minutes: 120, display: "every 120m" },
      repeat: { times: null, completed: 0 },
      enabled: true,
      state: "scheduled",
      deliver: "local",
      next_run_at: "2026-03-01T12:00:00+00:00",
      created_at: "2026-03-01T10:00:00+00:00",
    });
    const once = await store.create({ schedule: "30m", prompt: "remind me" });
    expect(once.repeat).toEqual({ times: 1, completed: 0 });
    expect(store.list().map((j) => j.id)).toEqual([job.id, once.id]);
  });

  it("refuses a bad schedule and writes nothing", async () => {
    const store = new CronStore({ home: home(), now: () => NOW, timezone: "UTC" });
    await expect(store.create({ schedule: "whenever", prompt: "x" })).rejects.toThrow(CronScheduleError);
    await expect(store.create({ schedule: "2020-01-01T00:00", prompt: "x" })).rejects.toThrow(/in the past/);
    expect(store.list()).toEqual([]);
  });

  it("never overwrites a corrupt jobs.json and names it in the error", async () => {
    const h = home();
    mkdirSync(join(h, "cron"));
    const path = join(h, "cron", "jobs.json");
    writeFileSync(path, '{"jobs": [ {"id": "x"');
    const store = new CronStore({ home: h, now: () => NOW, timezone: "UTC" });
    expect(() => store.list()).toThrow(CronStoreError);
    await expect(store.create({ schedule: "every 1h", prompt: "x" })).rejects.toThrow(path);
    expect(readFileSync(path, "utf8")).toBe('{"jobs": [ {"id": "x"');
  });

  it("edits, marks due and removes by id or name", async () => {
    const store = new CronStore({ home: home(), now: () => NOW, timezone: "UTC" });
    const job = await store.create({ schedule: "every 1h", prompt: "a", name: "hourly" });
    const edited = await store.edit("hourly", { schedule: "0 9 * * *", prompt: "b" });
    expect(edited).toMatchObject({
      prompt: "b",
      schedule: { kind: "cron" },
      next_run_at: "2026-03-02T09:00:00+00:00",
    });
    await expect(store.edit(job.id, { schedule: "nope" })).rejects.toThrow(/Invalid schedule "nope"/);
    expect((await store.markDue(job.id)).next_run_at).toBe("2026-03-01T10:00:00+00:00");
    await store.remove("hourly");
    expect(store.list()).toEqual([]);
    await expect(store.remove("hourly")).rejects.toThrow(/No cron job with id or name "hourly"/);
  });
});
