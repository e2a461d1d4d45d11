/**
 * Reading skills from a folder on disk: the local-folder source, and the checkout a git source
 * clones into. A folder is either one skill (it holds SKILL.md) or a collection; a collection
 * yields the skill named by the caller, or a usage error listing what it holds.
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import { basename, join, relative, sep } from "node:path";
import {
  type BundleLimits,
  checkBundleFiles,
  DEFAULT_LIMITS,
  formatSize,
  HubError,
  readFrontmatter,
} from "./bundle.js";

/** Folders never copied from a source checkout. */
const SKIP_DIRS = new Set([".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv"]);
const SKIP_FILES = new Set([".DS_Store", "Thumbs.db"]);
const MAX_SEARCH_DEPTH = 6;

export interface FolderFiles {
  files: Map<string, Buffer>;
  warnings: string[];
}

/**
 * Every file under `dir` as relative POSIX paths, skipping VCS and dependency folders. Symlinks are
 * skipped with a warning (a link could pull in a file from outside the skill). Throws
 * {@link HubError} when the limits are exceeded or the layout rules are broken.
 */
export async function readSkillFolder(
  dir: string,
  limits: BundleLimits = DEFAULT_LIMITS,
): Promise<FolderFiles> {
  const files = new Map<string, Buffer>();
  const warnings: string[] = [];
  let total = 0;
  const walk = async (current: string): Promise<void> => {
    const entries = await readdir(current, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const full = join(current, entry.name);
      const rel = relative(dir, full).split(sep).join("/");
      if (entry.isSymbolicLink()) {
        warnings.push(`skipped symlink ${rel}`);
        continue;
      }
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) await walk(full);
        continue;
      }
      if (!entry.isFile() || SKIP_FILES.has(entry.name)) continue;
      const { size } = await lstat(full);
      if (size > limits.maxFileBytes) {
        throw new HubError(
          `${rel} is ${formatSize(size)}; the limit for one file is ${formatSize(limits.maxFileBytes)}.`,
        );
      }
      total += size;
      if (total > limits.maxTotalBytes) {
        throw new HubError(`the skill is larger than ${formatSize(limits.maxTotalBytes)} in total.`);
      }
      if (files.size >= limits.maxFiles) {
        throw new HubError(`the skill has more than ${limits.maxFiles} files.`);
      }
      files.set(rel, await readFile(full));
    }
  };
  await walk(dir);
  checkBundleFiles(files, limits);
  return { files, warnings };
}

export interface SkillCandidate {
  dir: string;
  /** Frontmatter name, else the folder name. */
  name: string;
  description: string;
}

/**
 * The skill folders at or below `root`: `root` itself when it holds SKILL.md, otherwise every
 * folder holding one (not looking inside a skill folder), sorted by name.
 */
export async function findSkillDirs(root: string): Promise<SkillCandidate[]> {
  const found: SkillCandidate[] = [];
  const visit = async (dir: string, depth: number): Promise<void> => {
    const skillMd = join(dir, "SKILL.md");
    const stat = await lstat(skillMd).catch(() => undefined);
    if (stat?.isFile()) {
      const fm = readFrontmatter(await readFile(skillMd, "utf8"));
      found.push({ dir, name: fm.name ?? basename(dir), description: fm.description ?? "" });
      return;
    }
    if (depth >= MAX_SEARCH_DEPTH) return;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith(".") || SKIP_DIRS.has(entry.name)) continue;
      await visit(join(dir, entry.name), depth + 1);
    }
  };
  await visit(root, 0);
  return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Picks one candidate: the only one, or the one whose name (or folder name) is `wanted`. Throws a
 * usage error listing the candidates when the choice is ambiguous or `wanted` is not among them.
 */
export function selectCandidate(
  candidates: readonly SkillCandidate[],
  wanted: string | undefined,
  where: string,
): SkillCandidate {
  if (candidates.length === 0) throw new HubError(`no SKILL.md found in ${where}.`, 2);
  const only = candidates.length === 1 ? candidates[0] : undefined;
  if (wanted === undefined && only) return only;
  if (wanted !== undefined) {
    const match =
      candidates.find((c) => c.name === wanted) ?? candidates.find((c) => basename(c.dir) === wanted);
    if (match) return match;
    if (only) return only; // One skill: --name renames it instead of selecting.
  }
  const list = candidates.map((c) => `  ${c.name}${c.description ? ` — ${c.description}` : ""}`).join("\n");
  const lead =
    wanted === undefined
      ? `${where} holds ${candidates.length} skills; pick one with --name NAME:`
      : `${where} holds no skill named "${wanted}". It holds:`;
  throw new HubError(`${lead}\n${list}`, 2);
}
