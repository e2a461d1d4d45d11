/**
 * `hermes cron list|create|edit|pause|resume|run|remove|status|tick`: scheduled jobs in
 * `cron/jobs.json`. `tick` runs the due jobs once without a gateway; `run ID` runs one job now.
 * Results go to stdout; progress and notes to stderr. Exit codes: 0 success, 1 the task failed (a
 * job that is not there, a run that failed), 2 usage or configuration error (a schedule that does
 * not parse, a broken jobs.json).
 */
import type { Command } from "commander";
import { loadEnvFile } from "../../config/env-file.js";
import { loadConfig } from "../../config/load.js";
import { CronScheduleError } from "../../knowledge/cron/schedule.js";
import {
  CRON_METHODS,
  type CronJobs,
  CronStore,
  CronStoreError,
  cronJobs,
} from "../../knowledge/cron/store.js";
import { formatIso, systemTimezone } from "../../knowledge/cron/time.js";
import type { CronJob } from "../../knowledge/cron/types.js";
import type { StateBackend } from "../../knowledge/state-backend.js";
import { openedOnUse } from "../../state/async-view.js";
import { stateBackendChoice } from "../../state/backend-config.js";
import { afterCommand } from "../after-command.js";
import { defineCommand, type RunOptions } from "../command.js";
import type { CliIo } from "../io.js";
import { protectSecrets } from "../secrets.js";

export type CronCommandOptions = RunOptions;

interface Ctx {
  home: string;
  env: Record<string, string | undefined>;
  io: CliIo;
  store: CronJobs;
  /** The postgres home's state backend (joined for `tick`/`run`); absent on SQLite. */
  backend?: (join: boolean) => Promise<StateBackend>;
}

/**
 * The home's cron jobs: `cron/jobs.json` for a SQLite home, the PostgreSQL backend's for a postgres
 * one, opened on first use without joining the gateway instances (`list`, `create`, ... are not
 * one); `backend` opens it for `tick`/`run` joined (see `runTick`). Undefined `backend` on SQLite.
 */
function cronJobsOf(
  home: string,
  config: ReturnType<typeof loadConfig>["config"],
  env: Record<string, string | undefined>,
  options: { now: () => number; timezone?: string; userHome?: string },
): { store: CronJobs; backend?: (join: boolean) => Promise<StateBackend> } {
  const own = {
    now: options.now,
    ...(options.timezone ? { timezone: options.timezone } : {}),
    ...(options.userHome ? { userHome: options.userHome } : {}),
  };
  if (stateBackendChoice(config.state, env).kind === "sqlite")
    return { store: cronJobs(new CronStore({ home, ...own })) };
  const timezone = options.timezone || systemTimezone();
  const opened = new Map<boolean, Promise<StateBackend>>();
  const backend = (join: boolean): Promise<StateBackend> => {
    let made = opened.get(join);
    if (!made) {
      made = import("../../knowledge/state-backend.js").then(({ openStateBackend }) =>
        openStateBackend(home, config, { env, joinInstances: join }),
      );
      opened.set(join, made);
      // The command's last step closes what it opened (a joined instance leaves the live list).
      afterCommand(async () => (await made)?.close());
    }
    return made;
  };
  const store: CronJobs = {
    ...openedOnUse(async () => (await backend(false)).cronJobs(own), [...CRON_METHODS, "update"] as const),
    timezone,
    iso: (ms) => formatIso(ms ?? options.now(), timezone),
  };
  return { store, backend };
}

