/**
 * Finds the skills a run can use: `<home>/skills` first (category folders, uncategorised skills,
 * nested trees such as `official/<category>/<name>`), then each `skills.external_dirs` entry.
 * Only SKILL.md frontmatter is parsed and supporting folders are listed, never read, so a tree of
 * a hundred skills discovers in a few milliseconds. Synchronous on purpose: it runs while the
 * system prompt is built and inside tool calls, and is bounded by the size of the tree.
 */
import { type Dirent, readdirSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, isAbsolute, join, resolve } from "node:path";
import { registeredSkillUsage } from "../stores.js";
import { skillDirHashCached } from "./dir-hash.js";
import { HeaderCache } from "./header-cache.js";
import { EXCLUDED_DIRS, MAX_NAME_LENGTH, posixRelative, SUPPORT_DIRS, skillsRoot } from "./paths.js";
import {
  type HubInstalls,
  readBundledManifest,
  readHubInstalls,
  readUsage,
  type SkillUsageRecord,
} from "./provenance.js";
import type { SkillMeta, SkillOrigin, SkillSource, SkillsConfig } from "./types.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface DiscoverOptions {
  /** HERMES_HOME; skills live in `<home>/skills`. */
  home: string;
  /** `skills.external_dirs` and `skills.disabled` from config.yaml. */
  config?: SkillsConfig | undefined;
  /** For `missingEnv` and for expanding `$VAR` / `~` in external dirs (default `process.env`). */
  env?: Env | undefined;
  /** OS to gate `platforms` against (default `process.platform`). */
  platform?: string | undefined;
  /** Also return skills named in `skills.disabled` (management and the CLI need them). */
  includeDisabled?: boolean;
  /** Also return skills whose `platforms` exclude this OS. */
  includeOtherPlatforms?: boolean;
  /**
   * Hash seeded skills to tell an unmodified copy (origin "bundled") from one the user edited
   * (origin "user"). Default true; a hash is recomputed only when a file changed (stat-keyed).
   */
  verifyBundled?: boolean;
  /**
   * The skill usage records (an agent-made skill's origin is "agent" from its `created_by`), read
   * by a caller that can wait for the home's store. Default: what the home's store has at hand
   * without waiting (`SkillUsageRecords.snapshot`, the database's last read), else `.usage.json`.
   */
  usage?: Readonly<Record<string, SkillUsageRecord>>;
}

export interface DiscoverResult {
  /** Sorted by category, then name. */
  skills: SkillMeta[];
  /** Problems worth showing to a person: missing external dirs, unreadable or broken SKILL.md files. */
  warnings: string[];
}

/** Folder depth below a skills root at which the walk stops (`official/<category>/<name>` is 3). */
const MAX_DEPTH = 5;
/** Linked files listed per skill; a skill folder holding a dataset must not slow discovery down. */
const MAX_LINKED_FILES = 200;

const PLATFORM_ALIASES: Record<string, string> = { macos: "darwin", osx: "darwin", windows: "win32" };

/** Whether a skill declaring `platforms` runs on `platform` (a `process.platform` value). */
export function matchesPlatform(platforms: readonly string[], platform: string): boolean {
  if (platforms.length === 0) return true;
  return platforms.some((p) => {
    const wanted = PLATFORM_ALIASES[p.toLowerCase()] ?? p.toLowerCase();
    return platform.startsWith(wanted);
  });
}

interface Root {
  dir: string;
  source: SkillSource;
}

/**
 * `skills.external_dirs` entries as absolute folders: `~` and `$VAR` / `${VAR}` expanded,
 * relative paths taken from the home (as Python Hermes does), duplicates and the home's own
 * skills folder dropped. Entries that do not exist come back in `missing`.
 */
