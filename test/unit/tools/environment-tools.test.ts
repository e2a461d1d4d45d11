/**
 * The file, terminal and process tools through a non-local Environment: paths resolve against the
 * task shell's cwd there, files go through Environment.files, search through exec (grep/find when
 * the environment has no ripgrep), background processes through Environment.spawn.
 */
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { useEnvironment } from "../../../src/tools/environment.js";
import { patchTool } from "../../../src/tools/file/patch.js";
import { readFileTool } from "../../../src/tools/file/read-file.js";
import { searchFilesTool } from "../../../src/tools/file/search-files.js";
import { writeFileTool } from "../../../src/tools/file/write-file.js";
import { processTool } from "../../../src/tools/terminal/process.js";
import { terminalTool } from "../../../src/tools/terminal/terminal.js";
import type { ToolContext } from "../../../src/tools/types.js";
import { fakeEnvironment } from "../../support/fake-environment.js";
import { makeToolContext } from "../../support/tool-context.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** A context whose own cwd is elsewhere: only the environment's shell cwd can explain where files land. */
function setup(path = process.env.PATH) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "hermes-envtools-")));
  const envCwd = join(root, "env");
  mkdirSync(join(envCwd, "sub"), { recursive: true });
  const env = fakeEnvironment({ cwd: envCwd, env: { PATH: path, HOME: envCwd } });
  const ctx = makeToolContext({ cwd: join(root, "host-cwd-not-used") });
  useEnvironment(ctx.runtime, env);
  cleanups.push(() => ctx.runtime.dispose());
  return { root, envCwd, env, ctx };
}

async function call(
  tool: { handler: (a: never, c: ToolContext) => unknown },
  args: object,
  ctx: ToolContext,
) {
  const value = await tool.handler(args as never, ctx);
  return typeof value === "string" ? value : JSON.stringify(value);
}

describe("tools in a non-local environment", () => {
  it("write, read, patch and search resolve against the shell's cwd there", async () => {
    const { envCwd, env, ctx } = setup("/usr/bin:/bin");
    await call(terminalTool, { command: "cd sub" }, ctx);
    expect(await call(writeFileTool, { path: "notes.txt", content: "alpha\nbeta\n" }, ctx)).toMatch(
      /^Created notes\.txt/,
    );
    expect(readFileSync(join(envCwd, "sub", "notes.txt"), "utf8")).toBe("alpha\nbeta\n");
    expect(await call(readFileTool, { path: "notes.txt" }, ctx)).toContain("     2|beta");
    expect(
      await call(patchTool, { path: "notes.txt", old_string: "beta", new_string: "gamma" }, ctx),
    ).toContain("+gamma");
    expect(readFileSync(join(envCwd, "sub", "notes.txt"), "utf8")).toBe("alpha\ngamma\n");
    const found = await call(searchFilesTool, { pattern: "gam+a" }, ctx);
    expect(found).toContain("notes.txt:2:gamma");
    // grep where the environment has no ripgrep (CI); rg where /usr/bin has it.
    expect(env.execs.some((c) => c.startsWith("'grep'") || c.startsWith("'rg'"))).toBe(true);
    const names = await call(searchFilesTool, { pattern: "*.txt", target: "files" }, ctx);
    expect(names.trim()).toBe("notes.txt");
  });

  it("refuses to overwrite a file changed in the environment since it was read", async () => {
    const { envCwd, ctx } = setup();
    writeFileSync(join(envCwd, "a.txt"), "one\n");
    await call(readFileTool, { path: "a.txt" }, ctx);
    writeFileSync(join(envCwd, "a.txt"), "one\ntwo, changed by someone else\n");
    await expect(call(writeFileTool, { path: "a.txt", content: "mine" }, ctx)).rejects.toThrow(
      /modified on disk/,
    );
  });

  it("reports a missing file with names from the environment", async () => {
    const { envCwd, ctx } = setup();
    writeFileSync(join(envCwd, "config.yaml"), "x: 1\n");
    await expect(call(readFileTool, { path: "confg.yaml" }, ctx)).rejects.toThrow(
      /Did you mean: config\.yaml/,
    );
  });

  it("runs background processes through the environment's spawn", async () => {
    const { envCwd, ctx } = setup();
    const started = JSON.parse(
      await call(terminalTool, { command: "read x; echo got:$x; pwd", background: true }, ctx),
    ) as { session_id: string };
    await call(processTool, { action: "write", session_id: started.session_id, data: "hi\n" }, ctx);
    const waited = await call(
      processTool,
      { action: "wait", session_id: started.session_id, timeout: 20 },
      ctx,
    );
    expect(waited).toContain("got:hi");
    expect(waited).toContain(envCwd);
    expect(waited).toContain('"status":"exited"');
  });

  it("uses ripgrep inside the environment when it has one", async () => {
    const { env, envCwd, ctx } = setup();
    const rg = await env.exec("command -v rg");
    if (rg.exitCode !== 0) return; // no ripgrep on this machine: the grep path above covers search
    writeFileSync(join(envCwd, "x.ts"), "const needle = 1;\n");
    expect(await call(searchFilesTool, { pattern: "needle" }, ctx)).toContain("x.ts:1:const needle = 1;");
    expect(env.execs.some((c) => c.startsWith("'rg'"))).toBe(true);
  });

  it("releasing a task ends its shell in the environment", async () => {
    const { ctx } = setup();
    await call(terminalTool, { command: "export KEEP=1" }, ctx);
    await ctx.runtime.releaseTask(ctx.taskId);
    expect(await call(terminalTool, { command: 'echo "keep=$KEEP"' }, ctx)).toContain("keep=\n");
  });
});
