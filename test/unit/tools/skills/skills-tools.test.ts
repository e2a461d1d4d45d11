import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { skillDirHash } from "../../../../src/knowledge/skills/dir-hash.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import { skillTools } from "../../../../src/tools/skills/index.js";
import type { ToolContext } from "../../../../src/tools/types.js";
import { makeToolContext } from "../../../support/tool-context.js";
import { skillMd, tempHome, writeFile, writeSkill } from "../../knowledge/skills/fixtures.js";

// biome-ignore lint/suspicious/noExplicitAny: results are JSON read field by field
type Result = any;

function setup(skills: Record<string, unknown> = {}) {
  const home = tempHome();
  const registry = new ToolRegistry();
  registry.registerAll(skillTools);
  const base = makeToolContext({ home, env: { PATH: process.env.PATH } });
  const ctx: ToolContext = {
    ...base,
    config: { ...base.config, skills: { external_dirs: [], disabled: [], ...skills } },
  };
  const call = async (
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ ok: boolean; result: Result }> => {
    const outcome = await registry.execute(name, args, ctx);
    expect(outcome.truncated).toBeUndefined();
    return { ok: outcome.ok, result: JSON.parse(outcome.content) };
  };
  /** skill_view answers successes in plain text. */
  const view = async (args: Record<string, unknown>): Promise<string> => {
    const outcome = await registry.execute("skill_view", args, ctx);
    expect(outcome.ok).toBe(true);
    expect(outcome.truncated).toBeUndefined();
    return outcome.content;
  };
  return { home, root: join(home, "skills"), registry, ctx, call, view };
}

const BODY = "# Steps\n\n1. Build the image.\n2.   Push it.\n";

describe("the skills toolset", () => {
  it("registers three tools in the skills toolset with lean schemas", () => {
    const { registry } = setup();
    expect(registry.list().map((t) => [t.name, t.toolset])).toEqual([
      ["skills_list", "skills"],
      ["skill_view", "skills"],
      ["skill_manage", "skills"],
    ]);
    const sizes = Object.fromEntries(
      registry.schemas(registry.names()).map((s) => [s.function.name, JSON.stringify(s.function).length]),
    );
    expect(sizes.skills_list).toBeLessThanOrEqual(1200);
    expect(sizes.skill_view).toBeLessThanOrEqual(1200);
    expect(sizes.skill_manage).toBeLessThanOrEqual(1700);
    expect(registry.get("skills_list")?.parallelSafe).toBe(true);
    expect(registry.get("skill_view")?.parallelSafe).toBe(true);
    expect(registry.get("skill_manage")?.parallelSafe).toBe(false);
  });
});

describe("skills_list", () => {
  it("pages through skills, 50 at a time, and says how to get the next page", async () => {
    const { root, call } = setup();
    for (let i = 0; i < 120; i++) writeSkill(root, "bulk", `skill-${String(i).padStart(3, "0")}`);
    const first = (await call("skills_list", {})).result;
    expect(first).toMatchObject({ count: 120, page: 1, pages: 3, categories: ["bulk"] });
    expect(first.skills).toHaveLength(50);
    expect(first.next).toMatch(/page 2/);
    const third = (await call("skills_list", { page: 3 })).result;
    expect(third.skills.map((s: Result) => s.name)[0]).toBe("skill-100");
    expect(third.skills).toHaveLength(20);
    const past = await call("skills_list", { page: 4 });
    expect(past.ok).toBe(false);
    expect(past.result.error).toMatch(/past the last page \(3\)/);
    expect((await call("skills_list", { page: 0 })).ok).toBe(false);
  });

  it("filters by query over name, description and tags, and by category", async () => {
    const { root, call } = setup();
    writeSkill(root, "devops", "docker-debugging", "Debug failing containers.");
    writeSkill(root, "devops", "nginx-config", "Write server blocks.", "tags: [web, proxy]\n");
    writeSkill(root, "research", "arxiv", "Search papers.");
    expect((await call("skills_list", { query: "PROXY" })).result.skills.map((s: Result) => s.name)).toEqual([
      "nginx-config",
    ]);
    expect((await call("skills_list", { query: "debug containers" })).result.count).toBe(1);
    const devops = (await call("skills_list", { category: "devops" })).result;
    expect(devops.skills.map((s: Result) => s.name)).toEqual(["docker-debugging", "nginx-config"]);
    expect(devops.skills[1]).toEqual({
      name: "nginx-config",
      description: "Write server blocks.",
      category: "devops",
      tags: ["web", "proxy"],
    });
    const none = await call("skills_list", { category: "cooking" });
    expect(none.result.error).toMatch(/Categories: devops, research/);
    expect((await call("skills_list", { query: "zzz" })).result).toMatchObject({ count: 0, skills: [] });
  });

  it("honours skills.disabled and skills.external_dirs from the config, and shows missing env", async () => {
    const external = tempHome("hermes-ext-");
    writeSkill(external, "team", "team-skill", "Team.", "required_environment_variables:\n  - TEAM_TOKEN\n");
    const { root, call } = setup({ disabled: ["hidden"], external_dirs: [external] });
    writeSkill(root, "", "hidden");
    writeSkill(root, "", "shown");
    const list = (await call("skills_list", {})).result;
    expect(list.skills.map((s: Result) => s.name)).toEqual(["shown", "team-skill"]);
    expect(list.skills[1].missing_env).toEqual(["TEAM_TOKEN"]);
  });

  it("says how to start when there are no skills", async () => {
    const { call } = setup();
    const result = (await call("skills_list", {})).result;
    expect(result).toMatchObject({ count: 0, skills: [] });
    expect(result.next).toMatch(/skill_manage/);
  });
});

