/**
 * The same cron cases against `cron/jobs.json` + `cron/output/` (CronStore behind `cronJobs` and
 * `cronRunHistory`) and PostgreSQL (`pgCronJobs`), then several instances at once.
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CronRunHistory, cronRunHistory } from "../../../../src/knowledge/cron/history.js";
import { CronScheduleError } from "../../../../src/knowledge/cron/schedule.js";
import { type CronJobs, CronStore, CronStoreError, cronJobs } from "../../../../src/knowledge/cron/store.js";
import type { CronJob } from "../../../../src/knowledge/cron/types.js";
import { pgCronJobs } from "../../../../src/knowledge/postgres/cron-jobs.js";
import { postgresSkipReason } from "../../../support/postgres.js";
import { Databases } from "./databases.js";

const dbs = new Databases();
const NOW = Date.parse("2026-03-01T10:00:00Z");

type Cron = CronJobs & CronRunHistory;

function home(): string {
  const h = mkdtempSync(join(tmpdir(), "hermes-cron-contract-"));
  mkdirSync(join(h, "scripts"));
  writeFileSync(join(h, "scripts", "collect.sh"), "echo hi\n");
  return h;
}

const backends: Array<[string, (now?: () => number) => Promise<Cron>]> = [
  [
    "file",
    async (now = () => NOW) => {
      const store = new CronStore({ home: home(), now, timezone: "UTC" });
      return { ...cronJobs(store), ...cronRunHistory(store) };
    },
  ],
  [
    "postgres",
    async (now = () => NOW) => pgCronJobs((await dbs.fresh())[0]!, { home: home(), now, timezone: "UTC" }),
  ],
];

describe.skipIf(postgresSkipReason)("cron jobs and run history, file and PostgreSQL", () => {
  dbs.serveEachTest();

  describe.each(backends)("%s", (_name, open) => {
    it("creates jobs in Hermes's record shape, in order, found by id or name", async () => {
      const cron = await open();
      const job = await cron.create({
        schedule: "every 2h",
        prompt: "check the build",
        skills: ["ci", "ci"],
      });
      expect(job.id).toMatch(/^[0-9a-f]{12}$/);
      expect(job).toMatchObject({
        name: "check the build",
        skills: ["ci"],
        schedule: { kind: "interval", minutes: 120 },
        repeat: { times: null, completed: 0 },
        state: "scheduled",
        next_run_at: "2026-03-01T12:00:00+00:00",
        created_at: "2026-03-01T10:00:00+00:00",
      });
      const once = await cron.create({ schedule: "30m", prompt: "remind me", name: "nudge" });
      expect(once.repeat).toEqual({ times: 1, completed: 0 });
      expect((await cron.list()).map((j) => j.id)).toEqual([job.id, once.id]);
      expect((await cron.find("nudge"))?.id).toBe(once.id);
      expect(await cron.find("nothing")).toBeUndefined();
    });

    it("refuses bad input with the same errors and writes nothing", async () => {
      const cron = await open();
      await expect(cron.create({ schedule: "whenever", prompt: "x" })).rejects.toThrow(CronScheduleError);
      await expect(cron.create({ schedule: "2020-01-01T00:00", prompt: "x" })).rejects.toThrow(/in the past/);
      await expect(cron.create({ schedule: "every 1h", prompt: "  " })).rejects.toThrow(/nothing to run/);
      await expect(
        cron.create({ schedule: "every 1h", prompt: "x", script: "../../etc/passwd" }),
      ).rejects.toThrow(CronStoreError);
      await expect(
        cron.create({ schedule: "every 1h", prompt: "x", context_from: ["../../../etc"] }),
      ).rejects.toThrow(/not a job id/);
      await expect(
        cron.create({ schedule: "every 1h", prompt: "x", context_from: ["abc123"] }),
      ).rejects.toThrow(/No cron job with id or name "abc123"/);
      expect(await cron.list()).toEqual([]);
      const ok = await cron.create({
        schedule: "every 1h",
        prompt: "x",
        script: "collect.sh",
        no_agent: true,
      });
      expect(ok.script).toBe("collect.sh");
    });

    it("pauses, resumes, marks due and edits with the file store's semantics", async () => {
      let now = NOW;
      const cron = await open(() => now);
      const job = await cron.create({ schedule: "every 1h", prompt: "a", name: "hourly" });
      const paused = await cron.pause("hourly", "  holiday ");
      expect(paused).toMatchObject({ enabled: false, state: "paused", paused_reason: "holiday" });
      await expect(cron.markDue(job.id)).rejects.toThrow(/is paused; resume it first/);
      now += 5 * 3_600_000;
      const resumed = await cron.resume(job.id);
      expect(resumed).toMatchObject({ enabled: true, state: "scheduled", paused_at: null });
      expect(resumed.next_run_at).toBe("2026-03-01T16:00:00+00:00");
      expect((await cron.markDue("hourly")).next_run_at).toBe("2026-03-01T15:00:00+00:00");
      const edited = await cron.edit("hourly", { schedule: "0 9 * * *", prompt: "b", repeat: 3 });
      expect(edited).toMatchObject({
        prompt: "b",
        schedule: { kind: "cron" },
        repeat: { times: 3, completed: 0 },
      });
      await expect(cron.edit(job.id, { schedule: "nope" })).rejects.toThrow(/Invalid schedule "nope"/);
      await expect(cron.edit("ghost", { prompt: "x" })).rejects.toThrow(
        /No cron job with id or name "ghost"/,
      );
      expect((await cron.find(job.id))?.prompt).toBe("b");
    });

    it("keeps fields it does not know through a read-modify-write, and rolls back when it throws", async () => {
      const cron = await open();
      const job = await cron.create({ schedule: "every 1h", prompt: "a" });
      await cron.update((jobs) => {
        jobs[0]!["python_field"] = { nested: [1, "two"] };
        jobs[0]!.last_status = "ok";
      });
      await expect(
        cron.update((jobs) => {
          jobs[0]!.prompt = "changed";
          throw new Error("the claim failed");
        }),
      ).rejects.toThrow("the claim failed");
      expect(await cron.find(job.id)).toMatchObject({
        prompt: "a",
        last_status: "ok",
        python_field: { nested: [1, "two"] },
      });
    });

    it("saves run outputs by local time, redacted, newest first, keeping the newest N", async () => {
      const cron = await open();
      const job = await cron.create({ schedule: "every 1h", prompt: "a" });
      const secret = "sk-ant-api03-" + "Q".repeat(40);
      const first = await cron.saveOutput(job.id, `answer one ${secret}`, NOW, 3);
      expect(first).toMatch(new RegExp(`cron/output/${job.id}/2026-03-01_10-00-00\\.md$`));
      const clash = await cron.saveOutput(job.id, "answer two", NOW, 3);
      expect(clash).toMatch(/2026-03-01_10-00-00-2\.md$/);
      for (let i = 1; i <= 3; i++) await cron.saveOutput(job.id, `later ${i}`, NOW + i * 60_000, 3);
      const outputs = await cron.listOutputs(job.id);
      expect(outputs.map((o) => o.name)).toEqual([
        "2026-03-01_10-03-00.md",
        "2026-03-01_10-02-00.md",
        "2026-03-01_10-01-00.md",
      ]);
      const read = await cron.readOutput(job.id, "2026-03-01_10-03-00.md");
      expect(read).toEqual({ text: "later 3", size: 7, truncated: false });
      expect(await cron.readOutput(job.id, "2026-03-01_10-03-00.md", 3)).toEqual({
        text: "lat",
        size: 7,
        truncated: true,
      });
      const redacted = await open();
      const j2 = await redacted.create({ schedule: "every 1h", prompt: "a" });
      await redacted.saveOutput(j2.id, `key ${secret}`, NOW);
      const text = (await redacted.readOutput(j2.id, "2026-03-01_10-00-00.md"))?.text ?? "";
      expect(text).not.toContain(secret);
      expect(text).toMatch(/^key /);
    });

    it("refuses output ids and names that could leave the job's outputs", async () => {
      const cron = await open();
      const job = await cron.create({ schedule: "every 1h", prompt: "a" });
      await expect(cron.saveOutput("../escape", "x", NOW)).rejects.toThrow(/cannot name an output folder/);
      await cron.saveOutput(job.id, "x", NOW);
      expect(await cron.listOutputs("../" + job.id)).toEqual([]);
      expect(await cron.readOutput(job.id, "../../cron/jobs.json")).toBeUndefined();
      expect(await cron.readOutput(`${job.id}/../${job.id}`, "2026-03-01_10-00-00.md")).toBeUndefined();
      expect(await cron.readOutput(job.id, "2026-03-01_10-00-00.md")).toMatchObject({ text: "x" });
    });

    it("removes a job with its outputs", async () => {
      const cron = await open();
      const job = await cron.create({ schedule: "every 1h", prompt: "a", name: "gone" });
      await cron.saveOutput(job.id, "x", NOW);
      expect((await cron.remove("gone")).id).toBe(job.id);
      expect(await cron.list()).toEqual([]);
      expect(await cron.listOutputs(job.id)).toEqual([]);
      await expect(cron.remove("gone")).rejects.toThrow(/No cron job with id or name "gone"/);
    });
  });

  it("a file output folder's symlink is never followed", async () => {
    const h = home();
    const store = new CronStore({ home: h, now: () => NOW, timezone: "UTC" });
    const history = cronRunHistory(store);
    const job = await store.create({ schedule: "every 1h", prompt: "a" });
    mkdirSync(join(h, "cron", "output", job.id), { recursive: true });
    writeFileSync(join(h, "secret.txt"), "secret");
    symlinkSync(join(h, "secret.txt"), join(h, "cron", "output", job.id, "2026-03-01_09-00-00.md"));
    expect(await history.readOutput(job.id, "2026-03-01_09-00-00.md")).toBeUndefined();
    expect(await history.listOutputs(job.id)).toEqual([]);
  });

  it("claims a due job on exactly one of three instances ticking at once", async () => {
    const pools = await dbs.fresh(3);
    const crons = pools.map((db) => pgCronJobs(db, { home: home(), now: () => NOW, timezone: "UTC" }));
    const job = await crons[0]!.create({ schedule: "every 1h", prompt: "a" });
    await crons[0]!.markDue(job.id);
    // The ticker's claim: take the due job, move its next run and count it, all under the lock.
    const claim = (cron: Cron) =>
      cron.update((jobs) =>
        jobs
          .filter((j) => j.next_run_at !== null && Date.parse(j.next_run_at) <= NOW)
          .map((j) => {
            j.repeat = { times: j.repeat.times, completed: j.repeat.completed + 1 };
            j.next_run_at = "2026-03-01T11:00:00+00:00";
            j["running_since"] = "2026-03-01T10:00:00+00:00";
            return j.id;
          }),
      );
    const claims = await Promise.all(crons.map(claim));
    expect(claims.flat()).toEqual([job.id]);
    expect((await crons[2]!.find(job.id))?.repeat.completed).toBe(1);
  });

  it("loses no change when instances edit different jobs at once", async () => {
    const pools = await dbs.fresh(2);
    const [a, b] = pools.map((db) => pgCronJobs(db, { home: home(), now: () => NOW, timezone: "UTC" }));
    const created = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? a! : b!).create({ schedule: "every 1h", prompt: `job ${i}` }),
      ),
    );
    await Promise.all(created.map((job, i) => (i % 2 ? b! : a!).pause(job.id, `reason ${i}`)));
    const jobs = await a!.list();
    expect(jobs).toHaveLength(10);
    expect(
      jobs.every((j: CronJob) => j.state === "paused" && /^reason \d$/.test(String(j.paused_reason))),
    ).toBe(true);
  });

  it("refuses a script when opened without a home (its path cannot be checked)", async () => {
    const cron = pgCronJobs((await dbs.fresh())[0]!, { now: () => NOW, timezone: "UTC" });
    await expect(cron.create({ schedule: "every 1h", prompt: "x", script: "collect.sh" })).rejects.toThrow(
      /opened without a Hermes home/,
    );
    expect((await cron.create({ schedule: "every 1h", prompt: "x" })).script).toBeNull();
    expect(cron.iso(NOW)).toBe("2026-03-01T10:00:00+00:00");
    expect(cron.timezone).toBe("UTC");
  });

  it("imports a home's jobs and outputs once (ids kept), and stays readable after", async () => {
    const h = home();
    const file = new CronStore({ home: h, now: () => NOW, timezone: "UTC" });
    const job = await file.create({ schedule: "every 1h", prompt: "from the file home" });
    await file.update((jobs) => {
      jobs[0]!["python_only"] = true;
    });
    const db = pgCronJobs((await dbs.fresh())[0]!, { home: h, now: () => NOW, timezone: "UTC" });
    expect(await db.importJobs(file.list())).toEqual({ imported: 1, present: 0 });
    expect(await db.importJobs(file.list())).toEqual({ imported: 0, present: 1 });
    expect(await db.importOutput(job.id, "2026-03-01_09-00-00.md", "old run", NOW - 3_600_000)).toBe(true);
    expect(await db.importOutput(job.id, "2026-03-01_09-00-00.md", "old run", NOW - 3_600_000)).toBe(false);
    await expect(db.importOutput(job.id, "../x.md", "x", NOW)).rejects.toThrow(/Cannot import cron output/);
    expect(await db.find(job.id)).toEqual(file.find(job.id));
    expect((await db.find(job.id))?.["python_only"]).toBe(true);
    expect((await db.listOutputs(job.id)).map((o) => o.name)).toEqual(["2026-03-01_09-00-00.md"]);
  });
});
