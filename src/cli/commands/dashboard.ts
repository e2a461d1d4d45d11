/**
 * `hermes dashboard [--port 9119] [--host 127.0.0.1] [--no-open] [--stop] [--status]`: the web
 * dashboard's JSON API (src/dashboard/, API.md there) in its own foreground process, recorded in
 * `<home>/dashboard.json` (without the per-start token, which only the start prints). `--hash-password` reads a password on stdin and prints the hash
 * `dashboard.auth.password_hash` takes. Exit codes: 0 ok, 1 already running / could not stop, 2 a
 * bad option or a bind that needs auth it does not have.
 */
import { spawn } from "node:child_process";
import { loadEnvFile } from "../../config/env-file.js";
import { loadConfig } from "../../config/load.js";
import { startDashboard } from "../../dashboard/app.js";
import {
  DASHBOARD_KIND,
  releaseDashboardRecord,
  runningDashboard,
  stopDashboard,
  writeDashboardRecord,
} from "../../dashboard/process.js";
import { DashboardAuthError, hashPassword, resolveAuth } from "../../dashboard/security.js";
import { CliFailure, defineCommand } from "../command.js";
import type { CliIo } from "../io.js";
import { startDetachedCuratorRun } from "./curator.js";

interface DashboardFlags {
  port: string;
  host: string;
  open: boolean;
  stop?: boolean;
  status?: boolean;
  hashPassword?: boolean;
}

function parsePort(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) > 65535)
    throw new CliFailure(`--port expects 0-65535, got "${text}".`, 2);
  return Number(text);
}

async function readStdin(io: CliIo): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

function openBrowser(url: string): void {
  const command =
    process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const child = spawn(command, [url], { detached: true, stdio: "ignore" });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No opener: the URL is printed anyway.
  }
}

/**
 * Why `--status` shows no token: it exists only in the running process and the line it printed.
 * The agent's tools can read every file of the home and run `hermes`, so neither may hand it out.
 */
const SIGN_IN_NOTE =
  "Sign in with the URL (and ?token=) it printed when it started; the token is never stored. Lost it? `hermes dashboard --stop`, then start it again.";

function urlHost(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

export const dashboardCommand = defineCommand({
  name: "dashboard",
  description:
    "the web dashboard (a page and its JSON API): sessions, chat, usage, memory, skills, cron, gateway, config, logs",
  needs: "home",
  parse: (cmd) =>
    cmd
      .option("--port <port>", "port to listen on (0: any free one)", "9119")
      .option("--host <host>", "address to bind; anything but loopback needs dashboard.auth", "127.0.0.1")
      .option("--no-open", "do not open a browser")
      .option("--stop", "stop this home's running dashboard")
      .option("--status", "whether this home's dashboard runs, and its URL")
      .option("--hash-password", "read a password on stdin, print a hash for dashboard.auth.password_hash"),
  run: async (ctx, flags: DashboardFlags) => {
    const { home, io } = ctx;
    if (flags.hashPassword) {
      const password = await readStdin(io);
      if (password.length < 8) throw new CliFailure("the password must have at least 8 characters.", 2);
      io.out(hashPassword(password));
      return 0;
    }
    if (flags.status) {
      const record = runningDashboard(home);
      if (!record) {
        // Exit 1 as `hermes gateway status` does, so scripts can test it.
        io.out("Dashboard: not running");
        return 1;
      }
      io.out(`Dashboard: running (pid ${record.pid}, since ${record.started_at})\n${record.url}`);
      if (record.auth === "per-start") io.out(SIGN_IN_NOTE);
      return 0;
    }
    if (flags.stop) {
      const result = await stopDashboard(home);
      if (result === "not_running") io.out("Dashboard: not running");
      else if (result === "stopped") io.out("Dashboard stopped.");
      else {
        io.err("hermes dashboard: the dashboard did not exit within 5 s.");
        return 1;
      }
      return 0;
    }
    const port = parsePort(flags.port);
    const host = flags.host.trim();
    const running = runningDashboard(home);
    if (running) {
      io.err(`hermes dashboard: already running for this home (pid ${running.pid}): ${running.url}`);
      if (running.auth === "per-start") io.err(SIGN_IN_NOTE);
      return 1;
    }
    const env = loadEnvFile(home, io.env).env;
    const { config } = loadConfig({ home, env });
    const section = (config as unknown as Record<string, unknown>)["dashboard"];
    const dashboardConfig =
      section && typeof section === "object" ? (section as Record<string, unknown>) : {};
    let auth: ReturnType<typeof resolveAuth>;
    try {
      auth = resolveAuth(dashboardConfig["auth"], host);
    } catch (error) {
      if (error instanceof DashboardAuthError) throw new CliFailure(error.message, 2);
      throw error;
    }
    const extra = dashboardConfig["allowed_hosts"];
    const extraHosts = Array.isArray(extra) ? extra.filter((h): h is string => typeof h === "string") : [];
    const app = await startDashboard({
      home,
      host,
      port,
      auth,
      baseEnv: io.env,
      extraHosts,
      log: (line) => io.err(line),
      runCronJob: (id) => {
        // The same command a user would type, on this home, detached: its output is saved with the job.
        const entry = process.argv[1];
        if (!entry) return;
        const child = spawn(process.execPath, [entry, "cron", "run", id], {
          detached: true,
          stdio: "ignore",
          env: { ...io.env, HERMES_HOME: home },
        });
        child.on("error", () => {});
        child.unref();
      },
      startCuratorRun: (dryRun) => startDetachedCuratorRun(home, dryRun ? ["--dry-run"] : [], io.env),
    }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE")
        throw new CliFailure(`port ${port} on ${host} is in use; pick another with --port.`, 1);
      throw error;
    });
    // A wildcard bind is reached locally through loopback; any other address as given.
    const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
    const base = `http://${urlHost(shownHost)}:${app.port}/`;
    const url = auth.kind === "token" && auth.source === "per-start" ? `${base}?token=${auth.token}` : base;
    writeDashboardRecord(home, {
      kind: DASHBOARD_KIND,
      pid: process.pid,
      host,
      port: app.port,
      url: base,
      auth: auth.kind === "basic" ? "basic" : auth.source === "per-start" ? "per-start" : "token",
      started_at: new Date().toISOString(),
    });
    io.out(`Dashboard: ${url}`);
    io.err("JSON API for scripts: GET /api/ lists the routes. Ctrl+C or `hermes dashboard --stop` stops it.");
    if (flags.open) openBrowser(url);
    return new Promise<number>((resolve) => {
      const stop = () => {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        void app.close().finally(() => {
          releaseDashboardRecord(home);
          resolve(0);
        });
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
  },
});