describe("skill_view", () => {
  function withSkill() {
    const env = setup();
    const dir = writeSkill(
      env.root,
      "devops",
      "deploy",
      "Deploy it.",
      "required_environment_variables:\n  - name: DEPLOY_TOKEN\n    prompt: Deploy token\n",
      BODY,
    );
    writeFile(join(dir, "references", "hosts.md"), "web1\n");
    return { ...env, dir };
  }

  it("returns SKILL.md, linked files, missing env and whether it is editable; counts the view", async () => {
    const { view, home, dir } = withSkill();
    const text = await view({ name: "deploy" });
    const [head, skillMdText] = text.split("\n\nSKILL.md:\n");
    expect(skillMdText).toBe(readFileSync(join(dir, "SKILL.md"), "utf8"));
    expect(head).toContain(
      'Skill "deploy" (category devops): made in this home (by the user or at their request), editable with skill_manage.',
    );
    expect(head).toContain(`Folder: ${dir}`);
    expect(head).toContain("- references/hosts.md");
    expect(head).toContain(
      `Not set: DEPLOY_TOKEN (Deploy token). Ask the user to add it to ${join(home, ".env")}`,
    );
    const usage = JSON.parse(readFileSync(join(home, "skills", ".usage.json"), "utf8"));
    expect(usage.deploy.view_count).toBe(1);
  });

  it("returns a long SKILL.md whole, line by line", async () => {
    const { view, root } = setup();
    const body = Array.from(
      { length: 300 },
      (_, i) => `${i + 1}. Step number ${i + 1} with some detail.`,
    ).join("\n");
    writeSkill(root, "", "long", "Long.", "", body);
    const text = await view({ name: "long" });
    expect(text).toContain("300. Step number 300 with some detail.");
  });

  it("reads one supporting file (a use of the skill) and refuses paths that leave the skill", async () => {
    const { call, view, dir, home } = withSkill();
    const file = await view({ name: "deploy", file_path: "references/hosts.md" });
    expect(file).toBe(
      `references/hosts.md of skill "deploy" (${join(dir, "references", "hosts.md")}):\n\nweb1\n`,
    );
    const usage = JSON.parse(readFileSync(join(home, "skills", ".usage.json"), "utf8"));
    expect(usage.deploy.use_count).toBe(1);
    const outside = await call("skill_view", { name: "deploy", file_path: "../../../../etc/passwd" });
    expect(outside.ok).toBe(false);
    expect(outside.result.error).toMatch(/leaves the skill folder/);
  });

  it("refuses a binary file with a clear error", async () => {
    const { call, dir } = withSkill();
    writeFile(join(dir, "assets", "logo.png"), "not really a png");
    const result = await call("skill_view", { name: "deploy", file_path: "assets/logo.png" });
    expect(result.result.error).toMatch(/binary file/);
  });

  it("explains an unknown skill", async () => {
    const { call } = withSkill();
    const result = await call("skill_view", { name: "ghost" });
    expect(result.ok).toBe(false);
    expect(result.result.error).toMatch(/No skill named "ghost".*skills_list/);
  });
});

