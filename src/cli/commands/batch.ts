/**
 * `hermes batch run DATASET.jsonl --run-name NAME [...]`, `batch status NAME`, `batch list`,
 * `batch distributions`: batch trajectory generation (src/batch/). Progress goes to stderr, the
 * summary to stdout (`--json` for machines). Ctrl+C stops the run cleanly: running prompts are
 * interrupted and left for `--resume`; a second Ctrl+C quits at once (the checkpoint is still
 * consistent: every prompt marked done has its line on disk).
 */
import type { Command } from "commander";
import { CliFailure, type ConfigContext, defineCommand } from "../command.js";

interface RunFlags {
  runName?: string;
  workers: string;
  toolsets?: string;
  toolsetDistribution?: string;
  maxTurns?: string;
  model?: string;
  provider?: string;
  baseUrl?: string;
  resume?: boolean;
  yolo?: boolean;
  keepNoReasoning?: boolean;
  json?: boolean;
}

function wholeNumber(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new CliFailure(`${flag} expects a whole number from ${min} to ${max}, got "${value}".`, 2);
  }
  return n;
}

export const batchCommand = defineCommand({
  name: "batch",
  description: "run a JSONL dataset of prompts through the agent in parallel, saving ShareGPT trajectories",
  needs: "config",
  defaultSubcommand: "list",
  parse: (root: Command, action) => {
    root
      .command("run")
      .description(
        'run every prompt of DATASET (JSONL rows {"prompt", "cwd"?, "image"?}) in its own session; output in <home>/data/NAME/',
      )
      .argument("<dataset>", "the JSONL dataset")
      .requiredOption("--run-name <name>", "the run's name (its folder under <home>/data/)")
      .option("--workers <n>", "prompts run at the same time", "4")
      .option("--toolsets <list>", "comma-separated toolsets for every prompt (instead of a distribution)")
      .option(
        "--toolset-distribution <name>",
        "sample each prompt's toolsets from this distribution",
        "default",
      )
      .option("--max-turns <n>", "model calls per prompt at most (default 10, as upstream)")
      .option("-m, --model <model>", "model to use")
      .option("--provider <provider>", "provider to use")
      .option("--base-url <url>", "OpenAI-compatible endpoint")
      .option("--resume", "continue an interrupted run without redoing finished prompts")
      .option("--yolo", "approve dangerous commands without asking (default: refused, nobody can be asked)")
      .option(
        "--keep-no-reasoning",
        "keep trajectories with no reasoning in any turn (upstream discards them)",
      )
      .option("--json", "print the final statistics as JSON")
      .action(
        action((ctx: ConfigContext, dataset: string, flags: RunFlags) => batchRun(ctx, dataset, flags)),
      );
    root
      .command("status")
      .description("progress and statistics of a run")
      .argument("<name>", "the run's name")
      .option("--json", "print JSON")
      .action(
        action(async (ctx: ConfigContext, name: string, flags: { json?: boolean }) => {
          const { batchStatus } = await import("../../batch/status.js");
          const status = await batchStatus(ctx.home, name).catch((error: Error) => {
            throw new CliFailure(error.message, 1);
          });
          if (flags.json) ctx.io.out(JSON.stringify(status, null, 2));
          else {
            const { formatStatus } = await import("../../batch/status.js");
            ctx.io.out(formatStatus(status));
          }
          return 0;
        }),
      );
    root
      .command("list")
      .description("the runs under <home>/data/ and how far each got")
      .option("--json", "print JSON")
      .action(
        action(async (ctx: ConfigContext, flags: { json?: boolean }) => {
          const { listRuns } = await import("../../batch/run-store.js");
          const { batchStatus } = await import("../../batch/status.js");
          const statuses = [];
          for (const name of listRuns(ctx.home))
            statuses.push(await batchStatus(ctx.home, name).catch(() => undefined));
          const found = statuses.filter((s) => s !== undefined);
          if (flags.json) ctx.io.out(JSON.stringify(found, null, 2));
          else if (found.length === 0)
            ctx.io.out("No batch runs yet. Start one with `hermes batch run DATASET --run-name NAME`.");
          else
            for (const s of found)
              ctx.io.out(`${s.run_name}  ${s.done}/${s.total_prompts} done  ${s.state}  (${s.dir})`);
          return 0;
        }),
      );
    root
      .command("distributions")
      .description("the toolset distributions --toolset-distribution takes")
      .action(
        action(async (ctx: ConfigContext) => {
          const { DISTRIBUTIONS } = await import("../../batch/distributions.js");
          for (const [name, d] of Object.entries(DISTRIBUTIONS)) {
            const sets = Object.entries(d.toolsets)
              .sort((a, b) => b[1] - a[1])
              .map(([t, p]) => `${t} ${p}%`)
              .join(", ");
            ctx.io.out(`${name}: ${d.description}\n  ${sets}`);
          }
          return 0;
        }),
      );
  },
});

