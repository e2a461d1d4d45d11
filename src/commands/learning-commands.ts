/**
 * Slash commands of the learning loop: `/curator <verb>` (the same verbs as `hermes curator`) and
 * `/journey` (the learning timeline). The work is done in knowledge/curator/verbs.ts and
 * knowledge/journey.ts; these only parse and reply.
 */
import { CURATOR_VERBS } from "../knowledge/curator/verbs.js";
import type { CommandDef } from "./types.js";

const curatorCommand: CommandDef = {
  name: "curator",
  args: "[status|run [--dry-run]|pause|resume|pin NAME|unpin NAME|archive NAME|restore NAME|list-archived|prune|backup|rollback [--list] [--id ID]]",
  description: "the skill curator: status, run, pin, archive/restore, backups",
  category: "Info",
  adminOnly: true,
  completeArgs: (prefix) => CURATOR_VERBS.filter((v) => v.startsWith(prefix.toLowerCase())),
  async run(args, ctx) {
    const { parseCuratorArgs, runCuratorVerb } = await import("../knowledge/curator/verbs.js");
    const request = parseCuratorArgs(args);
    if ("usage" in request) {
      ctx.reply(ctx.paint.yellow(request.usage));
      return;
    }
    const { home, config } = ctx.session.agent;
    // No detached process from a chat or the REPL: `--background` runs here and replies when done.
    const work = runCuratorVerb({ ...request, background: false }, { home, config, env: process.env });
    const show = (outcome: Awaited<typeof work>) =>
      ctx.reply(...outcome.lines.map((l) => (outcome.exitCode === 0 ? l : ctx.paint.yellow(l))));
    if (request.verb === "run" && request.background) {
      ctx.reply(ctx.paint.dim("Curator run started; its summary follows when it ends."));
      work.then(show, (error: unknown) => ctx.reply(ctx.paint.red(`curator: ${String(error)}`)));
      return;
    }
    show(await work);
  },
};

const journeyCommand: CommandDef = {
  name: "journey",
  aliases: ["learning"],
  args: "[N]",
  description: "what was learned when: memories and skills, with their sessions (last N, default 20)",
  category: "Info",
  availableWhileRunning: true,
  async run(args, ctx) {
    const { collectHomeJourney, formatJourney } = await import("../knowledge/journey.js");
    const n = args.trim() ? Number(args.trim()) : 20;
    if (!Number.isInteger(n) || n < 1) {
      ctx.reply(
        ctx.paint.yellow(`/journey takes how many events to show (a whole number), got "${args.trim()}".`),
      );
      return;
    }
    const home = ctx.session.agent.home;
    // A postgres home's calls, memory and skill usage are the shared database's.
    let events: Awaited<ReturnType<typeof collectHomeJourney>>;
    try {
      events = await collectHomeJourney(home);
    } catch (error) {
      ctx.reply(ctx.paint.red(`/journey: ${error instanceof Error ? error.message : String(error)}`));
      return;
    }
    const shown = events.slice(-n);
    ctx.reply(
      ctx.paint.bold(`Learning journey (${shown.length} of ${events.length})`),
      ...formatJourney(shown),
      ...(events.length > shown.length
        ? [ctx.paint.dim("hermes journey shows them all (--json for data).")]
        : []),
    );
  },
};

export const LEARNING_COMMANDS: readonly CommandDef[] = [curatorCommand, journeyCommand];
