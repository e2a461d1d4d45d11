/**
 * `hermes memory pending|approve|reject`: memory writes the agent staged while
 * `memory.write_approval` is on, added to `hermes memory` (memory.ts, which has the provider verbs
 * `setup|status|off|reset`). Exit codes: 0 done, 1 an
 * id was unknown or a write could not be applied, 2 usage or configuration error.
 */
import { type Command, Option } from "commander";
import { loadEnvFile } from "../../config/env-file.js";
import { ConfigError, ProfileNameError } from "../../config/errors.js";
import { resolveHome } from "../../config/home.js";
import { loadConfig } from "../../config/load.js";
import type { CliIo, SubcommandOptions } from "../subcommands.js";
import { approveCli, type PendingCliContext, pendingListCli, rejectCli } from "./write-approval.js";

/**
 * Loads the home (`-p` here, before the subcommand, or on `hermes`) and its config, then runs
 * `body`; configuration problems are exit 2 with the reason on stderr.
 */
export function pendingRunner(
  name: string,
  io: CliIo,
  root: Command,
  options: SubcommandOptions,
  setExit: (code: number) => void,
) {
  return <A extends unknown[]>(body: (ctx: PendingCliContext, ...args: A) => Promise<number> | number) =>
    async (...args: A) => {
      const cmd = args[args.length - 1] as Command;
      const profile =
        cmd.opts<{ profile?: string }>().profile ??
        root.opts<{ profile?: string }>().profile ??
        options.profile;
      try {
        const home = resolveHome({ env: io.env, ...(profile ? { profile } : {}) });
        const { env } = loadEnvFile(home, io.env);
        const loaded = loadConfig({ home, env });
        for (const warning of loaded.warnings) io.err(`hermes ${name}: warning: ${warning}`);
        setExit(await body({ home, config: loaded.config, io }, ...args));
      } catch (error) {
        if (error instanceof ProfileNameError || error instanceof ConfigError) {
          io.err(`hermes ${name}: ${error.message}`);
          setExit(2);
          return;
        }
        throw error;
      }
    };
}

const profileOption = () => new Option("-p, --profile <name>", "use ~/.hermes/profiles/<name> as the home");

/** Adds `pending`, `approve` and `reject` to `hermes memory` (built in memory.ts). */
export function addMemoryPendingCommands(
  root: Command,
  io: CliIo,
  options: SubcommandOptions,
  setExit: (code: number) => void,
): void {
  const run = pendingRunner("memory", io, root, options, setExit);

  root
    .command("pending")
    .alias("list")
    .description("list memory writes the agent staged for approval")
    .option("--json", "print JSON")
    .addOption(profileOption())
    .action(run((ctx, flags: { json?: boolean }) => pendingListCli(ctx, "memory", flags)));

  root
    .command("approve")
    .description(
      "apply a staged memory write (or all of them), with the same limits and checks as a direct write",
    )
    .argument("<id>", "the pending id, or all")
    .option("--json", "print JSON")
    .addOption(profileOption())
    .action(run((ctx, id: string, flags: { json?: boolean }) => approveCli(ctx, "memory", id, flags)));

  root
    .command("reject")
    .description("drop a staged memory write (or all of them) without applying it")
    .argument("<id>", "the pending id, or all")
    .option("--json", "print JSON")
    .addOption(profileOption())
    .action(run((ctx, id: string, flags: { json?: boolean }) => rejectCli(ctx, "memory", id, flags)));
}
