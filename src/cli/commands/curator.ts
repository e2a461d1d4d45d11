/**
 * `hermes curator status|run [--dry-run] [--background]|pause|resume|pin NAME|unpin NAME|
 * archive NAME|restore NAME|list-archived|prune [--days N] [--dry-run] [--yes]|backup|
 * rollback [--list] [--id ID]`: the skill curator from the command line. Argument parsing only;
 * the verbs live in knowledge/curator/verbs.ts (shared with `/curator`). Results go to stdout,
 * refusals and failures to stderr. Exit codes: 0 done, 1 refused or failed, 2 usage or config.
 */
import { spawn } from "node:child_process";
import { InvalidArgumentError } from "commander";
import { runCuratorIfDue } from "../../knowledge/curator/schedule.js";
import { type CuratorRequest, runCuratorVerb } from "../../knowledge/curator/verbs.js";
import { type ConfigContext, defineCommand } from "../command.js";
import { withHomeKnowledge } from "./home-knowledge.js";

type Ctx = ConfigContext;

/**
 * Starts `hermes curator run` as a detached process that outlives this one (its output goes
 * nowhere; the report and `hermes curator status` tell what it did). Returns its pid.
 */
export function startDetachedCuratorRun(
  home: string,
  args: readonly string[],
  env: Record<string, string | undefined> = process.env,
): number {
  const script = process.argv[1];
  if (!script) throw new Error("cannot find the hermes script to start the curator with");
  const child = spawn(process.execPath, [script, "curator", "run", ...args], {
    detached: true,
    stdio: "ignore",
    env: { ...env, HERMES_HOME: home },
  });
  child.unref();
  return child.pid ?? 0;
}

/** Runs one verb: its lines to stdout on success, to stderr on failure. */
async function verb(ctx: Ctx, request: CuratorRequest): Promise<number> {
  // On a PostgreSQL home the curator's changes are stored for every instance.
  const outcome = await withHomeKnowledge(ctx.home, ctx.io.env, () => curatorVerb(ctx, request), ctx);
  for (const line of outcome.lines) (outcome.exitCode === 0 ? ctx.io.out : ctx.io.err)(line);
  return outcome.exitCode;
}

function curatorVerb(ctx: Ctx, request: CuratorRequest) {
  return runCuratorVerb(request, {
    home: ctx.home,
    config: ctx.config,
    env: ctx.env,
    startBackground: (r) => startDetachedCuratorRun(ctx.home, r.dryRun ? ["--dry-run"] : [], ctx.io.env),
  });
}

function wholeNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new InvalidArgumentError(`expected a whole number of at least 1, got "${value}"`);
  return n;
}

/** `hermes curator …`; `hermes curator` alone shows the status. */
export const curatorCommand = defineCommand({
  name: "curator",
  description: "the skill curator: stale and archive unused agent-made skills, back up, restore, roll back",
  needs: "config",
  defaultSubcommand: "status",
  parse: (root, run) => {
    const simple = (name: CuratorRequest["verb"], description: string) =>
      root
        .command(name)
        .description(description)
        .action(run((ctx) => verb(ctx, { verb: name })));
    const named = (name: CuratorRequest["verb"], description: string) =>
      root
        .command(`${name} <name>`)
        .description(description)
        .action(run((ctx, skill: string) => verb(ctx, { verb: name, name: skill })));

    simple("status", "settings, last run, and the agent-made skills by state");
    root
      .command("run")
      .description("run the curator now (backup, stale/archive, consolidation when on)")
      .option("--dry-run", "report what would change; change nothing")
      .option("--background", "run in a detached process and return at once")
      .option("--scheduled", "run only when due (used by Hermes itself after a command)")
      .action(
        run(async (ctx, flags: { dryRun?: boolean; background?: boolean; scheduled?: boolean }) => {
          if (flags.scheduled) {
            const result = await withHomeKnowledge(
              ctx.home,
              ctx.io.env,
              () => runCuratorIfDue({ home: ctx.home, config: ctx.config, env: ctx.env }),
              ctx,
            );
            ctx.io.out(result ? `curator: ${result.summary}` : "curator: not due");
            return 0;
          }
          return verb(ctx, {
            verb: "run",
            dryRun: flags.dryRun === true,
            background: flags.background === true,
          });
        }),
      );
    simple("pause", "stop scheduled runs until resume");
    simple("resume", "allow scheduled runs again");
    named("pin", "protect a skill from every curator change");
    named("unpin", "let the curator manage a pinned skill again");
    named("archive", "move a skill to skills/.archive/ now (restorable)");
    named("restore", "bring an archived skill back");
    simple("list-archived", "the skills in skills/.archive/");
    root
      .command("prune")
      .description("archive agent-made skills idle N days or more (default curator.archive_after_days)")
      .option("--days <n>", "idle days", wholeNumber)
      .option("--dry-run", "list them; archive nothing")
      .option("-y, --yes", "archive them without asking again")
      .action(
        run((ctx, flags: { days?: number; dryRun?: boolean; yes?: boolean }) =>
          verb(ctx, {
            verb: "prune",
            days: flags.days,
            dryRun: flags.dryRun === true,
            yes: flags.yes === true,
          }),
        ),
      );
    simple("backup", "snapshot skills/ into skills/.curator_backups/ now");
    root
      .command("rollback")
      .description(
        "restore skills/ from a backup (the newest unless --id); the current tree is backed up first",
      )
      .option("--list", "list the backups")
      .option("--id <id>", "the backup to restore")
      .action(
        run((ctx, flags: { list?: boolean; id?: string }) =>
          verb(ctx, { verb: "rollback", list: flags.list === true, id: flags.id }),
        ),
      );
  },
});

/** Runs `hermes curator <argv…>` (tests and the library). */
export const runCuratorCommand = curatorCommand.run;