/** Runs `hermes cron <argv…>` and returns the exit code. Never throws for expected failures. */
export function runCronCommand(argv: readonly string[], options: CronCommandOptions = {}): Promise<number> {
  return cronCommand.run(argv, options);
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** config.yaml's `timezone` (a top-level key in Hermes), when it is a non-empty string. */
function configTimezone(config: Record<string, unknown>): string | undefined {
  const tz = config["timezone"];
  return typeof tz === "string" && tz.trim() ? tz.trim() : undefined;
}

interface JobFlags {
  name?: string;
  skill?: string[];
  deliver?: string;
  repeat?: string;
  toolsets?: string;
  model?: string;
  prompt?: string;
  schedule?: string;
  json?: boolean;
  script?: string;
  /** commander: `--no-agent` sets agent=false, `--agent` sets it true. */
  agent?: boolean;
  contextFrom?: string[];
  clearScript?: boolean;
  clearContextFrom?: boolean;
}

export const cronCommand = defineCommand({
  name: "cron",
  description: "scheduled jobs (cron/jobs.json): the gateway runs them; `tick` runs due ones once",
  needs: "home",
  defaultSubcommand: "list",
  open: ({ home, io }): Ctx => {
    const env = loadEnvFile(home, io.env).env;
    const { config } = loadConfig({ home, env });
    // `cron tick` runs agents here: their output and the job files are redacted like any surface's.
    protectSecrets({ home, env, config });
    const tz = configTimezone(config as unknown as Record<string, unknown>);
    const { store, backend } = cronJobsOf(home, config, env, {
      now: () => io.now() * 1000,
      ...(tz ? { timezone: tz } : {}),
      ...(env["HOME"] ? { userHome: env["HOME"] } : {}),
    });
    return { home, env, io, store, ...(backend ? { backend } : {}) };
  },
  expected: (error) => {
    // A job that is not there or cannot run: the task failed. A bad schedule or jobs.json: usage.
    if (
      error instanceof CronStoreError &&
      /No cron job|has completed|is paused|nothing to run/.test(error.message)
    )
      return 1;
    return error instanceof CronScheduleError || error instanceof CronStoreError ? 2 : undefined;
  },
  parse: (root, run) => {
    const jobOptions = (cmd: Command) =>
      cmd
        .option("--name <name>", "a short name (default: the start of the prompt)")
        .option("--skill <name>", "load this skill for each run (repeatable)", collect)
        .option(
          "--deliver <target>",
          "local (default), origin, telegram, telegram:CHAT[:THREAD], ... (comma list)",
        )
        .option("--repeat <n>", "stop after n runs (default: forever; once for one-shots)")
        .option("--toolsets <list>", "comma-separated toolsets for the run (default: config toolsets)")
        .option("--model <model>", "model for the run (default: config model)")
        .option(
          "--script <path>",
          "a script in ~/.hermes/scripts (relative to it) run first; its output is given to the agent",
        )
        .option("--no-agent", "deliver the script's output as is, without the agent (needs --script)")
        .option(
          "--context-from <id>",
          "give each run this job's last output (repeatable; self: its own)",
          collect,
        );

    jobOptions(
      root
        .command("create")
        .alias("add")
        .description('add a job: SCHEDULE is "30m", "every 2h", "0 9 * * *" or "2026-02-03T14:00"')
        .argument("<schedule>", "when to run (quote it)")
        .argument("[prompt...]", "what the agent should do"),
    ).action(
      run((ctx, schedule: string, words: string[], flags: JobFlags) => create(ctx, schedule, words, flags)),
    );

    root
      .command("list")
      .alias("ls")
      .description("list the jobs")
      .option("--all", "include completed jobs")
      .option("--json", "print JSON")
      .action(run((ctx, flags: { all?: boolean; json?: boolean }) => list(ctx, flags)));

    jobOptions(
      root
        .command("edit")
        .description("change a job")
        .argument("<id>", "job id or name")
        .option("--schedule <schedule>", "a new schedule")
        .option("--prompt <prompt>", "a new prompt")
        .option("--agent", "run the agent again (undo --no-agent)")
        .option("--clear-script", "remove the script")
        .option("--clear-context-from", "remove the context_from jobs"),
    ).action(run((ctx, id: string, flags: JobFlags) => edit(ctx, id, flags)));

    root
      .command("pause")
      .description("stop a job from running until resumed")
      .argument("<id>", "job id or name")
      .option("--reason <text>", "why (shown in list)")
      .action(
        run(async (ctx, id: string, flags: { reason?: string }) => {
          const job = await ctx.store.pause(id, flags.reason);
          ctx.io.out(`Paused ${job.id} (${job.name}).`);
          return 0;
        }),
      );

    root
      .command("resume")
      .description("let a paused job run again")
      .argument("<id>", "job id or name")
      .action(
        run(async (ctx, id: string) => {
          const job = await ctx.store.resume(id);
          ctx.io.out(`Resumed ${job.id} (${job.name}); next run ${job.next_run_at ?? "none"}.`);
          return 0;
        }),
      );

    root
      .command("remove")
      .alias("rm")
      .description("delete a job and its saved outputs")
      .argument("<id>", "job id or name")
      .action(
        run(async (ctx, id: string) => {
          const job = await ctx.store.remove(id);
          ctx.io.out(`Removed ${job.id} (${job.name}).`);
          return 0;
        }),
      );

    root
      .command("run")
      .description("run a job now (its schedule is unchanged)")
      .argument("<id>", "job id or name")
      .action(run((ctx, id: string) => runNow(ctx, id)));

    root
      .command("tick")
      .description("run every due job once, without a gateway")
      .option("--json", "print JSON")
      .action(run((ctx, flags: { json?: boolean }) => runTick(ctx, undefined, flags)));

    root
      .command("status")
      .description("next runs, and whether a ticker is running now")
      .option("--json", "print JSON")
      .action(run((ctx, flags: { json?: boolean }) => status(ctx, flags)));
  },
});

/**
 * The same injection check the cronjob tool makes: a prompt that would be blocked at every run is
 * refused now, while the user is there to rephrase it (exit 2).
 */
async function refusePrompt(ctx: Ctx, prompt: string | undefined): Promise<boolean> {
  if (!prompt) return false;
  const { cronPromptRefusal } = await import("../../tools/cronjob.js");
  const refusal = cronPromptRefusal(prompt);
  if (refusal) ctx.io.err(`hermes cron: ${refusal}`);
  return refusal !== undefined;
}

async function create(ctx: Ctx, schedule: string, words: string[], flags: JobFlags): Promise<number> {
  if (await refusePrompt(ctx, words.join(" "))) return 2;
  const job = await ctx.store.create({
    schedule,
    prompt: words.join(" "),
    ...(flags.name ? { name: flags.name } : {}),
    ...(flags.skill ? { skills: flags.skill } : {}),
    ...(flags.deliver ? { deliver: flags.deliver } : {}),
    ...(flags.repeat ? { repeat: parseRepeat(flags.repeat) } : {}),
    ...(flags.toolsets ? { enabled_toolsets: splitList(flags.toolsets) } : {}),
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.script ? { script: flags.script } : {}),
    ...(flags.agent === false ? { no_agent: true } : {}),
    ...(flags.contextFrom ? { context_from: flags.contextFrom } : {}),
  });
  ctx.io.out(
    `Created ${job.id} (${job.name}): ${job.schedule_display}; next run ${job.next_run_at ?? "none"}.`,
  );
  if (job.deliver !== "local") {
    ctx.io.err(
      `note: delivery to "${job.deliver}" needs the gateway running that platform; until then runs fail to deliver and the output stays in cron/output/${job.id}/.`,
    );
  }
  return 0;
}

