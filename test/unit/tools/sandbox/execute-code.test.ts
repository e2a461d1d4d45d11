import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import { executeCodeTool } from "../../../../src/tools/sandbox/index.js";
import { isRunning, waitFor } from "../terminal/helpers.js";
import { configWith, runCode, type SandboxCtx, sandboxContext } from "./helpers.js";

const contexts: SandboxCtx[] = [];

function context(...args: Parameters<typeof sandboxContext>): SandboxCtx {
  const ctx = sandboxContext(...args);
  contexts.push(ctx);
  return ctx;
}

afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.runtime.dispose()));
});

describe("execute_code: Python", () => {
  it("reads and writes files through the tools and returns only what the script prints", async () => {
    const ctx = context();
    writeFileSync(join(ctx.cwd, "input.txt"), "alpha\nbeta\ngamma\n");
    const result = await runCode(
      ctx,
      [
        "from hermes_tools import read_file, write_file",
        'text = read_file("input.txt")',
        "words = [line.split('|', 1)[1] for line in text.splitlines() if '|' in line]",
        'write_file(path="out/upper.txt", content="\\n".join(w.upper() for w in words))',
        'print(f"wrote {len(words)} words")',
      ].join("\n"),
    );
    expect(result).toMatchObject({
      status: "success",
      output: "wrote 3 words",
      exit_code: 0,
      tool_calls_made: 2,
    });
    expect(result.errors).toBeUndefined();
    expect(readFileSync(join(ctx.cwd, "out/upper.txt"), "utf8")).toBe("ALPHA\nBETA\nGAMMA");
    expect(ctx.progressNotes).toEqual(["read_file (call 1)", "write_file (call 2)"]);
  });

  it("serves 20 calls from 20 threads at once, each with its own answer", async () => {
    const ctx = context();
    for (let i = 0; i < 20; i++) writeFileSync(join(ctx.cwd, `f${i}.txt`), `content-${i}\n`);
    const result = await runCode(
      ctx,
      [
        "from concurrent.futures import ThreadPoolExecutor",
        "import threading",
        "from hermes_tools import read_file",
        "barrier = threading.Barrier(20, timeout=20)",
        "def one(i):",
        "    barrier.wait()",
        '    return i, read_file(f"f{i}.txt")',
        "with ThreadPoolExecutor(20) as pool:",
        "    results = list(pool.map(one, range(20)))",
        'print(sum(1 for i, text in results if f"content-{i}" in text and text.count("content-") == 1))',
      ].join("\n"),
    );
    expect(result).toMatchObject({ status: "success", output: "20", tool_calls_made: 20 });
  });

  it("raises a catchable ToolError when a tool fails", async () => {
    const ctx = context();
    const result = await runCode(
      ctx,
      [
        "from hermes_tools import read_file, ToolError",
        "try:",
        '    read_file("missing.txt")',
        "except ToolError as e:",
        '    print("caught", e.tool, "|", e.message)',
      ].join("\n"),
    );
    expect(result.status).toBe("success");
    expect(result.output).toMatch(/^caught read_file \| .*missing\.txt/);
  });

  it("refuses a tool outside the allow-list, naming the callable ones", async () => {
    const ctx = context();
    const result = await runCode(
      ctx,
      [
        "import hermes_tools",
        "print(hasattr(hermes_tools, 'memory'), hasattr(hermes_tools, 'read_file'))",
        "try:",
        '    hermes_tools.call_tool("memory", action="read")',
        "except hermes_tools.ToolError as e:",
        "    print(e)",
      ].join("\n"),
    );
    expect(result.status).toBe("success");
    const [defined, message] = result.output.split("\n");
    expect(defined).toBe("False True");
    expect(message).toContain('memory: Tool "memory" cannot be called from execute_code');
    expect(message).toContain("read_file, write_file, search_files, patch, terminal");
    expect(result.tool_calls_made).toBe(0);
  });

  it("refuses a sandbox tool that is not enabled in the session, and does not define it", async () => {
    const ctx = context({ enabledTools: ["read_file", "execute_code"] });
    const result = await runCode(
      ctx,
      [
        "import hermes_tools",
        "print(hasattr(hermes_tools, 'write_file'))",
        "try:",
        '    hermes_tools.call_tool("write_file", path="x.txt", content="no")',
        "except hermes_tools.ToolError as e:",
        "    print(e)",
      ].join("\n"),
    );
    const [defined, message] = result.output.split("\n");
    expect(defined).toBe("False");
    expect(message).toContain("Tools callable from execute_code in this session: read_file.");
    expect(existsSync(join(ctx.cwd, "x.txt"))).toBe(false);
  });

  it("refuses the 51st call with an error while the script keeps running", async () => {
    const ctx = context();
    writeFileSync(join(ctx.cwd, "a.txt"), "a\n");
    const result = await runCode(
      ctx,
      [
        "from hermes_tools import read_file, ToolError",
        "ok, errors = 0, []",
        "for _ in range(51):",
        "    try:",
        '        read_file("a.txt")',
        "        ok += 1",
        "    except ToolError as e:",
        "        errors.append(str(e))",
        'print(ok, len(errors), errors[0] if errors else "")',
        'print("still running")',
      ].join("\n"),
    );
    expect(result.tool_calls_made).toBe(50);
    const [summary, tail] = result.output.split("\n");
    expect(summary).toMatch(
      /^50 1 read_file: Tool-call limit reached: this script already made 50 tool calls/,
    );
    expect(tail).toBe("still running");
  });

  it("runs terminal in the foreground and refuses background: true", async () => {
    const ctx = context();
    const result = await runCode(
      ctx,
      [
        "from hermes_tools import terminal, ToolError",
        'print(terminal(command="echo from-shell").splitlines()[0])',
        "try:",
        '    terminal(command="sleep 100", background=True)',
        "except ToolError as e:",
        "    print(e)",
      ].join("\n"),
    );
    const [first, second] = result.output.split("\n");
    expect(first).toBe("from-shell");
    expect(second).toContain("terminal runs in the foreground only inside execute_code");
    expect(result.tool_calls_made).toBe(1);
  });

  it("reports a non-zero exit as an error with the traceback", async () => {
    const ctx = context();
    const result = await runCode(ctx, 'print("before")\nraise ValueError("boom")\n');
    expect(result).toMatchObject({ status: "error", output: "before", exit_code: 1 });
    expect(result.errors).toContain("Traceback (most recent call last)");
    expect(result.errors).toContain("ValueError: boom");
  });

  it("passes no secrets or Hermes settings to the script", async () => {
    const ctx = context({
      env: {
        PATH: process.env.PATH,
        HOME: "/home/someone",
        LANG: "C.UTF-8",
        PYENV_ROOT: process.env.PYENV_ROOT,
        OPENAI_API_KEY: "sk-secret",
        GITHUB_TOKEN: "ghp-secret",
        MY_PASSWORD: "hunter2",
        HERMES_YOLO_MODE: "1",
        HERMES_HOME: "/home/someone/.hermes",
      },
    });
    const result = await runCode(ctx, "import json, os\nprint(json.dumps(dict(os.environ)))");
    const env = JSON.parse(result.output) as Record<string, string>;
    for (const name of ["OPENAI_API_KEY", "GITHUB_TOKEN", "MY_PASSWORD", "HERMES_YOLO_MODE"]) {
      expect(env[name], name).toBeUndefined();
    }
    expect(JSON.stringify(env)).not.toMatch(/secret|hunter2/);
    expect(env).toMatchObject({
      HOME: "/home/someone",
      LANG: "C.UTF-8",
      HERMES_HOME: "/home/someone/.hermes",
      PYTHONUNBUFFERED: "1",
      PYTHONDONTWRITEBYTECODE: "1",
    });
    expect(env.HERMES_RPC_SOCKET).toMatch(/rpc\.sock$/);
  });

  it("runs in the working directory and removes its temp folder afterwards", async () => {
    const ctx = context();
    const result = await runCode(
      ctx,
      "import os, hermes_tools\nprint(os.getcwd())\nprint(os.path.dirname(hermes_tools.__file__))",
    );
    const [cwd, moduleDir] = result.output.split("\n");
    expect(cwd).toBe(ctx.cwd);
    expect(moduleDir).toMatch(/hermes-exec-/);
    expect(existsSync(moduleDir as string)).toBe(false);
  });

  it("cuts stdout over 50 KB to head and tail with a notice", async () => {
    const ctx = context();
    const result = await runCode(
      ctx,
      'for i in range(3000):\n    print(f"line {i:05d} " + "x" * 90)\nprint("THE END")',
    );
    expect(result.status).toBe("success");
    expect(result.output.startsWith("line 00000 ")).toBe(true);
    expect(result.output.endsWith("THE END")).toBe(true);
    expect(result.output).toMatch(
      /stdout truncated: \d+ of \d+ bytes omitted from the middle \(limit [^)]+\)/,
    );
    expect(Buffer.byteLength(result.output)).toBeLessThan(52 * 1024);
  });

  it("stays valid JSON within the tool-output limit when run through the registry", async () => {
    const ctx = context();
    const registry = new ToolRegistry();
    registry.register(executeCodeTool);
    const outcome = await registry.execute(
      "execute_code",
      { code: 'import sys\nfor i in range(3000):\n    print("\\t\\"q\\"" * 30)\nsys.exit(3)' },
      ctx,
    );
    expect(outcome.truncated).toBeUndefined();
    const parsed = JSON.parse(outcome.content) as { status: string; output: string; exit_code: number };
    expect(parsed).toMatchObject({ status: "error", exit_code: 3 });
    expect(parsed.output).toContain("omitted");
    expect(Buffer.byteLength(outcome.content)).toBeLessThanOrEqual(50_000);
  });
});

