/**
 * Markdown (as the agent writes it) → Slack `mrkdwn`, the Block Kit layout of a message with
 * buttons, and the way back: Slack message text, channel types, files and Web API failures as Hermes
 * describes them. Pure functions; nothing here throws.
 *
 * Slack's dialect differs from CommonMark: `*bold*`, `_italic_`, `~strike~`, `<url|label>` links,
 * no headings, lists or tables. `&`, `<` and `>` are control characters everywhere in a message
 * (code included: Slack stores a typed `<div>` as `&lt;div&gt;` and clients decode it on display),
 * so they are escaped everywhere, except in Slack's own entities (`<@U123>`, `<#C123|name>`,
 * `<!here>`, `<https://…|label>`), which pass through so the agent can mention people.
 */
import { Lexer, type Token, type Tokens } from "marked";
import stringWidth from "string-width";
import type { ChatType } from "../session-key.js";
import { type Button, type MediaKind, PlatformError } from "./types.js";

/** Slack's own `<…>` entities: user, channel and special mentions, and explicit links. */
const SLACK_ENTITY = /<(?:[@#!][^<>\s][^<>]*|(?:https?|mailto|tel):[^<>\s][^<>]*)>/g;
const SAFE_LINK_SCHEME = /^(?:https?|mailto|tel|slack):/i;
const BULLETS = ["•", "◦", "▪"];

/** Escapes Slack's three control characters; nothing else changes. For code and plain text. */
export function escapeSlackText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Escapes prose: entities the writer already escaped (`&amp;`, `&lt;`, `&gt;`) are decoded first so
 * they are not doubled, and Slack entities are kept as they are.
 */
function escapeProse(text: string): string {
  const decoded = text.replace(/&(amp|lt|gt|quot|#39);/g, (_whole, name: string) => {
    switch (name) {
      case "amp":
        return "&";
      case "lt":
        return "<";
      case "gt":
        return ">";
      case "quot":
        return '"';
      default:
        return "'";
    }
  });
  let out = "";
  let last = 0;
  for (const match of decoded.matchAll(SLACK_ENTITY)) {
    const at = match.index ?? 0;
    out += escapeSlackText(decoded.slice(last, at)) + match[0].replace(/&(?!amp;|lt;|gt;)/g, "&amp;");
    last = at + match[0].length;
  }
  return out + escapeSlackText(decoded.slice(last));
}

/** Inside a fence, a literal ``` would close it early; a zero-width space keeps it literal. */
function escapeCode(text: string): string {
  return escapeSlackText(text).replace(/```/g, "`\u200b``");
}

function escapeUrl(href: string): string {
  return href
    .trim()
    .replace(/&/g, "&amp;")
    .replace(/</g, "%3C")
    .replace(/>/g, "%3E")
    .replace(/\|/g, "%7C")
    .replace(/ /g, "%20");
}

interface InlineState {
  bold: boolean;
  italic: boolean;
  strike: boolean;
}

const PLAIN: InlineState = { bold: false, italic: false, strike: false };

/** Puts `marker` around the non-blank core of `inner`: Slack ignores `* bold*`. */
function wrap(marker: string, inner: string): string {
  const match = /^(\s*)([\s\S]*?)(\s*)$/.exec(inner);
  const core = match?.[2] ?? inner;
  if (core === "") return inner;
  return `${match?.[1] ?? ""}${marker}${core}${marker}${match?.[3] ?? ""}`;
}

function childTokens(token: Token): Token[] | undefined {
  const { tokens } = token as { tokens?: Token[] };
  return Array.isArray(tokens) ? tokens : undefined;
}

function renderInline(tokens: readonly Token[], state: InlineState): string {
  let out = "";
  for (const token of tokens) out += renderInlineToken(token, state);
  return out;
}

function renderInlineToken(token: Token, state: InlineState): string {
  const children = childTokens(token);
  switch (token.type) {
    case "text":
      return children ? renderInline(children, state) : escapeProse(token.text);
    case "escape":
      return escapeSlackText(token.text);
    case "strong": {
      const inner = renderInline(children ?? [], { ...state, bold: true });
      return state.bold ? inner : wrap("*", inner);
    }
    case "em": {
      const inner = renderInline(children ?? [], { ...state, italic: true });
      return state.italic ? inner : wrap("_", inner);
    }
    case "del": {
      const inner = renderInline(children ?? [], { ...state, strike: true });
      return state.strike ? inner : wrap("~", inner);
    }
    case "codespan":
      return `\`${escapeSlackText(token.text)}\``;
    case "br":
      return "\n";
    case "link":
      return renderLink(token as Tokens.Link, state);
    case "image": {
      const image = token as Tokens.Image;
      const alt = escapeProse(image.text || "image");
      return SAFE_LINK_SCHEME.test(image.href) ? `<${escapeUrl(image.href)}|${alt}>` : alt;
    }
    case "html":
      return escapeProse(token.text);
    case "checkbox":
      return "";
    default:
      return escapeProse(String(token.raw ?? ""));
  }
}

function renderLink(link: Tokens.Link, state: InlineState): string {
  const href = String(link.href ?? "");
  const label = renderInline(link.tokens ?? [], state);
  const plainLabel = String(link.text ?? "");
  if (!SAFE_LINK_SCHEME.test(href)) {
    // Slack cannot open relative or script links; show where it pointed instead.
    return href && plainLabel !== href ? `${label} (${escapeProse(href)})` : label;
  }
  if (plainLabel === "" || plainLabel === href) return `<${escapeUrl(href)}>`;
  return `<${escapeUrl(href)}|${label}>`;
}

/** Inline content without any markers, for table cells (rendered inside a code block). */
function plainInline(tokens: readonly Token[]): string {
  let out = "";
  for (const token of tokens) {
    const children = childTokens(token);
    if (token.type === "link") {
      const link = token as Tokens.Link;
      const label = plainInline(link.tokens ?? []);
      out += label && label !== link.href ? `${label} (${link.href})` : link.href;
    } else if (token.type === "br") out += " ";
    else if (token.type === "checkbox") continue;
    else if (children) out += plainInline(children);
    else out += "text" in token && typeof token.text === "string" ? token.text : String(token.raw ?? "");
  }
  return out;
}

function renderBlocks(tokens: readonly Token[], depth: number): string {
  const parts: string[] = [];
  for (const token of tokens) {
    const rendered = renderBlock(token, depth);
    if (rendered !== "") parts.push(rendered);
  }
  return parts.join("\n\n");
}

function renderBlock(token: Token, depth: number): string {
  switch (token.type) {
    case "space":
    case "def":
      return "";
    case "paragraph":
      return renderInline(childTokens(token) ?? [], PLAIN);
    case "text": {
      const children = childTokens(token);
      return children ? renderInline(children, PLAIN) : escapeProse(token.text);
    }
    case "heading": {
      const inner = renderInline(childTokens(token) ?? [], { ...PLAIN, bold: true });
      return wrap("*", inner);
    }
    case "code":
      return `\`\`\`\n${escapeCode(token.text)}\n\`\`\``;
    case "blockquote":
      return renderBlocks(childTokens(token) ?? [], depth)
        .split("\n")
        .map((line) => (line === "" ? ">" : `> ${line}`))
        .join("\n");
    case "list":
      return renderList(token as Tokens.List, depth);
    case "table":
      return renderTable(token as Tokens.Table);
    case "hr":
      return "──────────";
    case "html":
      // Often not HTML at all (a line starting with `<!here>`); inline lexing handles both.
      return renderInline(Lexer.lexInline(token.text), PLAIN);
    default:
      return escapeProse(String(token.raw ?? ""));
  }
}

function renderList(list: Tokens.List, depth: number): string {
  const indent = "    ".repeat(depth);
  const start = typeof list.start === "number" ? list.start : 1;
  const lines: string[] = [];
  list.items.forEach((item, index) => {
    const bullet = list.ordered ? `${start + index}.` : (BULLETS[depth % BULLETS.length] ?? "•");
    const box = item.task ? (item.checked ? "☑ " : "☐ ") : "";
    const body: string[] = [];
    const nested: string[] = [];
    for (const child of item.tokens) {
      if (child.type === "list") nested.push(renderList(child as Tokens.List, depth + 1));
      else if (child.type !== "checkbox") {
        const rendered = renderBlock(child, depth + 1);
        if (rendered !== "") body.push(rendered);
      }
    }
    const [first = "", ...rest] = body.join("\n").split("\n");
    lines.push(`${indent}${bullet} ${box}${first}`);
    const hang = `${indent}${" ".repeat(bullet.length + 1)}`;
    for (const line of rest) lines.push(line === "" ? "" : `${hang}${line}`);
    lines.push(...nested);
  });
  return lines.join("\n");
}

/** Slack has no tables: columns are padded inside a code block so they line up. */
function renderTable(table: Tokens.Table): string {
  const rows = [table.header, ...table.rows].map((row) => row.map((cell) => plainInline(cell.tokens)));
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, col) => {
      widths[col] = Math.max(widths[col] ?? 0, stringWidth(cell));
    });
  }
  const pad = (cell: string, col: number) => cell + " ".repeat((widths[col] ?? 0) - stringWidth(cell));
  const lines = rows.map((row) => row.map(pad).join(" | ").replace(/\s+$/, ""));
  lines.splice(1, 0, widths.map((w) => "-".repeat(w)).join("-+-"));
  return `\`\`\`\n${escapeCode(lines.join("\n"))}\n\`\`\``;
}

