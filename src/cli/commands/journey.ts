/**
 * `hermes journey [--json] [--limit N]` (alias `learning`): the learning timeline — memories and
 * skills created, patched, merged and archived, with the session each came from. The timeline is
 * built in knowledge/journey.ts (shared with `/journey`); this file parses arguments and prints.
 * Exit codes: 0 shown, 1 the session store could not be read, 2 usage.
 */
import { InvalidArgumentError } from "commander";
import { collectHomeJourney, formatJourney } from "../../knowledge/journey.js";
import { defineCommand } from "../command.js";
import { withHomeKnowledge } from "./home-knowledge.js";

function limit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError(`--limit expects a whole number of at least 1, got "${value}"`);
  return n;
}

/** `hermes journey`. */
export const journeyCommand = defineCommand({
  name: "journey",
  description: "what the agent learned when, and from which session",
  needs: "home",
  parse: (cmd) =>
    cmd.option("--json", "print the events as JSON").option("--limit <n>", "only the newest N events", limit),
  run: async ({ home, io }, flags: { json?: boolean; limit?: number }) => {
    // A postgres home's sources are the shared database's: skill usage, memory entries and the
    // memory/skill_manage calls of every instance's sessions.
    const all = await withHomeKnowledge(home, io.env, () => collectHomeJourney(home));
    const events = flags.limit ? all.slice(-flags.limit) : all;
    if (flags.json) io.out(JSON.stringify(events, null, 2));
    else for (const line of formatJourney(events)) io.out(line);
    return 0;
  },
});

/** Runs `hermes journey <argv…>` (tests and the library). */
export const runJourneyCommand = journeyCommand.run;
