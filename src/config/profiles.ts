/**
 * Profiles: each one a full home under `~/.hermes/profiles/NAME`, with `default` naming the root
 * home `~/.hermes`. Listing, the sticky active profile (`~/.hermes/active_profile`, upstream's
 * file), create (fresh or cloned), rename and delete, laid out as Python Hermes lays them out so
 * one set of profiles serves both.
 *
 * Everything here works on directories only; whether a gateway still runs in a profile is the
 * caller's question (the CLI asks before rename and delete).
 */
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { atomicWriteFileSync } from "../util/atomic-write.js";
import { ProfileError } from "./errors.js";
import {
  activeProfilePath,
  DEFAULT_PROFILE,
  profilesRoot,
  readActiveProfile,
  validateProfileName,
} from "./home.js";

/**
 * Names a new profile may not take: the root profile's own name and the ones upstream reserves
 * because a profile's name doubles as a command alias (`hermes`, `sudo`, ...). An existing
 * directory with such a name still resolves with `-p`.
 */
export const RESERVED_PROFILE_NAMES: ReadonlySet<string> = new Set([
  "default",
  "hermes",
  "test",
  "tmp",
  "root",
  "sudo",
]);

/** Directories every new profile starts with (upstream's bootstrap list). */
const PROFILE_DIRS = [
  "memories",
  "sessions",
  "skills",
  "skins",
  "logs",
  "plans",
  "workspace",
  "cron",
  "home",
];

/** What `--clone` copies: the identity and settings of a profile, not its history. */
const CLONE_FILES = ["config.yaml", ".env", "SOUL.md", "memories/MEMORY.md", "memories/USER.md"];

/** Never part of a `--clone-all` copy, from any source: history, backups and scheduled work. */
const CLONE_ALL_HISTORY = new Set([
  "state.db",
  "state.db-wal",
  "state.db-shm",
  "sessions",
  "backups",
  "state-snapshots",
  "checkpoints",
  // Jobs copied along would run twice, once from each profile's gateway.
  "cron",
]);
/** Never copied from the root home: the other profiles and installed runtimes. */
const CLONE_ALL_ROOT_INFRA = new Set([
  "profiles",
  "hermes-agent",
  ".worktrees",
  "bin",
  "node_modules",
  "node",
  "active_profile",
]);
/** Runtime files of the source that mean nothing in the clone. */
const CLONE_ALL_RUNTIME = ["gateway.pid", "gateway_state.json", "processes.json", "gateway.lock"];

/**
 * Messaging credentials a clone leaves behind: one bot token in two profiles makes two gateways
 * fight over one bot. Upstream strips the same settings unless asked to keep them.
 */
/**
 * The variables that connect a home to a chat account (every platform's switch and its login):
 * two profiles sharing one would both answer the same bot, number or mailbox.
 */
export const CHANNEL_ENV_NAMES: readonly string[] = [
  "TELEGRAM_BOT_TOKEN",
  "DISCORD_BOT_TOKEN",
  "SLACK_BOT_TOKEN",
  "SLACK_APP_TOKEN",
  "EMAIL_ADDRESS",
  "EMAIL_PASSWORD",
  "SIGNAL_HTTP_URL",
  "SIGNAL_ACCOUNT",
  "TWILIO_ACCOUNT_SID",
  "TWILIO_AUTH_TOKEN",
  "TWILIO_PHONE_NUMBER",
  "MATTERMOST_TOKEN",
  "MATTERMOST_URL",
  // Also the ha_* tools' token: a clone that needs them gets its own (two gateways would both answer HA).
  "HASS_TOKEN",
  "MATRIX_HOMESERVER",
  "MATRIX_ACCESS_TOKEN",
  "MATRIX_USER_ID",
  "MATRIX_PASSWORD",
  "WHATSAPP_ENABLED",
  "WHATSAPP_CLOUD_ACCESS_TOKEN",
  "WHATSAPP_CLOUD_PHONE_NUMBER_ID",
  "WHATSAPP_CLOUD_APP_SECRET",
];
const CHANNEL_ENV_KEYS = new RegExp(`^(?:export\\s+)?(${CHANNEL_ENV_NAMES.join("|")})\\s*=`);
/** Pairing approvals and chat → session maps belong to the source's bots. */
const CHANNEL_STATE = ["pairing", "sessions/sessions.json"];

