/**
 * Secret redaction cost: one 100 KB tool result (a realistic mix: log lines, JSON, paths, hashes,
 * a few real-looking keys) through a redactor holding a realistic secret set (40 known values, as
 * a home with a full `.env`, auth.json pool and config registers them, each with its JSON and URL
 * spellings, plus every key shape), next to `JSON.stringify` of the same text, the serialisation
 * every tool result already goes through. Run alone: `npx tsx bench/redaction.ts`.
 */
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { Redactor } from "../src/util/redact.js";
import type { BenchRow } from "./session-store.js";

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function toolResult(bytes: number): string {
  const lines = [
    "2024-05-01T12:00:03Z INFO  request id=5f0c1e2a path=/api/v1/items?page=2 status=200 dur=12ms",
    '{"sha":"9fceb02d0ae598e95dc970b74767f19372d61af8","author":"Ann <ann@example.com>","files":3}',
    "drwxr-xr-x  5 user user 4096 May  1 12:00 node_modules/@scope/package-name/dist",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  build/output.tar.gz",
    "    at Object.<anonymous> (/home/user/project/src/server/handlers/items.ts:42:17)",
    "Please use the password reset link; tokens expire after 24 hours (see docs/auth.md).",
  ];
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line =
      i % 97 === 0 ? `export GITHUB_TOKEN=ghp_${"Ab3dE".repeat(8)}` : (lines[i % lines.length] as string);
    parts.push(line);
    size += line.length + 1;
  }
  return parts.join("\n").slice(0, bytes);
}

function measure(fn: () => unknown, runs: number): number {
  for (let i = 0; i < 20; i++) fn(); // warm-up: JIT and the compiled expression
  const values: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    for (let j = 0; j < 10; j++) fn();
    values.push((performance.now() - started) / 10);
  }
  return median(values);
}

export function redactionBench(runs = 31): BenchRow[] {
  const redactor = new Redactor();
  for (let i = 0; i < 40; i++)
    redactor.addSecret(`secret-${i}-${"k9Xz".repeat(6 + (i % 5))}/+=`, `SECRET_${i}`);
  const text = toolResult(100 * 1024);
  // A new subject string each call: V8 caches the result of a global replace on the same string.
  let n = 0;
  const redacted = measure(() => redactor.redact(`${text}${n++}`), runs);
  const baseline = measure(() => JSON.stringify(`${text}${n++}`), runs);
  return [
    {
      name: "redaction per 100 KB tool result (40 known secrets + key shapes)",
      value: redacted,
      unit: "ms",
      baseline: "JSON.stringify of the same text",
      baselineValue: baseline,
      target: "< 5 ms",
      met: redacted < 5,
    },
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const row of redactionBench()) {
    process.stdout.write(
      `${row.name}: ${row.value.toFixed(3)} ${row.unit} (${row.baseline}: ${row.baselineValue.toFixed(3)} ms, ${(row.value / row.baselineValue).toFixed(1)}x; target ${row.target}: ${row.met ? "met" : "missed"})\n`,
    );
  }
}
