import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type CronDelivery, createDeliverer, type PlatformSender } from "../../../src/cron/delivery.js";
import {
  type CronRunResult,
  isTickLockHeld,
  STOPPED_RUN,
  startTicker,
  tick,
} from "../../../src/cron/scheduler.js";
import { CronStore } from "../../../src/knowledge/cron/store.js";
import type { CronJob } from "../../../src/knowledge/cron/types.js";
import { withFileLock } from "../../../src/util/file-lock.js";

const T0 = Date.parse("2026-03-01T08:00:00Z");
const MIN = 60_000;

function setup() {
  const home = mkdtempSync(join(tmpdir(), "hermes-cron-tick-"));
  let now = T0;
  const clock = { set: (ms: number) => (now = ms), now: () => now };
  const store = new CronStore({ home, now: clock.now, timezone: "UTC" });
  const runs: string[] = [];
  const deliveries: CronDelivery[] = [];
  const run = (result: (job: CronJob) => CronRunResult | Promise<CronRunResult>) =>
    tick({
      home,
      now: clock.now,
      timezone: "UTC",
      runJob: async (job) => {
        runs.push(job.id);
        return result(job);
      },
      deliver: async (d) => {
        deliveries.push(d);
        return { delivered: ["test"], errors: [] };
      },
    });
  return { home, clock, store, runs, deliveries, run };
}

