import { mkdirSync, mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { processTool } from "../../../../src/tools/terminal/process.js";
import { terminalTool } from "../../../../src/tools/terminal/terminal.js";
import type { ToolContext } from "../../../../src/tools/types.js";
import { makeToolContext } from "../../../support/tool-context.js";
import { isRunning, waitFor } from "./helpers.js";

type Ctx = ReturnType<typeof makeToolContext>;
const contexts: Ctx[] = [];

function context(overrides: Partial<ToolContext> = {}): Ctx {
  const ctx = makeToolContext({
    cwd: realpathSync(mkdtempSync(join(tmpdir(), "hermes-proc-"))),
    ...overrides,
  });
  contexts.push(ctx);
  return ctx;
}

interface Started {
  session_id: string;
  pid: number;
  status: string;
}

async function start(
  ctx: ToolContext,
  command: string,
  extra: Record<string, unknown> = {},
): Promise<Started> {
  return (await terminalTool.handler({ command, background: true, ...extra }, ctx)) as Started;
}

/** The fields the process tool's JSON results carry, loosely: each action fills some of them. */
interface Json {
  session_id: string;
  status: string;
  exit_code: number | null;
  new_output: string;
  output: string;
  output_tail: string;
  note?: string;
  processes: unknown[];
  total_lines: number;
  showing: string;
}

async function proc(ctx: ToolContext, args: Record<string, unknown>): Promise<Json> {
  return (await processTool.handler(args as Parameters<typeof processTool.handler>[0], ctx)) as Json;
}

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.runtime.dispose()));
});

describe("background processes", () => {
  it("starts, polls, logs, and kills a process", async () => {
    const ctx = context();
    const started = await start(ctx, "for i in 1 2 3; do echo line$i; done; sleep 100");
    expect(started).toMatchObject({ session_id: expect.stringMatching(/^proc_/), status: "running" });
    const poll = await waitFor(
      async () => {
        const p = await proc(ctx, { action: "poll", session_id: started.session_id });
        return p.new_output.includes("line3") ? p : undefined;
      },
      5000,
      "output",
    );
    expect(poll.status).toBe("running");
    const again = await proc(ctx, { action: "poll", session_id: started.session_id });
    expect(again.new_output).toBe("");

    const log = await proc(ctx, { action: "log", session_id: started.session_id, offset: 1, limit: 1 });
    expect(log).toMatchObject({ output: "line2", total_lines: 3, showing: "lines 1-1" });
    expect((await proc(ctx, { action: "log", session_id: started.session_id, limit: 2 })).output).toBe(
      "line2\nline3",
    );

    const listed = await proc(ctx, { action: "list" });
    expect(listed.processes).toEqual([
      expect.objectContaining({ session_id: started.session_id, status: "running" }),
    ]);

    const killed = await proc(ctx, { action: "kill", session_id: started.session_id });
    expect(killed.status).toBe("killed");
    await waitFor(() => !isRunning(started.pid), 5000, "the process to die");
  });

  it("waits for exit and reports the code and output tail", async () => {
    const ctx = context();
    const started = await start(ctx, "echo finishing; exit 4");
    const waited = await proc(ctx, { action: "wait", session_id: started.session_id, timeout: 10 });
    expect(waited).toMatchObject({ status: "exited", exit_code: 4 });
    expect(waited.output_tail).toContain("finishing");
  });

  it("returns from wait at the timeout while the process keeps running", async () => {
    const ctx = context();
    const started = await start(ctx, "sleep 100");
    const waited = await proc(ctx, { action: "wait", session_id: started.session_id, timeout: 1 });
    expect(waited).toMatchObject({ status: "running", note: "still running after 1s" });
  });

  it("stops waiting when the turn is interrupted", async () => {
    const controller = new AbortController();
    const ctx = context({ signal: controller.signal });
    const started = await start(ctx, "sleep 100");
    const waiting = proc(ctx, { action: "wait", session_id: started.session_id, timeout: 100 });
    controller.abort();
    expect((await waiting).note).toMatch(/interrupted/);
  });

  it("writes to stdin and closes it", async () => {
    const ctx = context();
    const started = await start(ctx, "cat");
    expect(
      await processTool.handler({ action: "write", session_id: started.session_id, data: "ping\n" }, ctx),
    ).toMatch(/Wrote 5/);
    await waitFor(
      async () =>
        (await proc(ctx, { action: "poll", session_id: started.session_id })).new_output.includes("ping"),
      5000,
      "cat to echo",
    );
    await proc(ctx, { action: "close", session_id: started.session_id });
    const waited = await proc(ctx, { action: "wait", session_id: started.session_id, timeout: 10 });
    expect(waited).toMatchObject({ status: "exited", exit_code: 0 });
    await expect(proc(ctx, { action: "write", session_id: started.session_id, data: "x" })).rejects.toThrow(
      /exited/,
    );
  });

  it("starts in the shell's current directory, or in workdir", async () => {
    const ctx = context();
    mkdirSync(join(ctx.cwd, "a"));
    await terminalTool.handler({ command: "cd a" }, ctx);
    const inShellCwd = await start(ctx, "pwd");
    const inWorkdir = await start(ctx, "pwd", { workdir: ctx.cwd });
    const a = await proc(ctx, { action: "wait", session_id: inShellCwd.session_id, timeout: 10 });
    const b = await proc(ctx, { action: "wait", session_id: inWorkdir.session_id, timeout: 10 });
    expect(a.output_tail.trim()).toBe(join(ctx.cwd, "a"));
    expect(b.output_tail.trim()).toBe(ctx.cwd);
  });

  it("sees variables exported in the task's shell", async () => {
    const ctx = context();
    await terminalTool.handler({ command: "export GREETING=hello-from-shell" }, ctx);
    const started = await start(ctx, 'echo "$GREETING"; pwd', { workdir: "/" });
    const waited = await proc(ctx, { action: "wait", session_id: started.session_id, timeout: 10 });
    expect(waited.output_tail).toBe("hello-from-shell\n/\n");
  });

  it("names the known ids when an id is unknown or missing, and hides other tasks' processes", async () => {
    const ctx = context();
    const started = await start(ctx, "sleep 100");
    await expect(proc(ctx, { action: "poll", session_id: "proc_nope" })).rejects.toThrow(
      new RegExp(`No background process proc_nope. Known ids: ${started.session_id}`),
    );
    await expect(proc(ctx, { action: "kill" })).rejects.toThrow(/session_id is required/);
    const other = { ...ctx, taskId: "another-task" };
    expect(await processTool.handler({ action: "list" }, other)).toBe(
      "No background processes in this task.",
    );
    await expect(proc(other, { action: "poll", session_id: started.session_id })).rejects.toThrow(
      /no background/,
    );
  });

  it("stops running processes, children included, when the runtime is disposed", async () => {
    const ctx = context();
    const started = await start(ctx, "sleep 100 & sleep 100; wait");
    await ctx.runtime.dispose();
    await waitFor(() => !isRunning(started.pid), 5000, "dispose to stop the process");
  });

  it("asks for approval before starting a dangerous background command", async () => {
    const ctx = context();
    await expect(start(ctx, "git clean -fdx")).rejects.toThrow(/denied/);
    expect(ctx.approvals).toHaveLength(1);
    expect(await processTool.handler({ action: "list" }, ctx)).toBe("No background processes in this task.");
  });
});
