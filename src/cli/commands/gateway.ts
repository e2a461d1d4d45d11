/**
 * `hermes gateway run|start|stop|status`: the long-running gateway process of a home. `run` stays
 * in the foreground and logs to `logs/gateway.log` (its own events), `agent.log` and `errors.log`;
 * `start` runs it in the background, its stdout and stderr (start-up failures, crashes) in
 * `logs/gateway-output.log`;
 * `stop` stops it (running turns get `agent.restart_drain_timeout`, then are cut off and their chats
 * told); `restart` sends SIGUSR1: turns may finish, then it stops and starts again (gateway-lifecycle.ts);
 * `install`/`uninstall` make it a systemd or launchd service (gateway-service.ts); `list` shows
 * every profile's gateway; `status` says whether one runs;
 * `slack-manifest` prints the Slack app manifest's slash commands, made from the command registry.
 * Results on stdout, progress and problems on stderr. Exit codes: 0 success, 1 the task failed
 * (not running, did not stop in time), 2 usage or configuration error.
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { NoProviderError } from "../../ai/resolve.js";
import { backendKind, EnvironmentError, environmentFailure, loadBackend } from "../../environments/index.js";
import { ApiServerConfigError } from "../../gateway/api-server/index.js";
import { GatewayRunningError, processStartTime, runningGateway } from "../../gateway/pid-file.js";
import { startGateway } from "../../gateway/runner.js";
import { homeLogger } from "../../util/log.js";
import {
  type CliCommand,
  CliFailure,
  defineCommand,
  type HomeContext,
  type RunOptions,
  withConfig,
} from "../command.js";
import type { ServiceSpec } from "./gateway-service.js";

export interface GatewayCommandOptions extends RunOptions {
  /** Resolves when `run` should stop (tests); default SIGINT/SIGTERM. */
  stopSignal?: Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `hermes gateway <argv…>` and returns the exit code. */
export function runGatewayCommand(
  argv: readonly string[],
  options: GatewayCommandOptions = {},
): Promise<number> {
  return gatewayCommand(options.stopSignal).run(argv, options);
}

/** `hermes gateway run|start|stop|status|slack-manifest`; `stopSignal` ends `run` (tests). */
export function gatewayCommand(stopSignal?: Promise<void>): CliCommand {
  return defineCommand({
    name: "gateway",
    description: "the long-running gateway of a home: chat platforms, API server, webhooks and cron",
    needs: "home",
    parse: (root, action) => {
      root
        .command("run")
        .description(
          "run the gateway in the foreground: the chat platforms whose switch is set (TELEGRAM_BOT_TOKEN, " +
            "DISCORD_BOT_TOKEN, SLACK_BOT_TOKEN, EMAIL_ADDRESS, SIGNAL_HTTP_URL, TWILIO_ACCOUNT_SID, " +
            "MATTERMOST_TOKEN, HASS_TOKEN), the API " +
            "server and webhooks when enabled, and the cron ticker",
        )
        .action(action((ctx) => run(ctx, stopSignal)));
      root
        .command("start")
        .description("run it in the background; it logs to ~/.hermes/logs/gateway.log")
        .action(action((ctx) => start(ctx)));
      root
        .command("stop")
        .description(
          "stop it: running turns get agent.restart_drain_timeout seconds (default 0), then are interrupted, " +
            "their chats told and their sessions marked so the next message continues",
        )
        .option("--timeout <seconds>", "how long to wait for running turns", "60")
        .option("--force", "stop at once (SIGKILL)")
        .action(
          action((ctx, flags: { timeout: string; force?: boolean }) => {
            const timeout = Number(flags.timeout);
            if (!Number.isFinite(timeout) || timeout <= 0) {
              throw new CliFailure(
                `--timeout expects seconds (a positive number), got "${flags.timeout}".`,
                2,
              );
            }
            return stop(ctx, timeout, flags.force === true);
          }),
        );
      root
        .command("install")
        .description(
          "run the gateway as a service: a systemd user unit (hermes-gateway[-<profile>].service), or a launchd agent on macOS",
        )
        .option("--system", "a system unit started at boot (root; runs as the invoking user)")
        .option("--user <name>", "with --system: the user the gateway runs as")
        .action(action((ctx, flags: { system?: boolean; user?: string }) => install(ctx, flags)));
      root
        .command("uninstall")
        .description("stop and remove the service")
        .option("--system", "the system unit")
        .action(action((ctx, flags: { system?: boolean }) => uninstall(ctx, flags.system === true)));
      root
        .command("restart")
        .description(
          "restart it (SIGUSR1; through the service when installed): new requests are turned away while " +
            "running turns finish (agent.restart_after_turn_timeout), then it stops and starts again",
        )
        .option("--system", "the system unit")
        .option("--timeout <seconds>", "how long to wait for the restarted gateway", "60")
        .action(
          action(async (ctx, flags: { system?: boolean; timeout: string }) => {
            const timeout = Number(flags.timeout);
            if (!Number.isFinite(timeout) || timeout <= 0) {
              throw new CliFailure(
                `--timeout expects seconds (a positive number), got "${flags.timeout}".`,
                2,
              );
            }
            return restart(ctx, flags.system === true, timeout);
          }),
        );
      root
        .command("list")
        .description("every profile's gateway: running or not, installed as a service or not")
        .action(action((ctx) => list(ctx)));
      root
        .command("status")
        .description(
          "say whether a gateway runs for this home and, from its control socket, its platforms, running turns and pending approvals",
        )
        .option("--json", "the running gateway's status as JSON")
        .action(action((ctx, flags: { json?: boolean }) => status(ctx, flags.json === true)));
      root
        .command("slack-manifest")
        .description(
          "print the slash commands for the Slack app manifest (features.slash_commands): /hermes <command>",
        )
        .option("--each", "every chat command by its own name too")
        .option("--url <url>", "the request URL of the commands")
        .action(
          action(async (ctx, flags: { each?: boolean; url?: string }) => {
            const { slackSlashCommands } = await import("../../gateway/messaging/commands.js");
            const slash_commands = slackSlashCommands({
              each: flags.each === true,
              ...(flags.url ? { url: flags.url } : {}),
            });
            ctx.io.out(JSON.stringify({ features: { slash_commands } }, null, 2));
            return 0;
          }),
        );
    },
  });
}

