/** "Did you mean" suggestions for a path that does not exist. */
import { readdir } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { editDistance } from "../../util/edit-distance.js";

/** Directories larger than this are not scanned for suggestions: the scan would cost more than it helps. */
const MAX_ENTRIES = 10_000;

/**
 * Up to `max` names in `dir` that resemble `name`: same name in another case, a name within a
 * small edit distance, or one containing the other. Best first; empty when the directory is unreadable.
 */
export async function similarNames(
  dir: string,
  name: string,
  max = 3,
  list: (dir: string) => Promise<string[]> = (d) => readdir(d),
): Promise<string[]> {
  let entries: string[];
  try {
    entries = await list(dir);
  } catch {
    return [];
  }
  if (entries.length > MAX_ENTRIES) return [];
  const want = name.toLowerCase();
  const threshold = Math.max(2, Math.floor(want.length / 3));
  const scored: { name: string; score: number }[] = [];
  for (const entry of entries) {
    const lower = entry.toLowerCase();
    const distance = editDistance(lower, want);
    const contains = want.length >= 3 && lower.length >= 3 && (lower.includes(want) || want.includes(lower));
    if (distance <= threshold || contains)
      scored.push({ name: entry, score: contains ? Math.min(distance, 3) : distance });
  }
  scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return scored.slice(0, max).map((s) => s.name);
}

/** A "File not found" error naming similar files next to it, written with the path as the model gave it. */
export async function fileNotFoundError(
  argPath: string,
  abs: string,
  list?: (dir: string) => Promise<string[]>,
): Promise<Error> {
  const suggestions = await similarNames(dirname(abs), basename(abs), 3, list);
  if (suggestions.length === 0) return new Error(`File not found: ${argPath}`);
  const slash = argPath.lastIndexOf("/");
  const prefix = slash === -1 ? "" : argPath.slice(0, slash + 1);
  return new Error(
    `File not found: ${argPath}. Did you mean: ${suggestions.map((s) => prefix + s).join(", ")}?`,
  );
}
