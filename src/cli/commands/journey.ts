/**
 * `hermes journey [--json] [--limit N]` (alias `learning`): the learning timeline — memories and
 * skills created, patched, merged and archived, with the session each came from. The timeline is
 * built in knowledge/journey.ts (shared with `/journey`); this file parses arguments and prints.
 * Exit codes: 0 shown, 1 the session store could not be read, 2 usage.
 */
import type { Command } from "commander";
import { ProfileNameError } from "../../config/errors.js";
import { resolveHome } from "../../config/home.js";
import { collectJourney, formatJourney } from "../../knowledge/journey.js";
import {
  type CliIo,
  profileOption,
  runSubcommandProgram,
  type SubcommandOptions,
  subcommandRoot,
} from "../subcommands.js";

/** Runs `hermes journey <argv…>` and returns the exit code. */
export function runJourneyCommand(argv: readonly string[], options: SubcommandOptions = {}): Promise<number> {
  return runSubcommandProgram(
    // The timeline has no subcommands: give commander one so `hermes journey --json` parses.
    ["show", ...argv.filter((a) => a !== "show")],
    options,
    (io, outerProfile, setExit) => buildProgram(io, outerProfile, setExit),
    (error, io) => {
      io.err(`hermes journey: ${error instanceof Error ? error.message : String(error)}`);
      return error instanceof ProfileNameError ? 2 : 1;
    },
  );
}

function limit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--limit expects a whole number of at least 1, got "${value}"`);
  return n;
}

function buildProgram(io: CliIo, outerProfile: string | undefined, setExit: (code: number) => void): Command {
  const root = subcommandRoot("hermes journey", "what the agent learned when, and from which session", io);
  root
    .command("show", { isDefault: true, hidden: true })
    .option("--json", "print the events as JSON")
    .option("--limit <n>", "only the newest N events", limit)
    .addOption(profileOption())
    .action((flags: { json?: boolean; limit?: number; profile?: string }) => {
      const profile = flags.profile ?? root.opts<{ profile?: string }>().profile ?? outerProfile;
      const home = resolveHome({ env: io.env, ...(profile ? { profile } : {}) });
      const all = collectJourney(home);
      const events = flags.limit ? all.slice(-flags.limit) : all;
      if (flags.json) io.out(JSON.stringify(events, null, 2));
      else for (const line of formatJourney(events)) io.out(line);
      setExit(0);
    });
  return root;
}
