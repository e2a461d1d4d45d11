/**
 * `/api/logs`: the log files `hermes logs` reads, by name only (never a path from the request),
 * filtered by level, session, text and time, redacted; with `after=<cursor>` only what was appended
 * since the last answer (the Logs page's follow mode).
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { logsDir } from "../util/log.js";
import { type LogFilter, parseLevelArgument, parseSince } from "../util/log-filter.js";
import { rotationChain } from "../util/log-tail.js";
import { redactText } from "../util/redact.js";
import { ApiError, intParam, type Route } from "./http.js";
import { followLog, parseCursor, tailLog } from "./log-reader.js";

/** The logs the dashboard shows (names as `hermes logs` takes them). */
export const LOGS: Readonly<Record<string, string>> = {
  agent: "agent.log",
  errors: "errors.log",
  gateway: "gateway.log",
};

const MAX_TEXT = 200;

function logFile(home: string, query: URLSearchParams): { name: string; path: string } {
  const name = query.get("name") ?? "agent";
  const file = Object.hasOwn(LOGS, name) ? LOGS[name] : undefined;
  if (!file) throw new ApiError(400, `name must be one of ${Object.keys(LOGS).join(", ")}`);
  return { name, path: join(logsDir(home), file) };
}

function filterOf(query: URLSearchParams, nowMs: number): LogFilter {
  const filter: LogFilter = {};
  try {
    const level = query.get("level");
    if (level) filter.level = parseLevelArgument(level);
    const since = query.get("since");
    if (since) filter.sinceMs = parseSince(since, nowMs);
  } catch (error) {
    throw new ApiError(400, (error instanceof Error ? error.message : String(error)).replace(/^--/, ""));
  }
  const session = query.get("session")?.trim();
  if (session) {
    if (session.length > MAX_TEXT) throw new ApiError(400, `"session" is at most ${MAX_TEXT} characters`);
    filter.session = session;
  }
  return filter;
}

export function logRoutes(deps: { home: string; now?: () => number }): Route[] {
  const now = deps.now ?? Date.now;
  return [
    {
      method: "GET",
      path: "/api/logs",
      summary:
        "the last lines of a log (name: agent | errors | gateway; lines ≤ 2000; level; session; q; since), redacted, with a cursor; after=<cursor> gives only newer lines",
      handler: ({ query }) => {
        const { name, path } = logFile(deps.home, query);
        const filter = filterOf(query, now());
        const text = query.get("q") ?? "";
        if (text.length > MAX_TEXT) throw new ApiError(400, `"q" is at most ${MAX_TEXT} characters`);
        const spec = { filter, text, shown: redactText };
        const after = query.get("after");
        if (after !== null && after !== "") {
          const cursor = parseCursor(after);
          if (!cursor) throw new ApiError(400, '"after" must be a cursor from an earlier answer');
          const next = followLog(path, cursor, spec, { maxLines: intParam(query, "lines", 2000, 2000) });
          return { json: { name, ...next, lines: next.lines.map((line) => redactText(line)) } };
        }
        const n = intParam(query, "lines", 200, 2000);
        const tail = tailLog(path, n, spec);
        return { json: { name, ...tail, lines: tail.lines.map((line) => redactText(line)) } };
      },
    },
    {
      method: "GET",
      path: "/api/logs/files",
      summary: "the logs there are: name, file, size, modified time and rotated copies",
      handler: () => ({
        json: {
          files: Object.entries(LOGS).map(([name, file]) => {
            const path = join(logsDir(deps.home), file);
            const chain = rotationChain(path);
            let size = 0;
            let modified: string | null = null;
            try {
              const stat = statSync(path);
              size = stat.size;
              modified = stat.mtime.toISOString();
            } catch {
              // Not written yet.
            }
            return {
              name,
              file,
              exists: chain[0] === path,
              size,
              modified,
              rotated: chain.filter((f) => f !== path).length,
            };
          }),
        },
      }),
    },
  ];
}