describe("tick", () => {
  it("runs a due job once, saves its output and delivers it", async () => {
    const t = setup();
    const job = await t.store.create({ schedule: "every 30m", prompt: "ping" });
    expect((await t.run(() => ({ ok: true, output: "pong" }))).status).toBe("done");
    expect(t.runs).toEqual([]); // not due yet
    t.clock.set(T0 + 30 * MIN);
    const outcome = await t.run(() => ({ ok: true, output: "pong" }));
    expect(outcome.status === "done" && outcome.ran[0]?.ok).toBe(true);
    expect(t.runs).toEqual([job.id]);
    expect(t.deliveries.map((d) => d.text)).toEqual(["pong"]);
    const files = readdirSync(join(t.home, "cron", "output", job.id));
    expect(files).toEqual(["2026-03-01_08-30-00.md"]);
    expect(readFileSync(join(t.home, "cron", "output", job.id, files[0] ?? ""), "utf8")).toContain("pong");
    const saved = t.store.find(job.id);
    expect(saved).toMatchObject({
      last_status: "ok",
      last_run_at: "2026-03-01T08:30:00+00:00",
      next_run_at: "2026-03-01T09:00:00+00:00",
      repeat: { completed: 1 },
    });
    expect(saved?.["running_since"]).toBeUndefined();
    await t.run(() => ({ ok: true, output: "pong" }));
    expect(t.runs).toHaveLength(1); // the same tick time never runs it again
  });

  it("[SILENT] saves the output but delivers nothing", async () => {
    const t = setup();
    await t.store.create({ schedule: "every 1h", prompt: "anything new?" });
    t.clock.set(T0 + 60 * MIN);
    const outcome = await t.run(() => ({ ok: true, output: "[SILENT]" }));
    expect(outcome.status === "done" && outcome.ran[0]?.silent).toBe(true);
    expect(t.deliveries).toEqual([]);
  });

  it("records a failure and always delivers it, even a thrown one", async () => {
    const t = setup();
    const job = await t.store.create({ schedule: "every 1h", prompt: "x" });
    t.clock.set(T0 + 60 * MIN);
    await t.run(() => {
      throw new Error("provider said 401");
    });
    expect(t.store.find(job.id)).toMatchObject({ last_status: "error", last_error: "provider said 401" });
    expect(t.deliveries).toHaveLength(1);
    expect(t.deliveries[0]?.ok).toBe(false);
    expect(t.deliveries[0]?.text).toMatch(/failed: provider said 401/);
  });

  it("catches up a missed run exactly once after a restart", async () => {
    const t = setup();
    const job = await t.store.create({ schedule: "0 9 * * *", prompt: "brief" }); // due 09:00
    // The process was down at 09:00; it comes back at 10:30, inside the 2 h window.
    t.clock.set(Date.parse("2026-03-01T10:30:00Z"));
    await t.run(() => ({ ok: true, output: "late brief" }));
    await t.run(() => ({ ok: true, output: "late brief" }));
    t.clock.set(Date.parse("2026-03-01T10:31:00Z"));
    await t.run(() => ({ ok: true, output: "late brief" }));
    expect(t.runs).toEqual([job.id]);
    expect(t.store.find(job.id)?.next_run_at).toBe("2026-03-02T09:00:00+00:00");
  });

  it("skips a run missed by more than the window and records the skip", async () => {
    const t = setup();
    const job = await t.store.create({ schedule: "0 9 * * *", prompt: "brief" });
    t.clock.set(Date.parse("2026-03-01T15:00:00Z"));
    const outcome = await t.run(() => ({ ok: true, output: "x" }));
    expect(t.runs).toEqual([]);
    expect(outcome.status === "done" && outcome.skipped.map((s) => s.missedAt)).toEqual([
      "2026-03-01T09:00:00+00:00",
    ]);
    expect(t.store.find(job.id)).toMatchObject({
      next_run_at: "2026-03-02T09:00:00+00:00",
      missed_runs: 1,
      last_missed_at: "2026-03-01T09:00:00+00:00",
    });
  });

  it("completes a one-shot after its run and never runs it again", async () => {
    const t = setup();
    const job = await t.store.create({ schedule: "30m", prompt: "remind" });
    t.clock.set(T0 + 31 * MIN);
    await t.run(() => ({ ok: true, output: "done" }));
    t.clock.set(T0 + 90 * MIN);
    await t.run(() => ({ ok: true, output: "done" }));
    expect(t.runs).toEqual([job.id]);
    expect(t.store.find(job.id)).toMatchObject({ state: "completed", enabled: false, next_run_at: null });
  });

  it("a manual run (marked due) runs even when long overdue, then the schedule goes on", async () => {
    const t = setup();
    const job = await t.store.create({ schedule: "every 1d", prompt: "x" });
    await t.store.markDue(job.id);
    await t.run(() => ({ ok: true, output: "x" }));
    expect(t.runs).toEqual([job.id]);
    expect(t.store.find(job.id)?.next_run_at).toBe("2026-03-02T08:00:00+00:00");
  });

  it("marks a run cut off by a crash as failed instead of running it twice", async () => {
    const t = setup();
    const job = await t.store.create({ schedule: "every 1h", prompt: "x" });
    t.clock.set(T0 + 60 * MIN);
    // Simulate a process that claimed the job and died.
    await t.store.update((jobs) => {
      const j = jobs[0] as CronJob;
      j["running_since"] = "2026-03-01T09:00:00+00:00";
      j.next_run_at = "2026-03-01T10:00:00+00:00";
    });
    const outcome = await t.run(() => ({ ok: true, output: "x" }));
    expect(outcome.status === "done" && outcome.interrupted).toEqual([job.id]);
    expect(t.runs).toEqual([]);
    expect(t.store.find(job.id)).toMatchObject({
      last_status: "error",
      last_error: expect.stringMatching(/cut off/),
    });
  });

  it("returns busy while another holder has the tick lock", async () => {
    const t = setup();
    await t.store.create({ schedule: "every 1m", prompt: "x" });
    t.clock.set(T0 + 5 * MIN);
    const lock = join(t.home, "cron", ".tick.lock");
    await withFileLock(
      lock,
      async () => {
        expect(await isTickLockHeld(t.home)).toBe(true);
        expect(await t.run(() => ({ ok: true, output: "x" }))).toEqual({ status: "busy" });
      },
      { lockPath: lock },
    );
    expect(t.runs).toEqual([]);
    expect(await isTickLockHeld(t.home)).toBe(false);
  });

  it("two processes ticking at once never run a job twice", async () => {
    const t = setup();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await t.store.create({ schedule: "every 1h", prompt: `job ${i}` })).id);
    const worker = resolve(import.meta.dirname, "../../support/cron-tick-worker.ts");
    const start = () =>
      new Promise<string>((res, rej) => {
        const child = spawn(process.execPath, ["--import", "tsx", worker, t.home, String(T0 + 61 * MIN)], {
          stdio: ["ignore", "pipe", "inherit"],
        });
        let out = "";
        child.stdout.on("data", (d: Buffer) => (out += d.toString()));
        child.on("error", rej);
        child.on("close", (code) => (code === 0 ? res(out.trim()) : rej(new Error(`worker exited ${code}`))));
      });
    const statuses = await Promise.all([start(), start(), start()]);
    expect(statuses.every((s) => s === "done" || s === "busy")).toBe(true);
    const log = existsSync(join(t.home, "runs.log")) ? readFileSync(join(t.home, "runs.log"), "utf8") : "";
    const ran = log
      .trim()
      .split("\n")
      .map((l) => l.split(" ")[0]);
    expect(ran.sort()).toEqual([...ids].sort());
  }, 30_000);
});

