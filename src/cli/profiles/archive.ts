/**
 * `hermes profile export` / `import`: one profile as a `.tar.gz` holding a single directory named
 * after it, upstream's format. An export leaves credentials out (`.env`, `auth.json`), snapshots
 * each SQLite database consistently, and redacts secret-shaped text in what it keeps; for the
 * default profile only Hermes's own files at the root are taken (a root home may share its
 * directory with anything). An import checks every member before extracting (regular files and
 * directories only, no absolute paths, no `..`) and publishes the profile with one rename.
 */
import { execFile } from "node:child_process";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { loadEnvFile } from "../../config/env-file.js";
import { ProfileError } from "../../config/errors.js";
import { DEFAULT_PROFILE, profilesRoot } from "../../config/home.js";
import { assertNewName, existingProfile, profileDir } from "../../config/profiles.js";
import { snapshotDatabase } from "../../state/snapshot.js";
import { Redactor } from "../../util/redact.js";

const run = promisify(execFile);

/** Credentials never leave in an export. */
const CREDENTIAL_FILES = new Set([".env", "auth.json"]);
/** What an export of the default profile takes from the root home (upstream's allow-list). */
const DEFAULT_EXPORT_ROOT = new Set([
  "config.yaml",
  "SOUL.md",
  "MEMORY.md",
  "USER.md",
  "todo.json",
  "system_prompt.md",
  "AGENTS.md",
  "CLAUDE.md",
  ".cursorrules",
  "skills",
  "cron",
  "scripts",
  "sessions",
  "plugins",
  "memories",
  "knowledge",
  "preferences",
]);
/** Left out wherever they appear: generated code and dependencies. */
const EXPORT_SKIPPED_ANYWHERE = new Set(["node_modules", "__pycache__"]);
/**
 * Left out at the profile's root: runtime state, caches, logs, other homes. Deeper down the same
 * names are the user's (the bundled skill `devops/backups`, a skill's `logs/` or `cache/`).
 */
const EXPORT_SKIPPED = new Set([
  "gateway.pid",
  "gateway_state.json",
  "processes.json",
  "active_profile",
  "logs",
  "checkpoints",
  "backups",
  "state-snapshots",
  "cache",
  "sandboxes",
  "browser_screenshots",
  "audio_cache",
  "image_cache",
  "profiles",
  "hermes-agent",
]);
const TEXT_SUFFIXES =
  /\.(md|txt|ya?ml|json|jsonl|toml|ini|cfg|conf|py|sh|bash|zsh|js|ts|tsx|jsx|css|html|xml|csv)$/i;

/** `~/.hermes/profile-exports/NAME-YYYYmmdd-HHMMSS.tar.gz`: outside any working tree, so it is never committed by accident. */
export function defaultExportPath(name: string, userHome: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return join(userHome, ".hermes", "profile-exports", `${name}-${stamp}.tar.gz`);
}

/** Writes profile `name` to `output` (a `.tar.gz`); returns how many files it holds. Throws ProfileError. */
export async function exportProfile(name: string, userHome: string, output: string): Promise<number> {
  const source = existingProfile(name, userHome);
  const scratch = mkdtempSync(join(tmpdir(), "hermes-profile-export-"));
  try {
    const staged = join(scratch, name);
    mkdirSync(staged);
    const count = stageTree(source, staged, name === DEFAULT_PROFILE, true, profileRedactor(source));
    mkdirSync(join(output, ".."), { recursive: true });
    const partial = `${output}.${process.pid}.partial`;
    await run("tar", ["-czf", partial, "-C", scratch, name]);
    chmodSync(partial, 0o600);
    renameSync(partial, output);
    return count;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * A redactor for one profile's export: the key shapes, plus every value of its own `.env` and every
 * key or token in its `auth.json`, so a key pasted into a memory or a skill leaves redacted even
 * when it has no recognisable shape.
 */
function profileRedactor(home: string): Redactor {
  const redactor = new Redactor();
  try {
    for (const value of Object.values(loadEnvFile(home, {}).env)) redactor.addSecret(value);
  } catch {
    // An unreadable .env adds nothing; the shapes still apply.
  }
  try {
    const walk = (value: unknown, key = ""): void => {
      if (typeof value === "string" && /key|token|secret|password/i.test(key)) redactor.addSecret(value);
      else if (value && typeof value === "object") {
        for (const [k, v] of Object.entries(value as Record<string, unknown>))
          walk(v, Array.isArray(value) ? key : k);
      }
    };
    walk(JSON.parse(readFileSync(join(home, "auth.json"), "utf8")));
  } catch {
    // No auth.json, or one that does not parse.
  }
  return redactor;
}

function stageTree(
  from: string,
  to: string,
  defaultRoot: boolean,
  atRoot: boolean,
  redactor: Redactor,
): number {
  let count = 0;
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (atRoot && defaultRoot && !DEFAULT_EXPORT_ROOT.has(entry.name)) continue;
    if (EXPORT_SKIPPED_ANYWHERE.has(entry.name)) continue;
    if (atRoot && (EXPORT_SKIPPED.has(entry.name) || CREDENTIAL_FILES.has(entry.name))) continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory()) {
      mkdirSync(target);
      count += stageTree(source, target, defaultRoot, false, redactor);
    } else if (entry.isFile()) {
      if (/\.db-(wal|shm|journal)$/.test(entry.name)) continue;
      if (entry.name.endsWith(".db")) snapshotDatabase(source, target);
      else if (TEXT_SUFFIXES.test(entry.name) || entry.name === ".cursorrules") {
        writeFileSync(target, redactor.redact(readFileSync(source, "utf8")));
      } else cpSync(source, target);
      count++;
    }
    // Symlinks are left out: one could carry a file from outside the profile into the archive.
  }
  return count;
}

