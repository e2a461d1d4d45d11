/**
 * Who made each skill and how it is used, from the three files Python Hermes keeps next to the
 * skills: `.bundled_manifest` (seeded skills and their origin hash), `.hub/lock.json` (hub
 * installs, written by the hub) and `.usage.json` (per-skill counters and `created_by`). Readers
 * are tolerant: a missing or broken file reads as empty and never fails a caller.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { withFileLock } from "../../util/file-lock.js";
import { StampedFileCache } from "../../util/stamped-cache.js";
import { skillsRoot } from "./paths.js";

export const MANIFEST_FILE = ".bundled_manifest";
export const USAGE_FILE = ".usage.json";
export const HUB_LOCK_FILE = join(".hub", "lock.json");

export const manifestPath = (home: string): string => join(skillsRoot(home), MANIFEST_FILE);
export const usagePath = (home: string): string => join(skillsRoot(home), USAGE_FILE);
export const hubLockPath = (home: string): string => join(skillsRoot(home), HUB_LOCK_FILE);

/**
 * `.bundled_manifest`: one `name:hash` line per seeded skill (Python's v2 format). A plain `name`
 * line (v1) reads with an empty hash, which the next seeding re-baselines.
 */
export function readBundledManifest(home: string): Map<string, string> {
  let parsed: ReadonlyMap<string, string> | undefined;
  try {
    parsed = manifests.read(manifestPath(home));
  } catch {
    parsed = undefined;
  }
  // A copy: seeding edits the map it gets and writes it back.
  return new Map(parsed ?? []);
}

// Discovery reads these three files at every session start (the skills index); each is parsed
// again only when it changed (util/stamped-cache.ts), and a missing one costs one stat.
const manifests = new StampedFileCache((bytes) => parseBundledManifest(bytes.toString("utf8")), { max: 16 });
const hubLocks = new StampedFileCache((bytes) => bytes.toString("utf8"), { max: 16 });
const usageFiles = new StampedFileCache((bytes) => bytes.toString("utf8"), { max: 16 });

function parseBundledManifest(text: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const raw of text.replace(/^\uFEFF/, "").split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    const colon = line.indexOf(":");
    if (colon < 0) entries.set(line, "");
    else entries.set(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  return entries;
}

/** The manifest text for `entries`, sorted by name as Python writes it. */
export function formatBundledManifest(entries: ReadonlyMap<string, string>): string {
  return [...entries]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, hash]) => `${name}:${hash}\n`)
    .join("");
}

export interface HubInstalls {
  /** Lock names (the skill folder name the hub installed). */
  names: Set<string>;
  /** `install_path` values relative to `<home>/skills`, with "/" separators. */
  paths: Set<string>;
}

