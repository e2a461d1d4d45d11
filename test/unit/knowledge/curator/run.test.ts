import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { listArchived, restoreSkill } from "../../../../src/knowledge/curator/archive.js";
import { listBackups, rollbackSkills } from "../../../../src/knowledge/curator/backup.js";
import { runCurator } from "../../../../src/knowledge/curator/run.js";
import { runCuratorIfDue } from "../../../../src/knowledge/curator/schedule.js";
import { readCuratorState } from "../../../../src/knowledge/curator/state.js";
import { readUsage } from "../../../../src/knowledge/skills/provenance.js";
import { listPending } from "../../../../src/knowledge/write-approval/pending.js";
import { withFileLock } from "../../../../src/util/file-lock.js";
import { skillMd, tempHome, writeSkill } from "../skills/fixtures.js";

const NOW = new Date("2026-06-01T00:00:00Z");
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000).toISOString().replace("Z", "+00:00");

/** A home with agent-made skills of various ages plus a pinned, a user's, a bundled and a hub one. */
function home(extraConfig: Record<string, unknown> = {}) {
  const dir = tempHome("hermes-curator-");
  const root = join(dir, "skills");
  for (const [cat, name] of [
    ["ops", "fresh"],
    ["ops", "aging"],
    ["ops", "ancient"],
    ["ops", "pinned-old"],
    ["", "mine-old"],
    ["", "seeded"],
    ["", "from-hub"],
    ["pdf", "pdf-split"],
    ["pdf", "pdf-merge"],
  ])
    writeSkill(root, cat as string, name as string);
  const agent = (last: number, extra = {}) => ({
    created_by: "agent",
    created_at: daysAgo(300),
    last_used_at: daysAgo(last),
    use_count: 1,
    state: "active",
    ...extra,
  });
  writeFileSync(
    join(root, ".usage.json"),
    JSON.stringify({
      fresh: agent(2),
      aging: agent(40),
      ancient: agent(120),
      "pinned-old": agent(500, { pinned: true }),
      "mine-old": { ...agent(500), created_by: null },
      "pdf-split": agent(5),
      "pdf-merge": agent(6),
    }),
  );
  writeFileSync(join(root, ".bundled_manifest"), "seeded:abc\n");
  mkdirSync(join(root, ".hub"), { recursive: true });
  writeFileSync(
    join(root, ".hub", "lock.json"),
    JSON.stringify({ version: 1, installed: { "from-hub": { install_path: "from-hub" } } }),
  );
  const config = { ...defaultConfig(), ...extraConfig } as ReturnType<typeof defaultConfig>;
  return { dir, root, config };
}