async function batchRun(ctx: ConfigContext, dataset: string, flags: RunFlags): Promise<number> {
  const { home, env, config, io } = ctx;
  const workers = wholeNumber("--workers", flags.workers, 1, 64);
  const { DEFAULT_BATCH_MAX_TURNS, BatchUsageError, runBatch } = await import("../../batch/runner.js");
  const maxTurns = flags.maxTurns
    ? wholeNumber("--max-turns", flags.maxTurns, 1, 1000)
    : DEFAULT_BATCH_MAX_TURNS;
  const toolsets = flags.toolsets
    ?.split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  const { commandRuntime } = await import("./command-runtime.js");
  const resolved = await commandRuntime(
    { model: flags.model, provider: flags.provider, baseUrl: flags.baseUrl },
    { config, env, home },
  );
  const { homeLogger } = await import("../../util/log.js");
  const logger = homeLogger(home, config.logging, { component: "batch", verbose: ctx.verbose });
  // The config's shell hooks and the enabled plugins' hooks guard every prompt's agent too (plugin
  // tools are not offered: a prompt's tools come from its toolsets or distribution). Nobody is
  // asked in a batch: a shell hook not yet approved is refused, and stderr says how to allow it.
  const { startUnattendedHooks } = await import("./chat-hooks.js");
  await startUnattendedHooks({
    home,
    config,
    env,
    io,
    logger,
    warn: (message) => io.err(`hermes batch: ${message}`),
  });
  const { durabilityOptions, openRecordingStore } = await import("../../state/recording-store.js");
  let store: import("../../state/queued-store.js").QueuedSessionStore | null = null;
  try {
    store = openRecordingStore(home, {
      open: durabilityOptions(config.state),
      notify: (message) => io.err(`hermes batch: ${message}`),
    });
  } catch (error) {
    io.err(`hermes batch: state.db could not be opened, sessions are not recorded: ${String(error)}`);
  }

  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts >= 2) {
      io.err("\nhermes batch: stopped; finished prompts are saved. Continue with --resume.");
      process.exit(130);
    }
    io.err("\n⏹ stopping: running prompts are interrupted and left for --resume (Ctrl+C again to quit now)");
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigint);
  try {
    const summary = await runBatch({
      home,
      config,
      env,
      dataset,
      runName: flags.runName ?? "",
      workers,
      ...(toolsets?.length ? { toolsets } : {}),
      ...(flags.toolsetDistribution ? { distribution: flags.toolsetDistribution } : {}),
      maxTurns,
      model: resolved.model,
      resolved,
      store,
      yolo: flags.yolo === true,
      resume: flags.resume === true,
      keepNoReasoning: flags.keepNoReasoning === true,
      signal: controller.signal,
      logger,
      onProgress: (event) => {
        if (event.type === "warning") io.err(`hermes batch: warning: ${event.message}`);
        else if (event.type === "start") {
          if (event.dropped > 0)
            io.err(
              `hermes batch: dropped ${event.dropped} line(s) of prompts a killed run had not marked done`,
            );
          io.err(
            `hermes batch: ${event.pending} of ${event.total} prompt(s) to run (${event.done} done) with ${workers} worker(s); output in ${event.dir}`,
          );
        } else {
          const detail = event.detail && event.outcome !== "completed" ? `: ${event.detail}` : "";
          io.err(
            `[${event.done}/${event.total}] prompt ${event.index} ${event.outcome} (${(event.ms / 1000).toFixed(1)} s)${detail}`,
          );
        }
      },
    }).catch((error: unknown) => {
      if (error instanceof BatchUsageError) throw new CliFailure(error.message, 2);
      throw error;
    });
    const s = summary.statistics;
    if (flags.json) io.out(JSON.stringify({ dir: summary.dir, finished: summary.finished, ...s }, null, 2));
    else {
      io.out(
        [
          `Run ${s.run_name}: ${s.prompts.done}/${s.total_prompts} done (${s.prompts.completed} completed, ${s.prompts.failed} failed, ${s.prompts.discarded_no_reasoning} discarded, ${s.prompts.errors} to retry)`,
          `success rate ${(s.success_rate * 100).toFixed(1)}%, ${s.tokens.total} tokens (${s.tokens.input} in, ${s.tokens.output} out), ${s.api_calls} model calls`,
          `output: ${summary.dir}`,
        ].join("\n"),
      );
    }
    if (summary.interrupted) {
      io.err(
        `hermes batch: interrupted; continue with: hermes batch run ${dataset} --run-name ${s.run_name} --resume`,
      );
      return 130;
    }
    if (!summary.finished) {
      io.err(
        `hermes batch: ${s.prompts.errors} prompt(s) failed before producing a trajectory (see hermes batch status ${s.run_name}); rerun with --resume to retry them.`,
      );
      return 1;
    }
    return 0;
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", onSigint);
    if (store) {
      const { saveQueuedWrites } = await import("./chat-store.js");
      await saveQueuedWrites(store);
      await store.close();
    }
  }
}
