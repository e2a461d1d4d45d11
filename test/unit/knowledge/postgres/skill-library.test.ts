/**
 * Skills in PostgreSQL with a mirror folder per instance: the skill tools' writes on instance A
 * reach B's mirror after a refresh (files, bytes and modes), deletions leave it, stale copies are
 * refused, and rows or folders shaped to escape the mirror or fill a disk are refused.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  pgSkillLibrary,
  SKILLS_CHANGED_CHANNEL,
  SkillConflictError,
} from "../../../../src/knowledge/postgres/skill-library.js";
import {
  createSkill,
  deleteSkill,
  editSkill,
  patchSkill,
  removeSkillFile,
  type SkillManageContext,
  SkillManageError,
  writeSkillFile,
} from "../../../../src/knowledge/skills/manage.js";
import type { PgDatabase } from "../../../../src/state/postgres/database.js";
import { postgresSkipReason } from "../../../support/postgres.js";
import { Databases } from "./databases.js";

const dbs = new Databases();

const md = (name: string, body = "# Steps\n\n1. Build.\n2. Push.\n") =>
  `---\nname: ${name}\ndescription: Deploy the app and verify it.\n---\n\n${body}`;

/** One instance: its home, whose `skills/` is the library's mirror, and the tools' context. */
function instance(db: PgDatabase) {
  const home = mkdtempSync(join(tmpdir(), "hermes-pg-skills-"));
  const mirror = join(home, "skills");
  mkdirSync(mirror);
  const library = pgSkillLibrary(db, mirror);
  const ctx: SkillManageContext = { home, sink: library.sink() };
  return { home, mirror, library, ctx };
}

/** Every file below `dir` (path → [mode, bytes]), skipping dot-files (bookkeeping). */
function tree(dir: string): Record<string, [number, string]> {
  const out: Record<string, [number, string]> = {};
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs)) {
      if (name.startsWith(".")) continue; // The mirror's and the usage file's bookkeeping.
      const full = join(abs, name);
      const path = rel ? `${rel}/${name}` : name;
      if (statSync(full).isDirectory()) walk(full, path);
      else out[path] = [statSync(full).mode & 0o777, readFileSync(full).toString("base64")];
    }
  };
  walk(dir, "");
  return out;
}

function put(path: string, content: string | Buffer, mode = 0o644) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  chmodSync(path, mode);
}

