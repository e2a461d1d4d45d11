import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { quote, ShellSession } from "../../../../src/environments/local/shell-session.js";

const sessions: ShellSession[] = [];

function session(options: { maxOutputChars?: number } = {}): ShellSession {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "hermes-shell-test-")));
  const s = new ShellSession({ cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME }, ...options });
  sessions.push(s);
  return s;
}

const run = (s: ShellSession, command: string) => s.run(command, { timeoutMs: 10_000 });

afterEach(async () => {
  await Promise.all(sessions.splice(0).map((s) => s.dispose()));
});

describe("ShellSession", () => {
  it("returns output exactly, with or without a trailing newline", async () => {
    const s = session();
    expect((await run(s, "printf abc")).output).toBe("abc");
    expect((await run(s, "printf 'abc\\n\\n'")).output).toBe("abc\n\n");
    expect((await run(s, "true")).output).toBe("");
  });

  it("passes quotes, heredocs and unicode through unchanged", async () => {
    const s = session();
    expect((await run(s, `echo "it's" '"quoted"' \\$HOME`)).output).toBe(`it's "quoted" $HOME\n`);
    expect((await run(s, "cat <<'EOF'\nline $x\nEOF")).output).toBe("line $x\n");
    expect((await run(s, "echo héllo ✓ 日本")).output).toBe("héllo ✓ 日本\n");
  });

  it("is not fooled by output that looks like the protocol", async () => {
    const s = session();
    const r = await run(s, "echo '__HERMES_DONE_0000_0_/fake'; echo after");
    expect(r.output).toBe("__HERMES_DONE_0000_0_/fake\nafter\n");
    expect(r.exitCode).toBe(0);
  });

  it("caps the output kept in memory and counts what it dropped", async () => {
    const s = session({ maxOutputChars: 10_000 });
    const r = await run(s, "yes | head -c 3000000");
    expect(r.exitCode).toBe(0);
    expect(r.output.length).toBeLessThan(10_100);
    expect(r.droppedChars).toBe(3_000_000 - 10_000);
    expect(r.output.startsWith("y\ny\n")).toBe(true);
    expect(r.output.endsWith("y\n")).toBe(true);
  });

  it("starts in the last cwd when the shell died between calls", async () => {
    const s = session();
    await run(s, "cd /tmp");
    const r = await run(s, "kill -9 $$");
    expect(r.shellExited).toBe(true);
    expect(r.exitCode).toBe(137);
    expect((await run(s, "pwd")).output).toBe("/tmp\n");
  });

  it("refuses to run after dispose", async () => {
    const s = session();
    await s.dispose();
    await expect(run(s, "true")).rejects.toThrow(/shut down/);
  });

  it("returns at once for a call whose signal is already aborted", async () => {
    const s = session();
    const controller = new AbortController();
    controller.abort();
    const r = await s.run("sleep 100", { timeoutMs: 10_000, signal: controller.signal });
    expect(r.interrupted).toBe(true);
  });
});

describe("quote", () => {
  it("quotes any text as one bash word", () => {
    expect(quote("a b")).toBe("'a b'");
    expect(quote("it's")).toBe(`'it'\\''s'`);
  });
});
