import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createToolRuntime } from "../../../../src/tools/runtime.js";
import { terminalTool } from "../../../../src/tools/terminal/terminal.js";
import type { ApprovalDecision, ApprovalRequest, ToolContext } from "../../../../src/tools/types.js";
import { makeToolContext } from "../../../support/tool-context.js";
import { isRunning, waitFor } from "./helpers.js";

type Ctx = ReturnType<typeof makeToolContext>;
const contexts: Ctx[] = [];

function context(overrides: Partial<ToolContext> = {}): Ctx {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "hermes-term-")));
  const ctx = makeToolContext({ cwd, ...overrides });
  contexts.push(ctx);
  return ctx;
}

async function run(ctx: ToolContext, command: string, extra: Record<string, unknown> = {}): Promise<string> {
  return (await terminalTool.handler({ command, ...extra }, ctx)) as string;
}

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.runtime.dispose()));
});

describe("terminal: persistent shell", () => {
  it("keeps cd and export between calls of one task", async () => {
    const ctx = context();
    mkdirSync(join(ctx.cwd, "sub"));
    const first = await run(ctx, "cd sub && export FOO=bar");
    expect(first).toContain(`cwd now ${join(ctx.cwd, "sub")}`);
    const second = await run(ctx, 'pwd; echo "foo=$FOO"');
    expect(second).toContain(join(ctx.cwd, "sub"));
    expect(second).toContain("foo=bar");
    expect(second).toMatch(/\[exit code 0\]$/);
  });

  it("does not share state across tasks", async () => {
    const ctx = context();
    await run(ctx, "export FOO=bar; cd /");
    const other = { ...ctx, taskId: `${ctx.taskId}-other` };
    const out = await run(other, 'echo "[$FOO]"; pwd');
    expect(out).toContain("[]");
    expect(out).toContain(ctx.cwd);
  });

  it("runs queued calls one after another", async () => {
    const ctx = context();
    const [, second] = await Promise.all([run(ctx, "export A=1"), run(ctx, 'echo "a=$A"')]);
    expect(second).toContain("a=1");
  });

  it("reports exit codes and captures stderr", async () => {
    const ctx = context();
    expect(await run(ctx, "false")).toContain("[exit code 1]");
    expect(await run(ctx, "sh -c 'exit 7'")).toContain("[exit code 7]");
    const out = await run(ctx, "echo to-out; echo to-err >&2");
    expect(out).toContain("to-out");
    expect(out).toContain("to-err");
  });

  it("survives a syntax error and an explicit exit", async () => {
    const ctx = context();
    await run(ctx, "cd /tmp");
    expect(await run(ctx, "if then")).toMatch(/syntax error[\s\S]*\[exit code 2\]/);
    const exited = await run(ctx, "echo bye; exit 3");
    expect(exited).toContain("bye");
    expect(exited).toContain("exit code 3");
    // `exit` ends the command's subshell, not the persistent shell.
    expect(exited).not.toContain("the shell exited");
    expect(await run(ctx, "pwd")).toMatch(/^\/tmp\n/);
  });

  it("gives commands an empty stdin so readers do not hang", async () => {
    const ctx = context();
    expect(await run(ctx, "cat")).toBe("(no output)\n[exit code 0]");
    expect(await run(ctx, 'read -r line; echo "[$line]"')).toContain("[]");
  });

  it("runs a command in workdir without moving the shell", async () => {
    const ctx = context();
    mkdirSync(join(ctx.cwd, "w"));
    expect(await run(ctx, "pwd", { workdir: "w" })).toMatch(new RegExp(`^${join(ctx.cwd, "w")}\\n`));
    expect(await run(ctx, "pwd")).toMatch(new RegExp(`^${ctx.cwd}\\n`));
    await expect(run(ctx, "pwd", { workdir: "missing" })).rejects.toThrow(/not an existing directory/);
  });

  it("keeps huge output bounded, showing head and tail", async () => {
    const ctx = context();
    const out = await run(ctx, "yes | head -c 5000000; echo; echo THE-END");
    expect(out.length).toBeLessThan(60_000);
    expect(out).toContain("characters omitted");
    expect(out).toMatch(/THE-END\n\[exit code 0\]$/);
  });
});