export function resolveExternalDirs(
  home: string,
  dirs: readonly string[] | string | undefined,
  env: Env = process.env,
): { dirs: string[]; missing: string[] } {
  const list = typeof dirs === "string" ? [dirs] : Array.isArray(dirs) ? dirs : [];
  // Resolved only when there is something to compare it with: every session start asks, and a
  // missing skills folder makes realpath throw.
  if (list.length === 0) return { dirs: [], missing: [] };
  const own = safeRealpath(skillsRoot(home)) ?? resolve(skillsRoot(home));
  const seen = new Set<string>();
  const out: string[] = [];
  const missing: string[] = [];
  for (const entry of list) {
    if (typeof entry !== "string" || !entry.trim()) continue;
    const expanded = expandPath(entry.trim(), env);
    const abs = isAbsolute(expanded) ? resolve(expanded) : resolve(home, expanded);
    const real = safeRealpath(abs);
    if (!real || !isDirectory(real)) {
      missing.push(abs);
      continue;
    }
    if (real === own || seen.has(real)) continue;
    seen.add(real);
    out.push(abs);
  }
  return { dirs: out, missing };
}

function expandPath(path: string, env: Env): string {
  const vars = path.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (match, a, b) => {
    const value = env[(a ?? b) as string];
    return value === undefined ? match : value;
  });
  if (vars === "~" || vars.startsWith("~/") || vars.startsWith("~\\")) {
    return join(env.HOME || homedir(), vars.slice(1));
  }
  return vars;
}

