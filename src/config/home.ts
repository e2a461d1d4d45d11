/**
 * Where Hermes keeps its files (`HERMES_HOME`) and the standard paths inside it, laid out exactly
 * as Python Hermes lays them out so an existing home works unchanged.
 */
import { readFileSync, statSync } from "node:fs";
import { homedir as osHomedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { ProfileError, ProfileNameError } from "./errors.js";

export interface ResolveHomeOptions {
  env: Readonly<Record<string, string | undefined>>;
  /** Profile name from `-p/--profile`. `"default"` names the root home `~/.hermes`. */
  profile?: string | undefined;
  /** The user's home directory; defaults to `os.homedir()`. Injected by tests. */
  homedir?: string | undefined;
}

const PROFILE_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The profile name that means "no profile": the root home itself. */
export const DEFAULT_PROFILE = "default";

/**
 * Resolves HERMES_HOME, as an absolute path.
 *
 * - A profile wins over `HERMES_HOME`: `-p NAME` is `~/.hermes/profiles/NAME`, anchored at the
 *   user's home even when `HERMES_HOME` points elsewhere. Upstream anchors the profiles root the
 *   same way, so one profile name means one directory whatever the environment says; otherwise
 *   `hermes -p work` would silently open a different home in a shell that exports HERMES_HOME.
 * - Otherwise `HERMES_HOME` when set and non-empty (a leading `~` is expanded).
 * - Otherwise `~/.hermes`.
 *
 * Throws {@link ProfileNameError} for a profile name that is not a safe directory name.
 */
export function resolveHome(options: ResolveHomeOptions): string {
  const userHome = options.homedir ?? osHomedir();
  const { profile } = options;
  if (profile !== undefined && profile !== "") {
    validateProfileName(profile);
    if (profile === DEFAULT_PROFILE) return join(userHome, ".hermes");
    return join(profilesRoot(userHome), profile);
  }
  const fromEnv = options.env["HERMES_HOME"]?.trim();
  if (fromEnv) return expandTilde(fromEnv, userHome);
  return join(userHome, ".hermes");
}

/** `~/.hermes/profiles`, always under the user's home directory. */
export function profilesRoot(userHome: string = osHomedir()): string {
  return join(userHome, ".hermes", "profiles");
}

/**
 * Checks that a profile name is 1-64 lowercase letters, digits, `-` or `_`, starting with a letter
 * or digit: safe as one path segment on every filesystem (no separators, no `..`, no case clashes).
 */
export function validateProfileName(name: string): void {
  if (PROFILE_NAME.test(name)) return;
  let reason = "use 1-64 lowercase letters, digits, '-' or '_', starting with a letter or digit";
  if (name.includes("/") || name.includes("\\") || name.includes("..")) {
    reason = `a profile is a single directory name, not a path; ${reason}`;
  }
  throw new ProfileNameError(name, reason);
}

/**
 * `~/.hermes/active_profile`: the profile `hermes profile use NAME` made sticky, read when no
 * `-p` is given. Upstream keeps it at the root home with the same name and format (the name on one
 * line; no file means the root home).
 */
export function activeProfilePath(userHome: string = osHomedir()): string {
  return join(userHome, ".hermes", "active_profile");
}

/**
 * The sticky profile's name, or undefined for the root home (no file, an empty file, "default",
 * or a file that cannot be read). The name is returned as written; the caller validates it.
 */
export function readActiveProfile(userHome: string = osHomedir()): string | undefined {
  let text: string;
  try {
    text = readFileSync(activeProfilePath(userHome), "utf8");
  } catch {
    return undefined;
  }
  const name = text.replace(/^\uFEFF/, "").trim();
  return name === "" || name === DEFAULT_PROFILE ? undefined : name;
}

/**
 * The root home, the one that holds `profiles/`: HERMES_HOME when set (its grandparent when it
 * points at `…/profiles/NAME`, as upstream reads it), else `~/.hermes`. `hermes backup` archives
 * this directory whichever profile is selected.
 */
export function rootHome(env: Readonly<Record<string, string | undefined>>, userHome = osHomedir()): string {
  const fromEnv = env["HERMES_HOME"]?.trim();
  if (!fromEnv) return join(userHome, ".hermes");
  const home = expandTilde(fromEnv, userHome);
  return basename(dirname(home)) === "profiles" ? dirname(dirname(home)) : home;
}

/**
 * The home a command works in when `-p` may be absent: `-p NAME` wins; then HERMES_HOME when it
 * names a directory other than `~/.hermes` (an explicit environment beats a sticky file, and a
 * test's or container's home is never redirected); then the sticky profile of
 * `~/.hermes/active_profile`; then `~/.hermes`.
 *
 * Throws {@link ProfileNameError} for a bad name and {@link ProfileError} when the sticky profile's
 * directory is gone (a `-p NAME` that does not exist yet is left to the command, as before).
 */
export function resolveActiveHome(options: ResolveHomeOptions): string {
  if (options.profile) return resolveHome(options);
  const userHome = options.homedir ?? osHomedir();
  const plain = resolveHome({ ...options, homedir: userHome });
  if (resolve(plain) !== resolve(join(userHome, ".hermes"))) return plain;
  const sticky = readActiveProfile(userHome);
  if (sticky === undefined) return plain;
  const where = activeProfilePath(userHome);
  try {
    validateProfileName(sticky);
  } catch (error) {
    throw new ProfileError(
      `${where} names ${(error as Error).message}; fix it with: hermes profile use default`,
    );
  }
  const dir = join(profilesRoot(userHome), sticky);
  if (!existsDir(dir)) {
    throw new ProfileError(
      `the active profile "${sticky}" (set in ${where}) does not exist at ${dir}. ` +
        `Create it with: hermes profile create ${sticky}, or go back to the default with: hermes profile use default`,
    );
  }
  return dir;
}

function existsDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function expandTilde(path: string, userHome: string): string {
  if (path === "~") return userHome;
  if (path.startsWith("~/")) return join(userHome, path.slice(2));
  return resolve(path);
}

export const configPath = (home: string): string => join(home, "config.yaml");
export const envPath = (home: string): string => join(home, ".env");
export const authPath = (home: string): string => join(home, "auth.json");
export const stateDbPath = (home: string): string => join(home, "state.db");
export const memoriesDir = (home: string): string => join(home, "memories");
export const skillsDir = (home: string): string => join(home, "skills");
export const cronDir = (home: string): string => join(home, "cron");
export const cronJobsPath = (home: string): string => join(home, "cron", "jobs.json");
export const logsDir = (home: string): string => join(home, "logs");
export const soulPath = (home: string): string => join(home, "SOUL.md");