async function edit(ctx: Ctx, id: string, flags: JobFlags): Promise<number> {
  if (await refusePrompt(ctx, flags.prompt)) return 2;
  const job = await ctx.store.edit(id, {
    ...(flags.schedule !== undefined ? { schedule: flags.schedule } : {}),
    ...(flags.prompt !== undefined ? { prompt: flags.prompt } : {}),
    ...(flags.name !== undefined ? { name: flags.name } : {}),
    ...(flags.skill ? { skills: flags.skill } : {}),
    ...(flags.deliver !== undefined ? { deliver: flags.deliver } : {}),
    ...(flags.repeat !== undefined ? { repeat: parseRepeat(flags.repeat) } : {}),
    ...(flags.toolsets !== undefined ? { enabled_toolsets: splitList(flags.toolsets) } : {}),
    ...(flags.model !== undefined ? { model: flags.model } : {}),
    ...(flags.clearScript ? { script: null } : flags.script !== undefined ? { script: flags.script } : {}),
    // `--agent` is declared before `--no-agent` here, so neither given leaves it undefined.
    ...(flags.agent !== undefined ? { no_agent: !flags.agent } : {}),
    ...(flags.clearContextFrom
      ? { context_from: null }
      : flags.contextFrom
        ? { context_from: flags.contextFrom }
        : {}),
  });
  ctx.io.out(
    `Updated ${job.id} (${job.name}): ${job.schedule_display}; next run ${job.next_run_at ?? "none"}.`,
  );
  return 0;
}

