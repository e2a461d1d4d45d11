/**
 * Managing the bundled skills a home received (the `hermes skills reset | list-modified | diff |
 * opt-out | opt-in` operations): which copies the user changed, how they differ from the shipped
 * copy, forgetting or restoring one, and removing the untouched ones on opt-out.
 *
 * Guarantees: a copy the user edited is never deleted except by an explicit `reset --restore`;
 * nothing is deleted through a symbolic link or outside `<home>/skills`; names are checked before
 * any path is built from them.
 */
import { lstatSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { createTwoFilesPatch } from "diff";
import { atomicWriteFileSync } from "../../util/atomic-write.js";
import { type BundledSkill, copyDir, exists, listBundled, replaceDir, seedBundledSkills } from "./bundled.js";
import { skillDirHash } from "./dir-hash.js";
import { isInside, nameProblem, skillsRoot } from "./paths.js";
import { formatBundledManifest, manifestPath, readBundledManifest } from "./provenance.js";

/** An expected refusal: the message says what was wrong and what to do; exit 1 or 2. */
export class BundledSkillError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
    this.name = "BundledSkillError";
  }
}

function assertName(name: string): void {
  const problem = nameProblem(name, "skill name");
  if (problem) throw new BundledSkillError(problem, 2);
}

function writeManifest(home: string, manifest: ReadonlyMap<string, string>): void {
  atomicWriteFileSync(manifestPath(home), formatBundledManifest(manifest));
}

/** Where a bundled skill's home copy lives. */
export function homeCopyPath(home: string, skill: BundledSkill): string {
  return join(skillsRoot(home), ...skill.rel);
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Refuses a folder this module must not delete: a symbolic link, or a path whose real location is
 * not strictly below the real `<home>/skills` (a linked category folder, a bad join).
 */
function assertDeletable(home: string, dir: string): void {
  if (isSymlink(dir)) {
    throw new BundledSkillError(`${dir} is a symbolic link; it is left alone (remove the link yourself).`);
  }
  let root: string;
  let real: string;
  try {
    root = realpathSync(skillsRoot(home));
    real = join(realpathSync(dirname(dir)), dir.split(sep).pop() ?? "");
  } catch (error) {
    throw new BundledSkillError(`cannot resolve ${dir}: ${(error as Error).message}`);
  }
  if (real === root || !isInside(root, real)) {
    throw new BundledSkillError(`${dir} resolves outside ${root}; refusing to delete it.`);
  }
}

export interface BundledState {
  bundledDir: string;
  skills: BundledSkill[];
  byName: Map<string, BundledSkill>;
  manifest: Map<string, string>;
}

export function bundledState(home: string, bundledDir: string | undefined): BundledState {
  const skills = bundledDir ? listBundled(bundledDir) : [];
  return {
    bundledDir: bundledDir ?? "",
    skills,
    byName: new Map(skills.map((s) => [s.name, s])),
    manifest: readBundledManifest(home),
  };
}

/** State of one bundled skill's home copy. */
export type CopyState = "pristine" | "modified" | "missing" | "symlink" | "untracked";

export function copyState(home: string, state: BundledState, skill: BundledSkill): CopyState {
  const dest = homeCopyPath(home, skill);
  if (isSymlink(dest)) return "symlink";
  if (!exists(dest)) return "missing";
  const recorded = state.manifest.get(skill.name);
  if (!recorded) return "untracked";
  return skillDirHash(dest) === recorded ? "pristine" : "modified";
}

export interface ModifiedSkill {
  name: string;
  /** The home copy. */
  dir: string;
  /** The shipped copy. */
  bundledDir: string;
}

/** Bundled skills whose home copy differs from the hash recorded when it was last copied in. */
export function listModifiedBundled(home: string, bundledDir: string | undefined): ModifiedSkill[] {
  const state = bundledState(home, bundledDir);
  return state.skills
    .filter((skill) => copyState(home, state, skill) === "modified")
    .map((skill) => ({ name: skill.name, dir: homeCopyPath(home, skill), bundledDir: skill.dir }));
}

export interface ResetResult {
  action: "rebaselined" | "recopied" | "restored";
  message: string;
}

/**
 * `reset NAME`: makes a bundled skill track the shipped copy again. Without `restore`, the manifest
 * entry is renewed only when the home copy already equals the shipped copy (or is gone, in which
 * case it is copied back); a copy that still differs is refused, because forgetting its entry
 * would silence the "modified" flag while updates still could not reach it. With `restore`, the
 * home copy is replaced by the shipped one.
 */
export function resetBundledSkill(
  home: string,
  bundledDir: string | undefined,
  name: string,
  restore: boolean,
): ResetResult {
  assertName(name);
  const state = bundledState(home, bundledDir);
  const skill = state.byName.get(name);
  if (!skill) {
    if (state.manifest.has(name) && !restore) {
      state.manifest.delete(name);
      writeManifest(home, state.manifest);
      return {
        action: "rebaselined",
        message: `Forgot ${name}: it is no longer shipped; your copy is yours now.`,
      };
    }
    throw new BundledSkillError(
      `${name} is not a bundled skill${state.manifest.has(name) ? " any more (nothing to restore from)" : ""}; ` +
        "see `hermes skills list --source bundled`.",
    );
  }
  const dest = homeCopyPath(home, skill);
  const shipped = skillDirHash(skill.dir);
  if (isSymlink(dest)) {
    throw new BundledSkillError(
      `${dest} is a symbolic link; ${name} is not managed there, so nothing was reset.`,
    );
  }
  if (!exists(dest)) {
    copyDir(skill.dir, dest);
    state.manifest.set(name, shipped);
    writeManifest(home, state.manifest);
    return {
      action: "recopied",
      message: `Copied the shipped ${name} back into ${dest}; updates reach it again.`,
    };
  }
  if (restore) {
    assertDeletable(home, dest);
    replaceDir(skill.dir, dest);
    state.manifest.set(name, shipped);
    writeManifest(home, state.manifest);
    return { action: "restored", message: `Restored the shipped ${name}; your edits were replaced.` };
  }
  if (skillDirHash(dest) !== shipped) {
    throw new BundledSkillError(
      `${name} still differs from the shipped copy, so forgetting its record would only hide that; ` +
        `see \`hermes skills diff ${name}\`, then undo your edits or run \`hermes skills reset ${name} --restore\`.`,
    );
  }
  state.manifest.set(name, shipped);
  writeManifest(home, state.manifest);
  return {
    action: "rebaselined",
    message: `${name} matches the shipped copy again; updates reach it again.`,
  };
}

export interface FileDiff {
  path: string;
  status: "modified" | "added" | "removed" | "binary";
  /** Unified diff (shipped → yours) for a modified text file. */
  diff?: string;
}

/** Regular files below `dir`, as POSIX paths; links are listed apart and never followed. */
function regularFiles(dir: string): { files: string[]; links: string[] } {
  const files: string[] = [];
  const links: string[] = [];
  const walk = (rel: string): void => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isSymbolicLink()) links.push(child);
      else if (entry.isDirectory()) {
        if (entry.name !== "__pycache__" && entry.name !== ".git") walk(child);
      } else if (entry.isFile()) files.push(child);
    }
  };
  walk("");
  return { files: files.sort(), links: links.sort() };
}

