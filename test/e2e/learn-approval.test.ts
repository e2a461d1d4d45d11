/**
 * Write approval and /learn end to end through the built CLI against the fake LLM: `hermes learn`
 * on a local folder makes a skill through skill_manage; with skills.write_approval on the same
 * skill is staged, listed, diffed and approved with `hermes skills`; a memory write under
 * memory.write_approval is staged, the model is told it is not saved, and `hermes memory approve`
 * applies it so the next session's prompt has it; `/learn` typed in the interactive REPL (in tmux)
 * does the same as `hermes learn`.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeProviderConfig, HERMES_BIN, runHermes, tempHome } from "../support/cli.js";
import { type RecordedRequest, reply, startFakeLlm } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();
afterEach(() => {
  llm.respondWith(undefined);
});

type ChatMessage = { role: string; content: string | null };
const messagesOf = (request: RecordedRequest | undefined) =>
  ((request?.body as { messages?: ChatMessage[] } | undefined)?.messages ?? []) as ChatMessage[];
const lastTool = (i: number) =>
  messagesOf(llm.chatRequests[i])
    .filter((m) => m.role === "tool")
    .at(-1)?.content ?? "";

const SKILL = [
  "---",
  "name: widget-build",
  "description: Build and check the widget project.",
  "---",
  "# Widget build",
  "",
  "1. Run `make widget`.",
  "2. Run `./widget --check` and expect OK.",
  "",
].join("\n");

function project(cwd: string): string {
  const dir = join(cwd, "widget");
  mkdirSync(join(dir, "docs"), { recursive: true });
  writeFileSync(
    join(dir, "README.md"),
    "# Widget\n\nBuild with `make widget`; verify with `./widget --check`.\n",
  );
  writeFileSync(join(dir, "docs", "release.md"), "Release: tag vX.Y.Z and push.\n");
  writeFileSync(join(dir, "secrets.json"), '{"api_key": "sk-live-do-not-send"}\n');
  return dir;
}

describe("hermes learn", () => {
  it("distils a skill from a local folder through skill_manage", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    project(h.cwd);
    llm.enqueue(
      reply().toolCall("skill_manage", { action: "create", name: "widget-build", content: SKILL }),
      reply().text("Created widget-build: builds and checks the widget."),
    );
    const result = await runHermes(["learn", "widget"], h);
    expect(result.stderr).toContain("Learning from the folder");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Created widget-build");
    const asked = messagesOf(llm.chatRequests[0]).find((m) => m.role === "user")?.content ?? "";
    expect(asked).toContain("make widget");
    expect(asked).toContain("tag vX.Y.Z");
    expect(asked).not.toContain("sk-live-do-not-send");
    expect(readFileSync(join(h.home, "skills", "widget-build", "SKILL.md"), "utf8")).toBe(SKILL);
  });

  it("with skills.write_approval on, stages the skill; hermes skills pending|diff|approve applies it", async () => {
    const h = tempHome(fakeProviderConfig(llm.url, "skills:\n  write_approval: true\n"));
    project(h.cwd);
    llm.enqueue(
      reply().toolCall("skill_manage", { action: "create", name: "widget-build", content: SKILL }),
      reply().text("Staged widget-build for your review."),
    );
    const learned = await runHermes(["learn", "widget"], h);
    expect(learned.code).toBe(0);
    expect(lastTool(1)).toContain('"staged":true');
    expect(lastTool(1)).toContain("Not saved yet");
    expect(existsSync(join(h.home, "skills", "widget-build"))).toBe(false);

    const pending = await runHermes(["skills", "pending", "--json"], h);
    expect(pending.code).toBe(0);
    const list = JSON.parse(pending.stdout) as {
      write_approval: boolean;
      pending: Array<{ id: string; summary: string }>;
    };
    expect(list.write_approval).toBe(true);
    expect(list.pending).toHaveLength(1);
    const id = list.pending[0]?.id ?? "";
    expect(list.pending[0]?.summary).toContain("create 'widget-build'");

    const diff = await runHermes(["skills", "diff", id], h);
    expect(diff.stdout).toContain("2. Run `./widget --check` and expect OK.");

    const traversal = await runHermes(["skills", "approve", "../../config"], h);
    expect(traversal.code).toBe(1);
    expect(traversal.stderr).toContain('No pending skills write with id "../../config"');

    const approved = await runHermes(["skills", "approve", id], h);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('Created skill "widget-build"');
    expect(readFileSync(join(h.home, "skills", "widget-build", "SKILL.md"), "utf8")).toBe(SKILL);
    expect((await runHermes(["skills", "pending"], h)).stdout).toContain("No pending skills writes.");
  });
});

describe("memory write approval", () => {
  it("stages the write, tells the model, and hermes memory approve applies it for the next session", async () => {
    const h = tempHome(fakeProviderConfig(llm.url, "memory:\n  write_approval: true\n"));
    llm.enqueue(
      reply().toolCall("memory", {
        action: "add",
        target: "user",
        content: "Name is Ada; prefers metric units.",
      }),
      reply().text("I'll remember that once you approve it."),
    );
    const first = await runHermes(["-q", "Remember I'm Ada and use metric"], h);
    expect(first.code).toBe(0);
    expect(lastTool(1)).toContain("Not saved yet: staged for the user's review");
    expect(existsSync(join(h.home, "memories", "USER.md"))).toBe(false);

    const pending = await runHermes(["memory", "pending"], h);
    expect(pending.code).toBe(0);
    const id = /^([0-9a-f]{8})\s/m.exec(pending.stdout)?.[1] ?? "";
    expect(pending.stdout).toContain("add to user profile: Name is Ada; prefers metric units.");
    const record = JSON.parse(readFileSync(join(h.home, "pending", "memory", `${id}.json`), "utf8"));
    expect(Object.keys(record).sort()).toEqual(
      ["action", "created_at", "id", "origin", "payload", "subsystem", "summary"].sort(),
    );

    const approved = await runHermes(["memory", "approve", id], h);
    expect(approved.code).toBe(0);
    expect(readFileSync(join(h.home, "memories", "USER.md"), "utf8")).toBe(
      "Name is Ada; prefers metric units.",
    );

    llm.enqueue(reply().text("Hello Ada."));
    expect((await runHermes(["-q", "hi"], h)).code).toBe(0);
    expect(messagesOf(llm.chatRequests[2])[0]?.content).toContain("Name is Ada; prefers metric units.");

    const unknown = await runHermes(["memory", "reject", id], h);
    expect(unknown.code).toBe(1);
  });
});

const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

/** The REPL in a private tmux server; `screen()` is what the user sees. */
function startRepl(home: string, cwd: string) {
  const socket = `hermes-learn-${process.pid}-${randomBytes(4).toString("hex")}`;
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    HERMES_HOME: home,
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
  };
  const command = [
    "env -i",
    ...Object.entries(env).map(([k, v]) => quote(`${k}=${v}`)),
    quote(process.execPath),
    quote(HERMES_BIN),
    '; echo "[exit $?]"; sleep 600',
  ].join(" ");
  const tmux = (...args: string[]) =>
    execFileSync("tmux", ["-u", "-L", socket, ...args], { encoding: "utf8" });
  tmux("-f", "/dev/null", "new-session", "-d", "-x", "160", "-y", "50", "-c", cwd, command);
  const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-300", "-t", "0");
  return {
    type: (text: string) => tmux("send-keys", "-t", "0", "-l", text),
    keys: (...keys: string[]) => tmux("send-keys", "-t", "0", ...keys),
    async waitFor(expected: string, timeoutMs = 20_000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      let seen = "";
      while (Date.now() < deadline) {
        seen = screen();
        if (seen.includes(expected)) return seen;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`Timed out waiting for ${expected}. Screen:\n${seen}`);
    },
    kill: () => spawnSync("tmux", ["-L", socket, "kill-server"]),
  };
}

