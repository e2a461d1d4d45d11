import { describe, expect, it } from "vitest";
import { curatorDue, planTransitions } from "../../../../src/knowledge/curator/lifecycle.js";
import { CURATOR_DEFAULTS, curatorSettings } from "../../../../src/knowledge/curator/settings.js";
import { defaultCuratorState } from "../../../../src/knowledge/curator/state.js";
import { parseCuratorArgs } from "../../../../src/knowledge/curator/verbs.js";

const NOW = new Date("2026-06-01T00:00:00Z");
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000).toISOString().replace("Z", "+00:00");
const agent = (lastDays: number, extra: Record<string, unknown> = {}) => ({
  created_by: "agent",
  created_at: daysAgo(400),
  last_used_at: daysAgo(lastDays),
  use_count: 3,
  state: "active",
  ...extra,
});

describe("curatorSettings", () => {
  it("has upstream's defaults and ignores wrong types", () => {
    expect(curatorSettings({})).toEqual(CURATOR_DEFAULTS);
    const s = curatorSettings({
      curator: { interval_hours: "12", stale_after_days: "soon", consolidate: "yes", backup: { keep: 0 } },
    });
    expect(s.intervalHours).toBe(12);
    expect(s.staleAfterDays).toBe(30);
    expect(s.consolidate).toBe(true);
    expect(s.backup.keep).toBe(5);
  });
});

describe("curatorDue", () => {
  const settings = CURATOR_DEFAULTS;
  it("seeds on first sight instead of running", () => {
    expect(curatorDue(defaultCuratorState(), settings, NOW, Infinity)).toMatchObject({
      due: false,
      seed: true,
    });
  });
  it("waits for the interval, then for idle, and never runs paused or disabled", () => {
    const ran = (hours: number) => ({
      ...defaultCuratorState(),
      last_run_at: new Date(NOW.getTime() - hours * 3_600_000).toISOString(),
    });
    expect(curatorDue(ran(167), settings, NOW, Infinity).due).toBe(false);
    expect(curatorDue(ran(169), settings, NOW, Infinity).due).toBe(true);
    expect(curatorDue(ran(169), settings, NOW, 3600).due).toBe(false);
    expect(curatorDue(ran(169), settings, NOW, 2 * 3600).due).toBe(true);
    expect(curatorDue({ ...ran(500), paused: true }, settings, NOW, Infinity).due).toBe(false);
    expect(curatorDue(ran(500), { ...settings, enabled: false }, NOW, Infinity).due).toBe(false);
  });
});

describe("planTransitions", () => {
  const s = { staleAfterDays: 30, archiveAfterDays: 90 };
  const plan = (records: Record<string, Record<string, unknown> | undefined>, cron: string[] = []) =>
    planTransitions(
      Object.entries(records).map(([name, record]) => ({
        name,
        record,
        cronReferenced: cron.includes(name),
      })),
      s,
      NOW,
    );

  it("stales after N days, archives after M, reactivates a stale skill used again", () => {
    const p = plan({
      fresh: agent(3),
      old: agent(45),
      ancient: agent(120),
      back: agent(2, { state: "stale" }),
      staleStays: agent(60, { state: "stale" }),
    });
    expect(p.transitions.map((t) => [t.name, t.action])).toEqual([
      ["old", "stale"],
      ["ancient", "archive"],
      ["back", "reactivate"],
    ]);
    expect(p.checked).toBe(5);
  });

  it("never touches pinned, cron-bound, or the user's own skills, however old", () => {
    const p = plan(
      {
        pinned: agent(500, { pinned: true }),
        cron: agent(500),
        mine: { ...agent(500), created_by: null },
        legacy: { use_count: 0, created_at: daysAgo(900) },
        none: undefined,
      },
      ["cron"],
    );
    expect(p.transitions).toEqual([]);
    expect(p.skipped.map((x) => [x.name, x.why])).toEqual([
      ["pinned", "pinned"],
      ["cron", "cron"],
      ["mine", "unmanaged"],
      ["legacy", "unmanaged"],
      ["none", "unmanaged"],
    ]);
  });

  it("uses the creation time for a never-used skill and never ages one without any time", () => {
    const p = plan({
      young: { created_by: "agent", created_at: daysAgo(10), use_count: 0 },
      oldUnused: { created_by: "agent", created_at: daysAgo(100), use_count: 0 },
      timeless: { created_by: "agent" },
      garbage: { created_by: "agent", created_at: "not a date", last_used_at: 42 },
    });
    expect(p.transitions.map((t) => [t.name, t.action])).toEqual([["oldUnused", "archive"]]);
  });
});

describe("parseCuratorArgs", () => {
  it("reads verbs, names and flags, and refuses the rest", () => {
    expect(parseCuratorArgs("")).toEqual({ verb: "status" });
    expect(parseCuratorArgs("run --dry-run")).toEqual({ verb: "run", dryRun: true });
    expect(parseCuratorArgs("pin deploy")).toEqual({ verb: "pin", name: "deploy" });
    expect(parseCuratorArgs("rollback --id 2026-01-01T00-00-00Z")).toEqual({
      verb: "rollback",
      id: "2026-01-01T00-00-00Z",
    });
    expect(parseCuratorArgs("prune --days 60 --yes")).toEqual({ verb: "prune", days: 60, yes: true });
    expect(parseCuratorArgs("explode")).toHaveProperty("usage");
    expect(parseCuratorArgs("pin a b")).toHaveProperty("usage");
  });
});
