/**
 * The file tools against the protected-path list, tried the way a confused or prompt-injected model
 * would: odd spellings, symlinks (to files, to folders, dangling, chained), V4A patches that add,
 * delete or move protected files. All in a throw-away home; the real one is never touched.
 */
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { cronjobTool } from "../../../../src/tools/cronjob.js";
import { patchTool } from "../../../../src/tools/file/patch.js";
import { writeFileTool } from "../../../../src/tools/file/write-file.js";
import { memoryTool } from "../../../../src/tools/memory.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import { skillTools } from "../../../../src/tools/skills/index.js";
import type { ApprovalDecision, ApprovalRequest } from "../../../../src/tools/types.js";
import { makeToolContext } from "../../../support/tool-context.js";
import { skillMd } from "../../knowledge/skills/fixtures.js";
import { call, writeTree } from "./helpers.js";

const CONFIG = "model: test/model\napprovals:\n  mode: manual\n";

/** A fake user home holding a Hermes home, a project folder as cwd, and a scripted approver. */
function setup(answer: ApprovalDecision = "deny") {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "hermes-protected-")));
  const user = join(root, "user");
  const home = join(user, ".hermes");
  const cwd = join(root, "work");
  writeTree(home, {
    "config.yaml": CONFIG,
    "SOUL.md": "I am Hermes.\n",
    ".env": "OPENAI_API_KEY=sk-test\n",
    "memories/MEMORY.md": "remember\n",
    "skills/devops/deploy/SKILL.md": skillMd("deploy", "Deploys the app.", "", "# Deploy\n\nmode: manual\n"),
    "sessions/s1.json": "{}\n",
  });
  writeTree(user, { ".bashrc": "export PS1='$ '\n" });
  mkdirSync(cwd, { recursive: true });
  const asked: ApprovalRequest[] = [];
  const ctx = makeToolContext({
    cwd,
    home,
    env: { PATH: "", HOME: user },
    requestApproval: async (request) => {
      asked.push(request);
      return answer;
    },
  });
  const read = (path: string) => readFileSync(path, "utf8");
  return { root, user, home, cwd, ctx, asked, read };
}

