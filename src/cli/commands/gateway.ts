/**
 * `hermes gateway run|start|stop|status`: the long-running gateway process of a home. `run` stays
 * in the foreground and logs to `logs/gateway.log` (its own events), `agent.log` and `errors.log`;
 * `start` runs it in the background, its stdout and stderr (start-up failures, crashes) in
 * `logs/gateway-output.log`;
 * `stop` asks it to finish its running turns and exit; `status` says whether one runs;
 * `slack-manifest` prints the Slack app manifest's slash commands, made from the command registry.
 * Results on stdout, progress and problems on stderr. Exit codes: 0 success, 1 the task failed
 * (not running, did not stop in time), 2 usage or configuration error.
 */
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { NoProviderError } from "../../ai/resolve.js";
import { ApiServerConfigError } from "../../gateway/api-server/index.js";
import { GatewayRunningError, processStartTime, runningGateway } from "../../gateway/pid-file.js";
import { startGateway } from "../../gateway/runner.js";
import { homeLogger } from "../../util/log.js";
import { homeFor, loadCliContext } from "../home-env.js";

export interface GatewayCommandOptions {
  profile?: string;
  /** Resolves when `run` should stop (tests); default SIGINT/SIGTERM. */
  stopSignal?: Promise<void>;
}

const USAGE = `Usage: hermes gateway <command> [options]

Commands:
  run      run the gateway in the foreground: the chat platforms whose tokens are set
           (TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN, SLACK_BOT_TOKEN), the API server and
           webhooks when enabled, and the cron ticker
  start    run it in the background; it logs to ~/.hermes/logs/gateway.log
  stop     let running turns finish, then stop it   [--timeout SECONDS (60)] [--force]
  status   say whether a gateway runs for this home
  slack-manifest   print the slash commands for the Slack app manifest (features.slash_commands):
           /hermes <command>   [--each: every chat command by its own name too] [--url URL]

Options: -p, --profile <name>   use ~/.hermes/profiles/<name>
`;

