/**
 * `npx tsx bench/turn-rows.ts [loop] [api]`: only the per-turn rows of `npm run bench` (the lean-start
 * rows, whose last three are the loop's cost per model call, and the API server rows), printed as
 * the same table without rewriting bench/RESULTS.md. For measuring one change quickly; run after
 * `npm run build`.
 */
import { join, resolve } from "node:path";
import { apiServerBench } from "./api-server.js";
import { leanStartBench } from "./lean-start.js";
import type { BenchRow } from "./session-store.js";

const ROOT = resolve(import.meta.dirname, "..");
const which = process.argv.slice(2);
const want = (name: string) => which.length === 0 || which.includes(name);
const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(3));
const rows: BenchRow[] = [];
if (want("loop")) rows.push(...(await leanStartBench(join(ROOT, "bin/hermes"), 1)));
if (want("api")) rows.push(...(await apiServerBench(Number(process.env.BENCH_API_RUNS ?? 3))));
for (const r of rows) {
  process.stdout.write(
    `| ${r.name} | ${fmt(r.value)} ${r.unit} | ${r.baseline} ${fmt(r.baselineValue)} ${r.baselineUnit ?? "ms"} | ${(r.value / r.baselineValue).toFixed(2)}× |\n`,
  );
}
