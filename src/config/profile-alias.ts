/**
 * Profile aliases: a small shell script `~/.local/bin/ALIAS` that runs `hermes -p PROFILE "$@"`,
 * so `coder chat` works like `hermes -p coder chat`. The directory and the script's shape are
 * upstream's (`hermes_cli/profiles.py`), so a wrapper made by Python Hermes is recognised here and
 * the other way round.
 *
 * The writer only ever touches a file it can prove is such a wrapper: anything else at the target
 * (the user's own script, a binary, a symlink, a directory) is refused, never overwritten or
 * removed, and an alias name that would shadow a command on PATH is refused too.
 */
import {
  accessSync,
  closeSync,
  constants,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { ProfileError } from "./errors.js";
import { RESERVED_PROFILE_NAMES } from "./profiles.js";

/** What an alias may be called: one safe file name (the same rule as a profile name). */
const ALIAS_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** How much of a file is read to decide whether it is a wrapper (real ones are ~150 bytes). */
const WRAPPER_READ_LIMIT = 8192;
/** The command line of a wrapper: `exec <…hermes> -p <profile> "$@"`, the launcher possibly quoted. */
const EXEC_LINE =
  /^exec\s+(?:'(?:[^']|'\\'')*hermes'|"[^"]*hermes"|[\w@%+=:,./-]*hermes)\s+-p\s+([a-z0-9][a-z0-9_-]{0,63})\s+"\$@"\s*$/;

/** `~/.local/bin`, where upstream puts its wrappers (usually on PATH already). */
export function aliasDir(userHome: string): string {
  return join(userHome, ".local", "bin");
}

/**
 * Checks that `name` can be a wrapper's file name: 1-64 lowercase letters, digits, `-` or `_`,
 * starting with a letter or digit. It is used verbatim as a path segment, so `../x`, `a/b` and
 * names with spaces are refused here, before any path is built.
 */
export function validateAliasName(name: string): void {
  if (ALIAS_NAME.test(name)) return;
  const hint =
    name.includes("/") || name.includes("\\") || name.includes("..")
      ? " (an alias is a single file name in ~/.local/bin, not a path)"
      : "";
  throw new ProfileError(
    `invalid alias name "${name}"${hint}: use 1-64 lowercase letters, digits, '-' or '_', starting with a letter or digit`,
  );
}

/**
 * The wrapper's text. `launcher` is the `hermes` to run (an absolute path, or `hermes` to find it
 * on PATH at run time); it is shell-quoted only when it needs it, so the line still reads
 * `…hermes -p NAME` as upstream's recogniser expects.
 */
export function wrapperScript(profile: string, launcher: string): string {
  const word = /^[A-Za-z0-9_@%+=:,./-]+$/.test(launcher)
    ? launcher
    : `'${launcher.replaceAll("'", "'\\''")}'`;
  return [
    "#!/bin/sh",
    `# Hermes profile alias for "${profile}"; remove it with: hermes profile alias ${profile} --remove`,
    `exec ${word} -p ${profile} "$@"`,
    "",
  ].join("\n");
}

/**
 * The profile a wrapper at `path` runs, or undefined when `path` is not a wrapper: missing, a
 * symlink (even one to a wrapper: replacing it would write wherever it points), not a regular
 * file, too large, or without the `#!/bin/sh` line and the single `exec … hermes -p NAME "$@"`.
 */
export function wrapperTarget(path: string): string | undefined {
  try {
    const stat = lstatSync(path);
    if (!stat.isFile() || stat.size > WRAPPER_READ_LIMIT) return undefined;
  } catch {
    return undefined;
  }
  let text: string;
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const buffer = Buffer.alloc(WRAPPER_READ_LIMIT);
      const size = readSync(fd, buffer, 0, WRAPPER_READ_LIMIT, 0);
      text = buffer.subarray(0, size).toString("utf8");
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "#!/bin/sh") return undefined;
  const body = lines.slice(1).filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));
  if (body.length !== 1) return undefined;
  return EXEC_LINE.exec(body[0]?.trim() ?? "")?.[1];
}

/** Every alias in `~/.local/bin` that runs `profile`, sorted. */
export function aliasesOf(profile: string, userHome: string): string[] {
  const dir = aliasDir(userHome);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((name) => ALIAS_NAME.test(name) && wrapperTarget(join(dir, name)) === profile).sort();
}

