/**
 * `hermes rl list` and `hermes rl serve ENV --api-url URL [--tasks FILE] [--group-size N]
 * [--workers N] [--max-tasks N] ...`: an Atropos RL environment served from Hermes. The trainer and the Atropos
 * API server (`run-api`) run elsewhere; this process registers with the server, rolls tasks out
 * through the agent (each in its own session, source `rl`, and directory), scores them and sends
 * the scored groups. Progress goes to stderr, the summary to stdout (`--json` for JSON).
 * Exit codes: 0 served, 1 the server or the environment failed, 2 usage or configuration.
 */
import { InvalidArgumentError } from "commander";
import { homeLogger } from "../../util/log.js";
import { CliFailure, type ConfigContext, defineCommand } from "../command.js";
import { protectSecrets } from "../secrets.js";

interface ServeFlags {
  apiUrl: string;
  tasks?: string;
  groupSize: number;
  workers: number;
  maxTasks?: number;
  epochs: number;
  maxTokenLength: number;
  weight: number;
  maxBatchesOffpolicy: number;
  includeMessages?: boolean;
  allowSameScores?: boolean;
  model?: string;
  provider?: string;
  toolsets?: string;
  maxTurns?: number;
  yolo?: boolean;
  keepWorkdirs?: boolean;
  json?: boolean;
}

function wholeNumber(min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) {
      throw new InvalidArgumentError(`expected a whole number of at least ${min}, got "${value}"`);
    }
    return n;
  };
}

function positive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError(`expected a positive number, got "${value}"`);
  return n;
}

async function list(ctx: ConfigContext, json: boolean): Promise<number> {
  const { RL_ENVIRONMENTS } = await import("../../rl/environments.js");
  if (json) {
    ctx.io.out(
      JSON.stringify(RL_ENVIRONMENTS.map(({ name, description, tasks }) => ({ name, description, tasks }))),
    );
    return 0;
  }
  for (const entry of RL_ENVIRONMENTS) {
    ctx.io.out(`${entry.name}  ${entry.description}\n  --tasks: ${entry.tasks}`);
  }
  return 0;
}

async function serve(ctx: ConfigContext, name: string, flags: ServeFlags): Promise<number> {
  const { home, env, config, io } = ctx;
  protectSecrets({ home, env, config });
  const [
    { findEnvironment, RL_ENVIRONMENTS },
    { AtroposClient, AtroposError },
    { runRollout },
    { serveEnvironment },
  ] = await Promise.all([
    import("../../rl/environments.js"),
    import("../../rl/atropos-client.js"),
    import("../../rl/rollout.js"),
    import("../../rl/serve.js"),
  ]);
  const entry = findEnvironment(name);
  if (!entry) {
    throw new CliFailure(
      `no RL environment named "${name}". Available: ${RL_ENVIRONMENTS.map((e) => e.name).join(", ")} (hermes rl list).`,
      2,
    );
  }
  const say = (line: string) => io.err(line);
  const { rlBackendProblem } = await import("../../rl/rollout.js");
  const backend = rlBackendProblem(config);
  if (backend) throw new CliFailure(backend, 2);
  let environment: import("../../rl/types.js").RlEnvironment;
  try {
    environment = entry.create({
      tasksFile: flags.tasks,
      epochs: flags.epochs,
      env,
      ...(ctx.verbose ? { onCommand: (line: string) => say(`  ${line}`) } : {}),
    });
  } catch (error) {
    throw new CliFailure(error instanceof Error ? error.message : String(error), 2);
  }
  let client: InstanceType<typeof AtroposClient>;
  try {
    client = new AtroposClient(flags.apiUrl);
  } catch (error) {
    throw new CliFailure((error as Error).message, 2);
  }

  const logger = homeLogger(home, config.logging, { component: "rl", verbose: ctx.verbose });
  const { commandRuntime } = await import("./command-runtime.js");
  const resolved = await commandRuntime(
    { model: flags.model, provider: flags.provider },
    { config, env, home },
  );
  // The config's shell hooks and the enabled plugins' hooks guard every rollout's agent too;
  // nobody is asked here, so a shell hook not yet approved is refused with how to allow it.
  const { startUnattendedHooks } = await import("./chat-hooks.js");
  await startUnattendedHooks({
    home,
    config,
    env,
    io,
    logger,
    warn: (message) => io.err(`hermes rl: ${message}`),
  });
  const { durabilityOptions, openRecordingStore } = await import("../../state/recording-store.js");
  let store: import("../../state/queued-store.js").QueuedSessionStore | null = null;
  try {
    store = openRecordingStore(home, {
      open: durabilityOptions(config.state),
      notify: (m) => say(`hermes rl: ${m}`),
    });
  } catch (error) {
    say(`hermes rl: state.db could not be opened, rollouts are not recorded: ${(error as Error).message}`);
  }
  const toolsets = flags.toolsets
    ? flags.toolsets
        .split(",")
        .map((t) => t.trim())
        .filter(Boolean)
    : ["terminal", "file"];

  const controller = new AbortController();
  const onSignal = () => {
    if (controller.signal.aborted) return;
    say("hermes rl: stopping (the running rollouts are interrupted)...");
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const summary = await serveEnvironment({
      client,
      environment,
      groupSize: flags.groupSize,
      workers: flags.workers,
      ...(flags.maxTasks !== undefined ? { maxTasks: flags.maxTasks } : {}),
      maxTokenLength: flags.maxTokenLength,
      weight: flags.weight,
      maxBatchesOffpolicy: flags.maxBatchesOffpolicy,
      includeMessages: flags.includeMessages === true,
      allowSameScores: flags.allowSameScores === true,
      signal: controller.signal,
      log: say,
      rollout: async (item, signal) => {
        const done = await runRollout(
          environment,
          item,
          {
            home,
            config,
            env,
            resolved,
            toolsets,
            ...(flags.maxTurns !== undefined ? { maxTurns: flags.maxTurns } : {}),
            yolo: flags.yolo === true,
            store,
            logger,
            onWarning: (m) => say(`hermes rl: ${m}`),
            keepWorkdirs: flags.keepWorkdirs === true,
          },
          signal,
        );
        if (flags.keepWorkdirs) say(`  ${item.id}: kept ${done.workdir} (score ${done.score})`);
        return done;
      },
    });
    if (flags.json) io.out(JSON.stringify(summary));
    else {
      io.out(
        `env ${summary.envId ?? "-"}: ${summary.groupsSent} group${summary.groupsSent === 1 ? "" : "s"} sent, ${summary.groupsDropped} dropped, ${summary.rollouts} rollout${summary.rollouts === 1 ? "" : "s"}, mean score ${summary.meanScore === null ? "-" : summary.meanScore.toFixed(3)} (stopped: ${summary.stoppedBecause.replaceAll("_", " ")})`,
      );
    }
    return summary.stoppedBecause === "interrupted" ? 1 : 0;
  } catch (error) {
    if (error instanceof AtroposError) throw new CliFailure(error.message, 1);
    throw error;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await store?.drain(10_000);
    await store?.close();
  }
}

