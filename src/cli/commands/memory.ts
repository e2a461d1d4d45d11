/**
 * `hermes memory status|setup|off|reset`: the built-in stores and the external memory provider
 * (`memory.provider`) from the command line. Results go to stdout, questions and notes to stderr.
 * Exit codes: 0 success (or a question answered no), 1 the task failed (a file that cannot be
 * written, a lock held too long), 2 usage or configuration error (an unknown provider, a reset
 * that needs -y when nobody can be asked).
 */

import { Command, Option } from "commander";
import { ConfigError, ProfileNameError } from "../../config/errors.js";
import { resolveHome } from "../../config/home.js";
import { FileLockTimeoutError } from "../../util/file-lock.js";
import {
  CliFailure,
  type CliIo,
  createCliIo,
  parseSubcommands,
  type SubcommandOptions,
  withDefaultSubcommand,
} from "../subcommands.js";
import {
  offCommand,
  type ResetTarget,
  resetCommand,
  type SetupFlags,
  setupCommand,
  statusCommand,
} from "./memory/provider-commands.js";
import { addMemoryPendingCommands } from "./memory-pending.js";
import { confirmOrFail } from "./skills/io.js";

export type MemoryCommandOptions = SubcommandOptions;

/** Runs `hermes memory <argv…>` and returns the exit code. Never throws for expected failures. */
export async function runMemoryCommand(
  argv: readonly string[],
  options: MemoryCommandOptions = {},
): Promise<number> {
  const io = createCliIo(options);
  let exitCode = 0;
  const program = buildProgram(io, options, (code) => {
    exitCode = code;
  });
  // `hermes memory` alone shows the status, as upstream does.
  const args = withDefaultSubcommand(argv, "status");
  const failed = await parseSubcommands(program, args, (error) => reportFailure(error, io));
  return failed ?? exitCode;
}

function reportFailure(error: unknown, io: CliIo): number {
  if (error instanceof CliFailure) {
    io.err(`hermes memory: ${error.message}`);
    return error.exitCode;
  }
  if (error instanceof ConfigError) {
    io.err(
      `hermes memory: ${error.message}\nFix the file (hermes config edit) or check it with: hermes config check`,
    );
    return 2;
  }
  if (error instanceof FileLockTimeoutError) {
    io.err(`hermes memory: ${error.message}`);
    return 1;
  }
  io.err(`hermes memory: ${error instanceof Error ? error.message : String(error)}`);
  return 1;
}

const profileOption = () => new Option("-p, --profile <name>", "use ~/.hermes/profiles/<name> as the home");

function buildProgram(io: CliIo, options: MemoryCommandOptions, setExit: (code: number) => void): Command {
  const root = new Command("hermes memory")
    .description("Built-in memory (MEMORY.md, USER.md) and the external memory provider (memory.provider)")
    .exitOverride()
    .showSuggestionAfterError(true)
    .addOption(profileOption())
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });

  /** Runs one subcommand against the home chosen by `-p` (here, before the subcommand, or on `hermes`). */
  const run =
    <A extends unknown[]>(body: (home: string, ...args: A) => Promise<number> | number) =>
    async (...args: A) => {
      const cmd = args[args.length - 1] as Command;
      const profile =
        cmd.opts<{ profile?: string }>().profile ??
        root.opts<{ profile?: string }>().profile ??
        options.profile;
      let home: string;
      try {
        home = resolveHome({ env: io.env, ...(profile ? { profile } : {}) });
      } catch (error) {
        if (error instanceof ProfileNameError) {
          io.err(`hermes memory: ${error.message}`);
          setExit(2);
          return;
        }
        throw error;
      }
      try {
        setExit(await body(home, ...args));
      } catch (error) {
        setExit(reportFailure(error, io));
      }
    };

  root
    .command("status")
    .description("show the built-in stores and whether the memory provider is on, and why not")
    .option("--json", "print JSON")
    .addOption(profileOption())
    .action(run((home, flags: { json?: boolean }) => statusCommand(home, flags, io)));

  root
    .command("setup")
    .description("choose and configure a memory provider (honcho), or none for built-in only")
    .argument("[provider]", "honcho, or none")
    .option("--non-interactive", "ask nothing: take every value from the flags and defaults")
    .option("--api-key <key>", "Honcho API key (saved to .env as HONCHO_API_KEY)")
    .option("--base-url <url>", "a self-hosted Honcho (a local one needs no key)")
    .option("--workspace <id>", "Honcho workspace (default: the host key, hermes)")
    .option("--peer-name <name>", "who you are to Honcho (default: your login name)")
    .option("--ai-peer <name>", "the agent's peer (default: the host key, hermes)")
    .option("--recall-mode <mode>", "hybrid (context and tools), context, or tools")
    .addOption(profileOption())
    .action(
      run((home, provider: string | undefined, flags: SetupFlags) => setupCommand(home, provider, flags, io)),
    );

  root
    .command("off")
    .description("turn the memory provider off (built-in memory only); its settings are kept")
    .addOption(profileOption())
    .action(run((home) => offCommand(home, io)));

  root
    .command("reset")
    .description("erase built-in memory: MEMORY.md and USER.md (the provider's memory is not touched)")
    .addOption(
      new Option("--target <target>", "which store").choices(["all", "memory", "user"]).default("all"),
    )
    .option("-y, --yes", "do not ask for confirmation")
    .addOption(profileOption())
    .action(
      run((home, flags: { target: ResetTarget; yes?: boolean }) =>
        resetCommand(
          home,
          flags.target,
          (question) => confirmOrFail({ ...io, cwd: "" }, question, "reset", flags.yes),
          io,
        ),
      ),
    );

  addMemoryPendingCommands(root, io, options, setExit);
  return root;
}
