/**
 * Files the model must never write: credentials and the system's account and sudo files. A
 * prompt-injected "fix" to one of these is how an agent gets turned against its user, so the file
 * tools refuse them outright (the terminal has its own approval guard).
 */
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import type { ToolContext } from "../types.js";
import { displayPath } from "./shared.js";

const HOME_CREDENTIAL_FILES: Record<string, string> = {
  ".netrc": "a credentials file (.netrc)",
  ".pgpass": "a credentials file (.pgpass)",
  ".npmrc": "a credentials file (.npmrc)",
  ".pypirc": "a credentials file (.pypirc)",
  ".git-credentials": "a credentials file (.git-credentials)",
};

const SYSTEM_FILES: Record<string, string> = {
  "/etc/passwd": "the system account database",
  "/etc/shadow": "the system password database",
  "/etc/gshadow": "the system group password database",
  "/etc/sudoers": "the sudo policy",
};

const HERMES_SECRET_FILES: Record<string, string> = {
  ".env": "a Hermes secrets file (.env)",
  "auth.json": "the Hermes credential store (auth.json)",
  ".anthropic_oauth.json": "a Hermes OAuth token file",
};

function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel !== "" && !rel.startsWith("..") && resolve(dir, rel) === path;
}

/**
 * Why writing `abs` is refused, or undefined when it is allowed. Pure: `userHomes` and
 * `hermesHomes` are the user's home directories and HERMES_HOME (each as given and resolved).
 */
export function sensitiveWriteReason(
  abs: string,
  userHomes: string[],
  hermesHomes: string[],
): string | undefined {
  const name = basename(abs);
  for (const home of userHomes) {
    const ssh = join(home, ".ssh");
    if (dirname(abs) === ssh) {
      if (name === "authorized_keys" || name === "authorized_keys2") return "the SSH authorized keys file";
      if (name === "config") return "the SSH client config";
      if (name.startsWith("id_")) return "an SSH key";
    }
    if (dirname(abs) === home && HOME_CREDENTIAL_FILES[name]) return HOME_CREDENTIAL_FILES[name];
  }
  const system = SYSTEM_FILES[abs];
  if (system) return system;
  if (isInside(abs, "/etc/sudoers.d")) return "the sudo policy";
  const hermesSecret = HERMES_SECRET_FILES[name];
  if (hermesSecret && hermesHomes.some((home) => isInside(abs, home))) return hermesSecret;
  return undefined;
}

/** `path` with symlinks resolved as far as it exists, so a link cannot smuggle a write past the guard. */
function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realPathOf(parent), basename(path));
  }
}

/** Throws an error the model can act on when `abs` is a protected file. */
export function assertWritable(ctx: ToolContext, abs: string): void {
  const homes = new Set([homedir()]);
  if (ctx.env.HOME) homes.add(resolve(ctx.env.HOME));
  const userHomes = [...homes].flatMap((h) => [h, realPathOf(h)]);
  const hermesHomes = [resolve(ctx.home), realPathOf(resolve(ctx.home))];
  for (const candidate of new Set([abs, realPathOf(abs)])) {
    const reason = sensitiveWriteReason(candidate, userHomes, hermesHomes);
    if (reason) {
      throw new Error(
        `Refusing to write ${displayPath(abs, ctx.cwd)}: it is ${reason}. ` +
          "The file tools never modify credential or system account files; ask the user to make this change.",
      );
    }
  }
}
