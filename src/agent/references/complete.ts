/**
 * Tab completion for `@` references and paths: `@f` → `@file:` / `@folder:`, `@file:src/c` →
 * `@file:src/cli/`, `@folder:` → folders only. Candidates always extend what is typed, because
 * the line editor only appends (it never rewrites the typed word).
 */
import { readdir, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/** The reference words offered after a bare `@`. */
const KINDS = ["@file:", "@folder:", "@diff", "@staged", "@git:", "@url:"] as const;
/** More candidates than this are cut (a huge folder must not flood the terminal). */
const MAX_CANDIDATES = 100;

export interface PathCompletionOptions {
  cwd: string;
  /** Offer folders only (`@folder:`). */
  foldersOnly?: boolean;
  /** HOME, for `~/`. */
  home?: string;
}

/**
 * Completion of the `@` word the line ends with: `[candidates, the word]`, or null when the line
 * does not end in one (the caller completes something else then).
 */
export async function completeReference(
  line: string,
  cwd: string,
  home?: string,
): Promise<[string[], string] | null> {
  const match = /(?:^|\s)(@\S*)$/.exec(line);
  const word = match?.[1];
  if (word === undefined) return null;
  const kind = /^@(file|folder):(.*)$/.exec(word);
  if (!kind) return [KINDS.filter((k) => k.startsWith(word) && k !== word), word];
  const prefix = `@${kind[1]}:`;
  const typed = kind[2] ?? "";
  // A quoted value is finished; nothing to complete inside quotes.
  if (/^[`"']/.test(typed)) return [[], word];
  const paths = await completePath(typed, {
    cwd,
    foldersOnly: kind[1] === "folder",
    ...(home ? { home } : {}),
  });
  return [paths.map((p) => `${prefix}${p}`), word];
}

/**
 * Entries of the folder `typed` points into whose names begin with its last part, written as
 * typed plus the rest (`src/c` → `src/cli/`, `src/cli.ts`); folders end in `/`. Dot entries only
 * when the part typed starts with a dot. Names are offered as they are: one holding a space must
 * be quoted by hand (`@file:"my notes.md"`), since a candidate may only extend what is typed.
 * Unreadable folders give none.
 */
export async function completePath(typed: string, options: PathCompletionOptions): Promise<string[]> {
  const slash = typed.lastIndexOf("/");
  const dirPart = slash >= 0 ? typed.slice(0, slash + 1) : "";
  const namePart = slash >= 0 ? typed.slice(slash + 1) : typed;
  const home = options.home ?? homedir();
  const expanded = dirPart.startsWith("~/") ? join(home, dirPart.slice(2)) : dirPart;
  const folder = isAbsolute(expanded) ? expanded : resolve(options.cwd, expanded || ".");
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.name.startsWith(namePart)) continue;
    if (entry.name.startsWith(".") && !namePart.startsWith(".")) continue;
    // A symlink to a folder counts as a folder, as the shell's completion does.
    const isFolder =
      entry.isDirectory() || (entry.isSymbolicLink() && (await isFolderPath(join(folder, entry.name))));
    if (options.foldersOnly && !isFolder) continue;
    const full = `${dirPart}${entry.name}`;
    out.push(isFolder ? `${full}/` : full);
    if (out.length >= MAX_CANDIDATES) break;
  }
  return out;
}

async function isFolderPath(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}