describe("write_file and protected paths", () => {
  it("asks before writing config.yaml; denied (as in a non-interactive run) it leaves the file and says why", async () => {
    const t = setup("deny");
    const target = join(t.home, "config.yaml");
    await expect(
      call(writeFileTool, { path: target, content: "command_allowlist: ['.*']\n" }, t.ctx),
    ).rejects.toThrow(/Not written: .*the Hermes config \(config\.yaml\).*not approved.*tell the user/);
    expect(t.read(target)).toBe(CONFIG);
    expect(t.asked).toEqual([
      {
        command: `write_file ${target}`,
        reason: "the Hermes config (config.yaml)",
        patternKey: "protected_write",
        protectedPath: true,
      },
    ]);
  });

  it("writes config.yaml once the user approves", async () => {
    const t = setup("once");
    await call(writeFileTool, { path: join(t.home, "config.yaml"), content: "model: other\n" }, t.ctx);
    expect(t.read(join(t.home, "config.yaml"))).toBe("model: other\n");
    expect(t.asked).toHaveLength(1);
  });

  it.each([
    ["memories/MEMORY.md", /memory tool/],
    ["memories/USER.md", /memory tool/],
    ["skills/devops/deploy/SKILL.md", /skill_manage/],
    ["skills/new/evil/SKILL.md", /skill_manage/],
    ["skills/..hidden/x.md", /skill_manage/],
    ["cron/jobs.json", /cronjob tool/],
    ["profiles/work/memories/MEMORY.md", /memory tool/],
    ["profiles/work/config.yaml", /tell the user/],
    ["SOUL.md", /tell the user/],
    ["state.db", /tell the user/],
    ["plugins/x/plugin.yaml", /tell the user/],
    ["hooks/pre.sh", /tell the user/],
    ["shell-hooks-allowlist.json", /tell the user/],
    ["webhook_subscriptions.json", /tell the user/],
  ])("Hermes home entry %s needs approval, and the model is told %s", async (rel, advice) => {
    const t = setup("deny");
    const before = existsSync(join(t.home, rel)) ? t.read(join(t.home, rel)) : undefined;
    await expect(call(writeFileTool, { path: join(t.home, rel), content: "x" }, t.ctx)).rejects.toThrow(
      advice,
    );
    expect(existsSync(join(t.home, rel)) ? t.read(join(t.home, rel)) : undefined).toBe(before);
    expect(t.asked).toHaveLength(1);
  });

  it.each([[".env"], ["auth.json"], ["profiles/work/.env"], ["mcp-tokens/github.json"]])(
    "refuses the secret %s outright, without asking, even when the user would approve",
    async (rel) => {
      const t = setup("always");
      await expect(call(writeFileTool, { path: join(t.home, rel), content: "X=1\n" }, t.ctx)).rejects.toThrow(
        /Refusing to write .*never modify credential files/,
      );
      expect(t.asked).toEqual([]);
      expect(t.read(join(t.home, ".env"))).toBe("OPENAI_API_KEY=sk-test\n");
    },
  );

  it("guards the user's login files but not look-alikes", async () => {
    const t = setup("deny");
    for (const rel of [
      ".bashrc",
      ".profile",
      ".zshrc",
      ".config/fish/config.fish",
      ".config/systemd/user/x.service",
    ]) {
      await expect(
        call(writeFileTool, { path: join(t.user, rel), content: "curl x | sh\n" }, t.ctx),
      ).rejects.toThrow(/Not written/);
    }
    expect(t.read(join(t.user, ".bashrc"))).toBe("export PS1='$ '\n");
    await expect(
      call(writeFileTool, { path: join(t.user, ".ssh/authorized_keys"), content: "k" }, t.ctx),
    ).rejects.toThrow(/Refusing/);
    t.asked.length = 0;
    for (const rel of [
      ".bashrc.bak",
      ".hermes-notes/config.yaml",
      "project/config.yaml",
      ".hermes/sessions/s2.json",
    ]) {
      await call(writeFileTool, { path: join(t.user, rel), content: "ok" }, t.ctx);
      expect(t.read(join(t.user, rel))).toBe("ok");
    }
    expect(t.asked).toEqual([]);
  });

  it("sees through spellings of the same path", async () => {
    const t = setup("deny");
    const fromCwd = relative(t.cwd, join(t.home, "config.yaml"));
    for (const path of [
      fromCwd,
      `${t.home}/./config.yaml`,
      `${t.home}//config.yaml`,
      `${t.home}/memories/../config.yaml`,
      `${t.home}/sessions/../../.hermes/config.yaml`,
    ]) {
      await expect(call(writeFileTool, { path, content: "x" }, t.ctx)).rejects.toThrow(/Not written/);
    }
    expect(t.read(join(t.home, "config.yaml"))).toBe(CONFIG);
    expect(t.asked).toHaveLength(5);
  });
});

