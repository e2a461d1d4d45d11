/**
 * The curator trigger every chat command passes after its answer: it records the CLI's activity
 * (rewritten at most once a minute, so a script of one-shots does not take the state's lock and
 * fsync each time) and starts a due scheduled run, measuring idle time from that record.
 */
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ACTIVITY_STAMP_RESOLUTION_MS, startCuratorIfDue } from "../../../src/cli/curator-trigger.js";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";
import { curatorStatePath, readCuratorState } from "../../../src/knowledge/curator/state.js";

const iso = (d: Date) => d.toISOString().replace("Z", "+00:00");

function setup(curator: Record<string, unknown> = {}) {
  const home = mkdtempSync(join(tmpdir(), "hermes-curator-trigger-"));
  const config = {
    ...defaultConfig(),
    curator: { interval_hours: 1, min_idle_hours: 1, ...curator },
  } as HermesConfig;
  const started: string[] = [];
  const run = (at: Date, startedAt = at) =>
    startCuratorIfDue({
      home,
      config,
      env: {},
      startedAt,
      now: at,
      start: (h) => {
        started.push(h);
        return 4242;
      },
    });
  return { home, run, started };
}

describe("startCuratorIfDue", () => {
  it("records the activity, then leaves a record younger than a minute alone", async () => {
    const { home, run } = setup();
    const t0 = new Date("2026-01-01T10:00:00Z");
    await run(t0);
    expect(readCuratorState(home)._last_cli_activity_at).toBe(iso(t0));
    const written = statSync(curatorStatePath(home)).mtimeMs;
    const text = readFileSync(curatorStatePath(home), "utf8");

    await run(new Date(t0.getTime() + ACTIVITY_STAMP_RESOLUTION_MS - 1000));
    expect(readFileSync(curatorStatePath(home), "utf8")).toBe(text);
    expect(statSync(curatorStatePath(home)).mtimeMs).toBe(written);

    const later = new Date(t0.getTime() + ACTIVITY_STAMP_RESOLUTION_MS);
    await run(later);
    expect(readCuratorState(home)._last_cli_activity_at).toBe(iso(later));
  });

  it("rewrites a record from the future (a clock set back) instead of trusting it", async () => {
    const { home, run } = setup();
    const t0 = new Date("2026-01-01T10:00:00Z");
    await run(new Date(t0.getTime() + 3_600_000));
    await run(t0);
    expect(readCuratorState(home)._last_cli_activity_at).toBe(iso(t0));
  });

  it("starts a due run only after the idle time, counted from the last recorded activity", async () => {
    const { home, run, started } = setup();
    const t0 = new Date("2026-01-01T10:00:00Z");
    // A run long ago, so one is due by the interval; activity just now.
    mkdirSync(dirname(curatorStatePath(home)), { recursive: true });
    writeFileSync(
      curatorStatePath(home),
      JSON.stringify({ last_run_at: "2025-12-01T00:00:00+00:00", _last_cli_activity_at: iso(t0) }),
    );
    // 30 s later: not idle, and the record stays as it was.
    expect(await run(new Date(t0.getTime() + 30_000))).toMatch(/waiting until the agent has been idle 1 h/);
    expect(readCuratorState(home)._last_cli_activity_at).toBe(iso(t0));
    expect(started).toEqual([]);
    // Two hours after the last record: idle long enough, the run starts.
    expect(await run(new Date(t0.getTime() + 7_200_000))).toBe("started (pid 4242)");
    expect(started).toEqual([home]);
  });

  it("does nothing, not even the record, when the curator is disabled", async () => {
    const { home, run } = setup({ enabled: false });
    expect(await run(new Date("2026-01-01T10:00:00Z"))).toBe("disabled");
    expect(() => statSync(curatorStatePath(home))).toThrow();
  });
});