describe("startTicker's stop", () => {
  /** A ticker over a home whose one job is due, with a runner that runs until it is stopped. */
  async function running(finish: (signal: AbortSignal | undefined) => Promise<CronRunResult>) {
    const home = mkdtempSync(join(tmpdir(), "hermes-cron-stop-"));
    const store = new CronStore({ home, timezone: "UTC" });
    const job = await store.create({ schedule: "every 30m", prompt: "long" });
    await store.update((jobs) => {
      for (const j of jobs) j.next_run_at = new Date(Date.now() - 1000).toISOString();
    });
    let started!: () => void;
    const begun = new Promise<void>((resolve) => (started = resolve));
    const signals: Array<AbortSignal | undefined> = [];
    const ticker = startTicker({
      home,
      timezone: "UTC",
      intervalMs: 60_000,
      runJob: async (_job, signal) => {
        signals.push(signal);
        started();
        return finish(signal);
      },
      deliver: async () => ({ delivered: [], errors: [] }),
    });
    await begun;
    return { home, store, job, ticker, signals };
  }

  const untilAborted = (signal: AbortSignal | undefined) =>
    new Promise<CronRunResult>((resolve) =>
      signal?.addEventListener("abort", () => resolve({ ok: false, output: "", error: "killed" })),
    );

  it("stops a job still running after the grace period and records why it failed", async () => {
    const t = await running(untilAborted);
    const before = Date.now();
    await t.ticker.stop({ graceMs: 100 });
    expect(Date.now() - before).toBeLessThan(5000);
    expect(t.signals[0]?.aborted).toBe(true);
    const saved = t.store.find(t.job.id);
    expect(saved?.last_status).toBe("error");
    expect(saved?.last_error).toContain(STOPPED_RUN);
    expect(saved?.["running_since"]).toBeUndefined();
  });

  it("lets a job that finishes within the grace period finish untouched", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const t = await running(async () => {
      await released;
      return { ok: true, output: "done in time" };
    });
    const stopping = t.ticker.stop({ graceMs: 10_000 });
    release();
    await stopping;
    expect(t.signals[0]?.aborted).toBe(false);
    expect(t.store.find(t.job.id)?.last_status).toBe("ok");
  });

  it("a runner that ignores the signal and claims success is still recorded as stopped", async () => {
    const t = await running(async (signal) => {
      await new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve()));
      return { ok: true, output: "half an answer" };
    });
    await t.ticker.stop({ graceMs: 50 });
    expect(t.store.find(t.job.id)?.last_error).toContain(STOPPED_RUN);
  });

  it("without a bound, stop waits for the running job", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const t = await running(async () => {
      await released;
      return { ok: true, output: "finished" };
    });
    let stopped = false;
    const stopping = t.ticker.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(t.signals[0]?.aborted).toBe(false);
  });
});

describe("createDeliverer", () => {
  const job = (deliver: string, origin: CronJob["origin"] = null) =>
    ({ id: "j1", name: "n", deliver, origin }) as CronJob;
  const d = (j: CronJob) => ({ job: j, text: "hi", ok: true, outputPath: "/tmp/out.md" });

  it("local needs nothing; an unconnected platform says so", async () => {
    const deliver = createDeliverer();
    expect(await deliver(d(job("local")))).toEqual({ delivered: [], errors: [] });
    const result = await deliver(d(job("telegram:123")));
    expect(result.errors[0]).toMatch(/telegram:123: the telegram platform is not connected.*\/tmp\/out\.md/);
  });

  it("sends to origin and platform targets through registered senders", async () => {
    const sent: unknown[] = [];
    const sender: PlatformSender = { send: async (t) => void sent.push(t) };
    const deliver = createDeliverer(new Map([["telegram", sender]]));
    const result = await deliver(
      d(job("origin,telegram", { platform: "telegram", chat_id: 42, thread_id: 7 })),
    );
    expect(result.delivered).toEqual(["telegram:42:7", "telegram"]);
    expect(sent).toEqual([{ chatId: "42", threadId: "7", text: "hi" }, { text: "hi" }]);
  });
});
