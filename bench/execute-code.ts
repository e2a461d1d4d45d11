/**
 * Programmatic tool calling costs: the time a script's tool call takes through the sandbox socket
 * (50 sequential `read_file` calls of a one-line file from one Python script, minus the same
 * script making no calls, divided by 50), next to the same call made in-process through the
 * registry; and the start-up of an empty `execute_code` script next to `python3 -c pass`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { makeToolContext } from "../test/support/tool-context.js";
import type { BenchRow } from "./session-store.js";

const CALLS = 50;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export async function executeCodeBench(runs = 9): Promise<BenchRow[]> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "hermes-bench-exec-")));
  writeFileSync(join(cwd, "one.txt"), "one line\n");
  // The built library: tool descriptions are .md files, which tsx cannot load from src/.
  const lib = (await import(
    pathToFileURL(resolve(import.meta.dirname, "../dist/lib/index.js")).href
  )) as typeof import("../src/lib/index.js");
  const registry = lib.createBuiltinRegistry();
  const executeCodeTool = registry.get("execute_code");
  if (!executeCodeTool) throw new Error("execute_code is not in the built registry");
  const ctx = makeToolContext({ cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  ctx.enabledTools = registry.names();
  ctx.callTool = (name, args) => registry.execute(name, args, ctx);

  const script = (n: number) =>
    `from hermes_tools import read_file\nfor _ in range(${n}):\n    read_file("one.txt")\nprint("ok")`;
  const timeScript = async (code: string) => {
    const started = performance.now();
    const result = (await executeCodeTool.handler({ code, language: "python" }, ctx)) as { status: string };
    if (result.status !== "success") throw new Error(`bench script failed: ${JSON.stringify(result)}`);
    return performance.now() - started;
  };

  await timeScript(script(CALLS)); // warm-up
  const empty: number[] = [];
  const full: number[] = [];
  for (let i = 0; i < runs; i++) {
    empty.push(await timeScript(script(0)));
    full.push(await timeScript(script(CALLS)));
  }
  const perCall = Math.max(0, median(full) - median(empty)) / CALLS;

  const direct: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    for (let c = 0; c < CALLS; c++) await registry.execute("read_file", { path: "one.txt" }, ctx);
    direct.push((performance.now() - started) / CALLS);
  }

  const python: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    spawnSync("python3", ["-c", "pass"]);
    python.push(performance.now() - started);
  }

  return [
    {
      name: `execute_code: one tool call through the sandbox socket (${CALLS} sequential read_file calls from Python)`,
      value: perCall,
      unit: "ms",
      baseline: "the same call in-process",
      baselineValue: median(direct),
      target: "≤ 2 ms a call",
      met: perCall <= 2,
    },
    {
      name: "execute_code: start-up of an empty Python script (temp dir, stubs, socket, interpreter, clean-up)",
      value: median(empty),
      unit: "ms",
      baseline: "`python3 -c pass`",
      baselineValue: median(python),
      target: "(for reference)",
      met: true,
    },
  ];
}
