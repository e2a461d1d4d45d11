/**
 * Shell hooks through the built CLI and the fake LLM: a `pre_tool_call` hook blocks a terminal
 * command (the model reads the reason) and a `pre_llm_call` hook adds context to the user's
 * message; a hook nobody approved does not run in a one-shot and stderr says how to allow it; an
 * edited hook is asked about again; a hanging hook is killed at its timeout and the turn goes on;
 * and a hook cannot read provider keys from its environment.
 */
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, spawnHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

type ChatBody = { messages: Array<{ role: string; content: unknown }> };
const body = (i: number) => llm.chatRequests[i]?.body as ChatBody;
const toolResults = (i: number): string[] =>
  body(i)
    .messages.filter((m) => m.role === "tool")
    .map((m) => String(m.content));
const userText = (i: number): string =>
  body(i)
    .messages.filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
    .join("\n");

function script(path: string, text: string): string {
  writeFileSync(path, `#!/bin/sh\n${text}\n`);
  chmodSync(path, 0o755);
  return path;
}

function hooksYaml(hooks: string): string {
  return fakeProviderConfig(llm.url, `approvals:\n  mode: "off"\nhooks:\n${hooks}`);
}

describe("shell hooks", () => {
  it("blocks a terminal command with the hook's reason and adds pre_llm_call context", async () => {
    const { home, cwd } = tempHome();
    const seen = join(cwd, "seen.json");
    const guard = script(
      join(home, "guard.sh"),
      `cat > ${seen}\necho '{"decision": "block", "reason": "deleting files is not allowed here"}'`,
    );
    const context = script(
      join(home, "context.sh"),
      `echo '{"context": "The deploy freeze starts Friday."}'`,
    );
    writeFileSync(
      join(home, "config.yaml"),
      hooksYaml(
        `  pre_tool_call:\n    - matcher: "terminal"\n      command: ${guard}\n      timeout: 10\n` +
          `  pre_llm_call:\n    - command: ${context}\n`,
      ),
    );
    writeFileSync(join(cwd, "keep.txt"), "precious");
    llm.enqueue(reply().toolCall("terminal", { command: "rm keep.txt" }), reply().text("I was not allowed."));

    const result = await runHermes(["--accept-hooks", "-q", "clean up"], { home, cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(cwd, "keep.txt"))).toBe(true);
    expect(toolResults(1).join("\n")).toContain("deleting files is not allowed here");
    expect(userText(0)).toContain("clean up");
    expect(userText(0)).toContain("The deploy freeze starts Friday.");
    // The hook read upstream's payload on stdin.
    const payload = JSON.parse(readFileSync(seen, "utf8")) as Record<string, unknown>;
    expect(payload).toMatchObject({
      hook_event_name: "pre_tool_call",
      tool_name: "terminal",
      tool_input: { command: "rm keep.txt" },
      profile: "default",
    });
    expect((payload["extra"] as Record<string, unknown>)["platform"]).toBe("cli");
    // --accept-hooks recorded both approvals, 0600.
    const allowlist = join(home, "shell-hooks-allowlist.json");
    expect(statSync(allowlist).mode & 0o777).toBe(0o600);
    const approvals = (JSON.parse(readFileSync(allowlist, "utf8")) as { approvals: { event: string }[] })
      .approvals;
    expect(approvals.map((a) => a.event).sort()).toEqual(["pre_llm_call", "pre_tool_call"]);
  });

  it("does not run an unapproved hook in a one-shot, says how to allow it, and asks again after an edit", async () => {
    const { home, cwd } = tempHome();
    const marker = join(cwd, "ran");
    const hook = script(join(home, "mark.sh"), `echo run >> ${marker}`);
    writeFileSync(join(home, "config.yaml"), hooksYaml(`  pre_llm_call:\n    - command: ${hook}\n`));
    llm.enqueue(reply().text("one"));
    const first = await runHermes(["-z", "hello"], { home, cwd });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toBe("one");
    expect(existsSync(marker)).toBe(false);
    expect(first.stderr).toContain("has not been approved yet");
    expect(first.stderr).toContain("--accept-hooks");
    expect(first.stderr).toContain("HERMES_ACCEPT_HOOKS=1");

    // Approved through the environment: it runs, and the approval is remembered.
    llm.enqueue(reply().text("two"), reply().text("three"));
    const second = await runHermes(["-z", "hello"], { home, cwd, env: { HERMES_ACCEPT_HOOKS: "1" } });
    expect(second.code, second.stderr).toBe(0);
    const third = await runHermes(["-z", "hello"], { home, cwd });
    expect(third.stderr).not.toContain("not approved");
    expect(readFileSync(marker, "utf8")).toBe("run\nrun\n");

    // The script is edited: refused again, and the message says why.
    script(hook, `echo edited >> ${marker}`);
    llm.enqueue(reply().text("four"));
    const fourth = await runHermes(["-z", "hello"], { home, cwd });
    expect(fourth.stderr).toContain("its script changed since it was approved");
    expect(readFileSync(marker, "utf8")).toBe("run\nrun\n");

    // On a terminal the user is asked; "y" runs it and is remembered.
    llm.enqueue(reply().text("five"));
    const tty = spawnHermes(["-q", "hello"], { home, cwd, tty: true });
    await waitFor(() => tty.output().stdout.includes("Allow this hook to run?"));
    expect(tty.output().stdout).toContain("has changed since");
    tty.child.stdin.write("y\r");
    const done = await tty.exited;
    expect(done.code, done.stdout).toBe(0);
    expect(readFileSync(marker, "utf8")).toBe("run\nrun\nedited\n");

    // The command itself edited in config.yaml is a new hook: refused in a one-shot.
    writeFileSync(join(home, "config.yaml"), hooksYaml(`  pre_llm_call:\n    - command: ${hook} --again\n`));
    llm.enqueue(reply().text("six"));
    const sixth = await runHermes(["-z", "hello"], { home, cwd });
    expect(sixth.stderr).toContain("has not been approved yet");
    expect(readFileSync(marker, "utf8")).toBe("run\nrun\nedited\n");
  });

  it("kills a hanging hook at its timeout and the turn goes on", async () => {
    const { home, cwd } = tempHome();
    const pidFile = join(cwd, "pid");
    const hang = script(join(home, "hang.sh"), `echo $$ > ${pidFile}\nsleep 300 &\nwait`);
    writeFileSync(
      join(home, "config.yaml"),
      hooksYaml(`  pre_tool_call:\n    - command: ${hang}\n      timeout: 1\n`),
    );
    llm.enqueue(reply().toolCall("terminal", { command: "echo still-ran" }), reply().text("finished"));
    const result = await runHermes(["--accept-hooks", "-q", "go"], { home, cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("finished");
    expect(toolResults(1).join("\n")).toContain("still-ran");
    expect(result.stderr).toContain("timed out after 1 s and was killed");
    // The hook's whole process group is gone (its `sleep` too).
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    expect(liveInGroup(pid)).toEqual([]);
  });

  it("never gives a hook the provider keys, from .env or from the user's shell", async () => {
    const { home, cwd } = tempHome();
    const dump = join(cwd, "env.txt");
    const hook = script(join(home, "env.sh"), `env > ${dump}`);
    writeFileSync(join(home, "config.yaml"), hooksYaml(`  pre_llm_call:\n    - command: ${hook}\n`));
    writeFileSync(
      join(home, ".env"),
      "OPENROUTER_API_KEY=sk-or-from-dotenv-123456\nMY_HOOK_SETTING=visible\n",
    );
    llm.enqueue(reply().text("ok"));
    const result = await runHermes(["--accept-hooks", "-z", "hi"], {
      home,
      cwd,
      env: {
        OPENAI_API_KEY: "sk-openai-exported-123456",
        ANTHROPIC_API_KEY: "sk-ant-exported-123456",
        KEEP_ME: "yes",
      },
    });
    expect(result.code, result.stderr).toBe(0);
    const env = readFileSync(dump, "utf8");
    expect(env).not.toContain("sk-or-from-dotenv-123456");
    expect(env).not.toContain("sk-openai-exported-123456");
    expect(env).not.toContain("sk-ant-exported-123456");
    // What Hermes loaded from .env stays out (the terminal's rule); the user's own variables stay.
    expect(env).not.toContain("MY_HOOK_SETTING");
    expect(env).toContain("KEEP_ME=yes");
    expect(env).toContain(`HERMES_HOME=${home}`);
  });
});

describe("hermes hooks", () => {
  it("lists, tests, checks and revokes the configured hooks", async () => {
    const { home, cwd } = tempHome();
    const guard = script(join(home, "guard.sh"), `echo "rm is off limits" >&2\nexit 2`);
    const noisy = script(join(home, "noisy.sh"), "echo not-json");
    writeFileSync(
      join(home, "config.yaml"),
      hooksYaml(
        `  pre_tool_call:\n    - matcher: terminal\n      command: ${guard}\n      timeout: 5\n` +
          `  post_llm_call:\n    - command: ${noisy}\n  pre_tool_cal:\n    - command: x\n`,
      ),
    );
    const listed = await runHermes(["hooks", "list"], { home, cwd });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain("[pre_tool_call]");
    expect(listed.stdout).toContain(`${guard} matcher="terminal" (timeout 5 s)`);
    expect(listed.stdout).toContain("✗ not approved");
    expect(listed.stderr).toContain("did you mean pre_tool_call?");

    const tested = await runHermes(["hooks", "test", "pre_tool_call"], { home, cwd });
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stdout).toContain("exit 2");
    expect(tested.stdout).toContain('"kind":"block","message":"rm is off limits"');
    const otherTool = await runHermes(["hooks", "test", "pre_tool_call", "--for-tool", "read_file"], {
      home,
      cwd,
    });
    expect(otherTool.stdout).toContain(
      "No shell hooks configured for pre_tool_call matching the tool read_file",
    );
    const unknown = await runHermes(["hooks", "test", "nope"], { home, cwd });
    expect(unknown.code).toBe(2);

    // Doctor runs nothing that is not approved, and says so.
    const unapproved = await runHermes(["hooks", "doctor"], { home, cwd });
    expect(unapproved.code).toBe(1);
    expect(unapproved.stdout).toContain("not approved");
    llm.enqueue(reply().text("ok"));
    await runHermes(["--accept-hooks", "-z", "hi"], { home, cwd });
    const doctor = await runHermes(["hooks", "doctor"], { home, cwd });
    expect(doctor.stdout).toContain("✓ the script exists and can run");
    expect(doctor.stdout).toContain("its output is not JSON (exit 0): not-json");
    expect(doctor.code).toBe(1);

    const revoked = await runHermes(["hooks", "revoke", guard], { home, cwd });
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`Removed 1 approval(s) of: ${guard}`);
    const after = await runHermes(["hooks", "list"], { home, cwd });
    expect(after.stdout.match(/✗ not approved/g)).toHaveLength(1);
  });
});

