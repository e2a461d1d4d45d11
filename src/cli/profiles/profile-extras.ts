/**
 * The `hermes profile` subcommands about a profile's surroundings rather than its home: `alias`
 * (the `~/.local/bin/NAME` wrapper), `describe` (its one-line description) and `info` (the
 * distribution it was installed from), plus the alias upkeep `create`, `delete` and `rename` do.
 */
import { existsSync } from "node:fs";
import { basename, delimiter, isAbsolute, join, resolve } from "node:path";
import { ProfileError } from "../../config/errors.js";
import { DEFAULT_PROFILE } from "../../config/home.js";
import {
  aliasCollision,
  aliasDirOnPath,
  aliasesOf,
  removeAlias,
  writeAlias,
} from "../../config/profile-alias.js";
import { readDistribution, readProfileMeta, setProfileDescription } from "../../config/profile-meta.js";
import { existingProfile, listProfiles } from "../../config/profiles.js";
import { CliFailure } from "../command.js";
import type { CliIo } from "../io.js";

export interface ExtrasCtx {
  io: CliIo;
  userHome: string;
  /** Every `hermes` command word: an alias may not take one (`chat` would read as `hermes chat`). */
  commandNames: readonly string[];
}

/**
 * The `hermes` a wrapper runs: the launcher running now (so the alias runs this installation),
 * else `hermes` found on PATH, else the bare word for the shell to find.
 */
export function hermesLauncher(env: Record<string, string | undefined>, argv1 = process.argv[1]): string {
  if (argv1 && basename(argv1) === "hermes" && isAbsolute(resolve(argv1))) return resolve(argv1);
  for (const dir of (env["PATH"] ?? "").split(delimiter)) {
    if (dir && isAbsolute(dir) && existsSync(join(dir, "hermes"))) return join(dir, "hermes");
  }
  return "hermes";
}

/** `hermes profile alias NAME [--remove] [--name ALIAS]`. */
export function aliasAction(
  { io, userHome, commandNames }: ExtrasCtx,
  profile: string,
  flags: { remove?: boolean; name?: string },
): number {
  const alias = flags.name ?? profile;
  if (flags.remove) {
    const path = removeAlias(alias, userHome, profile === DEFAULT_PROFILE ? undefined : profile);
    io.out(`Removed alias ${path}`);
    return 0;
  }
  if (profile !== DEFAULT_PROFILE) existingProfile(profile, userHome);
  const path = writeAlias({
    alias,
    profile,
    userHome,
    launcher: hermesLauncher(io.env),
    pathEnv: io.env["PATH"],
    commandNames,
  });
  io.out(`Alias ${path} runs: hermes -p ${profile} "$@"`);
  io.out(`Try it: ${alias} chat`);
  if (!aliasDirOnPath(userHome, io.env["PATH"])) pathHint(io, userHome);
  return 0;
}

/**
 * After `profile create`: the alias upstream makes by default, named after the profile. A name
 * that clashes (a command on PATH, a file that is not ours) only skips it, with the reason; the
 * profile is made either way.
 */
export function aliasAfterCreate({ io, userHome, commandNames }: ExtrasCtx, profile: string): void {
  const check = { alias: profile, userHome, pathEnv: io.env["PATH"], commandNames };
  const clash = aliasCollision(check);
  if (clash) {
    io.err(
      `No alias made: ${clash}. Make one under another name with: hermes profile alias ${profile} --name OTHER`,
    );
    return;
  }
  try {
    const path = writeAlias({ ...check, profile, launcher: hermesLauncher(io.env) });
    io.out(
      `Alias: ${path} (so \`${profile} chat\` is \`hermes -p ${profile} chat\`; skip it with --no-alias)`,
    );
    if (!aliasDirOnPath(userHome, io.env["PATH"])) pathHint(io, userHome);
  } catch (error) {
    io.err(`No alias made: ${(error as Error).message}`);
  }
}

/** After `profile delete`: its wrappers go too (only files that are our wrappers for it). */
export function aliasesAfterDelete({ io, userHome }: ExtrasCtx, profile: string): void {
  for (const alias of aliasesOf(profile, userHome)) {
    try {
      io.out(`Removed alias ${removeAlias(alias, userHome, profile)}`);
    } catch (error) {
      io.err(`Alias ${alias} left in place: ${(error as Error).message}`);
    }
  }
}

/**
 * After `profile rename`: each wrapper of the old name runs the new one; the wrapper named after
 * the profile is renamed with it (kept under the old name when the new one clashes).
 */
