/**
 * Parsed SKILL.md headers, cached in memory and in `<home>/cache/skills-frontmatter.json`, keyed
 * by each file's inode, size and times. YAML parsing dominates discovery (the `yaml` package needs
 * ~1-3 ms per file before the JIT warms up, so a cold start with a hundred skills would spend a few
 * hundred milliseconds on it); with the cache a start re-parses only the files that changed. The
 * cache is derived data: a missing, stale or broken file is simply rebuilt, and failing to write it
 * (read-only home) only costs speed.
 */
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { atomicWriteFileSync } from "../../util/atomic-write.js";
import { parseSkillMarkdown } from "./frontmatter.js";
import type { RequiredEnvVar } from "./types.js";

/** What discovery needs from a SKILL.md frontmatter. */
export interface SkillHeader {
  name: string;
  description: string;
  version?: string;
  category?: string;
  tags?: string[];
  platforms?: string[];
  required_environment_variables?: RequiredEnvVar[];
}

export type HeaderResult = { header: SkillHeader } | { warning: string };

interface Entry {
  key: string;
  result: HeaderResult;
}

const CACHE_VERSION = 1;
/** Per SKILL.md path, shared by every home in the process (paths are absolute). */
const memory = new Map<string, Entry>();
/** Homes whose cache file was loaded into `memory`. */
const loadedHomes = new Set<string>();

export const headerCachePath = (home: string): string => join(home, "cache", "skills-frontmatter.json");

/** Forgets the in-memory cache, as a new process would (tests; long-lived processes never need it). */
export function clearHeaderMemory(): void {
  memory.clear();
  loadedHomes.clear();
}

function loadHome(home: string): void {
  if (loadedHomes.has(home)) return;
  loadedHomes.add(home);
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(headerCachePath(home), "utf8"));
  } catch {
    return;
  }
  const { version, entries } = (data ?? {}) as { version?: unknown; entries?: unknown };
  if (version !== CACHE_VERSION || !entries || typeof entries !== "object") return;
  for (const [file, entry] of Object.entries(entries as Record<string, unknown>)) {
    const e = entry as Partial<Entry> | null;
    if (!memory.has(file) && e && typeof e.key === "string" && e.result && typeof e.result === "object") {
      memory.set(file, { key: e.key, result: e.result });
    }
  }
}

function toHeader(text: string, file: string, folder: string): SkillHeader {
  const fm = parseSkillMarkdown(text, file, { fallbackName: folder }).frontmatter;
  const header: SkillHeader = { name: fm.name, description: fm.description };
  if (fm.version !== undefined) header.version = fm.version;
  if (fm.category) header.category = fm.category;
  if (fm.tags) header.tags = fm.tags;
  if (fm.platforms) header.platforms = fm.platforms;
  if (fm.required_environment_variables)
    header.required_environment_variables = fm.required_environment_variables;
  return header;
}

/**
 * One discovery's view of the cache for `home`: {@link read} returns the header of a SKILL.md
 * (parsing it only when it changed), {@link flush} saves the entries this discovery used when any
 * of them changed, dropping those of files that no longer exist.
 */
export class HeaderCache {
  private readonly used = new Map<string, Entry>();
  private dirty = false;
  constructor(private readonly home: string) {
    loadHome(home);
  }

  read(file: string, folder: string): HeaderResult {
    let key: string;
    try {
      const st = statSync(file);
      key = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}:${folder}`;
    } catch (error) {
      return {
        warning: `${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}); skipped.`,
      };
    }
    const hit = memory.get(file);
    if (hit && hit.key === key) {
      this.used.set(file, hit);
      return hit.result;
    }
    let result: HeaderResult;
    try {
      result = { header: toHeader(readFileSync(file, "utf8"), file, folder) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      result = {
        warning: code
          ? `${file}: cannot be read (${code}); skipped.`
          : `${(error as Error).message} The skill was skipped.`,
      };
    }
    const entry = { key, result };
    memory.set(file, entry);
    this.used.set(file, entry);
    this.dirty = true;
    return result;
  }

  /** Writes the cache file when something changed; errors are ignored (the cache is optional). */
  flush(): void {
    if (!this.dirty) return;
    this.dirty = false;
    const path = headerCachePath(this.home);
    try {
      mkdirSync(dirname(path), { recursive: true });
      const entries = Object.fromEntries([...this.used].sort(([a], [b]) => (a < b ? -1 : 1)));
      atomicWriteFileSync(path, JSON.stringify({ version: CACHE_VERSION, entries }));
    } catch {
      // A read-only home: discovery still works, only slower next time.
    }
  }
}