describe("execute_code: killing", () => {
  it("on timeout kills the whole process group, grandchildren included", async () => {
    // 3 s, not 1: on a loaded machine Python's start, the import and the Popen alone can take a
    // second, and the grandchild must exist before the timeout for the test to mean anything.
    const ctx = context({ config: configWith({ timeout: 3 }) });
    const result = await runCode(
      ctx,
      [
        "import os, subprocess, time, hermes_tools",
        "print(os.path.dirname(hermes_tools.__file__), flush=True)",
        'child = subprocess.Popen(["sleep", "1000"])',
        'open("grandchild.pid", "w").write(str(child.pid))',
        "time.sleep(1000)",
      ].join("\n"),
    );
    expect(result.status).toBe("timeout");
    expect(result.message).toContain("timed out after 3 s");
    const pid = Number(readFileSync(join(ctx.cwd, "grandchild.pid"), "utf8"));
    expect(isRunning(pid)).toBe(false);
    expect(existsSync(result.output)).toBe(false);
  });

  it("kills what a finished script left running in the background", async () => {
    const ctx = context();
    const result = await runCode(
      ctx,
      [
        "import subprocess",
        'child = subprocess.Popen(["sleep", "1000"])',
        'open("leftover.pid", "w").write(str(child.pid))',
        'print("done")',
      ].join("\n"),
    );
    expect(result).toMatchObject({ status: "success", output: "done" });
    expect(isRunning(Number(readFileSync(join(ctx.cwd, "leftover.pid"), "utf8")))).toBe(false);
  });

  it("stops at once when the user interrupts", async () => {
    const controller = new AbortController();
    const ctx = context({ signal: controller.signal });
    const running = runCode(
      ctx,
      [
        "import os, subprocess, time, hermes_tools",
        'child = subprocess.Popen(["sleep", "1000"])',
        'open("started", "w").write(f"{child.pid} {os.path.dirname(hermes_tools.__file__)}")',
        "time.sleep(1000)",
      ].join("\n"),
    );
    const started = join(ctx.cwd, "started");
    await waitFor(
      () => existsSync(started) && readFileSync(started, "utf8").includes(" "),
      10_000,
      "script start",
    );
    controller.abort();
    const result = await running;
    expect(result.status).toBe("interrupted");
    expect(result.message).toContain("Interrupted by the user");
    const [pid, dir] = readFileSync(started, "utf8").split(" ");
    expect(isRunning(Number(pid))).toBe(false);
    expect(existsSync(dir as string)).toBe(false);
  });

  it("does not start when the turn was already interrupted", async () => {
    const controller = new AbortController();
    controller.abort();
    const ctx = context({ signal: controller.signal });
    const result = await runCode(ctx, 'open("ran", "w").write("yes")');
    expect(result.status).toBe("interrupted");
    expect(existsSync(join(ctx.cwd, "ran"))).toBe(false);
  });
});

