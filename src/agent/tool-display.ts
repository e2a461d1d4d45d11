/**
 * How tool calls are described to people, on any surface: progress levels (`display.tool_progress`),
 * the emoji per tool, a one-line preview of the telling argument, and durations.
 */

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
