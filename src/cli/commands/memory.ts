/**
 * `hermes memory status|setup|off|reset`: the built-in stores and the external memory provider
 * (`memory.provider`) from the command line; `pending|approve|reject`: memory writes staged for
 * approval (memory-pending.ts). Results go to stdout, questions and notes to stderr.
 * Exit codes: 0 success (or a question answered no), 1 the task failed (a file that cannot be
 * written, a lock held too long), 2 usage or configuration error (an unknown provider, a reset
 * that needs -y when nobody can be asked).
 */

import { Option } from "commander";
import { FileLockTimeoutError } from "../../util/file-lock.js";
import { defineCommand } from "../command.js";
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

/** `hermes memory …`; `hermes memory` alone shows the status, as upstream does. */
export const memoryCommand = defineCommand({
  name: "memory",
  description: "Built-in memory (MEMORY.md, USER.md) and the external memory provider (memory.provider)",
  needs: "home",
  defaultSubcommand: "status",
  // A lock held too long is a failed task, not a crash.
  expected: (error) => (error instanceof FileLockTimeoutError ? 1 : undefined),
  parse: (root, run) => {
    root
      .command("status")
      .description("show the built-in stores and whether the memory provider is on, and why not")
      .option("--json", "print JSON")
      .action(run(({ home, io }, flags: { json?: boolean }) => statusCommand(home, flags, io)));

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
      .action(
        run(({ home, io }, provider: string | undefined, flags: SetupFlags) =>
          setupCommand(home, provider, flags, io),
        ),
      );

    root
      .command("off")
      .description("turn the memory provider off (built-in memory only); its settings are kept")
      .action(run(({ home, io }) => offCommand(home, io)));

    root
      .command("reset")
      .description("erase built-in memory: MEMORY.md and USER.md (the provider's memory is not touched)")
      .addOption(
        new Option("--target <target>", "which store").choices(["all", "memory", "user"]).default("all"),
      )
      .option("-y, --yes", "do not ask for confirmation")
      .action(
        run(({ home, io }, flags: { target: ResetTarget; yes?: boolean }) =>
          resetCommand(
            home,
            flags.target,
            (question) => confirmOrFail({ ...io, cwd: "" }, question, "reset", flags.yes),
            io,
          ),
        ),
      );

    addMemoryPendingCommands(root, run);
  },
});

/** Runs `hermes memory <argv…>` (tests and the library). */
export const runMemoryCommand = memoryCommand.run;
