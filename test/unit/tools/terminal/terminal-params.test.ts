import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { processTool } from "../../../../src/tools/terminal/process.js";
import { terminalTool } from "../../../../src/tools/terminal/terminal.js";
import type { AgentNotice, ToolContext } from "../../../../src/tools/types.js";
import { makeToolContext } from "../../../support/tool-context.js";
import { isRunning, waitFor } from "./helpers.js";

type Ctx = ReturnType<typeof makeToolContext> & { notices: AgentNotice[] };
const contexts: Ctx[] = [];

function context(overrides: Partial<ToolContext> = {}): Ctx {
  const notices: AgentNotice[] = [];
  const ctx = makeToolContext({
    cwd: realpathSync(mkdtempSync(join(tmpdir(), "hermes-termparams-"))),
    notify: (n) => notices.push(n),
    ...overrides,
  });
  const full = Object.assign(ctx, { notices });
  contexts.push(full);
  return full;
}

const shown = (ctx: Ctx) => ctx.notices.filter((n) => !n.retract);

async function terminal(ctx: ToolContext, args: Record<string, unknown>): Promise<unknown> {
  return terminalTool.handler(args as Parameters<typeof terminalTool.handler>[0], ctx);
}

async function proc(ctx: ToolContext, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  return (await processTool.handler(args as Parameters<typeof processTool.handler>[0], ctx)) as Record<
    string,
    unknown
  >;
}

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.runtime.dispose()));
});

describe("terminal notify_on_complete", () => {
  it("tells the agent when a background process ends: exit code and output tail", async () => {
    const ctx = context();
    const started = (await terminal(ctx, {
      command: "echo building; echo '\x1b[32mall green\x1b[0m'; exit 3",
      background: true,
      notify_on_complete: true,
    })) as { session_id: string; notify_on_complete: boolean };
    expect(started.notify_on_complete).toBe(true);
    const notice = await waitFor(() => shown(ctx)[0], 10_000, "the exit notice");
    expect(notice).toMatchObject({ source: "process", id: started.session_id, wake: true });
    expect(notice.text).toContain("exited with code 3");
    expect(notice.text).toContain("building\nall green");
    expect(notice.text).not.toContain("\x1b");
  });

  it("says so when the user kills it from outside, and stays silent when the process tool kills it", async () => {
    const ctx = context();
    const outside = (await terminal(ctx, {
      command: "echo up; sleep 60",
      background: true,
      notify_on_complete: true,
    })) as { session_id: string; pid: number };
    const byTool = (await terminal(ctx, {
      command: "sleep 60",
      background: true,
      notify_on_complete: true,
    })) as { session_id: string; pid: number };
    process.kill(-outside.pid, "SIGTERM");
    const notice = await waitFor(
      () => shown(ctx).find((n) => n.id === outside.session_id),
      10_000,
      "kill notice",
    );
    expect(notice.text).toMatch(/exit code 143|killed by SIGTERM/);
    await proc(ctx, { action: "kill", session_id: byTool.session_id });
    expect(isRunning(byTool.pid)).toBe(false);
    // Give a late notice every chance to arrive: a second process ending after it proves the order.
    const marker = (await terminal(ctx, { command: "true", background: true, notify_on_complete: true })) as {
      session_id: string;
    };
    await waitFor(() => shown(ctx).find((n) => n.id === marker.session_id), 10_000, "marker notice");
    expect(shown(ctx).some((n) => n.id === byTool.session_id)).toBe(false);
  });

  it("does not repeat an exit the model already read through process wait", async () => {
    const ctx = context();
    const started = (await terminal(ctx, {
      command: "sleep 0.2; echo finished",
      background: true,
      notify_on_complete: true,
    })) as { session_id: string };
    const waited = await proc(ctx, { action: "wait", session_id: started.session_id, timeout: 10 });
    expect(waited.status).toBe("exited");
    const marker = (await terminal(ctx, { command: "true", background: true, notify_on_complete: true })) as {
      session_id: string;
    };
    await waitFor(() => shown(ctx).find((n) => n.id === marker.session_id), 10_000, "marker notice");
    expect(shown(ctx).some((n) => n.id === started.session_id)).toBe(false);
  });

  it("refuses the notice options for a foreground command, and when nothing can deliver them", async () => {
    const ctx = context();
    await expect(terminal(ctx, { command: "echo hi", notify_on_complete: true })).rejects.toThrow(
      /background=true only/,
    );
    const deaf = context({ notify: undefined });
    delete (deaf as Partial<ToolContext>).notify;
    await expect(
      terminal(deaf, { command: "sleep 1", background: true, watch_patterns: ["x"] }),
    ).rejects.toThrow(/cannot be delivered here/);
    await expect(
      terminal(ctx, { command: "sleep 1", background: true, watch_patterns: [""] }),
    ).rejects.toThrow(/empty entry/);
  });
});

