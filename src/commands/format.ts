/**
 * Text for `/usage`, `/status`, `/sessions` and a resumed session's recap, on every surface. Pure
 * functions of their inputs (the clock is passed in), painted with the surface's `Paint`.
 */
import type { Message } from "../ai/types.js";
import type { SessionSummary } from "../state/types.js";
import { truncateToWidth } from "../util/text-width.js";
import type { Paint, UsageReport } from "./types.js";

/** `1,234,567` */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** `$0.0123`, `$1.50`; null → `unknown`. */
export function formatCost(usd: number | null): string {
  if (usd === null || !Number.isFinite(usd)) return "unknown";
  if (usd === 0) return "$0.00";
  return usd < 0.1 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** `just now`, `5m ago`, `3h ago`, `2d ago`, then the date. */
export function relativeTime(thenSeconds: number, nowSeconds: number): string {
  const d = Math.max(0, nowSeconds - thenSeconds);
  if (d < 60) return "just now";
  if (d < 3600) return `${Math.floor(d / 60)}m ago`;
  if (d < 86_400) return `${Math.floor(d / 3600)}h ago`;
  if (d < 7 * 86_400) return `${Math.floor(d / 86_400)}d ago`;
  return new Date(thenSeconds * 1000).toISOString().slice(0, 10);
}

/**
 * The `/usage` cost line: `$0.0123 (estimated)`, `$0.00 (included)` for usage not billed per token,
 * `$0.0123+ (some usage has no known price)` when part of it is unpriced, `cost unknown for <model>`
 * when none of it is priced.
 */
export function formatSessionCost(
  report: Pick<UsageReport, "model" | "costUsd" | "costStatus" | "usage">,
): string {
  const usd = report.costUsd;
  const spent = report.usage.inputTokens + report.usage.outputTokens > 0;
  switch (report.costStatus) {
    case "unknown":
      return usd === null || usd === 0
        ? `cost unknown for ${report.model}`
        : `${formatCost(usd)}+ (some usage has no known price)`;
    case "included":
      return `${formatCost(usd ?? 0)} (included)`;
    case "actual":
      return `${formatCost(usd)} (actual)`;
    case "estimated":
      return `${formatCost(usd)} (estimated)`;
    default:
      if (usd !== null) return `${formatCost(usd)} (estimated)`;
      return spent ? `cost unknown for ${report.model}` : formatCost(0);
  }
}

function table(rows: Array<[string, string]>, style: Paint): string[] {
  if (style.table) return style.table(rows);
  const width = Math.max(...rows.map(([k]) => k.length)) + 2;
  return rows.map(([k, v]) => `  ${style.dim(k.padEnd(width))}${v}`);
}

export function formatUsage(report: UsageReport, style: Paint): string[] {
  const u = report.usage;
  const cache: string[] = [];
  if (u.cacheReadTokens) cache.push(`cache read ${formatCount(u.cacheReadTokens)}`);
  if (u.cacheWriteTokens) cache.push(`cache write ${formatCount(u.cacheWriteTokens)}`);
  const rows: Array<[string, string]> = [
    ["Model", report.model],
    [
      "Input tokens",
      `${formatCount(u.inputTokens)}${cache.length ? style.dim(` (${cache.join(", ")})`) : ""}`,
    ],
    [
      "Output tokens",
      `${formatCount(u.outputTokens)}${u.reasoningTokens ? style.dim(` (reasoning ${formatCount(u.reasoningTokens)})`) : ""}`,
    ],
    ["API calls", formatCount(report.apiCalls)],
    ["Cost", formatSessionCost(report)],
  ];
  if (report.contextLength && report.contextLength > 0) {
    const pct = Math.min(100, (report.contextTokens / report.contextLength) * 100);
    rows.push([
      "Context",
      `${formatCount(report.contextTokens)} / ${formatCount(report.contextLength)} tokens (${pct.toFixed(pct < 10 ? 1 : 0)}%)`,
    ]);
  } else {
    rows.push([
      "Context",
      `${formatCount(report.contextTokens)} tokens ${style.dim("(context length unknown)")}`,
    ]);
  }
  return [style.bold("Usage this session"), ...table(rows, style)];
}

export interface StatusInfo {
  id: string;
  title: string | null;
  model: string;
  provider: string;
  cwd: string;
  running: boolean;
  runningSeconds: number | null;
  queued: string[];
  messages: number;
  recorded: boolean;
  toolProgress: string;
  busyMode: string;
  yolo: boolean;
}

export function formatStatus(info: StatusInfo, style: Paint): string[] {
  const rows: Array<[string, string]> = [
    ["Session", `${info.id}${info.recorded ? "" : style.dim(" (not recorded)")}`],
    ["Title", info.title ?? style.dim("(untitled)")],
    ["Model", info.provider ? `${info.model} ${style.dim(`via ${info.provider}`)}` : info.model],
    ["Directory", info.cwd],
    ["Messages", formatCount(info.messages)],
    [
      "Turn",
      info.running
        ? style.yellow(`running${info.runningSeconds !== null ? ` for ${info.runningSeconds}s` : ""}`)
        : "idle",
    ],
    ["Queued", info.queued.length === 0 ? "none" : `${info.queued.length}`],
    ["Tool progress", info.toolProgress],
    ["Busy input", info.busyMode],
    ["YOLO", info.yolo ? style.red("on") : "off"],
  ];
  const lines = [style.bold("Status"), ...table(rows, style)];
  for (const [i, text] of info.queued.entries()) {
    lines.push(`    ${style.dim(`${i + 1}.`)} ${truncateToWidth(text.replace(/\s+/g, " "), 70)}`);
  }
  return lines;
}

/** Numbered list of sessions, newest first; the current one is marked. */
export function formatSessionList(
  sessions: readonly SessionSummary[],
  currentId: string,
  nowSeconds: number,
  style: Paint,
): string[] {
  if (sessions.length === 0) return [style.dim("No recorded sessions yet.")];
  const numberWidth = String(sessions.length).length;
  return sessions.map((s, i) => {
    const mark = s.id === currentId ? style.green("●") : " ";
    const label = s.title ? style.bold(s.title) : style.dim(s.preview ? `“${s.preview}”` : "(empty)");
    const when = style.dim(`${relativeTime(s.lastActiveAt, nowSeconds)} · ${s.messageCount} msgs · ${s.id}`);
    const number = style.cyan(`${String(i + 1).padStart(numberWidth)}.`);
    return `${mark} ${number} ${truncateToWidth(label, 50)}  ${when}`;
  });
}

function textOf(message: Message): string {
  if (typeof message.content === "string") return message.content;
  if (Array.isArray(message.content)) {
    return message.content.map((p) => (p.type === "text" ? p.text : "[image]")).join(" ");
  }
  return "";
}

/**
 * A dim recap of the end of a resumed conversation: the last `exchanges` user messages, each with
 * the first lines of the answer that followed. Empty when there is nothing to show.
 */
export function formatRecap(
  messages: readonly Message[],
  style: Paint,
  width = 100,
  exchanges = 2,
): string[] {
  const starts: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === "user") starts.push(i);
  });
  const shown = starts.slice(-exchanges);
  if (shown.length === 0) return [];
  const room = Math.max(20, width - 4);
  const lines: string[] = [style.dim("─── earlier in this session ───")];
  for (const [n, start] of shown.entries()) {
    const end = shown[n + 1] ?? messages.length;
    const user = textOf(messages[start] as Message)
      .replace(/\s+/g, " ")
      .trim();
    lines.push(style.dim(`❯ ${truncateToWidth(user, room)}`));
    const answer = messages
      .slice(start + 1, end)
      .filter((m) => m.role === "assistant")
      .map(textOf)
      .filter((t) => t.trim() !== "")
      .at(-1);
    if (!answer) continue;
    const answerLines = answer.trim().split("\n");
    for (const line of answerLines.slice(0, 3)) lines.push(style.dim(`  ${truncateToWidth(line, room)}`));
    if (answerLines.length > 3) lines.push(style.dim(`  … ${answerLines.length - 3} more lines`));
  }
  lines.push(style.dim("───"));
  return lines;
}