async function run(home: HomeContext, stopSignal: Promise<void> | undefined): Promise<number> {
  const context = withConfig(home);
  const { profile } = context;
  const { io } = context;
  const err = io.err;
  // Opens nothing until the first line; every line passes the process's secret redactor.
  const logger = homeLogger(context.home, context.config.logging, { component: "gateway" });
  await checkBackend(context.config as unknown as Readonly<Record<string, unknown>>);
  const { gatewayEnding, RESTART_EXIT_CODE, startSuccessor, supervised } = await import(
    "./gateway-lifecycle.js"
  );
  const ending = gatewayEnding(stopSignal, err);
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  try {
    gateway = await startGateway({
      home: context.home,
      config: context.config,
      env: context.env,
      processEnv: io.env,
      profile,
      log: (line) => err(`gateway: ${line}`),
      logger,
      onRestartRequested: ending.restart,
    });
  } catch (error) {
    ending.dispose();
    if (error instanceof GatewayRunningError) {
      throw new CliFailure(error.message, 1);
    }
    if (error instanceof ApiServerConfigError || error instanceof NoProviderError) {
      throw new CliFailure(error.message, 2);
    }
    throw new CliFailure(`could not start: ${error instanceof Error ? error.message : String(error)}`, 1);
  }
  io.out(`Gateway running (pid ${process.pid}): ${gateway.services.join(", ")}`);
  const end = await ending.ended;
  if (end === "restart") {
    err("gateway: restarting; new requests are turned away while running turns finish…");
    // A stop signal meanwhile ends the wait: stopping bounds what is left.
    const idle = await Promise.race([gateway.quiesce(), ending.stopped.then(() => false)]);
    if (!idle) err("gateway: turns still running; stopping them (their chats are told)…");
  }
  await gateway.stop();
  ending.dispose();
  if (end === "stop") {
    err("gateway: stopped");
    return 0;
  }
  if (supervised(context.env)) {
    err(`gateway: stopped; exit ${RESTART_EXIT_CODE} asks the service manager to start it again`);
    return RESTART_EXIT_CODE;
  }
  const pid = startSuccessor(context.home, profile);
  err(
    `gateway: restarted as pid ${pid ?? "?"} (its output: ${join(context.home, "logs", "gateway-output.log")})`,
  );
  return 0;
}

/**
 * A wrong `terminal.backend` stops the gateway at start (exit 2, with the fix), not each chat
 * later; whether the environment itself comes up is checked when a chat first needs it.
 */
async function checkBackend(config: Readonly<Record<string, unknown>>): Promise<void> {
  try {
    const kind = backendKind(config);
    if (kind !== "local") await loadBackend(kind);
  } catch (error) {
    if (!(error instanceof EnvironmentError)) throw error;
    const failure = environmentFailure(error);
    throw new CliFailure(failure.message, failure.exitCode);
  }
}

async function start({ home, profile, io }: HomeContext): Promise<number> {
  const running = runningGateway(home);
  if (running) {
    io.out(`Gateway already running (pid ${running.pid}).`);
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
      io.out(`Gateway started (pid ${child.pid}). Log: ${join(logs, "gateway.log")}`);
      return 0;
    }
    await sleep(100);
  }
  io.err(
    `hermes gateway: the gateway did not start${exited !== undefined ? ` (exit ${exited})` : ""}. Last lines of ${logPath}:`,
  );
  io.err(tail(logPath, 10));
  return 1;
}

