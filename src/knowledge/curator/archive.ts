/**
 * Moving skills into `skills/.archive/` and back, as Python Hermes lays it out: one folder per
 * archived skill directly under `.archive/` (a same-named one gets a `-YYYYMMDDHHMMSS` suffix),
 * and the usage record says `state: archived` with `archived_at`. Nothing is ever deleted. Only
 * skills made in this home may move: never a bundled or hub-installed one, never an external
 * folder's. Errors are `CuratorError`s with text the user can act on.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { discoverSkills } from "../skills/discovery.js";
import { skillsRoot } from "../skills/paths.js";
import { isoNow, readBundledManifest, readHubInstalls, readUsage } from "../skills/provenance.js";
import type { SkillMeta } from "../skills/types.js";
import { knowledgeStores } from "../stores.js";

export class CuratorError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
    this.name = "CuratorError";
  }
}

export const archiveRoot = (home: string): string => join(skillsRoot(home), ".archive");

/** Skills installed in the home's own `skills/` folder (not external dirs), disabled ones included. */
export function homeSkills(home: string): SkillMeta[] {
  return discoverSkills({
    home,
    includeDisabled: true,
    includeOtherPlatforms: true,
    verifyBundled: false,
  }).skills.filter((s) => s.source === "home");
}

/** Why `name` belongs to someone else (bundled, hub), or undefined when it is this home's own. */
export function foreignOwner(home: string, name: string): string | undefined {
  if (readHubInstalls(home).names.has(name)) return "installed from the skills hub";
  if (readBundledManifest(home).has(name)) return "bundled with Hermes";
  return undefined;
}

/** Skill names the cron jobs in `cron/jobs.json` load (`skills` list or the older `skill`). */
export function cronSkillNames(home: string): Set<string> {
  const names = new Set<string>();
  try {
    const data: unknown = JSON.parse(
      readFileSync(join(home, "cron", "jobs.json"), "utf8").replace(/^\uFEFF/, ""),
    );
    const jobs = Array.isArray(data) ? data : (data as { jobs?: unknown } | null)?.jobs;
    if (!Array.isArray(jobs)) return names;
    for (const job of jobs) {
      if (!job || typeof job !== "object") continue;
      const { skills, skill } = job as { skills?: unknown; skill?: unknown };
      if (Array.isArray(skills)) for (const s of skills) if (typeof s === "string") names.add(s);
      if (typeof skill === "string" && skill) names.add(skill);
    }
  } catch {
    // No jobs (or an unreadable file): nothing is protected by cron.
  }
  return names;
}

/**
 * Tells the home's skill sink (PostgreSQL: every instance) that a folder moved into or out of the
 * archive. When it refuses (the skill changed on another instance meanwhile), the folder is moved
 * back and the refusal becomes a CuratorError: nothing is half done.
 */
async function shareMove(
  home: string,
  move: { name: string; from: string; to: string },
  kind: "archived" | "restored",
): Promise<void> {
  const sink = knowledgeStores(home).skillSink;
  const report = kind === "archived" ? sink?.archived : sink?.restored;
  if (!sink || !report) return;
  try {
    await report.call(sink, move);
  } catch (error) {
    if (existsSync(move.to) && !existsSync(move.from)) renameSync(move.to, move.from);
    const why = error instanceof Error ? error.message : String(error);
    throw new CuratorError(`"${move.name}" was not ${kind}: ${why}`);
  }
}

function stamp(now: Date): string {
  return now.toISOString().replace(/[-:T]/g, "").slice(0, 14);
}

export interface ArchiveResult {
  name: string;
  /** Where the folder went. */
  to: string;
}

/**
 * Moves skill `name` to `.archive/` and records it archived. Refuses bundled and hub skills,
 * external ones and a pinned one unless `force`. Throws `CuratorError` with the reason.
 */
