/**
 * What enabled plugins add to an agent's start, in-process: a fresh home with three enabled
 * plugins (each registering a tool, a `pre_tool_call` and a `post_llm_call` hook and a slash
 * command) is loaded (`loadPlugins`: discovery, manifest, require of the ESM entry, `register`),
 * then a `ChatSession` opens and runs its first turn against the fake LLM; the same without
 * plugins is the baseline. Each sample runs in its own plain node process (bench/plugins-start.mjs,
 * the built library) with a fresh home, so the load is as cold as a real start; only the start is
 * timed, inside that process. Samples alternate so drift hits both; medians. Goal: ≤ 20 ms.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { reply, startFakeLlm } from "../test/support/fake-llm.js";
import { writePlugin } from "../test/support/plugin-fixtures.js";
import type { BenchRow } from "./session-store.js";

/** The built library (its tools' descriptions are bundled; tsx cannot load src/tools/ itself). */
const LIB = resolve(import.meta.dirname, "../dist/lib/index.js");
/** One sample per fresh plain-node process (tsx's loader hooks would slow the ESM requires). */
const CHILD = resolve(import.meta.dirname, "plugins-start.mjs");
const SAMPLES = 12;
const PLUGINS = ["alpha", "beta", "gamma"];
export const PLUGIN_START_GOAL_MS = 20;

function pluginSource(name: string): string {
  return `
export function register(ctx) {
  ctx.registerTool({
    name: "${name}_echo",
    description: "Echoes text back (bench plugin ${name}).",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    handler: (args) => "${name}:" + args.text,
  });
  ctx.registerHook("pre_tool_call", (p) => (p.tool_name === "terminal" && String(p.args.command).includes("rm -rf /") ? { action: "block", reason: "no" } : undefined));
  ctx.registerHook("post_llm_call", () => undefined);
  ctx.registerCommand("${name}", () => "${name} here", { description: "bench command" });
}
`;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export async function pluginsBench(): Promise<BenchRow[]> {
  process.stderr.write("plugins: agent start with 3 enabled plugins vs none…\n");
  const llm = await startFakeLlm();
  const root = mkdtempSync(join(tmpdir(), "hermes-bench-plugins-"));
  let n = 0;
  const start = async (mode: "with" | "none"): Promise<{ wall: number; cpu: number }> => {
    const home = join(root, `home-${n}`);
    const cwd = join(root, `work-${n++}`);
    mkdirSync(cwd, { recursive: true });
    mkdirSync(home, { recursive: true });
    for (const name of PLUGINS) writePlugin(join(home, "plugins"), name, pluginSource(name));
    llm.enqueue(reply().text("ready"));
    const out = await runNode([CHILD, pathToFileURL(LIB).href, home, cwd, llm.url, mode]);
    const [wall, cpu] = out.trim().split(/\s+/).map(Number);
    if (!Number.isFinite(wall) || !Number.isFinite(cpu))
      throw new Error(`plugins bench: the sample printed ${JSON.stringify(out)}`);
    return { wall: wall as number, cpu: cpu as number };
  };
  try {
    const none: Array<{ wall: number; cpu: number }> = [];
    const three: Array<{ wall: number; cpu: number }> = [];
    for (let i = 0; i < SAMPLES; i++) {
      // Which runs first alternates too: a pair's first process pays a little more than its second.
      if (i % 2 === 0) {
        none.push(await start("none"));
        three.push(await start("with"));
      } else {
        three.push(await start("with"));
        none.push(await start("none"));
      }
    }
    if (process.env["HERMES_BENCH_RAW"]) process.stderr.write(`${JSON.stringify({ none, three })}\n`);
    const row = (what: "wall" | "cpu", name: string) => {
      const added = median(three.map((t, i) => t[what] - (none[i] as { wall: number; cpu: number })[what]));
      return {
        name,
        value: Math.round(added * 10) / 10,
        unit: "ms added",
        baseline: "the same start without plugins",
        baselineValue: Math.round(median(none.map((n) => n[what])) * 10) / 10,
        target: `≤ ${PLUGIN_START_GOAL_MS} ms added`,
        met: added <= PLUGIN_START_GOAL_MS,
      };
    };
    return [
      row(
        "wall",
        "plugins: agent start with 3 enabled plugins vs none (in-process in a fresh node: load + open + first turn)",
      ),
      row("cpu", "plugins: the same start's CPU time (user + system of the sample's process)"),
    ];
  } finally {
    await llm.close();
  }
}

function runNode(args: string[]): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(process.execPath, args, { timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`plugins bench sample failed: ${stderr || error.message}`));
      else resolvePromise(stdout);
    });
  });
}