async function list(ctx: Ctx, flags: { all?: boolean; json?: boolean }): Promise<number> {
  const jobs = (await ctx.store.list()).filter((j) => flags.all || j.state !== "completed");
  if (flags.json) {
    ctx.io.out(JSON.stringify({ jobs }, null, 2));
    return 0;
  }
  if (jobs.length === 0) {
    ctx.io.out('No cron jobs. Add one with: hermes cron create "every 1h" "check the news"');
    return 0;
  }
  for (const job of jobs) ctx.io.out(describe(job));
  return 0;
}

function describe(job: CronJob): string {
  const state = job.state === "completed" ? "completed" : job.enabled ? "scheduled" : "paused";
  const script = job.script ? `\n  script: ${job.script}${job.no_agent ? " (no agent)" : ""}` : "";
  const from =
    Array.isArray(job.context_from) && job.context_from.length > 0
      ? `\n  context from: ${job.context_from.join(", ")}`
      : "";
  const last = job.last_status
    ? `  last: ${job.last_status}${job.last_error ? ` (${firstLine(job.last_error)})` : ""}`
    : "";
  return `${job.id}  ${job.name}\n  ${job.schedule_display}  [${state}]  next: ${job.next_run_at ?? "-"}  deliver: ${job.deliver}${last}${script}${from}`;
}

async function runNow(ctx: Ctx, id: string): Promise<number> {
  const job = await ctx.store.markDue(id);
  return runTick(ctx, [job.id], {});
}

async function runTick(ctx: Ctx, only: string[] | undefined, flags: { json?: boolean }): Promise<number> {
  const [{ tick }, { agentJobRunner }] = await Promise.all([
    import("../../cron/scheduler.js"),
    import("../../cron/run-job.js"),
  ]);
  const { config } = loadConfig({ home: ctx.home, env: ctx.env });
  const [{ homeLogger }, { logTick }] = await Promise.all([
    import("../../util/log.js"),
    import("../../cron/tick-log.js"),
  ]);
  const logger = homeLogger(ctx.home, config.logging, { component: "cron" });
  // Jobs' agents meet the same shell hooks and plugin hooks as the gateway's ticker (nobody asked).
  const { startUnattendedHooks } = await import("./chat-hooks.js");
  const warn = (message: string) => ctx.io.err(`hermes cron: ${message}`);
  await startUnattendedHooks({ home: ctx.home, config, env: ctx.env, io: ctx.io, logger, warn });
  // A postgres home: each due slot is claimed in the database as the gateway instances claim it
  // (never run twice), and the runs are recorded in the shared sessions.
  const backend = ctx.backend ? await ctx.backend(true) : undefined;
  const outcome = await tick({
    home: ctx.home,
    now: () => ctx.io.now() * 1000,
    timezone: ctx.store.timezone,
    jobs: ctx.store,
    ...(backend ? { coordinator: backend.coordinator } : {}),
    runJob: agentJobRunner({
      home: ctx.home,
      config,
      env: ctx.env,
      ...(backend ? { openSessions: () => backend.openSessions() } : {}),
      onWarning: (m) => ctx.io.err(`hermes cron: ${m}`),
      logger,
    }),
    ...(only ? { only } : {}),
    onProgress: (m) => {
      logger.info(m);
      ctx.io.err(m);
    },
  });
  // This command prints its own report below; the log gets the same facts.
  logTick(outcome, logger, () => undefined);
  if (outcome.status === "busy") {
    ctx.io.err(
      only
        ? "A ticker (the gateway, or another `hermes cron tick`) is running now; the job is marked due and it will run it within a minute."
        : "Another process is ticking this home now (cron/.tick.lock is held); nothing was run.",
    );
    return only ? 0 : 1;
  }
  if (flags.json) ctx.io.out(JSON.stringify(outcome, null, 2));
  for (const s of outcome.skipped)
    ctx.io.err(`skipped ${s.id} (${s.name}): missed ${s.missedAt}, past its catch-up window`);
  for (const id of outcome.interrupted) ctx.io.err(`${id}: its previous run was cut off; recorded as failed`);
  for (const r of outcome.ran) {
    if (!flags.json) {
      ctx.io.out(`${r.ok ? "✓" : "✗"} ${r.id} (${r.name}) → ${r.outputPath}${r.silent ? " [SILENT]" : ""}`);
    }
    if (r.error) ctx.io.err(`  error: ${r.error}`);
    for (const e of r.deliveryErrors) ctx.io.err(`  delivery: ${e}`);
  }
  if (!flags.json && outcome.ran.length === 0) ctx.io.err("No jobs were due.");
  return outcome.ran.some((r) => !r.ok) ? 1 : 0;
}

