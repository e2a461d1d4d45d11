/**
 * The one-line summary of a finished tool call (`💻 terminal ls -la 0.4s`, a red ✗ when it failed),
 * shared by the one-shot renderer and the interactive REPL, plus the verbose details around it.
 */
import type { Style } from "./style.js";
import { truncateToWidth } from "./text-width.js";

export {
  DEFAULT_EMOJI,
  formatDuration,
  nextToolProgress,
  parseToolProgress,
  previewArgs,
  TOOL_PROGRESS_LEVELS,
  type ToolProgress,
  toolEmoji,
} from "../../agent/tool-display.js";

import { formatDuration, previewArgs, toolEmoji } from "../../agent/tool-display.js";

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