export const rlCommand = defineCommand({
  name: "rl",
  description: "Atropos RL environments: list the shipped ones, serve one to an Atropos API server",
  needs: "config",
  defaultSubcommand: "list",
  parse: (root, run) => {
    root
      .command("list")
      .description("the environments Hermes ships and what their --tasks file holds")
      .option("--json", "print JSON")
      .action(run((ctx, flags: { json?: boolean }) => list(ctx, flags.json === true)));
    root
      .command("serve <env>")
      .description(
        "register ENV with an Atropos API server and send it scored rollout groups until the tasks or the trainer's steps run out",
      )
      .requiredOption("--api-url <url>", "the Atropos API server (run-api), e.g. http://localhost:8000")
      .option("--tasks <file>", "the environment's task file (hermes rl list says what it holds)")
      .option(
        "--group-size <n>",
        "rollouts per task, scored together (Atropos group_size)",
        wholeNumber(1),
        4,
      )
      .option(
        "--workers <n>",
        "groups rolled out at the same time (each rollout in its own session and directory)",
        wholeNumber(1),
        1,
      )
      .option("--max-tasks <n>", "stop after this many tasks", wholeNumber(1))
      .option("--epochs <n>", "hand out each task this many times", wholeNumber(1), 1)
      .option("--max-token-length <n>", "max_token_length registered with the server", wholeNumber(1), 32768)
      .option("--weight <w>", "this environment's weight in the trainer's batches", positive, 1)
      .option("--max-batches-offpolicy <n>", "wait while this many batches are queued", wholeNumber(0), 3)
      .option("--include-messages", "send the conversations with each group (for retokenizing)")
      .option("--allow-same-scores", "send groups whose rollouts all scored the same")
      .option("-m, --model <model>", "the model that rolls out (default: config.yaml's)")
      .option("--provider <provider>", "its provider")
      .option("-t, --toolsets <list>", "comma-separated toolsets for the agent (default: terminal,file)")
      .option("--max-turns <n>", "tool-calling iterations per rollout", wholeNumber(1))
      .option("--yolo", "run dangerous commands without asking (default: refused, nobody can approve)")
      .option("--keep-workdirs", "keep each rollout's working directory (each is printed on stderr)")
      .option("--json", "print the summary as JSON")
      .action(run((ctx, env: string, flags: ServeFlags) => serve(ctx, env, flags)));
  },
});
