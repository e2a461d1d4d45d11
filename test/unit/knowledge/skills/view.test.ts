import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findSkill } from "../../../../src/knowledge/skills/discovery.js";
import { readUsage, recordSkillUsage, usagePath } from "../../../../src/knowledge/skills/provenance.js";
import { loadSkill, loadSkillMessage, readSkillFile } from "../../../../src/knowledge/skills/view.js";
import { tempHome, writeFile, writeSkill } from "./fixtures.js";

function setup() {
  const home = tempHome();
  const root = join(home, "skills");
  const dir = writeSkill(
    root,
    "devops",
    "deploy",
    "Deploy it.",
    "required_environment_variables:\n  - name: DEPLOY_TOKEN\n    help: from the dashboard\n",
    "# Deploy\n\n1. Run scripts/run.sh.\n",
  );
  writeFile(join(dir, "references", "hosts.md"), "web1\n");
  writeFile(join(dir, "scripts", "run.sh"), "#!/bin/sh\necho deploy\n");
  return { home, root, dir };
}

describe("loadSkillMessage", () => {
  it("carries a header with the skill's folder, its body, linked files, missing env and the request", async () => {
    const { home, dir } = setup();
    const text = await loadSkillMessage(home, "deploy", {}, { instruction: "to staging", env: {} });
    expect(text).toBeDefined();
    const message = text as string;
    expect(message.split("\n")[0]).toContain('Skill "deploy"');
    expect(message.split("\n")[0]).toContain(dir);
    expect(message).toContain("# Deploy\n\n1. Run scripts/run.sh.");
    expect(message).not.toContain("required_environment_variables");
    expect(message).toContain("- references/hosts.md\n- scripts/run.sh");
    expect(message).toContain("DEPLOY_TOKEN");
    expect(message.trimEnd().endsWith("User request: to staging")).toBe(true);
    expect(readUsage(home).deploy?.use_count).toBe(1);
  });

  it("is undefined for an unknown or disabled skill", async () => {
    const { home } = setup();
    expect(await loadSkillMessage(home, "nope")).toBeUndefined();
    expect(await loadSkillMessage(home, "deploy", { disabled: ["deploy"] })).toBeUndefined();
  });
});

describe("loadSkill and readSkillFile", () => {
  it("returns the whole SKILL.md and notes a skill written for another OS", () => {
    const { home, root } = setup();
    writeSkill(root, "", "mac-thing", "Mac only.", "platforms: [macos]\n");
    const loaded = loadSkill("mac-thing", { home, platform: "linux" });
    expect(loaded.content.startsWith("---\nname: mac-thing")).toBe(true);
    expect(loaded.platformNote).toMatch(/written for macos; this machine runs linux/);
    expect(() => loadSkill("deploy", { home, config: { disabled: ["deploy"] } })).toThrow(
      /disabled in config.yaml/,
    );
    expect(() => loadSkill("ghost", { home })).toThrow(/No skill named "ghost".*skills_list/);
  });

  it("reads a supporting file as text", async () => {
    const { home } = setup();
    const skill = findSkill("deploy", { home });
    const file = await readSkillFile(skill!, "references/hosts.md");
    expect(file).toMatchObject({ file_path: "references/hosts.md", content: "web1\n" });
  });

  it("refuses traversal, folders, missing files, binaries and symlinks that leave the skill", async () => {
    const { home, dir } = setup();
    const skill = findSkill("deploy", { home })!;
    await expect(readSkillFile(skill, "../../../etc/passwd")).rejects.toThrow(/leaves the skill folder/);
    await expect(readSkillFile(skill, "/etc/passwd")).rejects.toThrow(/is absolute/);
    await expect(readSkillFile(skill, "references")).rejects.toThrow(/is a folder.*references\/hosts.md/);
    await expect(readSkillFile(skill, "references/none.md")).rejects.toThrow(
      /does not exist.*references\/hosts.md, scripts\/run.sh/,
    );
    writeFileSync(join(dir, "assets.bin"), Buffer.from([0, 1, 2, 3, 0, 255]));
    await expect(readSkillFile(skill, "assets.bin")).rejects.toThrow(/binary file/);
    const outside = tempHome("hermes-secret-");
    writeFile(join(outside, "secret.txt"), "secret");
    symlinkSync(join(outside, "secret.txt"), join(dir, "references", "leak.md"));
    await expect(readSkillFile(skill, "references/leak.md")).rejects.toThrow(/outside the skill folder/);
  });
});

describe("recordSkillUsage", () => {
  it("counts views, uses and patches, keeps unknown fields and writes sorted keys as Python does", async () => {
    const { home, root } = setup();
    writeFile(
      usagePath(home),
      JSON.stringify({
        deploy: { view_count: 4, negative_claims: [], custom_field: "kept" },
        other: { pinned: true },
      }),
    );
    const now = () => new Date("2026-07-02T10:00:00.000Z");
    expect(await recordSkillUsage(home, "deploy", "view", { now })).toBe(true);
    await recordSkillUsage(home, "deploy", "use", { now });
    await recordSkillUsage(home, "deploy", "patch", { now });
    const data = JSON.parse(readFileSync(join(root, ".usage.json"), "utf8"));
    expect(data.deploy).toEqual({
      view_count: 5,
      use_count: 1,
      patch_count: 1,
      negative_claims: [],
      custom_field: "kept",
      last_viewed_at: "2026-07-02T10:00:00.000+00:00",
      last_used_at: "2026-07-02T10:00:00.000+00:00",
      last_patched_at: "2026-07-02T10:00:00.000+00:00",
      last_activity_at: "2026-07-02T10:00:00.000+00:00",
    });
    expect(data.other).toEqual({ pinned: true });
    expect(Object.keys(data.deploy)).toEqual([...Object.keys(data.deploy)].sort());
  });

  it("does not record bundled or hub skills, and leaves a broken file alone without throwing", async () => {
    const { home, root } = setup();
    writeFile(join(root, ".bundled_manifest"), "deploy:abc\n");
    expect(await recordSkillUsage(home, "deploy", "view")).toBe(false);
    writeFile(join(root, ".hub", "lock.json"), JSON.stringify({ installed: { hubbed: {} } }));
    expect(await recordSkillUsage(home, "hubbed", "view")).toBe(false);
    writeFile(usagePath(home), "{broken");
    expect(await recordSkillUsage(home, "fresh", "view")).toBe(false);
    expect(readFileSync(usagePath(home), "utf8")).toBe("{broken");
    expect(readUsage(home)).toEqual({});
  });
});