describe("execute_code: JavaScript", () => {
  it("reads and writes files through the tools with await", async () => {
    const ctx = context();
    writeFileSync(join(ctx.cwd, "in.txt"), "one\ntwo\n");
    const result = await runCode(
      ctx,
      [
        'import { read_file, write_file } from "./hermes_tools.mjs";',
        'const text = await read_file({ path: "in.txt" });',
        'const n = text.split("\\n").filter((l) => l.includes("|")).length;',
        'await write_file({ path: "count.txt", content: String(n) });',
        'console.log("lines=" + n);',
      ].join("\n"),
      "javascript",
    );
    expect(result).toMatchObject({ status: "success", output: "lines=2", exit_code: 0, tool_calls_made: 2 });
    expect(readFileSync(join(ctx.cwd, "count.txt"), "utf8")).toBe("2");
  });

  it("answers 20 concurrent calls from Promise.all, each with its own result", async () => {
    const ctx = context();
    for (let i = 0; i < 20; i++) writeFileSync(join(ctx.cwd, `f${i}.txt`), `content-${i}\n`);
    const result = await runCode(
      ctx,
      [
        'import { read_file } from "hermes_tools";',
        "const ids = Array.from({ length: 20 }, (_, i) => i);",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source for the script
        "const texts = await Promise.all(ids.map((i) => read_file({ path: `f${i}.txt` })));",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: JavaScript source for the script
        'const good = texts.filter((t, i) => t.includes(`content-${i}`) && t.split("content-").length === 2);',
        "console.log(good.length);",
      ].join("\n"),
      "javascript",
    );
    expect(result).toMatchObject({ status: "success", output: "20", tool_calls_made: 20 });
  });

  it("rejects with a catchable ToolError and refuses tools outside the allow-list", async () => {
    const ctx = context();
    const result = await runCode(
      ctx,
      [
        'import { read_file, call_tool, ToolError } from "./hermes_tools.mjs";',
        "try { await read_file({ path: 'nope.txt' }); } catch (e) { console.log(e instanceof ToolError, e.tool); }",
        "try { await call_tool('memory', { action: 'read' }); } catch (e) { console.log(e.message); }",
      ].join("\n"),
      "javascript",
    );
    const [first, second] = result.output.split("\n");
    expect(first).toBe("true read_file");
    expect(second).toContain('Tool "memory" cannot be called from execute_code');
  });

  it("reports a thrown error as status error with its stack", async () => {
    const ctx = context();
    const result = await runCode(ctx, 'throw new Error("js boom");', "javascript");
    expect(result.status).toBe("error");
    expect(result.exit_code).toBe(1);
    expect(result.errors).toContain("js boom");
  });
});