async function status(ctx: Ctx, flags: { json?: boolean }): Promise<number> {
  const { isTickLockHeld } = await import("../../cron/scheduler.js");
  // A postgres home: the gateway instances on the database tick, not a lock in this home.
  const shared = ctx.backend ? await liveInstances(ctx) : undefined;
  const held = shared ? shared.count > 0 : await isTickLockHeld(ctx.home);
  const jobs = (await ctx.store.list()).filter((j) => j.enabled && j.state !== "completed");
  const upcoming = jobs
    .filter((j) => j.next_run_at)
    .sort((a, b) => Date.parse(String(a.next_run_at)) - Date.parse(String(b.next_run_at)));
  if (flags.json) {
    ctx.io.out(
      JSON.stringify(
        {
          ticker_running: held,
          ...(shared ? { instances: shared.count } : {}),
          active_jobs: jobs.length,
          next: upcoming.map((j) => ({ id: j.id, name: j.name, next_run_at: j.next_run_at })),
        },
        null,
        2,
      ),
    );
    return 0;
  }
  ctx.io.out(
    shared
      ? shared.line
      : held
        ? "Ticker: running (cron/.tick.lock is held by a gateway or `hermes cron tick`)."
        : "Ticker: not running now. Jobs run while the gateway runs, or with `hermes cron tick`.",
  );
  ctx.io.out(`${jobs.length} active job${jobs.length === 1 ? "" : "s"}.`);
  for (const j of upcoming.slice(0, 10)) ctx.io.out(`  ${j.next_run_at}  ${j.id}  ${j.name}`);
  return 0;
}

/** The live gateway instances on a postgres home's database, and what `cron status` says of them. */
async function liveInstances(ctx: Ctx): Promise<{ count: number; line: string }> {
  const { sharedInstances } = await import("./gateway-instances.js");
  const report = await sharedInstances(ctx.home, ctx.env).catch((error: unknown) => ({
    database: "the database",
    error: error instanceof Error ? error.message : String(error),
  }));
  if (!report) return { count: 0, line: "Ticker: not running now." };
  if ("error" in report)
    return {
      count: 0,
      line: `Ticker: could not list the gateway instances on ${report.database}: ${report.error}`,
    };
  const count = report.instances.length;
  return {
    count,
    line:
      count > 0
        ? `Ticker: ${count} gateway instance${count === 1 ? "" : "s"} on ${report.database} (each due slot runs on one of them).`
        : `Ticker: no gateway instance is running on ${report.database}. Jobs run while one runs, or with \`hermes cron tick\`.`,
  };
}

function parseRepeat(value: string): number | null {
  const v = value.trim().toLowerCase();
  if (v === "forever" || v === "") return null;
  if (v === "once") return 1;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) {
    throw new CronScheduleError(`--repeat expects a whole number, "once" or "forever", got "${value}".`);
  }
  return n === 0 ? null : n;
}

function splitList(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