/** Names and install paths from `.hub/lock.json` (`{version, installed: {name: {install_path, ...}}}`). */
export function readHubInstalls(home: string): HubInstalls {
  const result: HubInstalls = { names: new Set(), paths: new Set() };
  let data: unknown;
  try {
    const text = hubLocks.read(hubLockPath(home));
    if (text === undefined) return result;
    data = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch {
    return result;
  }
  const installed = (data as { installed?: unknown } | null)?.installed;
  if (!installed || typeof installed !== "object" || Array.isArray(installed)) return result;
  for (const [name, entry] of Object.entries(installed as Record<string, unknown>)) {
    result.names.add(name);
    const path = (entry as { install_path?: unknown } | null)?.install_path;
    if (typeof path === "string" && path.trim()) {
      result.paths.add(
        path
          .trim()
          .replaceAll("\\", "/")
          .replace(/^\/+|\/+$/g, ""),
      );
    }
  }
  return result;
}

/** One skill's record in `.usage.json`; fields Python adds later are kept as they are. */
export interface SkillUsageRecord {
  created_by?: string | null;
  created_at?: string | null;
  use_count?: number;
  view_count?: number;
  patch_count?: number;
  last_used_at?: string | null;
  last_viewed_at?: string | null;
  last_patched_at?: string | null;
  last_activity_at?: string | null;
  state?: string;
  pinned?: boolean;
  archived_at?: string | null;
  [key: string]: unknown;
}

/** `.usage.json` as a name → record map; empty when missing or unreadable. */
export function readUsage(home: string): Record<string, SkillUsageRecord> {
  return readUsageFile(home) ?? {};
}

/** The usage map; `{}` when the file is missing, undefined when it exists but cannot be parsed. */
function readUsageFile(home: string): Record<string, SkillUsageRecord> | undefined {
  let data: unknown;
  try {
    // The text is cached; parsed each time, so callers own the objects they get (usage updates
    // edit and write them back).
    const text = usageFiles.read(usagePath(home));
    if (text === undefined) return {};
    data = JSON.parse(text);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? {} : undefined;
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) return undefined;
  const clean: Record<string, SkillUsageRecord> = {};
  for (const [name, record] of Object.entries(data as Record<string, unknown>)) {
    if (record && typeof record === "object" && !Array.isArray(record))
      clean[name] = record as SkillUsageRecord;
  }
  return clean;
}

export type SkillUsageEvent = "create" | "view" | "use" | "patch" | "delete";

export interface RecordUsageOptions {
  /**
   * For "create": the `created_by` marker. As in Python Hermes it is the curator's opt-in flag,
   * not authorship: "agent" only for skills the autonomous learning loop wrote (background review,
   * curator consolidation); null for a skill the user wrote or asked the agent to write, which the
   * curator never touches. Default null.
   */
  createdBy?: "agent" | null;
  now?: () => Date;
}

/** Python's `datetime.now(timezone.utc).isoformat()` shape. */
export function isoNow(now: () => Date): string {
  return now().toISOString().replace("Z", "+00:00");
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/**
 * Records a skill event in `.usage.json` under the file lock, keeping every field it does not
 * touch. As in Python Hermes, bundled and hub-installed skills are not recorded (the file tracks
 * skills the agent or user made), and "delete" drops the record. Best effort: resolves `false`
 * instead of throwing when the file cannot be written or does not parse (it is never replaced
 * then), so telemetry never fails a tool call.
 */
export async function recordSkillUsage(
  home: string,
  name: string,
  event: SkillUsageEvent,
  options: RecordUsageOptions = {},
): Promise<boolean> {
  if (!name) return false;
  const now = options.now ?? (() => new Date());
  try {
    if (event !== "create" && event !== "delete" && isUntrackedSkill(home, name)) return false;
    const path = usagePath(home);
    mkdirSync(skillsRoot(home), { recursive: true });
    return await withFileLock(path, async () => {
      // A file that does not parse is left as it is (someone may be fixing it by hand).
      const data = readUsageFile(home);
      if (!data) return false;
      if (event === "delete") {
        if (!(name in data)) return true;
        delete data[name];
      } else {
        data[name] = applyUsageEvent(data[name], event, isoNow(now), options.createdBy ?? null);
      }
      await atomicWriteFile(path, JSON.stringify(sortKeys(data), null, 2));
      return true;
    });
  } catch {
    return false;
  }
}

/** Whether `name` is a bundled or hub-installed skill of `home`, whose use is not recorded. */
export function isUntrackedSkill(home: string, name: string): boolean {
  return readBundledManifest(home).has(name) || readHubInstalls(home).names.has(name);
}

/**
 * `record` (or a fresh one) after one create, view, use or patch at time `at`: the counter and
 * its time, `last_activity_at`, and for "create" `created_by`. Every other field is kept.
 */
export function applyUsageEvent(
  record: SkillUsageRecord | undefined,
  event: Exclude<SkillUsageEvent, "delete">,
  at: string,
  createdBy: "agent" | null,
): SkillUsageRecord {
  const next: SkillUsageRecord = record ?? {
    created_at: at,
    use_count: 0,
    view_count: 0,
    patch_count: 0,
    last_used_at: null,
    last_viewed_at: null,
    last_patched_at: null,
    state: "active",
    pinned: false,
    archived_at: null,
  };
  if (event === "create") {
    next.created_by = createdBy;
    next.created_at = at;
    next.state = "active";
  } else if (event === "view") {
    next.view_count = count(next.view_count) + 1;
    next.last_viewed_at = at;
  } else if (event === "use") {
    next.use_count = count(next.use_count) + 1;
    next.last_used_at = at;
  } else {
    next.patch_count = count(next.patch_count) + 1;
    next.last_patched_at = at;
  }
  next.last_activity_at = at;
  return next;
}

/**
 * Read-modify-write of the whole `.usage.json` under its lock (the curator's state changes, pins).
 * `change` edits the map in place and returns false to leave the file as it is. Throws when the
 * file exists but does not parse, so a hand-broken file is never replaced by a partial one.
 */
export async function mutateUsage(
  home: string,
  change: (data: Record<string, SkillUsageRecord>) => unknown,
): Promise<void> {
  const path = usagePath(home);
  mkdirSync(skillsRoot(home), { recursive: true });
  await withFileLock(path, async () => {
    const data = readUsageFile(home);
    if (!data) throw new Error(`${path} is not valid JSON; fix or remove it, then try again.`);
    if (change(data) === false) return;
    await atomicWriteFile(path, JSON.stringify(sortKeys(data), null, 2));
  });
}

/** Python writes the file with `sort_keys=True`; sorting here keeps diffs between the two quiet. */
function sortKeys(data: Record<string, SkillUsageRecord>): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const name of Object.keys(data).sort()) {
    const record = data[name] as SkillUsageRecord;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(record).sort()) sorted[key] = record[key];
    out[name] = sorted;
  }
  return out;
}
