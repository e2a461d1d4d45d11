/**
 * The command analyser's cost per command over the whole zoo (test/support/command-zoo.ts): each
 * command is analysed REPS times after a warm-up, its median kept, and the p50 and p95 of those
 * medians reported, next to parsing alone (the shell parser over the same commands) as baseline.
 * Run alone with `npx tsx bench/command-analyser.ts`.
 */
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { analyseCommand } from "../src/tools/approval/index.js";
import { parseScript } from "../src/util/shell-parse.js";
import { ALL_COMMANDS, zooContext } from "../test/support/command-zoo.js";
import type { BenchRow } from "./session-store.js";

const REPS = 15;

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

function perCommand(fn: (command: string) => unknown): number[] {
  const commands = ALL_COMMANDS.map((e) => e[0]);
  for (const c of commands) fn(c); // warm-up: JIT, regex compilation
  return commands.map((c) => {
    const times: number[] = [];
    for (let i = 0; i < REPS; i++) {
      const started = performance.now();
      fn(c);
      times.push(performance.now() - started);
    }
    return quantile(times, 0.5);
  });
}

export function commandAnalyserBench(): BenchRow[] {
  const ctx = zooContext();
  const analysed = perCommand((c) => analyseCommand(c, ctx));
  const parsed = perCommand((c) => parseScript(c));
  const n = ALL_COMMANDS.length;
  const p50 = quantile(analysed, 0.5);
  const p95 = quantile(analysed, 0.95);
  return [
    {
      name: `command analyser, p50 per command over the zoo (${n} commands)`,
      value: p50,
      unit: "ms",
      baseline: "parsing alone, p50",
      baselineValue: quantile(parsed, 0.5),
      target: "(for reference)",
      met: true,
    },
    {
      name: `command analyser, p95 per command over the zoo (${n} commands)`,
      value: p95,
      unit: "ms",
      baseline: "parsing alone, p95",
      baselineValue: quantile(parsed, 0.95),
      target: "< 1 ms",
      met: p95 < 1,
    },
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const r of commandAnalyserBench()) {
    process.stdout.write(
      `${r.name}: ${r.value.toFixed(3)} ${r.unit} (${r.baseline} ${r.baselineValue.toFixed(3)} ms) target ${r.target} ${r.met ? "met" : "NOT met"}\n`,
    );
  }
}
