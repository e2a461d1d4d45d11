/**
 * Maps a tool name the model got slightly wrong to a real one: case, separators, namespace
 * prefixes ("functions.read_file"), camelCase, and small typos. Pure.
 */

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
    const d = levenshtein(wanted, canon(candidate));
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

export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}
