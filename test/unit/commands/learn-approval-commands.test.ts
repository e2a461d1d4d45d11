/**
 * /memory, /skills pending|approve|reject|diff|approval and /learn against the surface-neutral
 * context, as the REPL and a chat run them: the queue is listed, decided only by an admin in a
 * chat, the gate switch is saved and applies to the session at once, and /learn sends one turn
 * built from gathered, scanned material.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../../src/config/defaults.js";
import { stagePending } from "../../../src/knowledge/write-approval/pending.js";
import { fakeContext, fakeSession, registry } from "../../support/command-context.js";

function homeWithConfig() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "hermes-cmd-approval-")));
  const home = join(root, ".hermes");
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "config.yaml"), "model: test/model\n");
  return { root, home };
}

function setup(
  surface: { kind?: "repl" | "chat"; isAdmin?: boolean } = {},
  tools = ["skill_manage", "skills_list"],
) {
  const { root, home } = homeWithConfig();
  const config = defaultConfig();
  const base = fakeSession();
  const session = fakeSession({
    agent: { ...base.agent, home, cwd: root, config, toolNames: async () => tools },
  });
  const fake = fakeContext({
    session,
    surface: { ...surface, platform: surface.kind === "chat" ? "telegram" : "cli" },
  });
  const run = async (text: string) => {
    const parsed = registry.parse(text);
    if (parsed.kind !== "command") throw new Error(`not a command: ${text}`);
    fake.printed.length = 0;
    await parsed.command.run(parsed.args, fake.ctx);
    return fake.printed.join("\n");
  };
  return { root, home, config, run, fake };
}

describe("/memory and /skills write approval", () => {
  it("lists the queue with [auto] for the review's writes and approves by id", async () => {
    const s = setup();
    const a = await stagePending(s.home, "memory", {
      payload: { action: "add", target: "memory", content: "Uses pnpm.", old_text: null },
      summary: "add to memory: Uses pnpm.",
      origin: "background_review",
    });
    const listed = await s.run("/memory");
    expect(listed).toContain(`${a.id} [auto]  add to memory: Uses pnpm.`);
    expect(listed).toContain("memory.write_approval is off");
    expect(await s.run(`/memory approve ${a.id}`)).toContain(`✓ ${a.id}:`);
    expect(readFileSync(join(s.home, "memories", "MEMORY.md"), "utf8")).toBe("Uses pnpm.");
    expect(await s.run("/memory pending")).toContain("No pending memory writes.");
    expect(await s.run("/memory approve")).toContain("Usage: /memory approve <id>|all");
    expect(await s.run("/memory approve ../../config")).toContain(
      'No pending memory write with id "../../config"',
    );
  });

  it("/skills keeps its filter, and answers pending, diff and reject", async () => {
    const s = setup();
    expect(await s.run("/skills deploy")).toContain('No skill matches "deploy"');
    const content =
      "---\nname: deploy-check\ndescription: Checks a deployment.\n---\n# Deploy check\n\n1. Curl it.\n";
    const r = await stagePending(s.home, "skills", {
      payload: { action: "create", name: "deploy-check", content },
      summary: "create 'deploy-check'",
    });
    expect(await s.run("/skills pending")).toContain(`${r.id}  create 'deploy-check'`);
    const diff = await s.run(`/skills diff ${r.id}`);
    expect(diff).toContain(`Pending skills write ${r.id}`);
    expect(diff).toContain("1. Curl it.");
    expect(await s.run(`/skills reject ${r.id}`)).toContain("rejected; nothing was written.");
    expect(await s.run("/skills pending")).toContain("No pending skills writes.");
  });

  it("in a chat only an admin decides; anyone may look", async () => {
    const s = setup({ kind: "chat", isAdmin: false });
    const r = await stagePending(s.home, "memory", {
      payload: { action: "add", target: "user", content: "Likes tea." },
      summary: "add to user profile: Likes tea.",
    });
    expect(await s.run("/memory pending")).toContain(r.id);
    for (const text of [
      `/memory approve ${r.id}`,
      `/memory reject ${r.id}`,
      "/memory approval off",
      "/skills approve all",
    ]) {
      expect(await s.run(text)).toContain("Only an admin of this chat");
    }
    expect(await s.run("/memory pending")).toContain(r.id);
  });

  it("/memory approval on saves config.yaml and gates this session's tools from now on", async () => {
    const s = setup();
    expect(await s.run("/memory approval")).toContain("memory.write_approval is off");
    expect(await s.run("/memory approval maybe")).toContain('"maybe" is not on or off');
    expect(await s.run("/memory approval on")).toContain(
      "memory.write_approval is now on (saved to config.yaml)",
    );
    expect(readFileSync(join(s.home, "config.yaml"), "utf8")).toMatch(/memory:\s*\n\s+write_approval: true/);
    expect(s.config.memory.write_approval).toBe(true);
    expect(await s.run("/skills approval off")).toContain("skills.write_approval is now off");
  });
});

describe("/learn", () => {
  it("gathers a folder's key files, withholds credentials, and sends one learning turn", async () => {
    const s = setup();
    const project = join(s.root, "project");
    mkdirSync(join(project, "docs"), { recursive: true });
    writeFileSync(
      join(project, "README.md"),
      "# Widget\n\nBuild with `make widget`, then run ./widget --check.\n",
    );
    writeFileSync(join(project, "docs", "release.md"), "Tag vX.Y.Z and push the tag.\n");
    writeFileSync(join(project, ".env"), "API_TOKEN=sk-live-123456\n");
    const notice = await s.run("/learn project");
    expect(notice).toContain(`Learning from the folder ${project}: 2 file(s) read`);
    expect(s.fake.sent).toHaveLength(1);
    const prompt = s.fake.sent[0] ?? "";
    expect(prompt).toContain("make widget");
    expect(prompt).toContain("Tag vX.Y.Z");
    expect(prompt).toContain('skill_manage with action "create"');
    expect(prompt).not.toContain("sk-live-123456");
  });

  it("says why nothing is sent: no argument, no skill_manage, an empty chat, a URL without web_extract", async () => {
    const s = setup();
    expect(await s.run("/learn")).toContain("Usage: /learn");
    expect(await s.run("/learn this chat")).toContain("This conversation is empty");
    expect(await s.run("/learn https://example.com/guide")).toContain("needs the web_extract tool");
    const bare = setup({}, ["terminal"]);
    expect(await bare.run("/learn some notes about deploys")).toContain(
      "skill_manage, which this session does not have",
    );
    expect(s.fake.sent).toEqual([]);
  });

  it("sends pasted notes, and says the skill will wait for approval when skills.write_approval is on", async () => {
    const s = setup();
    s.config.skills.write_approval = true;
    const notice = await s.run(
      "/learn To rotate the logs: stop the service, gzip the old file, start it again.",
    );
    expect(notice).toContain("the skill will wait for /skills approve");
    expect(s.fake.sent[0]).toContain("gzip the old file");
    expect(s.fake.sent[0]).toContain("/skills approve <id>");
  });
});
