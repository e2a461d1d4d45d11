/**
 * A whole skill set as one JSON file (`hermes skills snapshot export|import`). The file keeps
 * Python Hermes's snapshot keys (`hermes_version`, `exported_at`, `skills` as `{name, source,
 * identifier, category}` for hub installs, `taps`) so either side can read it, and adds what makes
 * it whole: every skill that is not an unedited bundled copy with its files (`skill_files`), the
 * hub lock, the bundled manifest and the opt-outs.
 *
 * Import trusts nothing in the file: names, categories and file paths are checked (an absolute
 * path or `..` refuses that skill), each skill's files go through the hub's limits and scanner in
 * the quarantine folder first; a dangerous skill stays in quarantine whatever the flags, a caution
 * one unless `force`. A skill that exists is never replaced without `force`, and never through a
 * symbolic link. The file's taps are restored into `skills/.hub/taps.json` with the checks of
 * `hermes skills tap add` (a GitHub owner/name or github.com URL only); any other entry is skipped.
 */
import { lstatSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { atomicWriteFileSync } from "../../util/atomic-write.js";
import { hermesVersion } from "../../util/version.js";
import { knowledgeStores } from "../stores.js";
import { isOptedOut, readSuppressed } from "./bundled-opt-out.js";
import { discoverSkills } from "./discovery.js";
import {
  checkBundleFiles,
  contentHash,
  HubError,
  isBinaryContent,
  isRecord,
  safeRelPath,
  validateCategory,
  validateSkillName,
} from "./hub/bundle.js";
import {
  appendAudit,
  type LockEntry,
  pythonIsoTime,
  quarantineDir,
  readLock,
  updateLock,
} from "./hub/lock.js";
import { readTree } from "./hub/maintenance.js";
import { type ScanReport, scanSkillBundle } from "./hub/scan.js";
import { addTap, DEFAULT_TAPS, parseTap } from "./hub/taps.js";
import { setOptedOutShared, setSuppressedShared } from "./opt-out-shared.js";
import { isInside, posixRelative, skillsRoot } from "./paths.js";
import { formatBundledManifest, manifestPath, readBundledManifest, readUsage } from "./provenance.js";

export const SNAPSHOT_FORMAT = "hermes-skills-snapshot";
/** Largest snapshot file import reads. */
export const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;

export type SnapshotOrigin = "hub" | "user" | "agent" | "bundled-modified";

export interface SnapshotFile {
  encoding: "utf8" | "base64";
  content: string;
}

export interface SnapshotSkill {
  name: string;
  category: string;
  origin: SnapshotOrigin;
  files: Record<string, SnapshotFile>;
  usage?: Record<string, unknown>;
}

export interface Snapshot {
  hermes_version: string;
  exported_at: string;
  skills: Array<{ name: string; source: string; identifier: string; category: string }>;
  taps: unknown[];
  format: typeof SNAPSHOT_FORMAT;
  format_version: 1;
  hub_lock: Record<string, LockEntry>;
  bundled_manifest: Record<string, string>;
  opt_out: { all: boolean; skills: string[] };
  skill_files: SnapshotSkill[];
}

function encode(path: string, content: Buffer): SnapshotFile {
  return isBinaryContent(path, content)
    ? { encoding: "base64", content: content.toString("base64") }
    : { encoding: "utf8", content: content.toString("utf8") };
}

/** Builds the snapshot of `home`: every skill except unedited bundled copies, with provenance. */
export async function exportSnapshot(home: string, nowSeconds: number): Promise<Snapshot> {
  const lock = await readLock(home);
  const manifest = readBundledManifest(home);
  const usage = readUsage(home);
  const root = skillsRoot(home);
  const hubPaths = new Map(Object.entries(lock.installed).map(([name, e]) => [e.install_path, name]));
  const { skills } = discoverSkills({ home, env: {}, includeDisabled: true, includeOtherPlatforms: true });
  const out: SnapshotSkill[] = [];
  for (const skill of skills) {
    if (skill.source !== "home" || skill.origin === "bundled") continue;
    const rel = posixRelative(root, skill.dir);
    const hubName = hubPaths.get(rel);
    const origin: SnapshotOrigin =
      hubName !== undefined || skill.origin === "hub"
        ? "hub"
        : manifest.has(skill.name)
          ? "bundled-modified"
          : skill.origin === "agent"
            ? "agent"
            : "user";
    const files: Record<string, SnapshotFile> = {};
    for (const [path, content] of await readTree(skill.dir)) files[path] = encode(path, content);
    const category = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "";
    out.push({
      name: rel.split("/").pop() ?? skill.name,
      category,
      origin,
      files,
      ...(usage[skill.name] ? { usage: usage[skill.name] as Record<string, unknown> } : {}),
    });
  }
  let taps: unknown[] = [];
  try {
    const data: unknown = JSON.parse(readFileSync(join(root, ".hub", "taps.json"), "utf8"));
    if (isRecord(data) && Array.isArray(data["taps"])) taps = data["taps"];
  } catch {
    taps = [];
  }
  return {
    hermes_version: hermesVersion(),
    exported_at: pythonIsoTime(nowSeconds),
    skills: Object.entries(lock.installed).map(([name, e]) => ({
      name,
      source: e.source,
      identifier: e.identifier,
      category: e.install_path.includes("/") ? e.install_path.slice(0, e.install_path.lastIndexOf("/")) : "",
    })),
    taps,
    format: SNAPSHOT_FORMAT,
    format_version: 1,
    hub_lock: lock.installed,
    bundled_manifest: Object.fromEntries(manifest),
    opt_out: { all: isOptedOut(home), skills: [...readSuppressed(home)].sort() },
    skill_files: out,
  };
}

export type ImportStatus = "installed" | "replaced" | "skipped" | "quarantined" | "refused";

export interface ImportRow {
  name: string;
  status: ImportStatus;
  message: string;
  report?: ScanReport;
}

export interface ImportResult {
  rows: ImportRow[];
  /** Hub entries of the file that carry no files (Python Hermes's snapshots): to re-install from their source. */
  sourceOnly: Array<{ name: string; source: string; identifier: string; category: string }>;
  optOutApplied: boolean;
  /** What became of each of the file's taps. */
  taps: TapRow[];
}

export interface TapRow {
  /** The entry as the file wrote it (a repository, or a description of a malformed entry). */
  repo: string;
  status: "added" | "present" | "skipped";
  message: string;
}

/** Most taps one snapshot may restore: a file listing more is not a skill set someone exported. */
const MAX_SNAPSHOT_TAPS = 100;

/** Parses a snapshot file's text; throws {@link HubError} (usage) when it is not one. */
export function parseSnapshot(
  text: string,
  where: string,
): Partial<Snapshot> & { skills: Snapshot["skills"] } {
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (error) {
    throw new HubError(`${where} is not valid JSON (${(error as Error).message}).`, 2);
  }
  if (!isRecord(data)) throw new HubError(`${where} does not hold a skills snapshot (a JSON object).`, 2);
  if (data["format"] !== undefined && data["format"] !== SNAPSHOT_FORMAT) {
    throw new HubError(`${where} is a "${String(data["format"])}" file, not a skills snapshot.`, 2);
  }
  const skills = Array.isArray(data["skills"])
    ? data["skills"].filter(isRecord).map((s) => ({
        name: String(s["name"] ?? ""),
        source: String(s["source"] ?? ""),
        identifier: String(s["identifier"] ?? ""),
        category: String(s["category"] ?? ""),
      }))
    : [];
  return { ...(data as Partial<Snapshot>), skills };
}

function decodeFiles(raw: unknown): Map<string, Buffer> {
  if (!isRecord(raw)) throw new HubError("its files are not a map of path to content.");
  const files = new Map<string, Buffer>();
  for (const [path, value] of Object.entries(raw)) {
    if (safeRelPath(path) !== path) throw new HubError(`refused unsafe file path "${path}".`);
    if (!isRecord(value) || typeof value["content"] !== "string")
      throw new HubError(`${path} has no content.`);
    const encoding = value["encoding"] === "base64" ? "base64" : "utf8";
    files.set(path, Buffer.from(value["content"], encoding));
  }
  return files;
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function existsPath(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Whether `dir` (or its deepest existing ancestor) really lies inside `root`, links resolved. */
function staysInside(root: string, dir: string): boolean {
  let probe = dir;
  while (!existsPath(probe) && dirname(probe) !== probe) probe = dirname(probe);
  try {
    return isInside(realpathSync(root), realpathSync(probe));
  } catch {
    return false;
  }
}

function writeTree(dir: string, files: ReadonlyMap<string, Buffer>): void {
  for (const [rel, content] of files) {
    const file = join(dir, ...rel.split("/"));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}

/**
 * Installs the skills of a parsed snapshot into `home` (see the module comment for the rules).
 * One bad skill never stops the others; each gets a row.
 */
export async function importSnapshot(
  home: string,
  snapshot: ReturnType<typeof parseSnapshot>,
  options: { force?: boolean; nowSeconds: number },
): Promise<ImportResult> {
  const root = skillsRoot(home);
  mkdirSync(root, { recursive: true });
  const rows: ImportRow[] = [];
  const hubLock = isRecord(snapshot.hub_lock) ? (snapshot.hub_lock as Record<string, unknown>) : {};
  const shippedManifest = isRecord(snapshot.bundled_manifest) ? snapshot.bundled_manifest : {};
  const installedNames = new Set(
    discoverSkills({ home, env: {}, includeDisabled: true, includeOtherPlatforms: true }).skills.map(
      (s) => s.name,
    ),
  );
  const embedded = new Set<string>();
  const list = Array.isArray(snapshot.skill_files) ? (snapshot.skill_files as unknown[]) : [];
  for (const raw of list) {
    const label = isRecord(raw) && typeof raw["name"] === "string" ? raw["name"] : "(unnamed)";
    try {
      if (!isRecord(raw)) throw new HubError("not a skill entry.");
      const name = validateSkillName(String(raw["name"] ?? ""));
      const categoryRaw = typeof raw["category"] === "string" ? raw["category"] : "";
      const category = categoryRaw === "" ? "" : validateCategory(categoryRaw);
      // "/etc" or "a//b" would normalise into something else; a snapshot written by us never has them.
      if (category !== categoryRaw) throw new HubError(`unsafe category "${categoryRaw}".`);
      const origin = String(raw["origin"] ?? "user") as SnapshotOrigin;
      const files = decodeFiles(raw["files"]);
      checkBundleFiles(files);
      embedded.add(name);
      rows.push(
        await importOne(
          home,
          { name, category, origin, files },
          hubLock[name],
          shippedManifest[name],
          installedNames,
          options,
        ),
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      rows.push({ name: label, status: "refused", message: `refused: ${message}` });
      await appendAudit(
        home,
        { action: "refuse", name: label, source: "snapshot", identifier: "", reason: message },
        options.nowSeconds,
      );
    }
  }
  let optOutApplied = false;
  const optOut = isRecord(snapshot.opt_out) ? snapshot.opt_out : undefined;
  if (optOut) {
    if (optOut["all"] === true) optOutApplied = (await setOptedOutShared(home, true)) || optOutApplied;
    for (const n of Array.isArray(optOut["skills"]) ? optOut["skills"] : []) {
      if (typeof n === "string" && /^[a-z0-9][a-z0-9._-]{0,63}$/.test(n) && !n.includes("..")) {
        optOutApplied = (await setSuppressedShared(home, n, true)) || optOutApplied;
      }
    }
  }
  const sourceOnly = snapshot.skills.filter((s) => s.identifier !== "" && !embedded.has(s.name));
  const taps = await restoreTaps(home, Array.isArray(snapshot.taps) ? snapshot.taps : []);
  return { rows, sourceOnly, optOutApplied, taps };
}

/**
 * Adds the snapshot's taps (`{repo, path}` as taps.json stores them, or a bare `owner/name`)
 * through the taps module, so each passes the same check as `hermes skills tap add`.
 */
async function restoreTaps(home: string, entries: readonly unknown[]): Promise<TapRow[]> {
  const rows: TapRow[] = [];
  for (const [at, entry] of entries.entries()) {
    const repo = typeof entry === "string" ? entry : isRecord(entry) ? entry["repo"] : undefined;
    const path = isRecord(entry) && typeof entry["path"] === "string" ? entry["path"] : "skills/";
    // The file is untrusted: what it wrote is shown without control characters (terminal escapes).
    const label = typeof repo === "string" ? repo.replace(/\p{Cc}/gu, "?").slice(0, 200) : `entry ${at + 1}`;
    if (at >= MAX_SNAPSHOT_TAPS) {
      rows.push({
        repo: label,
        status: "skipped",
        message: `more than ${MAX_SNAPSHOT_TAPS} taps; not restored`,
      });
      continue;
    }
    try {
      if (typeof repo !== "string") throw new HubError("it names no repository");
      const tap = parseTap(repo, path);
      const isDefault = DEFAULT_TAPS.some((t) => t.repo.toLowerCase() === tap.repo.toLowerCase());
      const added = !isDefault && (await addTap(home, tap));
      rows.push({
        repo: tap.repo,
        status: added ? "added" : "present",
        message: added ? `tap added (${tap.path || "/"})` : isDefault ? "a default tap" : "already a tap",
      });
    } catch (error) {
      if (!(error instanceof HubError)) throw error;
      const reason = error.message.replace(/\p{Cc}/gu, "?").slice(0, 400);
      rows.push({ repo: label, status: "skipped", message: `not restored: ${reason}` });
    }
  }
  return rows;
}

async function importOne(
  home: string,
  skill: { name: string; category: string; origin: SnapshotOrigin; files: Map<string, Buffer> },
  lockEntry: unknown,
  manifestHash: unknown,
  installedNames: ReadonlySet<string>,
  options: { force?: boolean; nowSeconds: number },
): Promise<ImportRow> {
  const { name, files } = skill;
  const relPath = skill.category ? `${skill.category}/${name}` : name;
  const dest = join(skillsRoot(home), ...relPath.split("/"));
  const quarantine = join(quarantineDir(home), `snapshot-${name}`);
  rmSync(quarantine, { recursive: true, force: true });
  writeTree(quarantine, files);
  const report = scanSkillBundle(files);
  const findings = report.findings
    .filter((f) => f.severity === "critical" || f.severity === "high")
    .map(({ file, line, id, severity }) => ({ file, line, id, severity }));
  const audit = (action: "install" | "update" | "refuse", reason?: string) =>
    appendAudit(
      home,
      {
        action,
        name,
        source: "snapshot",
        identifier: relPath,
        verdict: report.verdict,
        content_hash: contentHash(files),
        ...(reason ? { reason } : {}),
        ...(findings.length ? { findings } : {}),
      },
      options.nowSeconds,
    );
  if (report.verdict === "dangerous" || (report.verdict === "caution" && !options.force)) {
    const why =
      report.verdict === "dangerous"
        ? "the scan found it dangerous"
        : "caution verdict (pass --force to accept)";
    await audit("refuse", why);
    return { name, status: "quarantined", message: `kept in quarantine (${quarantine}): ${why}`, report };
  }
  const exists = existsPath(dest) || installedNames.has(name);
  if (exists && !options.force) {
    rmSync(quarantine, { recursive: true, force: true });
    return {
      name,
      status: "skipped",
      message: "a skill of this name exists; pass --force to replace it",
      report,
    };
  }
  if (isLink(dest) || !staysInside(skillsRoot(home), dirname(dest))) {
    rmSync(quarantine, { recursive: true, force: true });
    await audit("refuse", "destination is a symbolic link");
    return {
      name,
      status: "refused",
      message: `refused: ${dest} is reached through a symbolic link`,
      report,
    };
  }
  mkdirSync(dirname(dest), { recursive: true });
  if (existsPath(dest)) rmSync(dest, { recursive: true, force: true });
  renameSync(quarantine, dest);
  // A shared backend (PostgreSQL) stores it for every instance; a refusal fails this row alone.
  await knowledgeStores(home).skillSink?.saved({ name, dir: dest, created: false });
  if (skill.origin === "hub" && isRecord(lockEntry)) {
    const entry = lockEntry as Partial<LockEntry>;
    await updateLock(home, (lock) => {
      const now = pythonIsoTime(options.nowSeconds);
      lock.installed[name] = {
        ...(entry as Record<string, unknown>),
        source: String(entry.source ?? "snapshot"),
        identifier: String(entry.identifier ?? ""),
        trust_level: String(entry.trust_level ?? "community"),
        scan_verdict: report.verdict,
        content_hash: contentHash(files),
        install_path: relPath,
        files: [...files.keys()].sort(),
        installed_at: String(entry.installed_at ?? now),
        updated_at: now,
      };
    });
  }
  if (
    skill.origin === "bundled-modified" &&
    typeof manifestHash === "string" &&
    /^[0-9a-f]{6,64}$/i.test(manifestHash)
  ) {
    const manifest = readBundledManifest(home);
    if (!manifest.has(name)) {
      manifest.set(name, manifestHash);
      atomicWriteFileSync(manifestPath(home), formatBundledManifest(manifest));
    }
  }
  await audit(exists ? "update" : "install");
  return {
    name,
    status: exists ? "replaced" : "installed",
    message: `skills/${relPath} (scan: ${report.verdict})`,
    report,
  };
}
