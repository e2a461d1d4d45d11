/**
 * `hermes logs [agent|errors|gateway|list]`: the home's log files (util/log.ts writes them),
 * shown, filtered and followed. `-n N` last lines (default 50), `-f` follow (Ctrl+C stops),
 * `--level`, `--session`, `--since`, `--component`. Matching lines go to stdout; the header line
 * and "no log yet" notes go to stderr, so `hermes logs errors | grep …` sees only log lines.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { Argument, Option } from "commander";
import { logsDir } from "../../util/log.js";
import { LogArgumentError, type LogFilter, parseLevelArgument, parseSince } from "../../util/log-filter.js";
import { followFile, lastLines, rotationChain } from "../../util/log-tail.js";
import { CliFailure, defineCommand, type HomeContext } from "../command.js";
import { renderTable } from "../format/table.js";
import { formatBytes, relativeTime } from "../format/time.js";

/** Log names → files: ours, and those a Python Hermes sharing the home writes. */
export const LOG_FILES: Readonly<Record<string, string>> = {
  agent: "agent.log",
  errors: "errors.log",
  gateway: "gateway.log",
  gui: "gui.log",
  desktop: "desktop.log",
  mcp: "mcp-stderr.log",
};

interface LogsFlags {
  lines: string;
  follow?: boolean;
  level?: string;
  session?: string;
  since?: string;
  component?: string;
}

function filterOf(flags: LogsFlags, nowMs: number): LogFilter {
  return {
    ...(flags.level !== undefined ? { level: parseLevelArgument(flags.level) } : {}),
    ...(flags.session !== undefined ? { session: flags.session } : {}),
    ...(flags.since !== undefined ? { sinceMs: parseSince(flags.since, nowMs) } : {}),
    ...(flags.component !== undefined ? { component: flags.component } : {}),
  };
}

function lineCount(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0)
    throw new CliFailure(`-n expects a whole number of lines, got "${text}".`, 2);
  return n;
}

function describe(flags: LogsFlags): string {
  const parts = [
    flags.level ? `level>=${flags.level.toUpperCase()}` : "",
    flags.session ? `session=${flags.session}` : "",
    flags.component ? `component=${flags.component}` : "",
    flags.since ? `since=${flags.since}` : "",
  ].filter(Boolean);
  return parts.length > 0 ? ` [${parts.join(", ")}]` : "";
}

async function show(ctx: HomeContext, name: string, flags: LogsFlags): Promise<number> {
  if (name === "list") return list(ctx);
  const file = LOG_FILES[name];
  // commander checked the name against the choices.
  if (!file) throw new CliFailure(`unknown log "${name}".`, 2);
  const n = lineCount(flags.lines);
  const filter = filterOf(flags, ctx.io.now() * 1000);
  const path = join(logsDir(ctx.home), file);
  const chain = rotationChain(path);
  if (chain.length === 0 && !flags.follow) {
    // The gateway writes its own log; the rest are written by any run of Hermes.
    const writer = name === "gateway" ? "the gateway runs (hermes gateway)" : "Hermes runs (try hermes chat)";
    ctx.io.err(`No ${file} yet in ${logsDir(ctx.home)}: logs are written once ${writer}.`);
    return 1;
  }
  if (!flags.follow) {
    ctx.io.err(`--- ${path}${describe(flags)} (last ${n}) ---`);
    for (const line of lastLines(chain, n, filter)) ctx.io.out(line);
    return 0;
  }
  // Following starts before anything is shown: a line written after the header is never missed,
  // and one written while the last lines are read is shown once.
  const follower = followFile(path, filter, (line) => ctx.io.out(line));
  ctx.io.err(`--- ${path}${describe(flags)} (following; Ctrl+C to stop) ---`);
  const newest = chain[0] === path ? follower.start : undefined;
  for (const line of lastLines(chain, n, filter, newest)) ctx.io.out(line);
  if (chain.length === 0) ctx.io.err(`(waiting for ${file} to be written)`);
  return new Promise<number>((resolve) => {
    const stop = () => {
      follower.stop();
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(0);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}

function list(ctx: HomeContext): number {
  const dir = logsDir(ctx.home);
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    ctx.io.err(`No logs folder yet at ${dir}: logs are written once Hermes runs.`);
    return 0;
  }
  const rows: string[][] = [];
  for (const name of names) {
    const stat = statSync(join(dir, name), { throwIfNoEntry: false });
    if (!stat?.isFile()) continue;
    rows.push([name, formatBytes(stat.size), relativeTime(stat.mtimeMs / 1000, ctx.io.now())]);
  }
  ctx.io.err(`Log files in ${dir}:`);
  const columns = [{ header: "FILE" }, { header: "SIZE", align: "right" as const }, { header: "MODIFIED" }];
  for (const line of renderTable(columns, rows)) ctx.io.out(line);
  return 0;
}

export const logsCommand = defineCommand({
  name: "logs",
  description: "view, filter and follow the log files in ~/.hermes/logs",
  needs: "home",
  expected: (error) => (error instanceof LogArgumentError ? 2 : undefined),
  parse: (cmd) =>
    cmd
      .addArgument(
        new Argument("[log]", "which log (default agent), or list: the files with sizes").choices([
          ...Object.keys(LOG_FILES),
          "list",
        ]),
      )
      .option("-n, --lines <n>", "how many of the last lines to show", "50")
      .option("-f, --follow", "keep printing lines as they are written (Ctrl+C stops)")
      .addOption(
        new Option("--level <level>", "only lines at this level or above")
          .choices(["DEBUG", "INFO", "WARNING", "ERROR"])
          // Listed for help and completion; any case (and WARN) is read by parseLevelArgument.
          .argParser((value: string) => value),
      )
      .option("--session <id>", "only lines of this session (an id or part of one)")
      .option("--since <when>", "only lines since an age (30m, 2h, 1d) or a date (2026-11-26[T07:00])")
      .option("--component <name>", "only lines of this component and below (cli, agent, gateway, …)"),
  run: (ctx, log: string | undefined, flags: LogsFlags) => show(ctx, log ?? "agent", flags),
});