describe("skill_manage", () => {
  it("creates a skill that skills_list and skill_view then show; the user's own, not curator-managed", async () => {
    const { call, view, root, home } = setup();
    const created = await call("skill_manage", {
      action: "create",
      name: "docker-push",
      category: "devops",
      content: skillMd("docker-push", "Build and push an image.", "", BODY),
    });
    expect(created.ok).toBe(true);
    expect(created.result.success).toBe(true);
    expect(created.result.path).toBe(join(root, "devops", "docker-push", "SKILL.md"));
    expect(created.result.message).toMatch(/Created skill "docker-push"/);
    const list = (await call("skills_list", {})).result;
    expect(list.skills.map((s: Result) => s.name)).toEqual(["docker-push"]);
    expect(await view({ name: "docker-push" })).toContain("at their request), editable");
    const usage = JSON.parse(readFileSync(join(home, "skills", ".usage.json"), "utf8"));
    // Upstream's meaning: "agent" marks what the background review wrote, for the curator.
    expect(usage["docker-push"].created_by).toBeNull();
    expect(usage["docker-push"].view_count).toBe(1);
  });

  it("patches with whitespace-tolerant matching and writes supporting files", async () => {
    const { call, root } = setup();
    await call("skill_manage", { action: "create", name: "p", content: skillMd("p", "P.", "", BODY) });
    const patched = await call("skill_manage", {
      action: "patch",
      name: "p",
      old_string: "2. Push it.",
      new_string: "2. Push it to the registry.",
    });
    expect(patched.ok).toBe(true);
    expect(readFileSync(join(root, "p", "SKILL.md"), "utf8")).toContain("Push it to the registry.");
    const written = await call("skill_manage", {
      action: "write_file",
      name: "p",
      file_path: "scripts/push.sh",
      file_content: 'docker push "$IMAGE"\n',
    });
    expect(written.result.message).toMatch(/Wrote scripts\/push.sh/);
    const removed = await call("skill_manage", {
      action: "remove_file",
      name: "p",
      file_path: "scripts/push.sh",
    });
    expect(removed.ok).toBe(true);
    const deleted = await call("skill_manage", { action: "delete", name: "p" });
    expect(deleted.result.message).toMatch(/Deleted skill "p"/);
    expect(existsSync(join(root, "p"))).toBe(false);
  });

  it("answers missing arguments, bad actions and traversal with actionable errors", async () => {
    const { call } = setup();
    const noContent = await call("skill_manage", { action: "create", name: "x" });
    expect(noContent.result.error).toMatch(/content is required for action "create"/);
    const badAction = await call("skill_manage", { action: "rename", name: "x" });
    expect(badAction.ok).toBe(false);
    expect(badAction.result.error).toMatch(/action.*must be one of "create", "patch"/);
    const badName = await call("skill_manage", {
      action: "create",
      name: "../../x",
      content: skillMd("x", "X.", "", BODY),
    });
    expect(badName.result.error).toMatch(/Invalid skill name/);
    await call("skill_manage", { action: "create", name: "t", content: skillMd("t", "T.", "", BODY) });
    const traversal = await call("skill_manage", {
      action: "write_file",
      name: "t",
      file_path: "../../x",
      file_content: "x",
    });
    expect(traversal.result.error).toMatch(/leaves the skill folder/);
    const noOld = await call("skill_manage", { action: "patch", name: "t", new_string: "x" });
    expect(noOld.result.error).toMatch(/old_string is required/);
  });

  it("refuses to change bundled skills and hub installs, saying what to do instead", async () => {
    const { call, view, root } = setup();
    const seeded = writeSkill(root, "dev", "seeded", "Seeded.", "", BODY);
    writeSkill(root, "dev", "hubbed", "From the hub.", "", BODY);
    writeFileSync(join(root, ".bundled_manifest"), `seeded:${skillDirHash(seeded)}\n`);
    writeFile(join(root, ".hub", "lock.json"), JSON.stringify({ version: 1, installed: { hubbed: {} } }));
    const bundled = await call("skill_manage", {
      action: "patch",
      name: "seeded",
      old_string: "Build",
      new_string: "x",
    });
    expect(bundled.ok).toBe(false);
    expect(bundled.result.error).toMatch(/bundled skill.*seeded-custom/);
    const hub = await call("skill_manage", { action: "delete", name: "hubbed" });
    expect(hub.result.error).toMatch(/skills hub.*hermes skills uninstall hubbed/);
    expect(await view({ name: "seeded" })).toContain("bundled with Hermes, read-only");
  });
});