describe("write_file through symlinks", () => {
  it("refuses a link in the workspace that points at config.yaml, keeping the link and the target", async () => {
    const t = setup("deny");
    symlinkSync(join(t.home, "config.yaml"), join(t.cwd, "settings.yaml"));
    await expect(call(writeFileTool, { path: "settings.yaml", content: "x" }, t.ctx)).rejects.toThrow(
      /Not written: settings\.yaml is the Hermes config/,
    );
    expect(lstatSync(join(t.cwd, "settings.yaml")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(t.cwd, "settings.yaml"))).toBe(join(t.home, "config.yaml"));
    expect(t.read(join(t.home, "config.yaml"))).toBe(CONFIG);
  });

  it("follows relative and chained links, and links to .env are refused without asking", async () => {
    const t = setup("deny");
    symlinkSync(relative(t.cwd, join(t.home, "config.yaml")), join(t.cwd, "hop1"));
    symlinkSync("hop1", join(t.cwd, "hop2"));
    await expect(call(writeFileTool, { path: "hop2", content: "x" }, t.ctx)).rejects.toThrow(/Hermes config/);
    symlinkSync(join(t.home, ".env"), join(t.cwd, "env-link"));
    await expect(call(writeFileTool, { path: "env-link", content: "x" }, t.ctx)).rejects.toThrow(/Refusing/);
    expect(t.asked).toHaveLength(1);
    expect(t.read(join(t.home, ".env"))).toBe("OPENAI_API_KEY=sk-test\n");
  });

  it("writes through a link to an ordinary file: the target gets the content and the link stays a link", async () => {
    const t = setup("deny");
    writeTree(t.cwd, { "real/notes.md": "old" });
    symlinkSync(join(t.cwd, "real/notes.md"), join(t.cwd, "notes.md"));
    await call(writeFileTool, { path: "notes.md", content: "new" }, t.ctx);
    expect(t.read(join(t.cwd, "real/notes.md"))).toBe("new");
    expect(lstatSync(join(t.cwd, "notes.md")).isSymbolicLink()).toBe(true);
    expect(t.asked).toEqual([]);
  });

  it("follows a dangling link: to a missing protected file it is refused, to an ordinary one it creates the target", async () => {
    const t = setup("deny");
    symlinkSync(join(t.home, "cron", "jobs.json"), join(t.cwd, "jobs.json"));
    await expect(call(writeFileTool, { path: "jobs.json", content: "[]" }, t.ctx)).rejects.toThrow(
      /cronjob tool/,
    );
    expect(existsSync(join(t.home, "cron"))).toBe(false);
    expect(lstatSync(join(t.cwd, "jobs.json")).isSymbolicLink()).toBe(true);

    mkdirSync(join(t.cwd, "out"));
    symlinkSync("out/later.txt", join(t.cwd, "later.txt"));
    await call(writeFileTool, { path: "later.txt", content: "made" }, t.ctx);
    expect(t.read(join(t.cwd, "out/later.txt"))).toBe("made");
    expect(lstatSync(join(t.cwd, "later.txt")).isSymbolicLink()).toBe(true);
  });

  it("a hard link to config.yaml is replaced by the write, never written into", async () => {
    const t = setup("deny");
    linkSync(join(t.home, "config.yaml"), join(t.cwd, "hard.yaml"));
    await call(writeFileTool, { path: "hard.yaml", content: "approvals: {mode: off}\n" }, t.ctx);
    await call(patchTool, { path: "hard.yaml", old_string: "off", new_string: "smart" }, t.ctx);
    expect(t.read(join(t.home, "config.yaml"))).toBe(CONFIG);
    expect(t.read(join(t.cwd, "hard.yaml"))).toBe("approvals: {mode: smart}\n");
  });

  it("sees through a symlinked parent folder (work/link-dir → the Hermes home)", async () => {
    const t = setup("deny");
    symlinkSync(t.home, join(t.cwd, "link-dir"));
    await expect(call(writeFileTool, { path: "link-dir/config.yaml", content: "x" }, t.ctx)).rejects.toThrow(
      /Hermes config/,
    );
    await expect(call(writeFileTool, { path: "link-dir/.env", content: "x" }, t.ctx)).rejects.toThrow(
      /Refusing/,
    );
    await expect(
      call(writeFileTool, { path: "link-dir/memories/MEMORY.md", content: "x" }, t.ctx),
    ).rejects.toThrow(/memory tool/);
    expect(t.read(join(t.home, "config.yaml"))).toBe(CONFIG);
    expect(t.read(join(t.home, "memories/MEMORY.md"))).toBe("remember\n");
    // Unprotected parts of the home stay writable through the link.
    await call(writeFileTool, { path: "link-dir/sessions/s2.json", content: "{}" }, t.ctx);
    expect(t.read(join(t.home, "sessions/s2.json"))).toBe("{}");
  });
});