describe("execute_code: tool definition", () => {
  it("is offered where Unix sockets work", async () => {
    expect(await executeCodeTool.check?.({ env: {}, config: {} })).toBe(process.platform !== "win32");
  });

  it("refuses a Python script when python3 is missing, pointing at JavaScript", async () => {
    const ctx = context({ env: { PATH: "/nonexistent" } });
    await expect(runCode(ctx, "print(1)", "python")).rejects.toThrow(/python3 was not found.*"javascript"/);
    const fallback = await runCode(ctx, "console.log(typeof process.versions.node)");
    expect(fallback).toMatchObject({ status: "success", output: "string" });
  });

  it("lets scripts run without nested calls when callTool is absent", async () => {
    const ctx = context({ callTool: undefined });
    const result = await runCode(
      ctx,
      "import hermes_tools\ntry:\n    hermes_tools.call_tool('read_file', path='x')\nexcept hermes_tools.ToolError as e:\n    print(e)",
    );
    expect(result.output).toContain("No tools are callable from execute_code in this session");
  });

  it("keeps its folder private while the script runs", async () => {
    const ctx = context();
    const result = await runCode(
      ctx,
      "import os, stat, hermes_tools\nd = os.path.dirname(hermes_tools.__file__)\nprint(oct(stat.S_IMODE(os.stat(d).st_mode)))",
    );
    expect(result.output).toBe("0o700");
  });
});