const PLACEHOLDER_ENV =
  "# Per-profile secrets for this Hermes profile.\n" +
  "# API keys and tokens set here override the shell environment.\n" +
  "# Behavioural settings belong in config.yaml, not here.\n";

export interface ProfileInfo {
  name: string;
  path: string;
  /** The root home `~/.hermes`. */
  isDefault: boolean;
  /** The sticky profile of `~/.hermes/active_profile` (the root when there is none). */
  isActive: boolean;
  model: string | undefined;
  provider: string | undefined;
  hasEnv: boolean;
  skillCount: number;
}

/** A profile's home directory; `default` is `~/.hermes`. Throws ProfileNameError for a bad name. */
export function profileDir(name: string, userHome: string): string {
  validateProfileName(name);
  return name === DEFAULT_PROFILE ? join(userHome, ".hermes") : join(profilesRoot(userHome), name);
}

/** Whether a profile's directory exists (`default` always does, even before its first run). */
export function profileExists(name: string, userHome: string): boolean {
  return name === DEFAULT_PROFILE || isDir(profileDir(name, userHome));
}

/** The sticky profile's name (`default` when none is set). */
export function activeProfile(userHome: string): string {
  return readActiveProfile(userHome) ?? DEFAULT_PROFILE;
}

/**
 * The profile a home directory is: `default` for `~/.hermes`, NAME for `~/.hermes/profiles/NAME`,
 * undefined for any other directory (a custom HERMES_HOME, which upstream calls "custom").
 */
export function profileNameForHome(home: string, userHome: string): string | undefined {
  const dir = resolve(home);
  if (dir === resolve(userHome, ".hermes")) return DEFAULT_PROFILE;
  const root = resolve(profilesRoot(userHome));
  if (dirname(dir) !== root) return undefined;
  const name = basename(dir);
  return validName(name) ? name : undefined;
}