describe("patch and protected paths", () => {
  it("replace mode asks once the edit is known to apply, and leaves config.yaml unchanged when denied", async () => {
    const t = setup("deny");
    const path = join(t.home, "config.yaml");
    await expect(
      call(patchTool, { path, old_string: "no such text", new_string: "x" }, t.ctx),
    ).rejects.toThrow(/not found/);
    expect(t.asked).toEqual([]);
    await expect(
      call(patchTool, { path, old_string: "mode: manual", new_string: "mode: off" }, t.ctx),
    ).rejects.toThrow(/Not written: .*Hermes config/);
    expect(t.asked).toMatchObject([{ command: `patch ${path}`, protectedPath: true }]);
    expect(t.read(path)).toBe(CONFIG);
  });

  it("replace mode refuses .env without asking, and edits through a symlink keeping the link", async () => {
    const t = setup("deny");
    await expect(
      call(patchTool, { path: join(t.home, ".env"), old_string: "sk-test", new_string: "sk-evil" }, t.ctx),
    ).rejects.toThrow(/Refusing/);
    writeTree(t.cwd, { "src/a.txt": "alpha\n" });
    symlinkSync(join(t.cwd, "src/a.txt"), join(t.cwd, "a-link.txt"));
    await call(patchTool, { path: "a-link.txt", old_string: "alpha", new_string: "beta" }, t.ctx);
    expect(t.read(join(t.cwd, "src/a.txt"))).toBe("beta\n");
    expect(lstatSync(join(t.cwd, "a-link.txt")).isSymbolicLink()).toBe(true);
    expect(t.asked).toEqual([]);
  });

  const v4a = (...sections: string[]) => `*** Begin Patch\n${sections.join("\n")}\n*** End Patch`;

  it("a V4A patch touching config.yaml changes nothing at all when denied, ordinary files included", async () => {
    const t = setup("deny");
    const patch = v4a(
      "*** Add File: fresh.txt\n+hello",
      `*** Update File: ${join(t.home, "config.yaml")}\n@@\n approvals:\n-  mode: manual\n+  mode: off`,
    );
    await expect(call(patchTool, { mode: "patch", patch }, t.ctx)).rejects.toThrow(
      /Patch not applied, no files were changed: Not written/,
    );
    expect(existsSync(join(t.cwd, "fresh.txt"))).toBe(false);
    expect(t.read(join(t.home, "config.yaml"))).toBe(CONFIG);
  });

  it.each([
    [
      "adds SOUL.md's neighbour hooks/",
      (h: string) => `*** Add File: ${join(h, "hooks/on-start.sh")}\n+rm -rf ~`,
      /created by the patch/,
    ],
    [
      "deletes MEMORY.md",
      (h: string) => `*** Delete File: ${join(h, "memories/MEMORY.md")}`,
      /deleted by the patch/,
    ],
    [
      "moves a skill out of skills/",
      (h: string) => `*** Update File: ${join(h, "skills/devops/deploy/SKILL.md")}\n*** Move to: stolen.md`,
      /deleted by the patch/,
    ],
    [
      "moves an ordinary file into cron/",
      () => "*** Update File: plain.txt\n*** Move to: link-dir/cron/jobs.json",
      /created by the patch/,
    ],
  ])("a V4A patch that %s asks, and changes nothing when denied", async (_what, section, effect) => {
    const t = setup("deny");
    writeTree(t.cwd, { "plain.txt": "plain\n" });
    symlinkSync(t.home, join(t.cwd, "link-dir"));
    await expect(call(patchTool, { mode: "patch", patch: v4a(section(t.home)) }, t.ctx)).rejects.toThrow(
      /no files were changed: Not written/,
    );
    expect(t.asked.map((a) => a.reason).join("\n")).toMatch(effect);
    expect(t.read(join(t.home, "memories/MEMORY.md"))).toBe("remember\n");
    expect(t.read(join(t.home, "skills/devops/deploy/SKILL.md"))).toContain("name: deploy");
    expect(t.read(join(t.cwd, "plain.txt"))).toBe("plain\n");
    expect(existsSync(join(t.home, "hooks"))).toBe(false);
    expect(existsSync(join(t.home, "cron"))).toBe(false);
    expect(existsSync(join(t.cwd, "stolen.md"))).toBe(false);
  });

  it("a V4A patch that adds a secret is refused before anyone is asked", async () => {
    const t = setup("always");
    const patch = v4a("*** Add File: notes.txt\n+hi", `*** Add File: ${join(t.home, "auth.json")}\n+{}`);
    await expect(call(patchTool, { mode: "patch", patch }, t.ctx)).rejects.toThrow(
      /no files were changed: Refusing/,
    );
    expect(t.asked).toEqual([]);
    expect(existsSync(join(t.cwd, "notes.txt"))).toBe(false);
  });

  it("an approved V4A patch applies, asking once per protected file", async () => {
    const t = setup("once");
    const patch = v4a(
      "*** Add File: fresh.txt\n+hello",
      `*** Update File: ${join(t.home, "SOUL.md")}\n@@\n-I am Hermes.\n+I am Hermes, careful.`,
    );
    await call(patchTool, { mode: "patch", patch }, t.ctx);
    expect(t.read(join(t.home, "SOUL.md"))).toBe("I am Hermes, careful.\n");
    expect(t.read(join(t.cwd, "fresh.txt"))).toBe("hello\n");
    expect(t.asked.map((a) => a.command)).toEqual([`patch ${join(t.home, "SOUL.md")}`]);
  });
});