describe.skipIf(postgresSkipReason)("skills in PostgreSQL with a mirror per instance", () => {
  dbs.serveEachTest();

  it("imports a skills folder byte for byte, modes kept, and mirrors it to another instance", async () => {
    const [a, b] = await dbs.fresh(2);
    const src = mkdtempSync(join(tmpdir(), "hermes-skills-src-"));
    const binary = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    put(join(src, "devops", "deploy", "SKILL.md"), md("deploy"));
    put(join(src, "devops", "deploy", "scripts", "run.sh"), "#!/bin/sh\necho deployed\n", 0o755);
    put(join(src, "devops", "deploy", "assets", "logo.bin"), binary);
    put(join(src, "notes", "SKILL.md"), md("notes"));
    put(join(src, "seeded", "SKILL.md"), md("seeded"));
    writeFileSync(join(src, ".bundled_manifest"), "seeded:abc\n");
    put(join(src, ".hub", "quarantine", "bad", "SKILL.md"), md("bad"));
    put(join(src, "linked", "SKILL.md"), md("linked"));
    symlinkSync("/etc/passwd", join(src, "linked", "passwd"));
    put(join(src, "huge", "SKILL.md"), md("huge"));
    put(join(src, "huge", "assets", "big.bin"), Buffer.alloc(1_048_577));

    const one = instance(a!);
    const report = await one.library.importDirectory(src);
    expect(report.imported.sort()).toEqual(["deploy", "notes"]);
    expect(report.skipped.map((s) => s.path).sort()).toEqual(["huge", "linked", "seeded"]);
    expect(report.skipped.find((s) => s.path === "linked")?.reason).toMatch(/symbolic link/);
    expect(report.skipped.find((s) => s.path === "huge")?.reason).toMatch(/limit is 1 MiB/);
    expect((await one.library.importDirectory(src)).unchanged.sort()).toEqual(["deploy", "notes"]);

    const two = instance(b!);
    const refreshed = await two.library.refresh();
    expect(refreshed.added.sort()).toEqual(["deploy", "notes"]);
    expect(refreshed.failed).toEqual([]);
    const mirrored = tree(two.mirror);
    expect(mirrored["devops/deploy/scripts/run.sh"]?.[0]).toBe(0o755);
    expect(readFileSync(join(two.mirror, "devops", "deploy", "assets", "logo.bin")).equals(binary)).toBe(
      true,
    );
    expect(mirrored["notes/SKILL.md"]?.[1]).toBe(Buffer.from(md("notes")).toString("base64"));
    expect(Object.keys(mirrored).sort()).toEqual([
      "devops/deploy/SKILL.md",
      "devops/deploy/assets/logo.bin",
      "devops/deploy/scripts/run.sh",
      "notes/SKILL.md",
    ]);
    expect((await two.library.refresh()).unchanged).toBe(2);
  });

  it("the same tool writes give the same folder on a file home and on PostgreSQL, and reach instance B", async () => {
    const [a, b] = await dbs.fresh(2);
    const fileHome = mkdtempSync(join(tmpdir(), "hermes-file-skills-"));
    const one = instance(a!);
    const two = instance(b!);
    for (const ctx of [{ home: fileHome } as SkillManageContext, one.ctx]) {
      await createSkill(ctx, { name: "deploy", category: "devops", content: md("deploy") });
      await writeSkillFile(ctx, {
        name: "deploy",
        filePath: "scripts/check.sh",
        content: "#!/bin/sh\nexit 0\n",
      });
      await writeSkillFile(ctx, { name: "deploy", filePath: "references/a.md", content: "notes\n" });
      await patchSkill(ctx, { name: "deploy", oldString: "2. Push.", newString: "2. Push.\n3. Verify." });
      await removeSkillFile(ctx, { name: "deploy", filePath: "references/a.md" });
    }
    const fileTree = tree(join(fileHome, "skills"));
    expect(tree(one.mirror)).toEqual(fileTree);
    expect(Object.keys(fileTree).sort()).toEqual([
      "devops/deploy/SKILL.md",
      "devops/deploy/scripts/check.sh",
    ]);

    const listener = await b!.connect();
    const heard: string[] = [];
    listener.on("notification", (n) => heard.push(String(n.payload)));
    await listener.query(`LISTEN ${SKILLS_CHANGED_CHANNEL}`);
    await createSkill(one.ctx, { name: "release", content: md("release") });
    await expect.poll(() => heard.length).toBeGreaterThan(0);
    expect(JSON.parse(heard.at(-1)!)).toMatchObject({ name: "release", op: "put" });
    await listener.query(`UNLISTEN ${SKILLS_CHANGED_CHANNEL}`);
    listener.release();

    expect((await two.library.refresh()).added.sort()).toEqual(["deploy", "release"]);
    expect(tree(two.mirror)).toEqual(tree(one.mirror));
    expect(readFileSync(join(two.mirror, "devops", "deploy", "SKILL.md"), "utf8")).toContain("3. Verify.");
  });

  it("a skill deleted on A leaves B's mirror (and its emptied category folder); B's own folders stay", async () => {
    const [a, b] = await dbs.fresh(2);
    const one = instance(a!);
    const two = instance(b!);
    await createSkill(one.ctx, { name: "old-skill", category: "misc", content: md("old-skill") });
    await createSkill(one.ctx, { name: "kept", content: md("kept") });
    put(join(two.mirror, "local-only", "SKILL.md"), md("local-only"));
    await two.library.refresh();
    expect(existsSync(join(two.mirror, "misc", "old-skill", "SKILL.md"))).toBe(true);
    await deleteSkill(one.ctx, { name: "old-skill" });
    expect((await one.library.list()).map((s) => s.name)).toEqual(["kept"]);
    const report = await two.library.refresh();
    expect(report.removed).toEqual(["old-skill"]);
    expect(existsSync(join(two.mirror, "misc"))).toBe(false);
    expect(existsSync(join(two.mirror, "kept", "SKILL.md"))).toBe(true);
    expect(existsSync(join(two.mirror, "local-only", "SKILL.md"))).toBe(true);
  });

  it("refuses a stale instance's edit and puts its mirror back as the database holds it", async () => {
    const [a, b] = await dbs.fresh(2);
    const one = instance(a!);
    const two = instance(b!);
    await createSkill(one.ctx, { name: "deploy", content: md("deploy") });
    await two.library.refresh();
    await editSkill(two.ctx, { name: "deploy", content: md("deploy", "# Steps\n\nB's version.\n") });
    const stale = editSkill(one.ctx, { name: "deploy", content: md("deploy", "# Steps\n\nA's version.\n") });
    await expect(stale).rejects.toBeInstanceOf(SkillConflictError);
    await expect(stale).rejects.toThrow(/changed by another instance meanwhile/);
    expect(readFileSync(join(one.mirror, "deploy", "SKILL.md"), "utf8")).toContain("B's version.");
    expect((await one.library.read("deploy"))?.files[0]?.content.toString()).toContain("B's version.");
    // Creating a name another instance already took is refused the same way.
    await createSkill(two.ctx, { name: "twin", content: md("twin") });
    await expect(
      createSkill(one.ctx, { name: "twin", content: md("twin", "# A\n\nmine\n") }),
    ).rejects.toThrow(/just created by another instance/);
    expect(readFileSync(join(one.mirror, "twin", "SKILL.md"), "utf8")).toBe(md("twin"));
  });

  it("refuses names and paths that leave the skill, and sizes over the tools' limits", async () => {
    const [a] = await dbs.fresh(1);
    const { library } = instance(a!);
    const skill = (
      files: Array<[string, string | Buffer]>,
      name = "safe",
      category: string | null = null,
    ) => ({
      name,
      category,
      files: [["SKILL.md", md(name)] as [string, string | Buffer], ...files].map(([path, content]) => ({
        path,
        mode: 0o644,
        content: Buffer.from(content),
      })),
    });
    for (const path of [
      "../../etc/cron.d/x",
      "/etc/passwd",
      "scripts/../../x",
      "a\0b",
      "C:\\x",
      "..\\..\\x",
      "./",
    ]) {
      await expect(library.put(skill([[path, "x"]]))).rejects.toBeInstanceOf(SkillManageError);
    }
    await expect(library.put(skill([], "../escape"))).rejects.toThrow(/Invalid skill name/);
    await expect(library.put(skill([], "ok", "a/b"))).rejects.toThrow(/Invalid category/);
    await expect(library.put(skill([["assets/big", Buffer.alloc(1_048_577)]]))).rejects.toThrow(/1 MiB/);
    await expect(library.put({ ...skill([]), files: [] })).rejects.toThrow(/no SKILL\.md/);
    await expect(
      library.put(skill([["SKILL.md", `---\nname: safe\n---\n${"x".repeat(100_001)}`]])),
    ).rejects.toThrow(/lists "SKILL.md" twice|characters/);
    await expect(
      library.put({
        name: "big",
        category: null,
        files: [{ path: "SKILL.md", mode: 0o644, content: Buffer.from("x".repeat(100_001)) }],
      }),
    ).rejects.toThrow(/100,000/);
    expect(await library.list()).toEqual([]);
  });

  it("a row written around the checks cannot place a file outside the mirror", async () => {
    const [a, b] = await dbs.fresh(2);
    const one = instance(a!);
    const two = instance(b!);
    await one.library.put({
      name: "victim",
      category: null,
      files: [{ path: "SKILL.md", mode: 0o644, content: Buffer.from(md("victim")) }],
    });
    // Another writer (a compromised instance, a hand-made row) skips the library's checks.
    await a!.query(
      "INSERT INTO skill_files (skill, path, mode, content) VALUES ('victim', '../../escaped', 4095, 'x')",
    );
    await a!.query("UPDATE skills SET hash = 'changed' WHERE name = 'victim'");
    const report = await two.library.refresh();
    expect(report.failed).toEqual([
      { name: "victim", error: expect.stringMatching(/leaves the skill folder/) },
    ]);
    expect(existsSync(join(two.home, "escaped"))).toBe(false);
    expect(existsSync(join(dirname(two.home), "escaped"))).toBe(false);
    expect(existsSync(join(two.mirror, "victim"))).toBe(false);
  });

  it("puts a mirrored skill changed outside the tools back, keeping the local change aside", async () => {
    const [a, b] = await dbs.fresh(2);
    const one = instance(a!);
    const two = instance(b!);
    await createSkill(one.ctx, { name: "deploy", content: md("deploy") });
    await two.library.refresh();
    const file = join(two.mirror, "deploy", "SKILL.md");
    writeFileSync(file, md("deploy", "# Steps\n\nedited by hand on B\n"));
    put(join(two.mirror, "deploy", "scripts", "extra.sh"), "echo extra\n", 0o755);
    expect((await two.library.refresh()).updated).toEqual(["deploy"]);
    expect(readFileSync(file, "utf8")).toBe(md("deploy"));
    expect(existsSync(join(two.mirror, "deploy", "scripts"))).toBe(false);
    const aside = readdirSync(join(two.mirror, ".hermes-mirror-replaced"));
    expect(
      readFileSync(join(two.mirror, ".hermes-mirror-replaced", aside[0]!, "SKILL.md"), "utf8"),
    ).toContain("edited by hand on B");
    // Two refreshes at once on one mirror folder take turns and agree.
    await one.library.put({
      name: "deploy",
      category: "ops",
      files: [
        { path: "SKILL.md", mode: 0o644, content: Buffer.from(md("deploy", "# Moved\n\nnow in ops\n")) },
      ],
    });
    const reports = await Promise.all([two.library.refresh(), pgSkillLibrary(b!, two.mirror).refresh()]);
    expect(reports.flatMap((r) => r.updated)).toEqual(["deploy"]);
    expect(reports.flatMap((r) => r.failed)).toEqual([]);
    expect(existsSync(join(two.mirror, "deploy"))).toBe(false);
    expect(readFileSync(join(two.mirror, "ops", "deploy", "SKILL.md"), "utf8")).toContain("now in ops");
  });

  it("adopts a local folder that already holds the database's bytes, without moving it", async () => {
    const [a, b] = await dbs.fresh(2);
    const one = instance(a!);
    const two = instance(b!);
    await createSkill(one.ctx, { name: "same", content: md("same") });
    put(join(two.mirror, "same", "SKILL.md"), md("same"));
    const report = await two.library.refresh();
    expect(report).toMatchObject({ added: [], updated: [], unchanged: 1, failed: [] });
    expect(existsSync(join(two.mirror, ".hermes-mirror-replaced"))).toBe(false);
    // Adopted means the mirror now owns it: deleting it on A removes it from B.
    await deleteSkill(one.ctx, { name: "same" });
    expect((await two.library.refresh()).removed).toEqual(["same"]);
    expect(existsSync(join(two.mirror, "same"))).toBe(false);
  });

  it("moves a folder it did not write aside instead of deleting it, and never keeps group/world write", async () => {
    const [a, b] = await dbs.fresh(2);
    const one = instance(a!);
    const two = instance(b!);
    put(join(two.mirror, "deploy", "SKILL.md"), "B's hand-made folder");
    await one.library.put({
      name: "deploy",
      category: null,
      files: [
        { path: "SKILL.md", mode: 0o666, content: Buffer.from(md("deploy")) },
        { path: "scripts/go.sh", mode: 0o777, content: Buffer.from("#!/bin/sh\n") },
      ],
    });
    expect((await two.library.refresh()).added).toEqual(["deploy"]);
    const aside = readdirSync(join(two.mirror, ".hermes-mirror-replaced"));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(two.mirror, ".hermes-mirror-replaced", aside[0]!, "SKILL.md"), "utf8")).toBe(
      "B's hand-made folder",
    );
    expect(statSync(join(two.mirror, "deploy", "scripts", "go.sh")).mode & 0o777).toBe(0o755);
    expect(statSync(join(two.mirror, "deploy", "SKILL.md")).mode & 0o777).toBe(0o644);
    await one.library.put({
      name: "deploy",
      category: null,
      files: [{ path: "SKILL.md", mode: 0o200, content: Buffer.from(md("deploy")) }],
    });
    await two.library.refresh();
    expect(statSync(join(two.mirror, "deploy", "SKILL.md")).mode & 0o777).toBe(0o600);
    expect((await two.library.refresh()).unchanged).toBe(1);
  });
});