/**
 * Converts agent markdown to Slack mrkdwn. Unfinished markup (a streaming reply cut mid-way) stays
 * literal; an unclosed code fence runs to the end. Returns "" for "". Never throws: should the
 * parser fail, the text comes back with only Slack's control characters escaped.
 */
export function markdownToMrkdwn(markdown: string): string {
  if (markdown === "") return "";
  try {
    return renderBlocks(Lexer.lex(markdown, { gfm: true }), 0);
  } catch {
    return escapeSlackText(markdown);
  }
}

/** Slack's limit for the text of one section block. */
export const SECTION_TEXT_LIMIT = 3000;
/** Slack's limit for blocks in one message. */
const MAX_BLOCKS = 50;

/**
 * Splits text into pieces of at most `limit` characters, preferring line breaks, then spaces, and
 * never cutting an `&amp;`-style entity in half. Returns [] for "".
 */
export function splitForSections(text: string, limit = SECTION_TEXT_LIMIT): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    let cut = rest.lastIndexOf("\n", limit);
    if (cut < limit / 2) cut = rest.lastIndexOf(" ", limit);
    if (cut < limit / 2) {
      cut = limit;
      const amp = rest.lastIndexOf("&", cut);
      if (amp > cut - 5 && rest.indexOf(";", amp) >= cut) cut = amp;
    }
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^\n/, "");
  }
  if (rest !== "") pieces.push(rest);
  return pieces;
}