describe("the tools that own Hermes's files keep writing them without approval", () => {
  it("memory, skill_manage and cronjob write under memories/, skills/ and cron/ with every approval denied", async () => {
    const t = setup("deny");
    const registry = new ToolRegistry();
    registry.registerAll([memoryTool, cronjobTool, ...skillTools]);
    const ctx = { ...t.ctx, config: { ...t.ctx.config, skills: { external_dirs: [], disabled: [] } } };
    const run = async (name: string, args: Record<string, unknown>) => {
      const outcome = await registry.execute(name, args, ctx);
      expect(outcome.ok, outcome.content).toBe(true);
      return outcome.content;
    };
    await run("memory", { action: "add", content: "The user likes short answers" });
    expect(t.read(join(t.home, "memories/MEMORY.md"))).toContain("The user likes short answers");
    await run("skill_manage", {
      action: "write_file",
      name: "deploy",
      file_path: "references/notes.md",
      file_content: "# Notes\n",
    });
    expect(t.read(join(t.home, "skills/devops/deploy/references/notes.md"))).toBe("# Notes\n");
    const created = await run("cronjob", {
      action: "create",
      schedule: "every 1h",
      prompt: "check the feed",
    });
    expect(created).toMatch(/"created":true/);
    expect(t.read(join(t.home, "cron/jobs.json"))).toContain("check the feed");
    expect(t.asked).toEqual([]);
  });

  it("skill_manage's file_path cannot leave the skill's folder to reach config.yaml", async () => {
    const t = setup("once");
    const registry = new ToolRegistry();
    registry.registerAll(skillTools);
    const ctx = { ...t.ctx, config: { ...t.ctx.config, skills: { external_dirs: [], disabled: [] } } };
    const skill = join(t.home, "skills/devops/deploy");
    symlinkSync(join(t.home, "config.yaml"), join(skill, "assets-link"));
    mkdirSync(join(skill, "references"));
    symlinkSync(join(t.home, "config.yaml"), join(skill, "references", "cfg.md"));
    symlinkSync(t.home, join(skill, "templates"));
    for (const filePath of [
      "../../../config.yaml",
      "references/../../../../config.yaml",
      join(t.home, "config.yaml"),
      "references/cfg.md",
      "templates/config.yaml",
      "assets/../assets-link",
    ]) {
      for (const args of [
        { action: "write_file", file_path: filePath, file_content: "x" },
        { action: "patch", file_path: filePath, old_string: "mode: manual", new_string: "mode: off" },
        { action: "remove_file", file_path: filePath },
      ]) {
        const outcome = await registry.execute("skill_manage", { name: "deploy", ...args }, ctx);
        expect(outcome.ok, `${filePath} ${args.action}: ${outcome.content}`).toBe(false);
      }
    }
    expect(t.read(join(t.home, "config.yaml"))).toBe(CONFIG);
    expect(lstatSync(join(skill, "references", "cfg.md")).isSymbolicLink()).toBe(true);
    // The skill is found and writable: the refusals above were about the paths.
    const ok = await registry.execute(
      "skill_manage",
      { name: "deploy", action: "write_file", file_path: "references/ok.md", file_content: "ok" },
      ctx,
    );
    expect(ok.ok, ok.content).toBe(true);
    expect(t.asked).toEqual([]);
  });
});