describe("terminal: timeouts and interrupts", () => {
  it("kills a timed-out command and its children; the shell keeps its cwd", async () => {
    const ctx = context();
    await run(ctx, "cd / && export KEEP=yes");
    const pidFile = join(ctx.cwd, "child.pid");
    const out = await run(ctx, `sh -c 'sleep 100 & echo $! > ${pidFile}; wait'`, { timeout: 1 });
    expect(out).toContain("timed out after 1s");
    // Stopped by signalling its process group: the shell itself did not need a restart.
    expect(out).not.toContain("the shell exited");
    const childPid = Number(readFileSync(pidFile, "utf8"));
    await waitFor(() => !isRunning(childPid), 5000, "the child sleep to die");
    expect(await run(ctx, 'pwd; echo "keep=$KEEP"')).toBe("/\nkeep=yes\n[exit code 0]");
  });

  it("stops a builtin loop without losing the shell's cwd and exports", async () => {
    const ctx = context();
    await run(ctx, "cd / && export KEEP=yes");
    const out = await run(ctx, "while :; do :; done", { timeout: 1 });
    expect(out).toContain("timed out after 1s");
    expect(out).toContain("the rest of the command line did not run");
    expect(await run(ctx, 'pwd; echo "keep=$KEEP"')).toBe("/\nkeep=yes\n[exit code 0]");
  });

  it("spares jobs started with & in earlier calls", async () => {
    const ctx = context();
    const pidFile = join(ctx.cwd, "bg.pid");
    await run(ctx, `sleep 100 >/dev/null & echo $! > ${pidFile}`);
    const bgPid = Number(readFileSync(pidFile, "utf8"));
    expect(await run(ctx, "sleep 50", { timeout: 1 })).toContain("timed out");
    expect(isRunning(bgPid)).toBe(true);
    await ctx.runtime.dispose();
    await waitFor(() => !isRunning(bgPid), 5000, "dispose to stop the & job");
  });

  it("stops the command when the turn is interrupted", async () => {
    const controller = new AbortController();
    const ctx = context({ signal: controller.signal });
    const marker = join(ctx.cwd, "started");
    const pending = run(ctx, `touch ${marker}; sleep 100`);
    await waitFor(() => existsSync(marker), 5000, "the command to start");
    controller.abort();
    const out = await pending;
    expect(out).toContain("interrupted by the user");
    const after = context({ runtime: ctx.runtime, taskId: ctx.taskId });
    expect(await run(after, "echo still-here")).toContain("still-here");
  });
});

describe("terminal: approvals", () => {
  function withDecision(decision: ApprovalDecision): { ctx: Ctx; requests: ApprovalRequest[] } {
    const requests: ApprovalRequest[] = [];
    const ctx = context({
      requestApproval: async (req) => {
        requests.push(req);
        return decision;
      },
    });
    return { ctx, requests };
  }

  it("does not run a dangerous command the user denies", async () => {
    const { ctx, requests } = withDecision("deny");
    const victim = mkdtempSync(join(tmpdir(), "hermes-victim-"));
    await expect(run(ctx, `rm -rf ${victim}`)).rejects.toThrow(/denied[\s\S]*Do not retry/);
    expect(existsSync(victim)).toBe(true);
    expect(requests).toEqual([
      { command: `rm -rf ${victim}`, reason: expect.any(String), patternKey: "recursive_delete" },
    ]);
  });

  it("runs a dangerous command once approved", async () => {
    const { ctx, requests } = withDecision("once");
    const victim = mkdtempSync(join(tmpdir(), "hermes-victim-"));
    expect(await run(ctx, `rm -rf ${victim}`)).toContain("[exit code 0]");
    expect(existsSync(victim)).toBe(false);
    expect(requests).toHaveLength(1);
  });

  it("refuses hardline commands without asking, even when approval would be given", async () => {
    const { ctx, requests } = withDecision("always");
    await expect(run(ctx, "rm -rf --no-preserve-root /nonexistent-hermes-test-dir")).rejects.toThrow(
      /Blocked: .*never allowed/,
    );
    expect(requests).toHaveLength(0);
  });

  it("does not ask about safe commands", async () => {
    const { ctx, requests } = withDecision("deny");
    expect(await run(ctx, "echo fine")).toContain("fine");
    expect(requests).toHaveLength(0);
  });
});

describe("terminal: runtime", () => {
  it("shares one shell between contexts of the same task on one runtime", async () => {
    const runtime = createToolRuntime();
    const a = context({ runtime });
    const b = context({ runtime, taskId: a.taskId });
    await run(a, "export SHARED=1");
    expect(await run(b, 'echo "shared=$SHARED"')).toContain("shared=1");
  });

  it("is offered only where bash is on the PATH", async () => {
    expect(await terminalTool.check?.({ env: { PATH: process.env.PATH }, config: {} })).toBe(true);
    expect(await terminalTool.check?.({ env: { PATH: "/nonexistent-dir" }, config: {} })).toBe(false);
  });

  it("rejects an empty command", async () => {
    await expect(run(context(), "   ")).rejects.toThrow(/command is empty/);
  });
});