/** One Block Kit block, as Slack's API takes it. */
export type SlackBlock = Record<string, unknown>;

/** The `action_id` of the button at `row`, `col`: unique within a message, as Slack requires. */
export function buttonActionId(row: number, col: number): string {
  return `hermes_button_${row}_${col}`;
}

/**
 * Section blocks carrying `text` followed by one `actions` block per row of buttons. `text` is
 * already mrkdwn unless `plain`, in which case it goes out as `plain_text`, shown verbatim. Rows
 * hold at most 25 buttons and labels at most 75 characters (Slack's limits); text that would need
 * more than the 50 blocks a message may have is cut with an ellipsis.
 */
export function buildMessageBlocks(
  text: string,
  rows: readonly (readonly Button[])[],
  plain = false,
): SlackBlock[] {
  const actionBlocks: SlackBlock[] = rows
    .filter((row) => row.length > 0)
    .slice(0, MAX_BLOCKS - 1)
    .map((row, r) => ({
      type: "actions",
      block_id: `hermes_actions_${r}`,
      elements: row.slice(0, 25).map((button, c) => ({
        type: "button",
        action_id: buttonActionId(r, c),
        text: { type: "plain_text", text: truncateLabel(button.label), emoji: true },
        value: button.data,
        ...(button.style ? { style: button.style } : {}),
      })),
    }));
  const room = MAX_BLOCKS - actionBlocks.length;
  const pieces = splitForSections(text);
  if (pieces.length > room) {
    pieces.length = room;
    const last = pieces[room - 1] ?? "";
    pieces[room - 1] = `${last.slice(0, SECTION_TEXT_LIMIT - 1)}…`;
  }
  const sections: SlackBlock[] = pieces.map((piece) => ({
    type: "section",
    text: plain ? { type: "plain_text", text: piece, emoji: false } : { type: "mrkdwn", text: piece },
  }));
  return [...sections, ...actionBlocks];
}

/**
 * Slack message text → plain text for the agent: `&amp;`, `&lt;`, `&gt;` decoded and links shown
 * as their URLs (`label (url)` when the label says something else). User and channel mentions stay
 * as Slack writes them (`<@U123>`), so the agent can mention people back.
 */