const err = (text: string) => process.stderr.write(`${text}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `hermes gateway <argv…>` and returns the exit code. */
export async function runGatewayCommand(
  argv: readonly string[],
  options: GatewayCommandOptions = {},
): Promise<number> {
  let parsed: {
    values: {
      profile?: string;
      timeout?: string;
      force?: boolean;
      help?: boolean;
      each?: boolean;
      url?: string;
    };
    positionals: string[];
  };
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        profile: { type: "string", short: "p" },
        timeout: { type: "string" },
        force: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        each: { type: "boolean" },
        url: { type: "string" },
      },
    });
  } catch (error) {
    err(`hermes gateway: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const command = positionals[0];
  if (values.help || command === undefined) {
    (command === undefined && !values.help ? process.stderr : process.stdout).write(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  const profile = values.profile ?? options.profile;
  switch (command) {
    case "run":
      return run(profile, options.stopSignal);
    case "start":
      return start(profile);
    case "stop": {
      const timeout = values.timeout === undefined ? 60 : Number(values.timeout);
      if (!Number.isFinite(timeout) || timeout <= 0) {
        err(`hermes gateway: --timeout expects seconds (a positive number), got "${values.timeout}".`);
        return 2;
      }
      return stop(profile, timeout, values.force === true);
    }
    case "status":
      return status(profile);
    case "slack-manifest": {
      const { slackSlashCommands } = await import("../../gateway/messaging/commands.js");
      const slash_commands = slackSlashCommands({
        each: values.each === true,
        ...(values.url ? { url: values.url } : {}),
      });
      process.stdout.write(`${JSON.stringify({ features: { slash_commands } }, null, 2)}\n`);
      return 0;
    }
    default:
      err(`hermes gateway: unknown command "${command}".\n\n${USAGE}`);
      return 2;
  }
}

async function run(profile: string | undefined, stopSignal: Promise<void> | undefined): Promise<number> {
  const context = await loadCliContext(profile);
  if ("exitCode" in context) return context.exitCode;
  // Opens nothing until the first line; every line passes the process's secret redactor.
  const logger = homeLogger(context.home, context.config.logging, { component: "gateway" });
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  try {
    gateway = await startGateway({
      home: context.home,
      config: context.config,
      env: context.env,
      profile,
      log: (line) => err(`gateway: ${line}`),
      logger,
    });
  } catch (error) {
    if (error instanceof GatewayRunningError) {
      err(`hermes gateway: ${error.message}`);
      return 1;
    }
    if (error instanceof ApiServerConfigError || error instanceof NoProviderError) {
      err(`hermes gateway: ${error.message}`);
      return 2;
    }
    err(`hermes gateway: could not start: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  process.stdout.write(`Gateway running (pid ${process.pid}): ${gateway.services.join(", ")}\n`);
  await (stopSignal ??
    new Promise<void>((resolve) => {
      let stopping = false;
      const onSignal = (signal: NodeJS.Signals) => {
        if (stopping) process.exit(signal === "SIGINT" ? 130 : 143);
        stopping = true;
        err("gateway: stopping; waiting for running turns (signal again to force)…");
        resolve();
      };
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
    }));
  await gateway.stop();
  err("gateway: stopped");
  return 0;
}

async function start(profile: string | undefined): Promise<number> {
  const home = homeFor(profile);
  if (typeof home !== "string") return home.exitCode;
  const running = runningGateway(home);
  if (running) {
    process.stdout.write(`Gateway already running (pid ${running.pid}).\n`);
    return 0;
  }
  const logs = join(home, "logs");
  mkdirSync(logs, { recursive: true, mode: 0o700 });
  // The gateway logs to gateway.log itself; its raw stdout and stderr (the start line, a start-up
  // failure, a crash) go to their own file, started afresh each time so it never grows unbounded.
  const logPath = join(logs, "gateway-output.log");
  const out = openSync(logPath, "w", 0o600);
  const bin = process.argv[1] ?? "hermes";
  const child = spawn(process.execPath, [bin, ...(profile ? ["-p", profile] : []), "gateway", "run"], {
    detached: true,
    stdio: ["ignore", out, out],
    env: process.env,
  });
  closeSync(out);
  let exited: number | null | undefined;
  child.on("exit", (code) => {
    exited = code;
  });
  child.unref();
  // Up when its record appears; a child that exits first failed (the log says why).
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (exited !== undefined) break;
    if (runningGateway(home)?.pid === child.pid) {
      process.stdout.write(`Gateway started (pid ${child.pid}). Log: ${join(logs, "gateway.log")}\n`);
      return 0;
    }
    await sleep(100);
  }
  err(
    `hermes gateway: the gateway did not start${exited !== undefined ? ` (exit ${exited})` : ""}. Last lines of ${logPath}:`,
  );
  err(tail(logPath, 10));
  return 1;
}

async function stop(profile: string | undefined, timeoutS: number, force: boolean): Promise<number> {
  const home = homeFor(profile);
  if (typeof home !== "string") return home.exitCode;
  const running = runningGateway(home);
  if (!running) {
    process.stdout.write("No gateway is running for this home.\n");
    return 0;
  }
  const startedAt = processStartTime(running.pid);
  process.kill(running.pid, force ? "SIGKILL" : "SIGTERM");
  const deadline = Date.now() + timeoutS * 1000;
  // Stopped once its record is gone and the process has exited (gone, or a zombie), so a caller
  // that goes on right away never meets it still finishing.
  const exited = () => startedAt === null || processStartTime(running.pid) !== startedAt;
  while (Date.now() < deadline) {
    if (!runningGateway(home) && exited()) {
      process.stdout.write(`Gateway stopped (pid ${running.pid}).\n`);
      return 0;
    }
    await sleep(100);
  }
  err(
    `hermes gateway: pid ${running.pid} is still running after ${timeoutS} s (turns still finishing?). ` +
      "Wait, or stop it at once with: hermes gateway stop --force",
  );
  return 1;
}

async function status(profile: string | undefined): Promise<number> {
  const home = homeFor(profile);
  if (typeof home !== "string") return home.exitCode;
  const running = runningGateway(home);
  if (!running) {
    process.stdout.write("Gateway: not running\n");
    return 1;
  }
  process.stdout.write(
    `Gateway: running (pid ${running.pid}${running.started_at ? `, since ${running.started_at}` : ""})\n`,
  );
  return 0;
}

function tail(path: string, lines: number): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