function textOf(bytes: Buffer): string | undefined {
  if (bytes.includes(0)) return undefined;
  const text = bytes.toString("utf8");
  return text.includes("\uFFFD") ? undefined : text;
}

/** How the home copy of bundled skill `name` differs from the shipped copy (empty when equal). */
export function diffBundledSkill(
  home: string,
  bundledDir: string | undefined,
  name: string,
): { name: string; dir: string; diffs: FileDiff[]; links: string[] } {
  assertName(name);
  const state = bundledState(home, bundledDir);
  const skill = state.byName.get(name);
  if (!skill)
    throw new BundledSkillError(`${name} is not a bundled skill; there is no shipped copy to compare with.`);
  const dest = homeCopyPath(home, skill);
  if (isSymlink(dest)) throw new BundledSkillError(`${dest} is a symbolic link; it is not compared.`);
  if (!exists(dest))
    throw new BundledSkillError(`${name} has no copy in ${skillsRoot(home)} (deleted or opted out).`);
  const mine = regularFiles(dest);
  const stock = regularFiles(skill.dir);
  const all = [...new Set([...mine.files, ...stock.files])].sort();
  const diffs: FileDiff[] = [];
  for (const path of all) {
    const inMine = mine.files.includes(path);
    const inStock = stock.files.includes(path);
    if (!inStock) diffs.push({ path, status: "added" });
    else if (!inMine) diffs.push({ path, status: "removed" });
    else {
      const a = readFileSync(join(skill.dir, path));
      const b = readFileSync(join(dest, path));
      if (a.equals(b)) continue;
      const ta = textOf(a);
      const tb = textOf(b);
      if (ta === undefined || tb === undefined) diffs.push({ path, status: "binary" });
      else {
        const diff = createTwoFilesPatch(`shipped/${path}`, `yours/${path}`, ta, tb, undefined, undefined, {
          context: 3,
        });
        diffs.push({ path, status: "modified", diff: diff.replace(/^=+\n/, "") });
      }
    }
  }
  return { name, dir: dest, diffs, links: mine.links };
}

export interface RemovalResult {
  removed: string[];
  kept: Array<{ name: string; reason: string }>;
}

/**
 * Deletes the home copies of bundled skills (all, or `only`) that still equal what was copied in,
 * and forgets their manifest entries so an opt-in later copies them afresh. Edited copies,
 * links and skills the manifest does not track are kept. `dryRun` reports without deleting.
 */
export function removePristineBundled(
  home: string,
  bundledDir: string | undefined,
  options: { only?: string; dryRun?: boolean } = {},
): RemovalResult {
  const state = bundledState(home, bundledDir);
  const result: RemovalResult = { removed: [], kept: [] };
  const targets = options.only ? state.skills.filter((s) => s.name === options.only) : state.skills;
  for (const skill of targets) {
    const st = copyState(home, state, skill);
    if (st === "missing") continue;
    if (st !== "pristine") {
      const reason =
        st === "modified" ? "you edited it" : st === "symlink" ? "a symbolic link" : "not seeded by Hermes";
      result.kept.push({ name: skill.name, reason });
      continue;
    }
    if (!options.dryRun) {
      const dest = homeCopyPath(home, skill);
      try {
        assertDeletable(home, dest);
        rmSync(dest, { recursive: true, force: true });
      } catch (error) {
        result.kept.push({ name: skill.name, reason: (error as Error).message });
        continue;
      }
      state.manifest.delete(skill.name);
    }
    result.removed.push(skill.name);
  }
  if (!options.dryRun && result.removed.length > 0) writeManifest(home, state.manifest);
  return result;
}

/** Seeds now (after an opt-in) and returns the names copied in. */
export function seedNow(home: string, bundledDir: string | undefined): string[] {
  return seedBundledSkills(home, bundledDir).copied;
}
