/**
 * The skills that ship with Hermes-TS (`skills/` at the package root) and their seeding into a
 * home, following Python Hermes's manifest contract (tools/skills_sync.py) so either
 * implementation can seed the same home:
 *
 * - `<home>/skills/.bundled_manifest` holds `name:hash` lines, the hash of each skill as it was
 *   last copied in.
 * - A skill not in the manifest is copied in (unless the user already has a folder there).
 * - A skill in the manifest whose bundled copy changed is updated only when the home copy still
 *   has the recorded hash; a copy the user edited is kept, and one the user deleted stays deleted.
 * - An unchanged bundled skill costs one hash of its (small) bundled folder; the home copy is not
 *   read, and the manifest is rewritten only when an entry changed.
 * - Start-up fast path: when neither the bundled files nor the manifest changed since the last
 *   seeding (a stat fingerprint kept in `<home>/cache/bundled-skills.stamp`), nothing can be due
 *   and the work above is skipped.
 * - Opt-outs (bundled-opt-out.ts): a home marked `.no-bundled-skills` gets none, and a skill named
 *   in `skills/.curator_suppressed` is never copied back, as in Python Hermes.
 */

import { createHash } from "node:crypto";
import {
  copyFileSync,
  type Dirent,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { atomicWriteFileSync } from "../../util/atomic-write.js";
import { isOptedOut, optOutMarkerPath, readSuppressed, suppressedPath } from "./bundled-opt-out.js";
import { skillDirHash } from "./dir-hash.js";
import { parseSkillMarkdown } from "./frontmatter.js";
import { EXCLUDED_DIRS, SUPPORT_DIRS, skillsRoot } from "./paths.js";
import { formatBundledManifest, manifestPath, readBundledManifest } from "./provenance.js";

const PACKAGE_NAME = "hermes-agent";
const RUNTIME_CACHE_DIRS = new Set(["__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"]);

/**
 * The package's `skills/` folder, found by walking up from this module to the folder whose
 * package.json is named "hermes-agent" (works from `src/` under vitest, `dist/lib/` and the
 * bundled `dist/cli/hermes.cjs`). `HERMES_BUNDLED_SKILLS` overrides it, as in Python Hermes.
 * Undefined when neither exists.
 */
export function bundledSkillsDir(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  const override = env.HERMES_BUNDLED_SKILLS?.trim();
  if (override) return existsSync(override) ? override : undefined;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg)) {
      try {
        const { name } = JSON.parse(readFileSync(pkg, "utf8")) as { name?: unknown };
        if (name === PACKAGE_NAME) {
          const skills = join(dir, "skills");
          return existsSync(skills) ? skills : undefined;
        }
      } catch {
        // An unreadable package.json on the way up is not ours; keep walking.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

export interface SeedResult {
  /** Skills copied in for the first time. */
  copied: string[];
  /** Unmodified home copies replaced by a newer bundled version. */
  updated: string[];
  /** Home copies the user edited: kept, and no longer updated. */
  userModified: string[];
  /** Skills left alone: unchanged, deleted by the user, or shadowed by a user folder or a symlink. */
  skipped: number;
  /** Manifest entries dropped because the skill is no longer bundled and no copy remains. */
  cleaned: string[];
  totalBundled: number;
  /** Skills that could not be copied (retried at the next start). */
  errors: string[];
  /** Nothing changed since the last seeding, so nothing was examined (the start-up fast path). */
  upToDate: boolean;
  /** The home opted out of bundled skills (`hermes skills opt-out`): nothing was seeded. */
  optedOut: boolean;
  /** Skills the user opted out of one by one (`hermes skills opt-out NAME`): not seeded. */
  suppressed: string[];
}

export interface BundledSkill {
  name: string;
  dir: string;
  /** Path segments below the bundled root, reproduced below `<home>/skills`. */
  rel: string[];
}

/** Every skill folder under `root`, named by its frontmatter (or folder) name. */
export function listBundled(root: string): BundledSkill[] {
  const out: BundledSkill[] = [];
  const walk = (dir: string, rel: string[]) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    const isSkill = entries.some((e) => e.name === "SKILL.md" && e.isFile());
    if (isSkill && rel.length > 0) {
      const folder = rel[rel.length - 1] as string;
      let name = folder;
      try {
        name = parseSkillMarkdown(readFileSync(join(dir, "SKILL.md"), "utf8"), undefined, {
          fallbackName: folder,
        }).frontmatter.name;
      } catch {
        // A broken bundled SKILL.md is still seeded under its folder name; discovery will warn.
      }
      out.push({ name, dir, rel });
    }
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith(".") || EXCLUDED_DIRS.has(entry.name)) continue;
      if (isSkill && SUPPORT_DIRS.includes(entry.name)) continue;
      walk(join(dir, entry.name), [...rel, entry.name]);
    }
  };
  walk(root, []);
  return out.sort((a, b) => (a.rel.join("/") < b.rel.join("/") ? -1 : 1));
}

