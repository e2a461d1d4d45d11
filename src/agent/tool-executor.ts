/**
 * Runs one assistant message's tool calls. Read-only calls run in parallel; path-scoped calls run in
 * parallel when their paths do not overlap with a writer's; anything else runs alone; an interactive
 * tool (clarify) makes the whole batch sequential. At most 8 run at once; results keep call order.
 */
import { sep } from "node:path";

export const MAX_PARALLEL_TOOLS = 8;

/** What the planner needs to know about one call. */
export interface PlannedCall {
  index: number;
  parallelSafe: boolean;
  /** Absolute paths touched, when the tool is path-scoped. */
  paths?: string[];
  interactive: boolean;
}

/**
 * Splits calls into waves: each wave's calls may run concurrently; waves run in order. Pure.
 * Order is preserved: a call never runs before an earlier call it could conflict with.
 */
export function planWaves(calls: readonly PlannedCall[], maxParallel = MAX_PARALLEL_TOOLS): number[][] {
  if (calls.some((c) => c.interactive)) return calls.map((c) => [c.index]);
  const waves: number[][] = [];
  let wave: PlannedCall[] = [];
  const flush = () => {
    if (wave.length > 0) waves.push(wave.map((c) => c.index));
    wave = [];
  };
  for (const call of calls) {
    const concurrent = call.parallelSafe || call.paths !== undefined;
    if (!concurrent) {
      flush();
      waves.push([call.index]);
      continue;
    }
    if (wave.length >= maxParallel || wave.some((other) => conflicts(call, other))) flush();
    wave.push(call);
  }
  flush();
  return waves;
}

function conflicts(a: PlannedCall, b: PlannedCall): boolean {
  const aWrites = !a.parallelSafe;
  const bWrites = !b.parallelSafe;
  if (!aWrites && !bWrites) return false;
  // A writer without declared paths could touch anything.
  if (a.paths === undefined || b.paths === undefined) return true;
  return a.paths.some((p) => b.paths?.some((q) => pathsOverlap(p, q)));
}

/** True when one path equals or contains the other. */
export function pathsOverlap(a: string, b: string): boolean {
  if (a === b) return true;
  const withSep = (p: string) => (p.endsWith(sep) ? p : p + sep);
  return a.startsWith(withSep(b)) || b.startsWith(withSep(a));
}

/** Runs waves in order, each wave's tasks concurrently; returns results in the original order. */
export async function runWaves<T>(
  waves: readonly number[][],
  run: (index: number) => Promise<T>,
): Promise<Map<number, T>> {
  const results = new Map<number, T>();
  for (const wave of waves) {
    const settled = await Promise.all(wave.map(async (i) => [i, await run(i)] as const));
    for (const [i, value] of settled) results.set(i, value);
  }
  return results;
}