describe.skipIf(!hasTmux)("/learn in the interactive REPL", () => {
  it("makes a skill from a local folder", async () => {
    const titles = await startFakeLlm();
    titles.respondWith(() => reply().text("Learning the widget"));
    const aux = `auxiliary:\n  title_generation:\n    base_url: ${titles.url}\n    model: title-model\n`;
    const h = tempHome(fakeProviderConfig(llm.url, aux));
    project(h.cwd);
    llm.enqueue(
      reply().toolCall("skill_manage", { action: "create", name: "widget-build", content: SKILL }),
      reply().text("Created the widget-build skill."),
    );
    const term = startRepl(h.home, h.cwd);
    try {
      await term.waitFor("Ctrl+D to exit");
      term.type("/learn widget");
      term.keys("Enter");
      await term.waitFor("Learning from the folder");
      await term.waitFor("Created the widget-build skill.");
      expect(readFileSync(join(h.home, "skills", "widget-build", "SKILL.md"), "utf8")).toBe(SKILL);
      const asked =
        messagesOf(llm.chatRequests[0])
          .filter((m) => m.role === "user")
          .at(-1)?.content ?? "";
      expect(asked).toContain("make widget");
      term.keys("C-d");
      await term.waitFor("[exit 0]");
    } finally {
      term.kill();
      await titles.close();
    }
  }, 60_000);
});
