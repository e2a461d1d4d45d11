/**
 * Skill usage READ on a postgres home: every reader goes through the home's `SkillUsageRecords`
 * (the database), never the instance's own `skills/.usage.json`. Two pools on one real PostgreSQL
 * stand for two instances: what one records, the other's prompt index, pin checks, curator and
 * `skills list` see. A local usage file (left from before the move, or written by a confused
 * model with the file tools) changes nothing there.
 */
import { mkdirSync, mkdtempSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildSessionPrompt } from "../../../../src/agent/prompt/session-prompt.js";
import { listCommand } from "../../../../src/cli/commands/skills/browse.js";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { archiveSkill } from "../../../../src/knowledge/curator/archive.js";
import { runCuratorVerb } from "../../../../src/knowledge/curator/verbs.js";
import { pgSkillUsageRecords } from "../../../../src/knowledge/postgres/skill-usage.js";
import { discoverSkills } from "../../../../src/knowledge/skills/discovery.js";
import {
  createSkill,
  deleteSkill,
  patchSkill,
  SkillManageError,
} from "../../../../src/knowledge/skills/manage.js";
import type { SkillUsageRecords } from "../../../../src/knowledge/skills/usage.js";
import { loadSkillMessage } from "../../../../src/knowledge/skills/view.js";
import { fileKnowledgeStores, registerKnowledgeStores } from "../../../../src/knowledge/stores.js";
import type { PgDatabase } from "../../../../src/state/postgres/database.js";
import { precheckSkillWrite } from "../../../../src/tools/skills/skill-precheck.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../../support/postgres.js";
import { Databases } from "./databases.js";

let pg: PostgresFixture;
const dbs = new Databases(() => pg);
const undo: Array<() => void> = [];