/** Copies a skill folder (regular files and folders only; symlinks and runtime caches are skipped). */
export function copyDir(src: string, dest: string): void {
  mkdirSync(dest, { recursive: true });
  for (const entry of readdirSync(src, { withFileTypes: true })) {
    const from = join(src, entry.name);
    const to = join(dest, entry.name);
    if (entry.isDirectory()) {
      if (!RUNTIME_CACHE_DIRS.has(entry.name)) copyDir(from, to);
    } else if (entry.isFile()) {
      copyFileSync(from, to);
    }
  }
}

/** Replaces `dest` with a copy of `src` through a `.bak` sibling, restoring it if the copy fails. */
export function replaceDir(src: string, dest: string): void {
  const backup = `${dest}.bak`;
  rmSync(backup, { recursive: true, force: true });
  renameSync(dest, backup);
  try {
    copyDir(src, dest);
  } catch (error) {
    rmSync(dest, { recursive: true, force: true });
    renameSync(backup, dest);
    throw error;
  }
  rmSync(backup, { recursive: true, force: true });
}

export function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Names of the skills present in the home tree (and its `.archive`), for manifest cleaning. */
function presentNames(root: string): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string, depth: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    const isSkill = entries.some((e) => e.name === "SKILL.md");
    if (isSkill) {
      const folder = dir.split(sep).pop() as string;
      names.add(folder);
      try {
        names.add(
          parseSkillMarkdown(readFileSync(join(dir, "SKILL.md"), "utf8"), undefined, { fallbackName: folder })
            .frontmatter.name,
        );
      } catch {
        // The folder name is enough.
      }
    }
    if (depth >= 5) return;
    for (const entry of entries) {
      if (!entry.isDirectory() || EXCLUDED_DIRS.has(entry.name)) continue;
      if (entry.name.startsWith(".") && !(depth === 0 && entry.name === ".archive")) continue;
      if (isSkill && SUPPORT_DIRS.includes(entry.name)) continue;
      walk(join(dir, entry.name), depth + 1);
    }
  };
  walk(root, 0);
  return names;
}

/**
 * Copies bundled skills into `<home>/skills/<category>/<name>/` and keeps them current (see the
 * module comment for the rules). Runs at every start; returns what it did. Never throws for one
 * bad skill (it lands in `errors`); a missing bundled folder is a no-op.
 */
export function seedBundledSkills(
  home: string,
  bundledDir: string | undefined = bundledSkillsDir(),
): SeedResult {
  const result: SeedResult = {
    copied: [],
    updated: [],
    userModified: [],
    skipped: 0,
    cleaned: [],
    totalBundled: 0,
    errors: [],
    upToDate: false,
    optedOut: false,
    suppressed: [],
  };
  if (!bundledDir || !existsSync(bundledDir)) return result;
  if (isOptedOut(home)) return { ...result, optedOut: true };
  const stampFile = join(home, "cache", "bundled-skills.stamp");
  const stamp = seedStamp(bundledDir, home);
  if (stamp !== undefined && readText(stampFile) === stamp) return { ...result, upToDate: true };
  const root = skillsRoot(home);
  mkdirSync(root, { recursive: true });
  const bundled = listBundled(bundledDir);
  result.totalBundled = bundled.length;
  const manifest = readBundledManifest(home);
  const before = formatBundledManifest(manifest);
  const suppressed = readSuppressed(home);
  const shared = sharedSkillNames(root);

  for (const skill of bundled) {
    const dest = join(root, ...skill.rel);
    if (suppressed.has(skill.name)) {
      result.suppressed.push(skill.name);
      continue;
    }
    if (shared.has(skill.name)) {
      result.skipped++; // The shared backend's copy: its own seeding updates it for every instance.
      continue;
    }
    try {
      if (exists(dest) && lstatSync(dest).isSymbolicLink()) {
        result.skipped++; // A link points at a tree this seeding does not own.
        continue;
      }
      // An update interrupted between the move and the copy leaves the only copy in `.bak`.
      if (!exists(dest) && exists(`${dest}.bak`)) renameSync(`${dest}.bak`, dest);
      const bundledHash = skillDirHash(skill.dir);
      const recorded = manifest.get(skill.name);
      if (recorded === undefined) {
        if (exists(dest)) {
          // Never overwrite a same-named skill the user has; adopt it only when byte-identical.
          if (skillDirHash(dest) === bundledHash) manifest.set(skill.name, bundledHash);
          result.skipped++;
        } else {
          copyDir(skill.dir, dest);
          manifest.set(skill.name, bundledHash);
          result.copied.push(skill.name);
        }
        continue;
      }
      if (!exists(dest)) {
        result.skipped++; // The user deleted it; do not bring it back.
        continue;
      }
      if (recorded === bundledHash) {
        result.skipped++;
        continue;
      }
      const homeHash = skillDirHash(dest);
      if (recorded === "") {
        // v1 manifest line: no way to tell an edit from an old version, so baseline the home copy.
        manifest.set(skill.name, homeHash);
        result.skipped++;
        continue;
      }
      if (homeHash !== recorded) {
        result.userModified.push(skill.name);
        continue;
      }
      replaceDir(skill.dir, dest);
      manifest.set(skill.name, bundledHash);
      result.updated.push(skill.name);
    } catch (error) {
      result.errors.push(`${skill.name}: ${(error as Error).message}`);
    }
  }

  const shipped = new Set(bundled.map((s) => s.name));
  const removed = [...manifest.keys()].filter((name) => !shipped.has(name));
  if (removed.length > 0) {
    // A dropped skill that still has a copy keeps its entry: it is that copy's only provenance.
    const present = presentNames(root);
    for (const name of removed) {
      if (!present.has(name)) {
        manifest.delete(name);
        result.cleaned.push(name);
      }
    }
  }

  seedCategoryDescriptions(bundledDir, root);
  const after = formatBundledManifest(manifest);
  if (after !== before || !existsSync(manifestPath(home))) atomicWriteFileSync(manifestPath(home), after);
  if (result.errors.length === 0) writeStamp(stampFile, seedStamp(bundledDir, home));
  return result;
}