function safeRealpath(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Entries of `dir` that are folders (symlinked folders included, flagged), sorted by name. */
function childDirs(dir: string, entries: readonly Dirent[]): { name: string; link: boolean }[] {
  const out: { name: string; link: boolean }[] = [];
  for (const entry of entries) {
    if (entry.isDirectory()) out.push({ name: entry.name, link: false });
    else if (entry.isSymbolicLink() && isDirectory(join(dir, entry.name)))
      out.push({ name: entry.name, link: true });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function readEntries(dir: string): Dirent[] | undefined {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
}

/** Files under the skill's supporting folders, relative to the skill folder, "/"-separated, sorted. */
export function listLinkedFiles(skillDir: string, entries?: readonly Dirent[]): string[] {
  const top = entries ?? readEntries(skillDir) ?? [];
  const out: string[] = [];
  const walk = (dir: string, prefix: string, depth: number) => {
    const list = readEntries(dir);
    if (!list) return;
    for (const entry of [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (out.length >= MAX_LINKED_FILES) return;
      if (entry.name.startsWith(".")) continue;
      const rel = `${prefix}/${entry.name}`;
      const abs = join(dir, entry.name);
      const isDir = entry.isDirectory() || (entry.isSymbolicLink() && isDirectory(abs));
      if (isDir) {
        if (depth < 4 && !EXCLUDED_DIRS.has(entry.name)) walk(abs, rel, depth + 1);
      } else {
        out.push(rel);
      }
    }
  };
  for (const { name } of childDirs(skillDir, top)) {
    if (SUPPORT_DIRS.includes(name)) walk(join(skillDir, name), name, 1);
  }
  return out;
}

interface Provenance {
  manifest: Map<string, string>;
  hub: HubInstalls;
  usage: Readonly<Record<string, SkillUsageRecord>>;
}

function originOf(
  prov: Provenance,
  name: string,
  dir: string,
  root: Root,
  verifyBundled: boolean,
): SkillOrigin {
  if (root.source === "home") {
    const folder = basename(dir);
    if (
      prov.hub.names.has(name) ||
      prov.hub.names.has(folder) ||
      prov.hub.paths.has(posixRelative(root.dir, dir))
    ) {
      return "hub";
    }
    const seeded = prov.manifest.get(name);
    if (seeded !== undefined) {
      // An empty hash is a v1 manifest line: nothing to compare against, so trust the record.
      if (!verifyBundled || seeded === "" || skillDirHashCached(dir) === seeded) return "bundled";
    }
  }
  return prov.usage[name]?.created_by === "agent" ? "agent" : "user";
}

/**
 * Every usable skill, home copies first (a home skill hides an external one of the same name),
 * sorted by category then name. Broken SKILL.md files, unreadable folders and missing external
 * dirs become warnings; discovery itself never throws for a bad tree.
 */
export function discoverSkills(options: DiscoverOptions): DiscoverResult {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const disabled = new Set(options.includeDisabled ? [] : (options.config?.disabled ?? []));
  const warnings: string[] = [];
  const external = resolveExternalDirs(options.home, options.config?.external_dirs, env);
  for (const dir of external.missing) {
    warnings.push(`skills.external_dirs: ${dir} does not exist or is not a folder (skipped).`);
  }
  const roots: Root[] = [
    { dir: skillsRoot(options.home), source: "home" },
    ...external.dirs.map((dir): Root => ({ dir, source: "external" })),
  ];
  const prov: Provenance = {
    manifest: readBundledManifest(options.home),
    hub: readHubInstalls(options.home),
    usage: options.usage ?? registeredSkillUsage(options.home)?.snapshot?.() ?? readUsage(options.home),
  };
  const verifyBundled = options.verifyBundled ?? true;
  const headers = new HeaderCache(options.home);
  const seen = new Set<string>();
  const skills: SkillMeta[] = [];

  const visitSkill = (root: Root, dir: string, rel: readonly string[], entries: readonly Dirent[]) => {
    const file = join(dir, "SKILL.md");
    const read = headers.read(file, basename(dir));
    if ("warning" in read) {
      warnings.push(read.warning);
      return;
    }
    const fm = read.header;
    const name = fm.name.slice(0, MAX_NAME_LENGTH);
    if (seen.has(name)) return;
    if (disabled.has(name)) return;
    const platforms = fm.platforms ?? [];
    if (!options.includeOtherPlatforms && !matchesPlatform(platforms, platform)) return;
    seen.add(name);
    const requiredEnv = fm.required_environment_variables ?? [];
    const meta = {
      name,
      description: fm.description,
      category: rel.length >= 2 ? (rel[0] as string) : (fm.category ?? ""),
      tags: fm.tags ?? [],
      ...(fm.version !== undefined ? { version: fm.version } : {}),
      platforms,
      dir,
      file,
      source: root.source,
      origin: originOf(prov, name, dir, root, verifyBundled),
      requiredEnv,
      missingEnv: requiredEnv.filter((v) => !env[v.name]).map((v) => v.name),
    } as SkillMeta;
    // Listed on first access: most callers (the prompt index, skills_list) never look at them.
    Object.defineProperty(meta, "linkedFiles", {
      enumerable: true,
      configurable: true,
      get() {
        const files = listLinkedFiles(dir, entries);
        Object.defineProperty(meta, "linkedFiles", { value: files, enumerable: true, writable: true });
        return files;
      },
    });
    skills.push(meta);
  };

  for (const root of roots) {
    // Only a symlinked folder can lead back into the tree; remember where links resolve.
    const visited = new Set<string>([safeRealpath(root.dir) ?? root.dir]);
    const walk = (dir: string, rel: string[]) => {
      const entries = readEntries(dir);
      if (!entries) {
        if (rel.length > 0) warnings.push(`${dir}: cannot be read; skills below it were skipped.`);
        return;
      }
      const isSkill = entries.some((e) => e.name === "SKILL.md" && !e.isDirectory());
      if (isSkill) visitSkill(root, dir, rel, entries);
      if (rel.length >= MAX_DEPTH) return;
      for (const { name, link } of childDirs(dir, entries)) {
        if (name.startsWith(".") || EXCLUDED_DIRS.has(name)) continue;
        if (isSkill && SUPPORT_DIRS.includes(name)) continue;
        const child = join(dir, name);
        if (link) {
          const real = safeRealpath(child);
          if (!real || visited.has(real)) continue;
          visited.add(real);
        }
        walk(child, [...rel, name]);
      }
    };
    walk(root.dir, []);
  }

  headers.flush();
  skills.sort((a, b) =>
    a.category !== b.category
      ? a.category < b.category
        ? -1
        : 1
      : a.name < b.name
        ? -1
        : a.name > b.name
          ? 1
          : 0,
  );
  return { skills, warnings };
}

/**
 * The skill called `name` (also accepted: `category/name`), or undefined. Takes the same options
 * as {@link discoverSkills}, so a disabled skill is not found unless `includeDisabled` is set.
 */
export function findSkill(name: string, options: DiscoverOptions): SkillMeta | undefined {
  const wanted = name.trim();
  const slash = wanted.lastIndexOf("/");
  const bare = slash >= 0 ? wanted.slice(slash + 1) : wanted;
  const category = slash >= 0 ? wanted.slice(0, slash) : undefined;
  const { skills } = discoverSkills(options);
  return skills.find((s) => s.name === bare && (category === undefined || s.category === category));
}
