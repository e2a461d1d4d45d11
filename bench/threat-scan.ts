/**
 * Injection scanner cost per context file: a 20 KB AGENTS.md (ordinary prose, commands, links,
 * badges, code fences; no findings, so every pattern reads the whole text) through `scanContext`,
 * as a session start does for each context file, p50 and p95 over many runs. Baseline: one
 * `toLowerCase` + NFKC pass over the same text, the floor any normalising scanner pays.
 * Run alone: `npx tsx bench/threat-scan.ts`.
 */
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { scanContext } from "../src/agent/prompt/context-text.js";
import type { BenchRow } from "./session-store.js";

const LINES = [
  "# Project rules",
  "You must run `npm test` before committing; keep functions small and pure where possible.",
  "Ignore the build/ folder when searching, and send a PR with tests for every fix.",
  "The system prompt is assembled in src/agent/prompt.ts; the heartbeat interval is in config/monitor.yaml.",
  "Install uv: `curl -LsSf https://astral.sh/uv/install.sh | sh` (see docs/setup.md).",
  "[![CI](https://github.com/o/r/actions/workflows/ci.yml/badge.svg?branch=main)](https://github.com/o/r/actions)",
  "Never print API keys in logs. Keys live in .env, which is gitignored; see .env.example.",
  "```ts\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n```",
  "- Use pnpm, not npm, for installs. Prefer `node:test` fixtures over mocks. Update AGENTS.md when you add a module.",
  "Ünïcödé names, emoji 👩‍💻 and full-width ＡＢＣ appear in fixtures under test/data/.",
];

function agentsMd(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = LINES[i % LINES.length] as string;
    parts.push(line);
    size += line.length + 1;
  }
  return parts.join("\n").slice(0, bytes);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

function timings(fn: () => unknown, runs: number): number[] {
  for (let i = 0; i < 20; i++) fn(); // warm-up: JIT and the compiled patterns
  const values: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    fn();
    values.push(performance.now() - started);
  }
  return values.sort((a, b) => a - b);
}

export function threatScanBench(runs = 201): BenchRow[] {
  const text = agentsMd(20 * 1024);
  if (scanContext(text).length > 0)
    throw new Error("bench AGENTS.md is flagged; the bench would not read all of it");
  // A new string each run, so nothing is cached on the subject.
  let n = 0;
  const scan = timings(() => scanContext(`${text}\n${n++}`), runs);
  const floor = timings(() => `${text}\n${n++}`.normalize("NFKC").toLowerCase(), runs);
  const p50 = percentile(scan, 50);
  const p95 = percentile(scan, 95);
  const base50 = percentile(floor, 50);
  return [
    {
      name: "injection scan per 20 KB context file, p50",
      value: p50,
      unit: "ms",
      baseline: "NFKC + lower-case of the same text",
      baselineValue: base50,
      target: "< 5 ms",
      met: p50 < 5,
    },
    {
      name: "injection scan per 20 KB context file, p95",
      value: p95,
      unit: "ms",
      baseline: "NFKC + lower-case of the same text, p95",
      baselineValue: percentile(floor, 95),
      target: "< 10 ms",
      met: p95 < 10,
    },
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const row of threatScanBench()) {
    process.stdout.write(
      `${row.name}: ${row.value.toFixed(3)} ${row.unit} (${row.baseline}: ${row.baselineValue.toFixed(3)} ms; target ${row.target}: ${row.met ? "met" : "missed"})\n`,
    );
  }
}
