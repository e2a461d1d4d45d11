import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { javascriptStub, pythonStub, SANDBOX_ALLOWED_TOOLS } from "../../../../src/tools/sandbox/stubs.js";

const dir = mkdtempSync(join(tmpdir(), "hermes-stubs-"));

describe("generated modules", () => {
  it("Python: compiles and defines exactly call_tool, ToolError and the given tools", () => {
    writeFileSync(join(dir, "hermes_tools.py"), pythonStub(["read_file", "patch", "memory"]));
    const run = spawnSync(
      "python3",
      [
        "-c",
        "import hermes_tools, inspect; print(sorted(hermes_tools.__all__)); print(inspect.signature(hermes_tools.read_file))",
      ],
      { cwd: dir, encoding: "utf8" },
    );
    expect(run.stderr).toBe("");
    expect(run.stdout.split("\n")).toEqual([
      "['ToolError', 'call_tool', 'patch', 'read_file']",
      "(path, *, offset=None, limit=None, **extra)",
      "",
    ]);
  });

  it("Python: every allowed tool gets a function", () => {
    writeFileSync(join(dir, "all_tools.py"), pythonStub(SANDBOX_ALLOWED_TOOLS));
    const run = spawnSync("python3", ["-c", "import all_tools; print(len(all_tools.__all__))"], {
      cwd: dir,
      encoding: "utf8",
    });
    expect(run.stdout.trim()).toBe(String(SANDBOX_ALLOWED_TOOLS.length + 2));
  });

  it("JavaScript: loads and exports exactly call_tool, ToolError and the given tools", () => {
    writeFileSync(join(dir, "hermes_tools.mjs"), javascriptStub(["read_file", "web_search", "memory"]));
    const run = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'const m = await import("./hermes_tools.mjs"); console.log(Object.keys(m).sort().join(","))',
      ],
      { cwd: dir, encoding: "utf8" },
    );
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toBe("ToolError,call_tool,read_file,web_search");
  });
});
