/**
 * The one-line summary of a finished tool call (`💻 terminal ls -la 0.4s`, a red ✗ when it failed),
 * shared by the one-shot renderer and the interactive REPL, plus the verbose details around it.
 */
import type { Style } from "./style.js";
import { truncateToWidth } from "./text-width.js";

/** Tool progress levels, as Python Hermes names them (`display.tool_progress`). */
export type ToolProgress = "off" | "new" | "all" | "verbose";

export const TOOL_PROGRESS_LEVELS: readonly ToolProgress[] = ["off", "new", "all", "verbose"];

/** The level after `current` in the `/verbose` cycle: off → new → all → verbose → off. */
export function nextToolProgress(current: ToolProgress): ToolProgress {
  const i = TOOL_PROGRESS_LEVELS.indexOf(current);
  return TOOL_PROGRESS_LEVELS[(i + 1) % TOOL_PROGRESS_LEVELS.length] as ToolProgress;
}

/** `value` as a tool progress level; `fallback` for anything else (a typo in config.yaml). */
export function parseToolProgress(value: unknown, fallback: ToolProgress = "all"): ToolProgress {
  if (value === false) return "off";
  if (value === true) return "all";
  const text = typeof value === "string" ? value.trim().toLowerCase() : "";
  return (TOOL_PROGRESS_LEVELS as readonly string[]).includes(text) ? (text as ToolProgress) : fallback;
}

export const DEFAULT_EMOJI: Readonly<Record<string, string>> = {
  terminal: "💻",
  process: "⚙️",
  read_file: "📖",
  write_file: "✍️",
  patch: "🩹",
  search_files: "🔎",
  todo: "📋",
  clarify: "❓",
  web_search: "🔍",
  web_extract: "🌐",
  memory: "🧠",
  session_search: "🗂️",
  delegate_task: "🤝",
  execute_code: "🐍",
  skill_view: "📚",
  skills_list: "📚",
};

export function toolEmoji(name: string, custom?: (tool: string) => string | undefined): string {
  return custom?.(name) ?? DEFAULT_EMOJI[name] ?? "🔧";
}

/** One-line preview of a tool call's most telling argument. */
export function previewArgs(name: string, args: Record<string, unknown>, max = 72): string {
  const preferred = ["command", "path", "pattern", "query", "url", "question", "action", "goal"];
  let value: unknown;
  for (const key of preferred) {
    if (args[key] !== undefined) {
      value = args[key];
      break;
    }
  }
  if (value === undefined) value = Object.values(args).find((v) => typeof v === "string");
  if (value === undefined)
    return name === "todo" && Array.isArray(args.todos) ? `${args.todos.length} items` : "";
  const text = String(value).replace(/\s+/g, " ").trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `0.4s`, `12.0s`, `2m 05s`. */
export function formatDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const total = Math.round(ms / 1000);
  return `${Math.floor(total / 60)}m ${String(total % 60).padStart(2, "0")}s`;
}

export interface ToolLineInput {
  name: string;
  args: Record<string, unknown> | undefined;
  ok: boolean;
  durationMs: number;
}

/**
 * `💻 terminal ls -la 0.4s` with the name bold, preview and duration dim, and ` ✗` in red when the
 * call failed. `width` (terminal columns) shortens the preview so the line does not wrap.
 */
export function formatToolLine(
  call: ToolLineInput,
  style: Style,
  options: { emojiFor?: (tool: string) => string | undefined; width?: number } = {},
): string {
  const emoji = toolEmoji(call.name, options.emojiFor);
  let preview = call.args ? previewArgs(call.name, call.args) : "";
  const seconds = formatDuration(call.durationMs);
  if (options.width !== undefined && preview) {
    // emoji (2) + spaces (3) + name + duration + failure mark (2)
    const room = options.width - (2 + 3 + call.name.length + seconds.length + 2);
    preview = room > 8 ? truncateToWidth(preview, room) : "";
  }
  const status = call.ok ? "" : style.red(" ✗");
  return `${emoji} ${style.bold(call.name)} ${style.dim(preview)} ${style.dim(seconds)}${status}`;
}

/** Verbose mode: the call's arguments as compact JSON, cut to `max` characters. */
export function formatArgs(args: Record<string, unknown>, max = 600): string {
  const json = JSON.stringify(args);
  return json.length > max ? `${json.slice(0, max - 1)}…` : json;
}

/** Verbose mode: the first `maxLines` lines of a tool result, indented, with a count of the rest. */
export function resultExcerpt(result: string, maxLines = 8, maxLineChars = 200): string[] {
  const lines = result.replace(/\s+$/, "").split("\n");
  const shown = lines
    .slice(0, maxLines)
    .map((l) => `    ${l.length > maxLineChars ? `${l.slice(0, maxLineChars - 1)}…` : l}`);
  if (lines.length > maxLines) shown.push(`    … ${lines.length - maxLines} more lines`);
  return shown;
}