export interface AliasCheck {
  alias: string;
  userHome: string;
  /** The PATH to look for clashing commands in. */
  pathEnv: string | undefined;
  /** `hermes` subcommand names: an alias with one of them reads as a typo of `hermes <name>`. */
  commandNames?: readonly string[];
}

/**
 * Why `alias` cannot be written, or null when it can: an invalid or reserved name, a `hermes`
 * subcommand, something at the target that is not our wrapper, or a command of that name on PATH
 * (which the alias would shadow, or be shadowed by). Our own wrapper at the target is fine.
 */
export function aliasCollision(check: AliasCheck): string | null {
  try {
    validateAliasName(check.alias);
  } catch (error) {
    return (error as Error).message;
  }
  const { alias } = check;
  if (RESERVED_PROFILE_NAMES.has(alias)) return `"${alias}" is a reserved name`;
  if (check.commandNames?.includes(alias)) return `"${alias}" is a hermes subcommand (hermes ${alias})`;
  const target = join(aliasDir(check.userHome), alias);
  const own = refuseForeign(target);
  if (own) return own;
  for (const dir of (check.pathEnv ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, alias);
    if (resolve(candidate) === resolve(target)) continue;
    if (isExecutable(candidate)) return `"${alias}" would clash with the command ${candidate}`;
  }
  return null;
}

export interface WriteAliasOptions extends AliasCheck {
  profile: string;
  /** The `hermes` the wrapper runs. */
  launcher: string;
}

/**
 * Writes (or rewrites) the wrapper `~/.local/bin/ALIAS` for `profile` and returns its path.
 * Throws ProfileError with the reason from {@link aliasCollision}. A new wrapper is published with
 * link(2), which fails rather than replace anything that appeared meanwhile; an existing wrapper of
 * ours is replaced with rename(2), which replaces the directory entry and never writes through it.
 */
export function writeAlias(options: WriteAliasOptions): string {
  const reason = aliasCollision(options);
  if (reason) throw new ProfileError(`cannot create the alias: ${reason}`);
  const dir = aliasDir(options.userHome);
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const target = join(dir, options.alias);
  const temp = join(dir, `.${options.alias}.hermes-alias-${process.pid}`);
  rmSync(temp, { force: true });
  writeFileSync(temp, wrapperScript(options.profile, options.launcher), { mode: 0o755, flag: "wx" });
  try {
    if (wrapperTarget(target) !== undefined) renameSync(temp, target);
    else {
      linkSync(temp, target);
      unlinkSync(temp);
    }
  } catch (error) {
    rmSync(temp, { force: true });
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw new ProfileError(
        `cannot create the alias: ${target} appeared while writing it; nothing was replaced`,
      );
    }
    throw error;
  }
  return target;
}

/**
 * Removes the wrapper `~/.local/bin/ALIAS` and returns its path. Throws ProfileError when there is
 * none, when the file there is not our wrapper (left alone), or, with `profile`, when the wrapper
 * runs another profile.
 */
export function removeAlias(alias: string, userHome: string, profile?: string): string {
  validateAliasName(alias);
  const target = join(aliasDir(userHome), alias);
  const foreign = refuseForeign(target);
  if (foreign) throw new ProfileError(`cannot remove the alias: ${foreign}`);
  const runs = wrapperTarget(target);
  if (runs === undefined) throw new ProfileError(`there is no alias ${target}`);
  if (profile !== undefined && runs !== profile) {
    throw new ProfileError(
      `${target} runs profile "${runs}", not "${profile}"; remove it with: hermes profile alias ${runs} --remove --name ${alias}`,
    );
  }
  unlinkSync(target);
  return target;
}

/** Whether `~/.local/bin` is on PATH (the alias only works as a bare command when it is). */
export function aliasDirOnPath(userHome: string, pathEnv: string | undefined): boolean {
  const dir = resolve(aliasDir(userHome));
  return (pathEnv ?? "").split(delimiter).some((entry) => entry !== "" && resolve(entry) === dir);
}

/** The reason the entry at `target` may not be touched, or null when it is absent or our wrapper. */
function refuseForeign(target: string): string | null {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(target);
  } catch {
    return null;
  }
  if (stat.isSymbolicLink()) return `${target} is a symlink, not a Hermes alias; it was left alone`;
  if (!stat.isFile()) return `${target} exists and is not a file; it was left alone`;
  if (wrapperTarget(target) === undefined) {
    return `${target} exists and is not a Hermes alias; it was left alone (pick another name with --name)`;
  }
  return null;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return !statSync(path).isDirectory();
  } catch {
    return false;
  }
}