export function slackToPlainText(text: string): string {
  return text
    .replace(/<((?:https?|mailto|tel):[^|>]+)(?:\|([^>]*))?>/g, (_whole, url: string, label?: string) => {
      const bare = url.replace(/^(?:https?:\/\/|mailto:|tel:)/, "");
      if (!label || label === url || label === bare) return url.startsWith("http") ? url : bare;
      return `${label} (${url})`;
    })
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/** Hermes's chat type for an event's `channel_type` (`im`, `mpim`, `group`, `channel`). */
export function chatTypeOf(channelType: unknown): ChatType | undefined {
  switch (channelType) {
    // As Python Hermes keys Slack sessions: group DMs are DMs, every channel (public or private) a group.
    case "im":
    case "mpim":
      return "dm";
    case "group":
    case "channel":
      return "group";
    default:
      return undefined;
  }
}

/** How a Slack file is handed to the agent: Slack's voice clips are `slack_audio` files. */
export function mediaKindOf(mimeType: string | undefined, subtype: string | undefined): MediaKind {
  if (subtype === "slack_audio") return "voice";
  if (mimeType?.startsWith("image/") && mimeType !== "image/svg+xml") return "photo";
  if (mimeType?.startsWith("audio/")) return "audio";
  if (mimeType?.startsWith("video/")) return "video";
  return "document";
}

function truncateLabel(label: string): string {
  const text = label.trim() === "" ? "…" : label;
  return text.length <= 75 ? text : `${text.slice(0, 74)}…`;
}

/** An error's message with its cause (`fetch failed: ECONNREFUSED`). */
export function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  if (!(cause instanceof Error)) return err.message;
  return `${err.message}: ${(cause as { code?: string }).code ?? cause.message}`;
}

const TOKEN_ERRORS = new Set(["invalid_auth", "not_authed", "token_revoked", "account_inactive"]);
const TOKEN_HELP: Record<string, string> = {
  SLACK_BOT_TOKEN: "Use the app's Bot User OAuth Token (xoxb-…) from OAuth & Permissions.",
  SLACK_APP_TOKEN: "Use an app-level token (xapp-…) with the connections:write scope.",
};
const ERROR_HINTS: Record<string, string> = {
  not_in_channel: " (invite the bot to the channel first)",
  channel_not_found: " (check the channel id; private channels need the bot as a member)",
  message_not_found: " (the message was deleted or is not the bot's)",
  cant_update_message: " (the bot can only edit its own messages)",
};

/**
 * Turns a failed Web API call (`what`, e.g. "chat.postMessage to C123") into a `PlatformError` that
 * names the call, Slack's error code and what to do; a 429 carries `retryAfterMs`. `tokenVar` is the
 * variable named when Slack refuses the token.
 */
export function slackCallError(err: unknown, what: string, tokenVar = "SLACK_BOT_TOKEN"): PlatformError {
  const e = err as {
    code?: string;
    retryAfter?: number;
    statusCode?: number;
    original?: unknown;
    data?: { error?: string; needed?: string; response_metadata?: { retryAfter?: number } };
  };
  switch (e?.code) {
    case "slack_webapi_rate_limited_error": {
      const seconds = e.retryAfter ?? 1;
      return new PlatformError(`Slack rate-limited ${what}; retry in ${seconds}s.`, seconds * 1000);
    }
    case "slack_webapi_platform_error": {
      const code = e.data?.error ?? "unknown_error";
      if (TOKEN_ERRORS.has(code)) {
        return new PlatformError(
          `Slack refused ${tokenVar}: ${what} answered ${code}. ${TOKEN_HELP[tokenVar]}`,
        );
      }
      const hint =
        code === "missing_scope" && e.data?.needed
          ? ` (add the ${e.data.needed} scope to the Slack app and reinstall it)`
          : (ERROR_HINTS[code] ?? "");
      const retry = e.data?.response_metadata?.retryAfter;
      return new PlatformError(`Slack refused ${what}: ${code}${hint}.`, retry ? retry * 1000 : undefined);
    }
    case "slack_webapi_request_error":
      return new PlatformError(`Could not reach Slack for ${what}: ${errorText(e.original ?? err)}.`);
    case "slack_webapi_http_error":
      return new PlatformError(`Slack answered HTTP ${e.statusCode ?? "?"} to ${what}.`);
    default:
      return new PlatformError(`Slack ${what} failed: ${errorText(err)}.`);
  }
}