describe("terminal watch_patterns", () => {
  it("wakes the agent on a matching line; 10,000 matches make two notices, not 10,000", async () => {
    const ctx = context();
    const started = (await terminal(ctx, {
      command: 'sleep 0.1; for i in $(seq 1 10000); do echo "ERROR $i"; done; echo done',
      background: true,
      watch_patterns: ["ERROR"],
    })) as { session_id: string; watching: string[] };
    expect(started.watching).toEqual(["ERROR"]);
    await proc(ctx, { action: "wait", session_id: started.session_id, timeout: 30 }).catch(() => undefined);
    // The wait read the exit, so the summary of unreported matches is withdrawn: only the first match.
    const marker = (await terminal(ctx, { command: "true", background: true, notify_on_complete: true })) as {
      session_id: string;
    };
    await waitFor(() => shown(ctx).find((n) => n.id === marker.session_id), 10_000, "marker notice");
    const mine = shown(ctx).filter((n) => n.id === started.session_id);
    expect(mine.length).toBeGreaterThanOrEqual(1);
    expect(mine.length).toBeLessThanOrEqual(2);
    expect(mine[0]?.text).toContain("ERROR 1");
  });

  it("reports the unreported matches with the exit when nobody waited", async () => {
    const ctx = context();
    const started = (await terminal(ctx, {
      command: 'for i in $(seq 1 10000); do echo "ERROR $i"; done',
      background: true,
      watch_patterns: ["ERROR", "(a+)+$", "[oops"],
    })) as { session_id: string };
    const exit = await waitFor(
      () => shown(ctx).find((n) => n.id === started.session_id && n.text.includes("exited")),
      20_000,
      "exit summary",
    );
    expect(exit.text).toMatch(/\d+ more lines matched watch_patterns/);
    expect(exit.text).toContain("ERROR 10000");
    expect(shown(ctx).filter((n) => n.id === started.session_id).length).toBeLessThanOrEqual(2);
  });
});

describe("terminal pty", () => {
  it("runs a foreground command in a terminal, escape sequences stripped for the model", async () => {
    const ctx = context();
    const out = String(
      await terminal(ctx, {
        command: "test -t 0 && test -t 1 && echo has-a-tty; printf '\\033[1;31mred\\033[0m\\r\\n'; tput cols",
        pty: true,
      }),
    );
    expect(out).toContain("has-a-tty");
    expect(out).toContain("red");
    expect(out).toContain("120");
    expect(out).not.toMatch(/\x1b|\r/);
    expect(out).toContain("[exit code 0]");
    // Without pty the same test sees no terminal.
    expect(String(await terminal(ctx, { command: "test -t 1 && echo has-a-tty || echo no-tty" }))).toContain(
      "no-tty",
    );
  });

  it("stops a pty program that never exits when its timeout passes", async () => {
    const ctx = context();
    const out = String(
      await terminal(ctx, {
        command: "echo started; trap '' INT; while true; do sleep 0.1; done",
        pty: true,
        timeout: 1,
      }),
    );
    expect(out).toContain("started");
    expect(out).toMatch(/timed out after 1s/);
  });

  it("runs a background program under a pty and types into it", async () => {
    const ctx = context();
    const started = (await terminal(ctx, {
      command: 'test -t 0 && echo tty-ok; read -r line; echo "got:$line"',
      background: true,
      pty: true,
      notify_on_complete: true,
    })) as { session_id: string; pid: number };
    await waitFor(async () =>
      String((await proc(ctx, { action: "log", session_id: started.session_id })).output).includes("tty-ok"),
    );
    await proc(ctx, { action: "write", session_id: started.session_id, data: "hello\n" });
    const notice = await waitFor(() => shown(ctx).find((n) => n.id === started.session_id), 10_000, "exit");
    expect(notice.text).toContain("got:hello");
    expect(notice.text).toContain("exited with code 0");
    const log = await proc(ctx, { action: "log", session_id: started.session_id });
    expect(String(log.output)).not.toMatch(/\r|\x1b/);
  });

  it("kills a background pty program's whole group", async () => {
    const ctx = context();
    const started = (await terminal(ctx, {
      command: "sleep 60 & sleep 60",
      background: true,
      pty: true,
    })) as { session_id: string; pid: number };
    await proc(ctx, { action: "kill", session_id: started.session_id });
    expect(isRunning(started.pid)).toBe(false);
  });
});