function backdate(dir: string, seconds = 30): void {
  const t = Date.now() / 1000 - seconds;
  const walk = (path: string) => {
    if (statSync(path).isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
    utimesSync(path, t, t);
  };
  walk(dir);
}

/** An instance's home with `count` skills (tools/skill-NN) and `target` last, all quiet for 30 s. */
function instanceHome(count = 90): { home: string; cwd: string } {
  const root = mkdtempSync(join(tmpdir(), "hermes-pg-usage-"));
  const home = join(root, "home");
  const cwd = join(root, "work");
  mkdirSync(cwd, { recursive: true });
  const add = (name: string, description: string) => {
    mkdirSync(join(home, "skills", "tools", name), { recursive: true });
    writeFileSync(
      join(home, "skills", "tools", name, "SKILL.md"),
      `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n`,
    );
  };
  for (let i = 0; i < count; i++) {
    const n = String(i).padStart(2, "0");
    add(`skill-${n}`, `Walks through the routine chores of area ${n} with care and detail for everyone.`);
  }
  add("zz-target", "Ranks the harbour ferries by punctuality with a marker phrase.");
  backdate(root);
  return { home, cwd };
}

/** `usage` as the home's store, with its `read` calls counted. */
function register(home: string, usage: SkillUsageRecords): { reads: () => number } {
  let reads = 0;
  const counted: SkillUsageRecords = {
    ...usage,
    read: () => {
      reads++;
      return usage.read();
    },
  };
  undo.push(registerKnowledgeStores(home, { ...fileKnowledgeStores(home), skillUsage: counted }));
  return { reads: () => reads };
}

async function twoInstances(): Promise<[PgDatabase, PgDatabase]> {
  const [a, b] = await dbs.fresh(2);
  return [a as PgDatabase, b as PgDatabase];
}

const DESCRIBED = "zz-target: Ranks the harbour ferries";

describe.skipIf(postgresSkipReason)("skill usage readers on PostgreSQL", () => {
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterEach(async () => {
    for (const step of undo.splice(0)) step();
    await dbs.closeAll();
  });
  afterAll(async () => {
    await pg?.dispose();
  });

  it("bumps the usage version on every change from any instance, and never answers a stale read", async () => {
    const [dbA, dbB] = await twoInstances();
    const a = pgSkillUsageRecords(dbA);
    const b = pgSkillUsageRecords(dbB);
    const v0 = await b.version?.();
    expect(await b.read()).toEqual({});
    expect(b.snapshot?.()).toEqual({});

    expect(await a.record("deploy", "create")).toBe(true);
    const v1 = await b.version?.();
    expect(v1).not.toBe(v0);
    expect((await b.read())["deploy"]).toMatchObject({ view_count: 0, use_count: 0 });
    await a.record("deploy", "view");
    expect((await b.read())["deploy"]?.view_count).toBe(1);

    // Nothing changed: the same records, as copies the caller may edit without touching the next read.
    const v2 = await b.version?.();
    const first = await b.read();
    (first["deploy"] as { view_count?: number }).view_count = 99;
    expect((await b.read())["deploy"]?.view_count).toBe(1);
    expect(await b.version?.()).toBe(v2);

    await a.mutate((data) => {
      data["deploy"] = { ...data["deploy"], pinned: true };
    });
    expect(await b.version?.()).not.toBe(v2);
    expect((await b.read())["deploy"]?.pinned).toBe(true);
    // A mutate that changes nothing leaves the version alone.
    const v3 = await b.version?.();
    await a.mutate(() => false);
    expect(await b.version?.()).toBe(v3);
    await a.record("deploy", "delete");
    expect(await b.read()).toEqual({});
  });

  it("shows its own write in snapshot() at once, for discovery's labels", async () => {
    const [db] = await twoInstances();
    const usage = pgSkillUsageRecords(db);
    expect(usage.snapshot?.()).toBeUndefined();
    await usage.record("made-by-review", "create", { createdBy: "agent" });
    expect(usage.snapshot?.()?.["made-by-review"]?.created_by).toBe("agent");
  });

  it("ranks B's next prompt index by a use recorded on A; reused while the version stands", async () => {
    const [dbA, dbB] = await twoInstances();
    const a = pgSkillUsageRecords(dbA);
    const h = instanceHome();
    const counted = register(h.home, pgSkillUsageRecords(dbB));
    // A local usage file is not the truth on a postgres home: its counts rank nothing.
    writeFileSync(
      join(h.home, "skills", ".usage.json"),
      JSON.stringify({ "skill-80": { use_count: 500, last_used_at: new Date().toISOString() } }),
    );
    backdate(join(h.home, "skills"));
    const options = { ...h, config: defaultConfig(), env: { PATH: "/usr/bin" }, toolsets: ["skills"] };

    const before = await buildSessionPrompt(options);
    expect(before.text).toContain("zz-target");
    expect(before.text).not.toContain(DESCRIBED);
    expect(before.text).not.toContain("skill-80: Walks");
    const reads = counted.reads();
    expect((await buildSessionPrompt(options)).text).toBe(before.text);
    expect(counted.reads()).toBe(reads); // unchanged version: the kept index, no read

    await a.record("zz-target", "create");
    await a.record("zz-target", "view");
    await a.record("zz-target", "use");
    const after = await buildSessionPrompt(options);
    expect(after.text).toContain(DESCRIBED);
    expect(counted.reads()).toBe(reads + 1);
  });

  it("builds the index without usage when the database does not answer, saying so, and keeps nothing", async () => {
    const h = instanceHome(3);
    const broken: SkillUsageRecords = {
      read: async () => {
        throw new Error("connection refused");
      },
      record: async () => false,
      mutate: async () => {
        throw new Error("connection refused");
      },
      version: async () => {
        throw new Error("connection refused");
      },
    };
    register(h.home, broken);
    const prompt = await buildSessionPrompt({
      ...h,
      config: defaultConfig(),
      env: { PATH: "/usr/bin" },
      toolsets: ["skills"],
    });
    expect(prompt.text).toContain("zz-target");
    expect(prompt.warnings.join("\n")).toContain(
      "Skill usage was not read for the skills index: connection refused",
    );
  });

  it("refuses to delete a skill pinned on another instance, whatever the local usage file says", async () => {
    const [dbA, dbB] = await twoInstances();
    const a = pgSkillUsageRecords(dbA);
    const h = instanceHome(1);
    register(h.home, pgSkillUsageRecords(dbB));
    await a.record("zz-target", "create", { createdBy: "agent" });
    await a.mutate((data) => {
      data["zz-target"] = { ...data["zz-target"], pinned: true };
    });
    // What a confused or injected model might write with the file tools to get around the pin.
    writeFileSync(
      join(h.home, "skills", ".usage.json"),
      JSON.stringify({ "zz-target": { pinned: false, created_by: "agent" } }),
    );
    const mc = { home: h.home };
    await expect(precheckSkillWrite(mc, { action: "delete", name: "zz-target" })).rejects.toThrow(
      /is pinned/,
    );
    await expect(deleteSkill(mc, { name: "zz-target" })).rejects.toThrow(SkillManageError);
    await expect(deleteSkill(mc, { name: " zz-target " })).rejects.toThrow(/is pinned/);
    await expect(archiveSkill(h.home, "zz-target")).rejects.toThrow(/is pinned/);
    expect(statSync(join(h.home, "skills", "tools", "zz-target", "SKILL.md")).isFile()).toBe(true);

    // Unpinned on A: B may delete it now, and the record goes from the database.
    await runUnpin(a);
    await deleteSkill(mc, { name: "zz-target" });
    expect((await a.read())["zz-target"]).toBeUndefined();
  });

  it("refuses a delete when the usage store cannot say whether the skill is pinned", async () => {
    const h = instanceHome(1);
    register(h.home, {
      read: async () => {
        throw new Error("the database is not answering");
      },
      record: async () => false,
      mutate: async () => undefined,
    });
    await expect(deleteSkill({ home: h.home }, { name: "zz-target" })).rejects.toThrow(
      /Could not check whether "zz-target" is pinned \(the database is not answering\)/,
    );
    expect(statSync(join(h.home, "skills", "tools", "zz-target", "SKILL.md")).isFile()).toBe(true);
  });

  it("curator pin on one instance is the pin every instance's curator, status and skills list see", async () => {
    const [dbA, dbB] = await twoInstances();
    const hA = instanceHome(1);
    const hB = instanceHome(1);
    register(hA.home, pgSkillUsageRecords(dbA));
    register(hB.home, pgSkillUsageRecords(dbB));
    const config = defaultConfig();
    const pin = await runCuratorVerb({ verb: "pin", name: "zz-target" }, { home: hA.home, config, env: {} });
    expect(pin.exitCode).toBe(0);
    // Written to the database, not to A's file.
    expect(() => statSync(join(hA.home, "skills", ".usage.json"))).toThrow();
    const usageB = pgSkillUsageRecords(dbB);
    expect((await usageB.read())["zz-target"]?.pinned).toBe(true);
    await usageB.record("zz-target", "view");
    await usageB.record("zz-target", "view");

    const out: string[] = [];
    const io = {
      out: (l: string) => out.push(l),
      err: () => undefined,
      now: () => Date.now() / 1000,
      env: {},
    };
    expect(await listCommand(hB.home, { source: "all", json: true }, io as never)).toBe(0);
    const listed = (JSON.parse(out.join("\n")) as Array<Record<string, unknown>>).find(
      (s) => s["name"] === "zz-target",
    );
    expect(listed).toMatchObject({ view_count: 2, pinned: true });
    await expect(archiveSkill(hB.home, "zz-target")).rejects.toThrow(/is pinned/);
  });

  it("records /<skill> uses and skill_manage writes in the database, not the instance's file", async () => {
    const [dbA, dbB] = await twoInstances();
    const h = instanceHome(1);
    register(h.home, pgSkillUsageRecords(dbA));
    expect(await loadSkillMessage(h.home, "zz-target")).toContain('[Skill "zz-target" loaded by the user');
    await createSkill(
      { home: h.home, createdBy: "agent" },
      { name: "new-one", content: "---\nname: new-one\ndescription: Made by the review.\n---\n# Steps\n" },
    );
    await patchSkill(
      { home: h.home },
      { name: "new-one", oldString: "# Steps", newString: "# Steps\n\n1. Go." },
    );
    const seen = await pgSkillUsageRecords(dbB).read();
    expect(seen["zz-target"]?.use_count).toBe(1);
    expect(seen["new-one"]).toMatchObject({ created_by: "agent", patch_count: 1 });
    expect(() => statSync(join(h.home, "skills", ".usage.json"))).toThrow();
  });

  it("labels a skill the review made on another instance as agent-made in discovery", async () => {
    const [dbA, dbB] = await twoInstances();
    const h = instanceHome(1);
    const b = pgSkillUsageRecords(dbB);
    register(h.home, b);
    await pgSkillUsageRecords(dbA).record("zz-target", "create", { createdBy: "agent" });
    const read = await b.read();
    const found = discoverSkills({ home: h.home, usage: read }).skills.find((s) => s.name === "zz-target");
    expect(found?.origin).toBe("agent");
    // Without records given, discovery uses what the store last read (here: the read above).
    expect(discoverSkills({ home: h.home }).skills.find((s) => s.name === "zz-target")?.origin).toBe("agent");
  });
});

async function runUnpin(usage: SkillUsageRecords): Promise<void> {
  await usage.mutate((data) => {
    data["zz-target"] = { ...data["zz-target"], pinned: false };
  });
}

describe("the same readers on a file home (skills/.usage.json, as before)", () => {
  it("ranks the prompt index by the file and rebuilds it when the file changes", async () => {
    const h = instanceHome();
    const options = { ...h, config: defaultConfig(), env: { PATH: "/usr/bin" }, toolsets: ["skills"] };
    expect((await buildSessionPrompt(options)).text).not.toContain(DESCRIBED);
    writeFileSync(
      join(h.home, "skills", ".usage.json"),
      JSON.stringify({ "zz-target": { use_count: 4, last_used_at: new Date().toISOString() } }),
    );
    backdate(join(h.home, "skills"));
    expect((await buildSessionPrompt(options)).text).toContain(DESCRIBED);
  });

  it("refuses to stage or run the delete of a skill pinned in the file", async () => {
    const h = instanceHome(1);
    writeFileSync(join(h.home, "skills", ".usage.json"), JSON.stringify({ "zz-target": { pinned: true } }));
    await expect(
      precheckSkillWrite({ home: h.home }, { action: "delete", name: "zz-target" }),
    ).rejects.toThrow(/is pinned/);
    await expect(deleteSkill({ home: h.home }, { name: "zz-target" })).rejects.toThrow(/is pinned/);
    expect(statSync(join(h.home, "skills", "tools", "zz-target", "SKILL.md")).isFile()).toBe(true);
  });
});