/** `default` and every named profile directory, sorted by name after `default`. */
export function listProfiles(userHome: string): ProfileInfo[] {
  const names = [DEFAULT_PROFILE];
  const root = profilesRoot(userHome);
  if (isDir(root)) {
    for (const entry of readdirSync(root, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      // Staging directories (`.name.staging-pid`) and anything not a valid name are not profiles.
      if (entry.isDirectory() && validName(entry.name) && entry.name !== DEFAULT_PROFILE)
        names.push(entry.name);
    }
  }
  return names.map((name) => profileInfo(name, userHome));
}

/** One profile's summary. Throws ProfileError when the profile does not exist. */
export function profileInfo(name: string, userHome: string): ProfileInfo {
  const path = existingProfile(name, userHome);
  const { model, provider } = readModel(path);
  return {
    name,
    path,
    isDefault: name === DEFAULT_PROFILE,
    isActive: activeProfile(userHome) === name,
    model,
    provider,
    hasEnv: existsSync(join(path, ".env")),
    skillCount: countSkills(join(path, "skills")),
  };
}

/** Makes `name` the sticky profile; `default` removes the file. Throws ProfileError when it does not exist. */
export function setActiveProfile(name: string, userHome: string): void {
  existingProfile(name, userHome);
  const path = activeProfilePath(userHome);
  if (name === DEFAULT_PROFILE) {
    rmSync(path, { force: true });
    return;
  }
  mkdirSync(join(userHome, ".hermes"), { recursive: true });
  atomicWriteFileSync(path, `${name}\n`);
}

export interface CreateProfileOptions {
  name: string;
  userHome: string;
  /**
   * The home to copy from (the active one for `--clone`/`--clone-all`, or `--clone-from`'s).
   * Absent: a fresh profile whose config.yaml gets `seedModelFrom`'s model section.
   */
  cloneFrom?: string | undefined;
  /** `--clone-all`: everything but history, runtime files and (from the root) other profiles. */
  cloneAll?: boolean | undefined;
  /** A fresh profile copies the model section of this home's config.yaml, so it can chat at once. */
  seedModelFrom?: string | undefined;
}

export interface CreatedProfile {
  path: string;
  /** Messaging settings left out of the clone (`.env` keys and state files), to tell the user. */
  strippedChannels: string[];
}

/**
 * Creates a profile. It is built in a hidden sibling directory and published with one rename, so a
 * half-copied profile (with credentials not yet stripped) is never visible under its name.
 * Throws ProfileError for a reserved or existing name or a missing clone source.
 */
export function createProfile(options: CreateProfileOptions): CreatedProfile {
  const { name, userHome } = options;
  assertNewName(name);
  const target = profileDir(name, userHome);
  if (existsSync(target)) throw new ProfileError(`profile "${name}" already exists at ${target}`);
  if (options.cloneFrom !== undefined && !isDir(options.cloneFrom)) {
    throw new ProfileError(`the profile to clone from does not exist: ${options.cloneFrom}`);
  }
  const staging = join(profilesRoot(userHome), `.${name}.staging-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(profilesRoot(userHome), { recursive: true });
  let strippedChannels: string[] = [];
  try {
    if (options.cloneFrom !== undefined && options.cloneAll) {
      cloneAll(options.cloneFrom, staging, userHome);
    } else {
      mkdirSync(staging, { recursive: true });
      if (options.cloneFrom !== undefined) cloneConfig(options.cloneFrom, staging);
      else if (options.seedModelFrom !== undefined) seedModel(options.seedModelFrom, staging);
    }
    for (const dir of PROFILE_DIRS) mkdirSync(join(staging, dir), { recursive: true });
    if (options.cloneFrom !== undefined) strippedChannels = stripChannels(staging);
    const env = join(staging, ".env");
    if (!existsSync(env)) writeFileSync(env, PLACEHOLDER_ENV, { mode: 0o600 });
    chmodSync(env, 0o600);
    renameSync(staging, target);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  return { path: target, strippedChannels };
}

/**
 * Deletes a named profile's directory and, when it was the sticky profile, goes back to `default`.
 * Returns whether the sticky profile was reset. Throws ProfileError for `default` or a missing one.
 */
export function deleteProfile(name: string, userHome: string): { path: string; wasActive: boolean } {
  if (name === DEFAULT_PROFILE) {
    throw new ProfileError("the default profile is the root home (~/.hermes) and cannot be deleted");
  }
  const path = existingProfile(name, userHome);
  const wasActive = activeProfile(userHome) === name;
  rmSync(path, { recursive: true, force: true });
  if (wasActive) setActiveProfile(DEFAULT_PROFILE, userHome);
  return { path, wasActive };
}

/** Renames a named profile (its directory and the sticky file when it named it). Throws ProfileError. */
export function renameProfile(
  from: string,
  to: string,
  userHome: string,
): { path: string; wasActive: boolean } {
  if (from === DEFAULT_PROFILE) {
    throw new ProfileError("the default profile is the root home (~/.hermes) and cannot be renamed");
  }
  const source = existingProfile(from, userHome);
  assertNewName(to);
  const target = profileDir(to, userHome);
  if (existsSync(target)) throw new ProfileError(`profile "${to}" already exists at ${target}`);
  const wasActive = activeProfile(userHome) === from;
  renameSync(source, target);
  if (wasActive) setActiveProfile(to, userHome);
  return { path: target, wasActive };
}

/** The directory of an existing profile; ProfileError naming `hermes profile create` otherwise. */
export function existingProfile(name: string, userHome: string): string {
  const path = profileDir(name, userHome);
  if (name !== DEFAULT_PROFILE && !isDir(path)) {
    throw new ProfileError(`profile "${name}" does not exist. Create it with: hermes profile create ${name}`);
  }
  return path;
}

/** A name a new profile may take: valid as a directory and not reserved. */
export function assertNewName(name: string): void {
  validateProfileName(name);
  if (RESERVED_PROFILE_NAMES.has(name)) {
    throw new ProfileError(
      name === DEFAULT_PROFILE
        ? 'the name "default" is the root home (~/.hermes); pick another name'
        : `the profile name "${name}" is reserved (it would clash with a command of that name); pick another name`,
    );
  }
}

function cloneConfig(source: string, target: string): void {
  for (const rel of CLONE_FILES) {
    const from = join(source, rel);
    if (!isFile(from)) continue;
    mkdirSync(join(target, rel, ".."), { recursive: true });
    cpSync(from, join(target, rel));
  }
  const skills = join(source, "skills");
  if (isDir(skills)) cpSync(skills, join(target, "skills"), { recursive: true, verbatimSymlinks: true });
}

function cloneAll(source: string, target: string, userHome: string): void {
  const fromRoot = source === join(userHome, ".hermes");
  mkdirSync(target, { recursive: true });
  // Entry by entry: from the root home, the staging directory itself lies under `profiles/`,
  // which a single recursive copy of the root would refuse (and must not copy anyway).
  for (const entry of readdirSync(source)) {
    if (CLONE_ALL_HISTORY.has(entry) || (fromRoot && CLONE_ALL_ROOT_INFRA.has(entry))) continue;
    cpSync(join(source, entry), join(target, entry), {
      recursive: true,
      verbatimSymlinks: true,
      filter: (path) => !/(^|\/)__pycache__$/.test(path) && !path.endsWith(".sock"),
    });
  }
  for (const name of CLONE_ALL_RUNTIME) rmSync(join(target, name), { force: true });
  // A symlinked file the clone edits below would be edited through the link, in the source.
  for (const name of [".env", "config.yaml", "auth.json", "SOUL.md"]) materialize(join(target, name));
  dropOAuthGrants(join(target, "auth.json"));
}

/** Replaces a symlink with a private copy of what it points to (drops a dangling one). */
function materialize(path: string): void {
  let link: boolean;
  try {
    link = lstatSync(path).isSymbolicLink();
  } catch {
    return;
  }
  if (!link) return;
  let content: Buffer | undefined;
  try {
    content = readFileSync(path);
  } catch {
    content = undefined;
  }
  unlinkSync(path);
  if (content !== undefined) writeFileSync(path, content, { mode: 0o600 });
}

/**
 * OAuth logins (`providers` in auth.json) hold single-use refresh tokens: two profiles refreshing
 * one grant revoke it for both. The clone keeps its API keys and logs in again where it needs to.
 */
function dropOAuthGrants(path: string): void {
  if (!isFile(path)) return;
  try {
    const data = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    if (data["providers"] && typeof data["providers"] === "object") {
      data["providers"] = {};
      writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    }
  } catch {
    // An unreadable auth.json is copied as is; the clone reports it like the source would.
  }
}

function stripChannels(target: string): string[] {
  const stripped: string[] = [];
  const env = join(target, ".env");
  if (isFile(env)) {
    const lines = readFileSync(env, "utf8").split("\n");
    const kept = lines.filter((line) => {
      const match = CHANNEL_ENV_KEYS.exec(line.trim());
      if (match?.[1]) stripped.push(match[1]);
      return !match;
    });
    if (kept.length !== lines.length) writeFileSync(env, kept.join("\n"), { mode: 0o600 });
  }
  for (const rel of CHANNEL_STATE) {
    if (existsSync(join(target, rel))) {
      rmSync(join(target, rel), { recursive: true, force: true });
      stripped.push(rel);
    }
  }
  return stripped;
}

function seedModel(source: string, target: string): void {
  const raw = readConfig(source);
  const model = raw?.["model"];
  if (model === undefined || model === null || model === "") return;
  writeFileSync(join(target, "config.yaml"), stringifyYaml({ model }));
}

function readModel(home: string): { model: string | undefined; provider: string | undefined } {
  const model = readConfig(home)?.["model"];
  if (typeof model === "string") return { model: model || undefined, provider: undefined };
  if (model && typeof model === "object") {
    const section = model as Record<string, unknown>;
    const name = section["default"] ?? section["model"];
    return {
      model: typeof name === "string" && name ? name : undefined,
      provider: typeof section["provider"] === "string" ? section["provider"] : undefined,
    };
  }
  return { model: undefined, provider: undefined };
}

/** A home's config.yaml as written, or undefined when it is missing or does not parse (a summary never fails). */
function readConfig(home: string): Record<string, unknown> | undefined {
  try {
    const data: unknown = parseYaml(readFileSync(join(home, "config.yaml"), "utf8"));
    return data && typeof data === "object" ? (data as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function countSkills(dir: string): number {
  if (!isDir(dir)) return 0;
  let count = 0;
  const walk = (path: string, depth: number): void => {
    if (depth > 6) return;
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      // Archived and hub-internal skills are not installed ones.
      if (entry.name.startsWith(".")) continue;
      if (entry.isDirectory()) walk(join(path, entry.name), depth + 1);
      else if (entry.name === "SKILL.md") count++;
    }
  };
  walk(dir, 0);
  return count;
}

function validName(name: string): boolean {
  try {
    validateProfileName(name);
    return true;
  } catch {
    return false;
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return lstatSync(path).isFile() || lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
