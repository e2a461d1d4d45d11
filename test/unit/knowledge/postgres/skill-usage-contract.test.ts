/** The same skill-usage cases against `skills/.usage.json` and PostgreSQL, then concurrent instances. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pgSkillUsageRecords } from "../../../../src/knowledge/postgres/skill-usage.js";
import { type SkillUsageRecords, skillUsageFile } from "../../../../src/knowledge/skills/usage.js";
import { postgresSkipReason } from "../../../support/postgres.js";
import { Databases } from "./databases.js";

const dbs = new Databases();
const AT = new Date("2026-11-27T01:00:00Z");
const now = () => AT;

/** A home whose bundled manifest lists `seeded` and whose hub lock lists `from-hub`. */
function home(): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-usage-"));
  mkdirSync(join(dir, "skills", ".hub"), { recursive: true });
  writeFileSync(join(dir, "skills", ".bundled_manifest"), "seeded:abc\n");
  writeFileSync(join(dir, "skills", ".hub", "lock.json"), JSON.stringify({ installed: { "from-hub": {} } }));
  return dir;
}

const backends: Array<[string, () => Promise<SkillUsageRecords>]> = [
  ["file", async () => skillUsageFile(home())],
  ["postgres", async () => pgSkillUsageRecords((await dbs.fresh())[0]!, { home: home(), now })],
];

describe.skipIf(postgresSkipReason)("skill usage records, file and PostgreSQL", () => {
  dbs.serveEachTest();

  describe.each(backends)("%s", (_name, open) => {
    it("counts views, uses and patches, keeps created_by, and drops the record on delete", async () => {
      const u = await open();
      expect(await u.read()).toEqual({});
      expect(await u.record("deploy", "create", { createdBy: "agent", now })).toBe(true);
      await u.record("deploy", "view", { now });
      await u.record("deploy", "view", { now });
      await u.record("deploy", "use", { now });
      await u.record("deploy", "patch", { now });
      const record = (await u.read())["deploy"];
      expect(record).toMatchObject({
        created_by: "agent",
        created_at: "2026-11-27T01:00:00.000+00:00",
        view_count: 2,
        use_count: 1,
        patch_count: 1,
        last_activity_at: "2026-11-27T01:00:00.000+00:00",
        state: "active",
        pinned: false,
      });
      expect(await u.record("deploy", "delete", { now })).toBe(true);
      expect(await u.read()).toEqual({});
      expect(await u.record("", "use")).toBe(false);
    });

    it("does not record bundled or hub-installed skills", async () => {
      const u = await open();
      expect(await u.record("seeded", "use", { now })).toBe(false);
      expect(await u.record("from-hub", "view", { now })).toBe(false);
      expect(await u.read()).toEqual({});
    });

    it("changes every record at once with mutate, keeping unknown fields, or nothing when told", async () => {
      const u = await open();
      await u.record("a", "create", { now });
      await u.record("b", "create", { now });
      await u.mutate((data) => {
        data["a"]!.pinned = true;
        data["a"]!["python_field"] = { kept: [1, 2] };
        delete data["b"];
      });
      await u.mutate((data) => {
        data["a"]!.pinned = false;
        return false;
      });
      const all = await u.read();
      expect(Object.keys(all)).toEqual(["a"]);
      expect(all["a"]).toMatchObject({ pinned: true, python_field: { kept: [1, 2] } });
    });
  });

  it("counts every first use of a new skill from two instances at once", async () => {
    const [a, b] = await dbs.fresh(2);
    const one = pgSkillUsageRecords(a!, { now });
    const two = pgSkillUsageRecords(b!, { now });
    const names = Array.from({ length: 8 }, (_, i) => `fresh-${i}`);
    const results = await Promise.all(
      names.flatMap((name) => [one.record(name, "view"), two.record(name, "view"), one.record(name, "view")]),
    );
    expect(results.every((ok) => ok)).toBe(true);
    const seen = await two.read();
    expect(names.map((name) => seen[name]?.view_count)).toEqual(names.map(() => 3));
  });

  it("counts every event from two instances at once", async () => {
    const [a, b] = await dbs.fresh(2);
    const one = pgSkillUsageRecords(a!, { now });
    const two = pgSkillUsageRecords(b!, { now });
    await one.record("shared", "create", { now });
    await Promise.all(
      Array.from({ length: 15 }, () => [one.record("shared", "use"), two.record("shared", "use")]).flat(),
    );
    await Promise.all([
      one.mutate((data) => {
        data["shared"]!.state = "stale";
      }),
      two.record("shared", "view"),
    ]);
    const record = (await one.read())["shared"];
    expect(record?.use_count).toBe(30);
    expect(record?.view_count).toBe(1);
    expect(record?.state).toBe("stale");
    expect(await one.importRecords({ old: { use_count: 7, created_by: null } })).toBe(1);
    expect((await two.read())["old"]).toEqual({ use_count: 7, created_by: null });
  });
});