async function stop({ home, io }: HomeContext, timeoutS: number, force: boolean): Promise<number> {
  const running = runningGateway(home);
  if (!running) {
    io.out("No gateway is running for this home.");
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
      io.out(`Gateway stopped (pid ${running.pid}).`);
      return 0;
    }
    await sleep(100);
  }
  io.err(
    `hermes gateway: pid ${running.pid} is still running after ${timeoutS} s (turns still finishing?). ` +
      "Wait, or stop it at once with: hermes gateway stop --force",
  );
  return 1;
}

async function status(ctx: HomeContext, json: boolean): Promise<number> {
  const { gatewayStatus, formatGatewayStatus } = await import("./gateway-status.js");
  const report = await gatewayStatus(ctx.home);
  const { sharedInstances, formatInstances } = await import("./gateway-instances.js");
  const shared = await sharedInstances(ctx.home, ctx.io.env);
  if (json) ctx.io.out(JSON.stringify(shared ? { ...report, shared } : report, null, 2));
  else
    ctx.io.out(
      shared ? `${formatGatewayStatus(report)}\n${formatInstances(shared)}` : formatGatewayStatus(report),
    );
  const live = shared && "instances" in shared && shared.instances.length > 0;
  return report.running || live ? 0 : 1;
}

function serviceSpec(ctx: HomeContext, system: boolean, user?: string): ServiceSpec {
  return {
    home: ctx.home,
    profile: ctx.profile,
    node: process.execPath,
    bin: process.argv[1] ?? "hermes",
    path: ctx.io.env["PATH"] ?? "/usr/local/bin:/usr/bin:/bin",
    system,
    ...(user ? { user } : {}),
  };
}

async function install(ctx: HomeContext, flags: { system?: boolean; user?: string }): Promise<number> {
  const { installService, serviceKind } = await import("./gateway-service.js");
  const system = flags.system === true;
  let result: ReturnType<typeof installService>;
  try {
    result = installService(serviceKind(), serviceSpec(ctx, system, flags.user), ctx.io.env);
  } catch (error) {
    throw new CliFailure(error instanceof Error ? error.message : String(error), 2);
  }
  ctx.io.out(`Installed ${result.path}`);
  for (const note of result.notes) ctx.io.err(note);
  return 0;
}

async function uninstall(ctx: HomeContext, system: boolean): Promise<number> {
  const { serviceKind, uninstallService } = await import("./gateway-service.js");
  const result = uninstallService(serviceKind(), { profile: ctx.profile, system, env: ctx.io.env });
  if (!result) {
    ctx.io.out(`No gateway service is installed for ${ctx.profile ?? "this home"}.`);
    return 0;
  }
  for (const note of result.notes) ctx.io.err(note);
  ctx.io.out(`Removed ${result.path}`);
  return 0;
}

async function restart(ctx: HomeContext, system: boolean, timeoutS: number): Promise<number> {
  const svc = await import("./gateway-service.js");
  const kind = svc.serviceKind();
  if (svc.serviceActive(kind, ctx.profile, system)) {
    // The manager sends SIGTERM (the gateway drains its turns) and starts it again.
    svc.restartService(kind, ctx.profile, system);
    ctx.io.out(`Restarted the ${kind} service.`);
    return 0;
  }
  const running = runningGateway(ctx.home);
  if (!running) return start(ctx);
  // SIGUSR1, as upstream: the gateway lets running turns finish, stops, and starts its successor.
  process.kill(running.pid, "SIGUSR1");
  const deadline = Date.now() + timeoutS * 1000;
  while (Date.now() < deadline) {
    const now = runningGateway(ctx.home);
    if (now && now.pid !== running.pid) {
      ctx.io.out(`Gateway restarted (pid ${running.pid} → ${now.pid}).`);
      return 0;
    }
    await sleep(100);
  }
  ctx.io.err(
    `hermes gateway: pid ${running.pid} is still finishing running turns after ${timeoutS} s; it restarts ` +
      "when they end (at most agent.restart_after_turn_timeout, then they are stopped and their chats told). " +
      "Check with: hermes gateway status",
  );
  return 1;
}

async function list(ctx: HomeContext): Promise<number> {
  const [{ listProfiles }, svc] = await Promise.all([
    import("../../config/profiles.js"),
    import("./gateway-service.js"),
  ]);
  const userHome = ctx.io.env["HOME"] || homedir();
  const kind = svc.serviceKind();
  for (const p of listProfiles(userHome)) {
    const running = runningGateway(p.path);
    const profile = p.isDefault ? undefined : p.name;
    const installed = [false, true]
      .filter((system) => existsSync(svc.serviceFilePath(kind, { profile, system, env: ctx.io.env })))
      .map((system) => (system ? "system service" : `${kind === "systemd" ? "user " : ""}service`));
    ctx.io.out(
      `${p.name.padEnd(16)} ${running ? `running (pid ${running.pid})` : "stopped"}${installed.length ? `  [${installed.join(", ")}]` : ""}  ${p.path}`,
    );
  }
  return 0;
}

function tail(path: string, lines: number): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
