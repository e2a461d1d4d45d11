/**
 * Shared plumbing of the commands that parse their own subcommands (`hermes sessions …`,
 * `hermes skills …`): the default subcommand and how commander's outcomes become exit codes.
 */
import { type Command, CommanderError } from "commander";

/** `hermes X` alone (or with only `-p NAME`) means `hermes X <fallback>`. */
export function withDefaultSubcommand(argv: readonly string[], fallback = "list"): string[] {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "-p" || arg === "--profile") i++;
    else if (arg === "-h" || arg === "--help" || !arg.startsWith("-")) return [...argv];
  }
  return [...argv, fallback];
}

/**
 * Parses and runs `program`. Help is exit 0, a usage error (already printed by commander) exit 2,
 * anything else thrown goes to `onFailure`, which reports it and returns the exit code. Returns
 * undefined when the subcommand ran; its action sets the exit code itself.
 */
export async function parseSubcommands(
  program: Command,
  argv: readonly string[],
  onFailure: (error: unknown) => number,
): Promise<number | undefined> {
  try {
    await program.parseAsync(withDefaultSubcommand(argv), { from: "user" });
    return undefined;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.code === "commander.helpDisplayed" || error.code === "commander.help" ? 0 : 2;
    }
    return onFailure(error);
  }
}