export async function archiveSkill(
  home: string,
  name: string,
  options: { now?: Date; allowPinned?: boolean } = {},
): Promise<ArchiveResult> {
  const now = options.now ?? new Date();
  const owner = foreignOwner(home, name);
  if (owner) throw new CuratorError(`"${name}" is ${owner}; the curator never archives it.`);
  const skill = homeSkills(home).find((s) => s.name === name);
  if (!skill) {
    throw new CuratorError(
      `No skill named "${name}" in ${skillsRoot(home)}. See: hermes skills list (archived ones: hermes curator list-archived)`,
    );
  }
  // Pins live in the home's usage store (the shared database on a postgres home: set on any instance).
  if (!options.allowPinned && (await knowledgeStores(home).skillUsage.read())[name]?.pinned === true) {
    throw new CuratorError(`"${name}" is pinned; unpin it first with: hermes curator unpin ${name}`);
  }
  const root = archiveRoot(home);
  mkdirSync(root, { recursive: true });
  const folder = skill.dir.split(sep).pop() ?? name;
  let dest = join(root, folder);
  if (existsSync(dest)) dest = join(root, `${folder}-${stamp(now)}`);
  const from = relative(skillsRoot(home), skill.dir).split(sep).join("/");
  renameSync(skill.dir, dest);
  // A shared backend (PostgreSQL) archives it for every instance, or refuses: then it moves back.
  await shareMove(home, { name, from: skill.dir, to: dest }, "archived");
  const at = isoNow(() => now);
  await knowledgeStores(home).skillUsage.mutate((data) => {
    const record = data[name] ?? {};
    record.state = "archived";
    record.archived_at = at;
    // Where it lived, so restore puts it back in its category (Python restores to the top level).
    record["archived_from"] = from;
    data[name] = record;
  });
  return { name, to: dest };
}

export interface ArchivedSkill {
  name: string;
  /** The folder under `.archive/`. */
  dir: string;
  description: string;
  archivedAt: string | null;
}

function frontmatterField(text: string, field: string): string | undefined {
  const head = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text.replace(/^\uFEFF/, ""))?.[1] ?? "";
  const line = head.split(/\r?\n/).find((l) => l.startsWith(`${field}:`));
  const value = line
    ?.slice(field.length + 1)
    .trim()
    .replace(/^["']|["']$/g, "");
  return value || undefined;
}

/** The skills in `.archive/`, newest archive first within a name. */
export function listArchived(home: string): ArchivedSkill[] {
  const root = archiveRoot(home);
  let entries: string[];
  try {
    entries = readdirSync(root, { withFileTypes: true })
      // Dot-folders are bookkeeping (a shared backend's mirror of the archive), not archived skills.
      .filter((e) => e.isDirectory() && !e.name.startsWith("."))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
  const usage = readUsage(home);
  return entries.map((folder) => {
    let text = "";
    try {
      text = readFileSync(join(root, folder, "SKILL.md"), "utf8").slice(0, 4000);
    } catch {
      // A folder without SKILL.md is still listed, by its folder name.
    }
    const name = frontmatterField(text, "name") ?? folder;
    const archivedAt = usage[name]?.archived_at;
    return {
      name,
      dir: join(root, folder),
      description: frontmatterField(text, "description") ?? "",
      archivedAt: typeof archivedAt === "string" ? archivedAt : null,
    };
  });
}

/**
 * Moves the archived skill `name` back (to the category it came from when that is known) and
 * marks it active, counting the restore as activity so the next run does not archive it again.
 * Refuses when the name is now bundled or hub-installed, or the destination exists.
 */
export async function restoreSkill(
  home: string,
  name: string,
  options: { now?: Date } = {},
): Promise<ArchiveResult> {
  const now = options.now ?? new Date();
  const owner = foreignOwner(home, name);
  if (owner) {
    throw new CuratorError(`"${name}" is now ${owner}; restoring the archived copy would hide it.`);
  }
  const archived = listArchived(home).filter((a) => a.name === name || a.dir.endsWith(`${sep}${name}`));
  const source = archived.sort((a, b) => (a.dir < b.dir ? 1 : -1))[0];
  if (!source) {
    throw new CuratorError(`No archived skill named "${name}". See: hermes curator list-archived`);
  }
  if (homeSkills(home).some((s) => s.name === name)) {
    throw new CuratorError(`A skill named "${name}" is installed already; rename or archive it first.`);
  }
  const from = readUsage(home)[name]?.["archived_from"];
  const wanted =
    typeof from === "string" && /^[a-z0-9][a-z0-9._/-]*$/.test(from) && !from.split("/").includes("..")
      ? join(skillsRoot(home), ...from.split("/"))
      : join(skillsRoot(home), name);
  const dest = existsSync(wanted) ? join(skillsRoot(home), name) : wanted;
  if (existsSync(dest)) throw new CuratorError(`${dest} exists already; move it away and try again.`);
  mkdirSync(join(dest, ".."), { recursive: true });
  renameSync(source.dir, dest);
  await shareMove(home, { name, from: source.dir, to: dest }, "restored");
  const at = isoNow(() => now);
  await knowledgeStores(home).skillUsage.mutate((data) => {
    const record = data[name] ?? {};
    record.state = "active";
    record.archived_at = null;
    record.last_activity_at = at;
    delete record["archived_from"];
    data[name] = record;
  });
  return { name, to: dest };
}
