/**
 * Maps a tool name the model got slightly wrong to a real one: case, separators, namespace
 * prefixes ("functions.read_file"), camelCase, and small typos. Pure.
 */
import { editDistance } from "../util/edit-distance.js";

export function repairToolName(name: string, known: readonly string[]): string | null {
  if (known.includes(name)) return name;
  const canon = (s: string) =>
    s
      .replace(/^(functions|function|tools|tool|default_api)[.:/]/i, "")
      .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
      .replace(/[\s.\-/:]+/g, "_")
      .toLowerCase();
  const wanted = canon(name.trim());
  const byCanon = known.filter((k) => canon(k) === wanted);
  if (byCanon.length === 1) return byCanon[0] ?? null;
  // Small typos: accept the closest name when it is clearly closest and close enough.
  const maxDistance = Math.max(1, Math.min(3, Math.floor(wanted.length * 0.25)));
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  let tie = false;
  for (const candidate of known) {
    const d = editDistance(wanted, canon(candidate));
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
      tie = false;
    } else if (d === bestDistance) {
      tie = true;
    }
  }
  return best !== null && !tie && bestDistance <= maxDistance ? best : null;
}