describe("runCurator", () => {
  it("backs up, stales and archives agent-made skills only, and records state and a report", async () => {
    const { dir, root, config } = home();
    const result = await runCurator({ home: dir, config, now: () => NOW });
    const usage = readUsage(dir);
    expect(usage["aging"]?.state).toBe("stale");
    expect(usage["ancient"]?.state).toBe("archived");
    expect(existsSync(join(root, "ops", "ancient"))).toBe(false);
    expect(existsSync(join(root, ".archive", "ancient", "SKILL.md"))).toBe(true);
    for (const kept of [join("ops", "pinned-old"), "mine-old", "seeded", "from-hub", join("ops", "fresh")])
      expect(existsSync(join(root, kept, "SKILL.md"))).toBe(true);
    expect(usage["pinned-old"]?.state).toBe("active");
    expect(result.report.backup).toMatch(/^2026-06-01T00-00-00Z$/);
    expect(listBackups(dir)).toHaveLength(1);
    const state = readCuratorState(dir);
    expect(state.run_count).toBe(1);
    expect(state.last_run_at).toBe("2026-06-01T00:00:00.000+00:00");
    expect(state.last_run_summary).toBe(
      "auto: 1 marked stale, 1 archived; llm: skipped (curator.consolidate is off)",
    );
    const run = JSON.parse(readFileSync(join(result.reportDir, "run.json"), "utf8"));
    expect(run.archived).toEqual(["ancient"]);
    expect(readFileSync(join(result.reportDir, "REPORT.md"), "utf8")).toContain("`aging`: active → stale");
  });

  it("changes nothing but the report and summary on --dry-run", async () => {
    const { dir, root, config } = home();
    const before = readFileSync(join(root, ".usage.json"), "utf8");
    const result = await runCurator({ home: dir, config, dryRun: true, now: () => NOW });
    expect(readFileSync(join(root, ".usage.json"), "utf8")).toBe(before);
    expect(existsSync(join(root, "ops", "ancient", "SKILL.md"))).toBe(true);
    expect(listBackups(dir)).toEqual([]);
    expect(readCuratorState(dir).run_count).toBe(0);
    expect(readCuratorState(dir).last_run_at).toBeNull();
    expect(result.report.state_transitions).toHaveLength(2);
  });

  it("restores an archived skill into its category, and a second run leaves it active", async () => {
    const { dir, root, config } = home();
    await runCurator({ home: dir, config, now: () => NOW });
    expect(listArchived(dir).map((a) => a.name)).toEqual(["ancient"]);
    await restoreSkill(dir, "ancient", { now: NOW });
    expect(existsSync(join(root, "ops", "ancient", "SKILL.md"))).toBe(true);
    expect(readUsage(dir)["ancient"]?.state).toBe("active");
    await runCurator({ home: dir, config, now: () => new Date(NOW.getTime() + 1000) });
    expect(readUsage(dir)["ancient"]?.state).toBe("active");
  });

  it("rolls back to the snapshot taken before the run; the rollback itself can be undone", async () => {
    const { dir, root, config } = home();
    await runCurator({ home: dir, config, now: () => NOW });
    const [first] = listBackups(dir);
    const later = new Date(NOW.getTime() + 60_000);
    const { restored, safety } = await rollbackSkills(dir, { id: first?.id, keep: 5, now: later });
    expect(restored.id).toBe(first?.id);
    expect(existsSync(join(root, "ops", "ancient", "SKILL.md"))).toBe(true);
    expect(readUsage(dir)["aging"]?.state).toBe("active");
    expect(listBackups(dir).map((b) => b.id)).toContain(safety.id);
    // The hub's own folder is never replaced by a rollback.
    expect(existsSync(join(root, ".hub", "lock.json"))).toBe(true);
    await rollbackSkills(dir, { id: safety.id, keep: 5, now: new Date(later.getTime() + 2000) });
    expect(existsSync(join(root, "ops", "ancient"))).toBe(false);
  });

  it("keeps only the newest N backups", async () => {
    const { dir, config } = home({ curator: { backup: { keep: 2 } } });
    for (let i = 0; i < 4; i++)
      await runCurator({ home: dir, config, now: () => new Date(NOW.getTime() + i * 1000) });
    expect(listBackups(dir).map((b) => b.id)).toEqual(["2026-06-01T00-00-03Z", "2026-06-01T00-00-02Z"]);
  });

  it("runs one at a time across processes", async () => {
    const { dir, config } = home();
    await withFileLock(join(dir, "logs", "curator", ".run.lock"), async () => {
      await expect(runCurator({ home: dir, config, now: () => NOW })).rejects.toThrow(
        /Another curator run is in progress/,
      );
    });
  });

  it("merges near-duplicates the reviewer proposes, and stages them under write approval", async () => {
    const umbrella = skillMd("pdf-tools", "Split and merge PDFs.");
    const review = async () => ({
      text: JSON.stringify({
        merges: [
          { into: "pdf-tools", from: ["pdf-split", "pdf-merge"], reason: "one task", skill_md: umbrella },
        ],
      }),
      model: "aux-model",
      provider: "custom",
    });
    const gated = home({
      curator: { consolidate: true },
      skills: { external_dirs: [], disabled: [], write_approval: true },
    });
    const staged = await runCurator({ home: gated.dir, config: gated.config, review, now: () => NOW });
    expect(staged.report.proposals[0]?.status).toMatch(/^staged for approval as [0-9a-f]{8}/);
    expect(existsSync(join(gated.root, "pdf", "pdf-split", "SKILL.md"))).toBe(true);
    // The merge waits in pending/skills/ as the edit /skills approve would apply.
    const [item] = listPending(gated.dir, "skills");
    const record = item?.ok ? item.record : undefined;
    expect(record?.payload).toEqual({ action: "edit", name: "pdf-tools", content: umbrella });
    expect(record?.origin).toBe("curator");

    const open = home({ curator: { consolidate: true } });
    const prompts: string[] = [];
    const result = await runCurator({
      home: open.dir,
      config: open.config,
      now: () => NOW,
      review: async (p) => {
        prompts.push(p.user);
        return review();
      },
    });
    // Only agent-made, unpinned skills are shown to the reviewer.
    expect(prompts[0]).toContain("### pdf-split");
    expect(prompts[0]).not.toContain("### mine-old");
    expect(prompts[0]).not.toContain("### pinned-old");
    expect(result.report.consolidated.map((c) => c.name).sort()).toEqual(["pdf-merge", "pdf-split"]);
    expect(readFileSync(join(open.root, "pdf-tools", "SKILL.md"), "utf8")).toBe(umbrella);
    expect(readUsage(open.dir)["pdf-tools"]?.created_by).toBe("agent");
    expect(
      listArchived(open.dir)
        .map((a) => a.name)
        .sort(),
    ).toEqual(["ancient", "pdf-merge", "pdf-split"]);
  });
});

describe("runCuratorIfDue", () => {
  it("seeds on first sight, then runs once the interval passed", async () => {
    const { dir, config } = home();
    const env = {};
    expect(await runCuratorIfDue({ home: dir, config, env, now: () => NOW })).toBeUndefined();
    expect(readCuratorState(dir).last_run_summary).toMatch(/deferred first run/);
    const soon = new Date(NOW.getTime() + 3_600_000);
    expect(await runCuratorIfDue({ home: dir, config, env, now: () => soon })).toBeUndefined();
    const week = new Date(NOW.getTime() + 169 * 3_600_000);
    expect(
      await runCuratorIfDue({ home: dir, config, env, now: () => week, idleSeconds: 60 }),
    ).toBeUndefined();
    const result = await runCuratorIfDue({ home: dir, config, env, now: () => week });
    expect(result?.report.trigger).toBe("schedule");
    expect(readCuratorState(dir).run_count).toBe(1);
  });
});