/**
 * Installs the profile archive at `archive` as `~/.hermes/profiles/NAME`, NAME being `name` or the
 * archive's single top-level directory. Throws ProfileError for a bad archive, a reserved or
 * existing name, or `default`.
 */
export async function importProfile(archive: string, userHome: string, name?: string): Promise<string> {
  if (!existsSync(archive)) throw new ProfileError(`archive not found: ${archive}`);
  const members = await listArchive(archive);
  const tops = new Set(members.map((m) => m.name.split("/")[0] ?? ""));
  if (tops.size !== 1)
    throw new ProfileError(`${archive} must hold exactly one top-level directory (the profile)`);
  const [top = ""] = [...tops];
  const target = name ?? top;
  if (target === DEFAULT_PROFILE) {
    throw new ProfileError(
      "cannot import as 'default', the root home; give it a name: hermes profile import ARCHIVE --name NAME",
    );
  }
  assertNewName(target);
  const dir = profileDir(target, userHome);
  if (existsSync(dir)) throw new ProfileError(`profile "${target}" already exists at ${dir}`);
  const staging = join(profilesRoot(userHome), `.${target}.import-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    await run("tar", ["-xzf", archive, "-C", staging, "--no-same-owner", "--no-same-permissions"]);
    const extracted = join(staging, top);
    if (!statSync(extracted).isDirectory()) throw new ProfileError(`${archive}: ${top} is not a directory`);
    for (const file of ["gateway.pid", "gateway_state.json", "processes.json"])
      rmSync(join(extracted, file), { force: true });
    for (const secret of [".env", "auth.json"]) {
      if (existsSync(join(extracted, secret))) chmodSync(join(extracted, secret), 0o600);
    }
    renameSync(extracted, dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return dir;
}

interface Member {
  name: string;
  type: string;
}

/** The archive's members with their types, refusing anything but plain files and directories at safe paths. */
async function listArchive(archive: string): Promise<Member[]> {
  let names: string[];
  let long: string[];
  try {
    names = (await run("tar", ["-tzf", archive], { maxBuffer: 64 << 20 })).stdout.split("\n").filter(Boolean);
    long = (await run("tar", ["-tvzf", archive], { maxBuffer: 64 << 20 })).stdout.split("\n").filter(Boolean);
  } catch (error) {
    throw new ProfileError(
      `${archive} is not a readable .tar.gz archive: ${(error as Error).message.split("\n")[0]}`,
    );
  }
  if (names.length === 0 || names.length !== long.length)
    throw new ProfileError(`${archive}: cannot list its members`);
  return names.map((raw, i) => {
    const type = long[i]?.[0] ?? "?";
    const name = raw.replace(/\/$/, "");
    const parts = name.split("/");
    if (name.startsWith("/") || parts.includes("..") || name.includes("\\")) {
      throw new ProfileError(
        `${archive}: member ${JSON.stringify(raw)} would land outside the profile; refused`,
      );
    }
    if (type !== "-" && type !== "d") {
      throw new ProfileError(`${archive}: member ${JSON.stringify(raw)} is a link or special file; refused`);
    }
    return { name: parts.filter((p) => p !== ".").join("/"), type };
  });
}