describe("shell hooks in the surfaces that ask nobody", () => {
  it("guard a batch prompt's agent: an approved hook blocks its command, an unapproved one is refused with how to allow it", async () => {
    const { home, cwd } = tempHome();
    const guard = script(
      join(home, "guard.sh"),
      `echo '{"decision": "block", "reason": "no new files in batches"}'`,
    );
    writeFileSync(
      join(home, "config.yaml"),
      hooksYaml(`  pre_tool_call:\n    - matcher: "terminal"\n      command: ${guard}\n`),
    );
    const work = join(cwd, "work");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(work);
    const data = join(cwd, "prompts.jsonl");
    writeFileSync(data, `${JSON.stringify({ prompt: "make a file", cwd: work })}\n`);
    const args = ["batch", "run", data, "--toolsets", "terminal", "--keep-no-reasoning", "--run-name"];

    // Not approved: a batch asks nobody, so the hook is refused (and says how to allow it).
    const refusedAt = llm.chatRequests.length;
    llm.enqueue(reply().toolCall("terminal", { command: "touch made.txt" }), reply().text("made"));
    const refused = await runHermes([...args, "unapproved"], { home, cwd });
    expect(refused.code, refused.stderr).toBe(0);
    expect(refused.stderr).toMatch(/not run|not approved|HERMES_ACCEPT_HOOKS|--accept-hooks/);
    expect(existsSync(join(work, "made.txt"))).toBe(true);
    expect(llm.chatRequests.length - refusedAt).toBe(2);

    // Approved through the environment: the hook blocks the prompt's command.
    const blockedAt = llm.chatRequests.length;
    llm.enqueue(reply().toolCall("terminal", { command: "touch second.txt" }), reply().text("blocked"));
    const blocked = await runHermes([...args, "approved"], { home, cwd, env: { HERMES_ACCEPT_HOOKS: "1" } });
    expect(blocked.code, blocked.stderr).toBe(0);
    expect(existsSync(join(work, "second.txt"))).toBe(false);
    expect(toolResults(blockedAt + 1).join("\n")).toContain("no new files in batches");
  });
});

/** Processes of group `pgid` that are still running (a killed one may linger as a zombie). */
function liveInGroup(pgid: number): number[] {
  const live: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z") live.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return live;
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}
