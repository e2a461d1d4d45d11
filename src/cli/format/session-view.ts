/**
 * Sessions as text for the terminal: a header of a session's facts, a transcript with each tool
 * call and tool result on one line, and search snippets with their matched terms highlighted.
 * Colour is applied only when `view.color` is set (a TTY without NO_COLOR).
 */
import pc from "picocolors";
import { type Message, messageText } from "../../ai/types.js";
import type { SessionRecord, StoredMessage } from "../../state/types.js";
import { formatClock, formatCost, formatCount, formatDateTime, relativeTime } from "./time.js";

export interface ViewOptions {
  color: boolean;
  /** Now, in seconds, for relative times. */
  now: number;
}

const style = (view: ViewOptions, fn: (s: string) => string, text: string) => (view.color ? fn(text) : text);

/** Title and id, then one labelled line per fact (source, times, counts, tokens, cost, cwd, parent). */
export function sessionHeader(s: SessionRecord, view: ViewOptions): string[] {
  const row = (label: string, value: string) => `  ${style(view, pc.dim, label.padEnd(9))} ${value}`;
  const title = s.title ? `"${s.title}"` : "(untitled)";
  const lines = [`${style(view, pc.bold, title)}  ${style(view, pc.cyan, s.id)}`];
  lines.push(row("source", `${s.source}${s.model ? ` · ${s.model}` : ""}`));
  let when = `${formatDateTime(s.startedAt)} (${relativeTime(s.startedAt, view.now)})`;
  if (s.endedAt !== null) when += ` → ${formatDateTime(s.endedAt)}${s.endReason ? ` (${s.endReason})` : ""}`;
  lines.push(row("started", when));
  const counts = [
    formatCount(s.messageCount),
    `tool calls ${formatCount(s.toolCallCount)}`,
    `model calls ${formatCount(s.apiCallCount)}`,
  ];
  lines.push(row("messages", counts.join(" · ")));
  const tokens = [`in ${formatCount(s.inputTokens)}`, `out ${formatCount(s.outputTokens)}`];
  if (s.cacheReadTokens > 0) tokens.push(`cache read ${formatCount(s.cacheReadTokens)}`);
  if (s.reasoningTokens > 0) tokens.push(`reasoning ${formatCount(s.reasoningTokens)}`);
  lines.push(row("tokens", tokens.join(" · ")));
  lines.push(row("cost", formatCost(s.actualCostUsd ?? s.estimatedCostUsd)));
  if (s.cwd) lines.push(row("cwd", `${s.cwd}${s.gitBranch ? ` (${s.gitBranch})` : ""}`));
  if (s.parentSessionId) lines.push(row("parent", s.parentSessionId));
  return lines;
}

const ROLE_COLOR: Record<Message["role"], (s: string) => string> = {
  user: pc.green,
  assistant: pc.blue,
  tool: pc.magenta,
  system: pc.yellow,
};

/**
 * The messages as a readable transcript: user and assistant text in full, each tool call as
 * `→ name preview`, each tool result and system message on one shortened line.
 */
export function transcript(messages: readonly StoredMessage[], view: ViewOptions): string[] {
  if (messages.length === 0) return [style(view, pc.dim, "(no messages)")];
  const lines: string[] = [];
  for (const m of messages) {
    const label = `${style(view, pc.dim, `[${formatClock(m.timestamp)}]`)} ${style(view, ROLE_COLOR[m.role], m.role)}`;
    const text = messageText(m).trim();
    if (m.role === "tool") {
      lines.push(`${label} ${m.toolName ?? "tool"} ${style(view, pc.dim, `⎿ ${oneLine(text, 100)}`)}`);
      continue;
    }
    if (m.role === "system") {
      lines.push(`${label} ${style(view, pc.dim, oneLine(text, 100))}`);
      continue;
    }
    lines.push(label);
    if (text) lines.push(indent(text));
    const images = Array.isArray(m.content) ? m.content.filter((p) => p.type === "image_url").length : 0;
    if (images > 0) lines.push(indent(style(view, pc.dim, `[${images} image${images > 1 ? "s" : ""}]`)));
    for (const call of m.toolCalls ?? []) {
      const name = style(view, pc.bold, call.function.name);
      lines.push(indent(`→ ${name} ${style(view, pc.dim, argsPreview(call.function.arguments))}`));
    }
    lines.push("");
  }
  while (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** A search snippet on one line: `>>>term<<<` markers become bold yellow with colour, vanish without. */
export function highlight(snippet: string, view: Pick<ViewOptions, "color">): string {
  const flat = snippet.replace(/\s+/g, " ").trim();
  return flat.replace(/>>>(.*?)<<</g, (_m, term: string) => (view.color ? pc.bold(pc.yellow(term)) : term));
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}… (${formatCount(flat.length)} chars)` : flat;
}

/** The first string argument of a tool call (or the whole arguments), on one short line. */
function argsPreview(raw: string): string {
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      const first = Object.values(parsed as Record<string, unknown>).find((v) => typeof v === "string");
      return oneLine(typeof first === "string" ? first : JSON.stringify(parsed), 80);
    }
  } catch {
    // Arguments that are not JSON are shown as stored.
  }
  return oneLine(raw, 80);
}
