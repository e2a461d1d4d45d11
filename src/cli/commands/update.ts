/**
 * `hermes update [--check] [-y]`: compares the installed version with the latest on the npm
 * registry (`npm_config_registry`, default registry.npmjs.org) and says how to upgrade for the way
 * this copy was installed (update/install-method.ts). Without `--check`, an out-of-date global
 * install or git checkout is upgraded by running those steps once the user agrees (or with `-y`);
 * other installs get the command to run.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline/promises";
import { hermesVersion } from "../../util/version.js";
import { CliFailure, type CommandContext, defineCommand } from "../command.js";
import { compareVersions, detectInstallMethod, type InstallMethod } from "../update/install-method.js";
import { latestVersion, registryUrl, UpdateCheckError } from "../update/registry.js";

interface UpdateFlags {
  check?: boolean;
  yes?: boolean;
}

interface Installed {
  root: string | undefined;
  name: string;
  version: string;
}

/** The package this CLI runs from: found upwards from the script's real path. */
export function installedPackage(script: string | undefined): Installed {
  const version = hermesVersion();
  if (script) {
    let dir: string;
    try {
      dir = dirname(realpathSync(script));
    } catch {
      dir = dirname(script);
    }
    for (let i = 0; i < 4; i++, dir = dirname(dir)) {
      const file = join(dir, "package.json");
      if (!existsSync(file)) continue;
      try {
        const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; bin?: Record<string, string> };
        if (pkg.bin?.["hermes"] && pkg.name) return { root: dir, name: pkg.name, version };
      } catch {
        // Not ours; keep looking upwards.
      }
    }
  }
  return { root: undefined, name: "hermes-agent", version };
}

/** The version in `root/package.json` now (after an upgrade rewrote it), if readable. */
function installedVersionAt(root: string | undefined): string | undefined {
  if (!root) return undefined;
  try {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : undefined;
  } catch {
    return undefined;
  }
}

const shellLine = (steps: readonly string[][]): string => steps.map((s) => s.join(" ")).join(" && ");

function upgradeLines(method: InstallMethod): string[] {
  const where = method.cwd && method.kind !== "git" ? ` (in ${method.cwd})` : "";
  return [`Installed as ${method.description}. To upgrade${where}:`, `  ${shellLine(method.steps)}`];
}

async function agreed(ctx: CommandContext, method: InstallMethod): Promise<boolean> {
  const stdin = ctx.io.stdin;
  if (!stdin.isTTY) return false;
  const rl = createInterface({ input: stdin, output: ctx.io.stderr });
  try {
    const answer = await rl.question(`Run ${shellLine(method.steps)}? [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

async function update(ctx: CommandContext, flags: UpdateFlags): Promise<number> {
  const { io } = ctx;
  const installed = installedPackage(process.argv[1]);
  const registry = registryUrl(io.env);
  const latest = await latestVersion(installed.name, registry);
  const order = compareVersions(installed.version, latest);
  if (order >= 0) {
    const note = order > 0 ? ` (newer than the registry's latest, ${latest})` : "";
    io.out(`hermes ${installed.version} is up to date${note}.`);
    return 0;
  }
  const method = installed.root
    ? detectInstallMethod(installed.root, installed.name, existsSync(join(installed.root, ".git")))
    : detectInstallMethod("", installed.name, false);
  io.out(`hermes ${installed.version} is installed; ${latest} is the latest on ${registry}.`);
  const lines = upgradeLines(method);
  if (flags.check) {
    for (const line of lines) io.out(line);
    return 0;
  }
  if (!method.automatic) {
    for (const line of lines) io.out(line);
    io.err(`hermes update: cannot upgrade ${method.description} by itself; run the command above.`);
    return 1;
  }
  if (!flags.yes && !(await agreed(ctx, method))) {
    for (const line of lines) io.out(line);
    io.err("Nothing was changed. Run the command above, or hermes update -y to let hermes run it.");
    return 1;
  }
  for (const step of method.steps) {
    io.err(`$ ${step.join(" ")}`);
    const [command = "", ...args] = step;
    const result = spawnSync(command, args, {
      cwd: method.cwd,
      stdio: "inherit",
      env: io.env as NodeJS.ProcessEnv,
    });
    if (result.error || result.status !== 0) {
      const why = result.error ? result.error.message : `exit code ${result.status ?? result.signal}`;
      throw new CliFailure(
        `${step.join(" ")} failed (${why}); hermes ${installed.version} is unchanged or partly updated. Run it by hand to see why.`,
        1,
      );
    }
  }
  const now = installedVersionAt(installed.root) ?? latest;
  io.out(`Upgraded to hermes ${now}. Restart a running gateway (hermes gateway stop, then start) to use it.`);
  return 0;
}

export const updateCommand = defineCommand({
  name: "update",
  description: "compare the installed version with the registry's latest and upgrade (or say how)",
  needs: "nothing",
  expected: (error) => (error instanceof UpdateCheckError ? 1 : undefined),
  parse: (cmd) =>
    cmd
      .option("--check", "only say whether a newer version exists and how to upgrade")
      .option("-y, --yes", "run the upgrade without asking"),
  run: (ctx, flags: UpdateFlags) => update(ctx, flags),
});