export function aliasesAfterRename(
  { io, userHome, commandNames }: ExtrasCtx,
  from: string,
  to: string,
): void {
  const launcher = hermesLauncher(io.env);
  const base = { userHome, pathEnv: io.env["PATH"], commandNames, launcher };
  for (const alias of aliasesOf(from, userHome)) {
    try {
      if (alias === from && aliasCollision({ ...base, alias: to }) === null) {
        const path = writeAlias({ ...base, alias: to, profile: to });
        removeAlias(from, userHome, from);
        io.out(`Alias ${path} replaces ${alias}`);
      } else {
        io.out(`Alias ${writeAlias({ ...base, alias, profile: to })} now runs profile "${to}"`);
      }
    } catch (error) {
      io.err(`Alias ${alias} not updated: ${(error as Error).message}`);
    }
  }
}

function pathHint(io: CliIo, userHome: string): void {
  io.err(
    `Note: ${join(userHome, ".local", "bin")} is not on your PATH; add it (e.g. export PATH="$HOME/.local/bin:$PATH" in your shell's rc file) to run the alias by name.`,
  );
}

/** `hermes profile describe [NAME] [--text TEXT] [--all] [--auto]`. */
export async function describeAction(
  { io, userHome }: ExtrasCtx,
  current: string,
  name: string | undefined,
  flags: { text?: string; all?: boolean; auto?: boolean },
): Promise<number> {
  if (flags.auto) {
    if (flags.text !== undefined || flags.all) {
      throw new CliFailure("--auto writes one profile's description; it takes no --text or --all", 2);
    }
    const target = name ?? current;
    const dir = existingProfile(target, userHome);
    io.err(`Asking the auxiliary model to describe "${target}"…`);
    const { autoDescribe } = await import("./auto-describe.js");
    let stored: string;
    try {
      stored = await autoDescribe(target, dir, io.env);
    } catch (error) {
      throw new CliFailure(
        `could not generate a description for "${target}": ${(error as Error).message}. Set one yourself with: hermes profile describe ${target} --text "…"`,
        1,
      );
    }
    io.out(`Description of "${target}" (generated; replace it with --text): ${stored}`);
    return 0;
  }
  if (flags.all) {
    if (flags.text !== undefined || name !== undefined) {
      throw new CliFailure("--all lists every profile's description; it takes no NAME or --text", 2);
    }
    for (const p of listProfiles(userHome)) {
      const meta = readProfileMeta(p.path);
      io.out(`${p.name}: ${meta.description || "(no description)"}${meta.descriptionAuto ? " [auto]" : ""}`);
    }
    return 0;
  }
  const target = name ?? current;
  const dir = existingProfile(target, userHome);
  if (flags.text !== undefined) {
    const stored = setProfileDescription(dir, flags.text);
    io.out(stored ? `Description of "${target}": ${stored}` : `Cleared the description of "${target}".`);
    return 0;
  }
  const meta = readProfileMeta(dir);
  io.out(meta.description || `(no description set for '${target}')`);
  return 0;
}

/** `hermes profile info [NAME]`: the distribution a profile was installed from. */
export function infoAction({ io, userHome }: ExtrasCtx, target: string): number {
  const dir = existingProfile(target, userHome);
  let dist: ReturnType<typeof readDistribution>;
  try {
    dist = readDistribution(dir);
  } catch (error) {
    if (error instanceof ProfileError) throw new CliFailure(error.message, 1);
    throw error;
  }
  if (!dist) {
    io.out(`Profile "${target}" was not installed from a distribution (no distribution.yaml in ${dir}).`);
    return 0;
  }
  const lines = [`Distribution: ${dist.name}@${dist.version}`];
  if (dist.description) lines.push(`Description:  ${dist.description}`);
  if (dist.hermesRequires) lines.push(`Requires:     hermes ${dist.hermesRequires}`);
  if (dist.author) lines.push(`Author:       ${dist.author}`);
  if (dist.license) lines.push(`License:      ${dist.license}`);
  lines.push(`Source:       ${dist.source || "(not recorded)"}`);
  lines.push(`Installed:    ${dist.installedAt || "(not recorded)"}`);
  if (dist.envRequires.length > 0) {
    lines.push("Environment:");
    for (const env of dist.envRequires) {
      const extra = [
        env.required ? "required" : "optional",
        env.default !== undefined ? `default ${env.default}` : "",
      ]
        .filter(Boolean)
        .join(", ");
      lines.push(`  ${env.name} (${extra})${env.description ? ` — ${env.description}` : ""}`);
    }
  }
  io.out(lines.join("\n"));
  return 0;
}