/** The mirror's record of the skills a shared backend (PostgreSQL) holds; none on a file home. */
export const SHARED_MIRROR_FILE = ".hermes-mirror.json";

/**
 * Names of the skills a shared backend keeps in its database and mirrors into `root` (read from
 * {@link SHARED_MIRROR_FILE}); empty when the file is absent, as on every file home.
 */
export function sharedSkillNames(root: string): Set<string> {
  try {
    const data = JSON.parse(readFileSync(join(root, SHARED_MIRROR_FILE), "utf8")) as { skills?: unknown };
    return data.skills && typeof data.skills === "object" ? new Set(Object.keys(data.skills)) : new Set();
  } catch {
    return new Set();
  }
}

/**
 * A fingerprint of everything seeding depends on that can change between starts: every bundled
 * file (path, size, mtime) and the home's manifest (size, mtime). Undefined when it cannot be
 * computed, which forces a full seeding.
 */
function seedStamp(bundledDir: string, home: string): string | undefined {
  try {
    const hash = createHash("sha256");
    const walk = (dir: string) => {
      const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
      for (const entry of entries) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else {
          const st = statSync(path);
          hash.update(`${path}\0${st.size}\0${st.mtimeMs}\n`);
        }
      }
    };
    walk(bundledDir);
    const manifest = statSync(manifestPath(home));
    hash.update(`manifest\0${manifest.size}\0${manifest.mtimeMs}`);
    // The opt-out files change what is due, so they are part of the fingerprint.
    for (const file of [optOutMarkerPath(home), suppressedPath(home)]) {
      const st = statSync(file, { throwIfNoEntry: false });
      hash.update(st ? `\0${file}\0${st.size}\0${st.mtimeMs}` : `\0${file}\0absent`);
    }
    return hash.digest("hex");
  } catch {
    return undefined;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function writeStamp(path: string, stamp: string | undefined): void {
  if (stamp === undefined) return;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, stamp);
  } catch {
    // Only an optimisation: the next start seeds the slow way.
  }
}

/** Copies category `DESCRIPTION.md` files the home does not have yet. */
function seedCategoryDescriptions(bundledDir: string, root: string): void {
  let categories: Dirent[];
  try {
    categories = readdirSync(bundledDir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of categories) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const from = join(bundledDir, entry.name, "DESCRIPTION.md");
    const to = join(root, entry.name, "DESCRIPTION.md");
    if (existsSync(from) && !existsSync(to) && existsSync(dirname(to))) {
      try {
        copyFileSync(from, to);
      } catch {
        // Cosmetic; the next start tries again.
      }
    }
  }
}

/** `HERMES_OPTIONAL_SKILLS`, else `optional-skills/` beside the package's `skills/`. */
export function optionalSkillsDir(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const override = env.HERMES_OPTIONAL_SKILLS?.trim();
  if (override) return existsSync(override) ? override : undefined;
  const bundled = bundledSkillsDir({ ...env, HERMES_BUNDLED_SKILLS: undefined });
  const dir = bundled ? join(dirname(bundled), "optional-skills") : undefined;
  return dir && existsSync(dir) ? dir : undefined;
}
