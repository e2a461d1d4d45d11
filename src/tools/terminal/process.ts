/** process: inspect and control background processes started by `terminal(background: true)`. */
import { Type } from "@sinclair/typebox";
import { terminalAvailable } from "../environment.js";
import { defineTool, type ToolContext } from "../types.js";
import description from "./process.md";
import { type BackgroundProcess, getProcessRegistry, type ProcessRegistry } from "./process-registry.js";

const DEFAULT_LOG_LINES = 200;
const DEFAULT_WAIT_S = 180;
const TAIL_CHARS = 4000;
const POLL_CHARS = 20_000;

const parameters = Type.Object({
  action: Type.Union([
    Type.Literal("list"),
    Type.Literal("poll"),
    Type.Literal("log"),
    Type.Literal("wait"),
    Type.Literal("kill"),
    Type.Literal("write"),
    Type.Literal("close"),
  ]),
  session_id: Type.Optional(Type.String({ description: "Process id from terminal." })),
  data: Type.Optional(Type.String()),
  timeout: Type.Optional(
    Type.Integer({ minimum: 1, description: `wait: seconds, default ${DEFAULT_WAIT_S}.` }),
  ),
  offset: Type.Optional(
    Type.Integer({ minimum: 0, description: "log: 0-based first line; default the last lines." }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, description: `log: lines, default ${DEFAULT_LOG_LINES}.` }),
  ),
});

export const processTool = defineTool({
  name: "process",
  toolset: "terminal",
  description,
  parameters,
  emoji: "⚙️",
  check: terminalAvailable,
  async handler(args, ctx) {
    const registry = getProcessRegistry(ctx);
    if (args.action === "list") {
      const entries = registry.list(ctx.taskId);
      if (entries.length === 0) return "No background processes in this task.";
      return { processes: entries.map(summary) };
    }
    const entry = lookup(registry, args.session_id, ctx);
    switch (args.action) {
      case "poll": {
        const { text, lost } = entry.output.readFrom(entry.pollOffset);
        entry.pollOffset = entry.output.end;
        return {
          ...summary(entry),
          new_output: lastChars(text, POLL_CHARS),
          ...(lost > 0 ? { note: `${lost} characters were dropped before this poll (buffer limit)` } : {}),
        };
      }
      case "log":
        return readLog(entry, args.offset, args.limit ?? DEFAULT_LOG_LINES);
      case "wait": {
        const timeoutS = args.timeout ?? DEFAULT_WAIT_S;
        const exited = await registry.wait(entry, timeoutS * 1000, ctx.signal);
        const note = exited
          ? undefined
          : ctx.signal.aborted
            ? "wait interrupted by the user; the process is still running"
            : `still running after ${timeoutS}s`;
        return { ...summary(entry), ...(note ? { note } : {}), output_tail: tail(entry) };
      }
      case "kill":
        await registry.kill(entry);
        return { ...summary(entry), output_tail: tail(entry) };
      case "write":
      case "close":
        return writeStdin(entry, args.action, args.data);
    }
  },
});

function lookup(registry: ProcessRegistry, id: string | undefined, ctx: ToolContext): BackgroundProcess {
  const known = registry.list(ctx.taskId).map((e) => e.id);
  const knownText =
    known.length > 0 ? `Known ids: ${known.join(", ")}.` : "This task has no background processes.";
  if (!id) throw new Error(`session_id is required for this action. ${knownText}`);
  const entry = registry.get(id, ctx.taskId);
  if (!entry) throw new Error(`No background process ${id}. ${knownText}`);
  return entry;
}

function summary(e: BackgroundProcess): Record<string, unknown> {
  const endedOrNow = e.endedAt ?? Date.now();
  return {
    session_id: e.id,
    command: e.command,
    pid: e.pid,
    status: e.status,
    exit_code: e.exitCode,
    runtime_s: Math.round((endedOrNow - e.startedAt) / 1000),
  };
}

function readLog(e: BackgroundProcess, offset: number | undefined, limit: number): Record<string, unknown> {
  const text = e.output.toString();
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n");
  if (text === "") lines.length = 0;
  const start = offset ?? Math.max(0, lines.length - limit);
  const shown = lines.slice(start, start + limit);
  const dropped = e.output.start;
  return {
    session_id: e.id,
    status: e.status,
    total_lines: lines.length,
    showing: shown.length > 0 ? `lines ${start}-${start + shown.length - 1}` : "no lines",
    output: shown.join("\n"),
    ...(dropped > 0 ? { note: `the first ${dropped} characters of output were dropped (buffer limit)` } : {}),
  };
}

function writeStdin(e: BackgroundProcess, action: "write" | "close", data: string | undefined): string {
  const stdin = e.proc.stdin;
  if (e.status !== "running" || !stdin) {
    throw new Error(
      `Process ${e.id} is ${e.status === "running" ? "running with its stdin closed" : e.status}; nothing can be written to it.`,
    );
  }
  if (action === "close") {
    stdin.end();
    return `Closed stdin of ${e.id}.`;
  }
  if (data === undefined) throw new Error(`data is required for write: the text to send to ${e.id}'s stdin.`);
  stdin.write(data);
  return `Wrote ${data.length} characters to ${e.id}.`;
}

function tail(e: BackgroundProcess): string {
  return lastChars(e.output.toString(), TAIL_CHARS);
}

function lastChars(text: string, max: number): string {
  return text.length <= max
    ? text
    : `…[${text.length - max} earlier characters not shown]\n${text.slice(-max)}`;
}
