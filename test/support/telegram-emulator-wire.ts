/**
 * The Bot API wire details of the Telegram emulator: request parsing (query, JSON, form and
 * multipart bodies with uploads), the errors it answers with, the entities Telegram computes for
 * typed text, and a strict check of Telegram's HTML subset.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { BotMessage, InlineButton } from "./telegram-emulator-types.js";

export const MAX_UPLOAD = 50 * 1024 * 1024;

export type Params = Record<string, unknown>;

export interface Upload {
  filename?: string | undefined;
  data: Buffer;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly retryAfter?: number,
  ) {
    super(description);
  }
}

export const badRequest = (what: string): ApiError => new ApiError(400, `Bad Request: ${what}`);

export const JSON_FIELDS = [
  ..."reply_markup reply_parameters entities caption_entities commands".split(" "),
  ..."allowed_updates link_preview_options scope".split(" "),
];

/** `mention` and `bot_command` entities, the ones Telegram computes for plain typed text. */
export function entitiesFor(text: string): Array<{ type: string; offset: number; length: number }> {
  const entities: Array<{ type: string; offset: number; length: number }> = [];
  for (const m of text.matchAll(/(^|\s)(\/[A-Za-z0-9_]{1,32}(?:@[A-Za-z0-9_]{3,32})?)/g)) {
    entities.push({
      type: "bot_command",
      offset: (m.index ?? 0) + (m[1]?.length ?? 0),
      length: m[2]?.length ?? 0,
    });
  }
  for (const m of text.matchAll(/(^|[^\w@/])(@[A-Za-z0-9_]{5,32})/g)) {
    entities.push({
      type: "mention",
      offset: (m.index ?? 0) + (m[1]?.length ?? 0),
      length: m[2]?.length ?? 0,
    });
  }
  return entities.sort((a, b) => a.offset - b.offset);
}

export const HTML_TAGS = new Set(
  "b strong i em u ins s strike del span tg-spoiler a code pre blockquote tg-emoji".split(" "),
);

/**
 * Telegram's HTML parse, strictly: known tags only, properly nested and closed, nothing inside
 * code/pre but `<code>` in `<pre>`, no nested blockquotes. Returns the visible text.
 */
export function parseTelegramHtml(html: string): { text: string } | { error: string } {
  const stack: string[] = [];
  let text = "";
  let i = 0;
  while (i < html.length) {
    const ch = html[i] as string;
    if (ch === "<") {
      const m = /^<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s[^<>]*)?)>/.exec(html.slice(i));
      if (!m) return { error: `unclosed start tag at byte offset ${i}` };
      const name = (m[2] ?? "").toLowerCase();
      if (!HTML_TAGS.has(name)) return { error: `unsupported start tag "${name}" at byte offset ${i}` };
      if (m[1] === "/") {
        if (stack.at(-1) !== name) {
          return { error: `unmatched end tag at byte offset ${i}, expected "</${stack.at(-1) ?? ""}>"` };
        }
        stack.pop();
      } else {
        const inCode = stack.includes("code") || stack.includes("pre");
        if (inCode && !(name === "code" && stack.at(-1) === "pre")) {
          return { error: `entities can't be nested in pre or code (byte offset ${i})` };
        }
        if (name === "blockquote" && stack.includes("blockquote")) {
          return { error: `blockquote entities can't be nested (byte offset ${i})` };
        }
        if (name === "a" && !/\shref\s*=/.test(m[3] ?? ""))
          return { error: `a tag without href at byte offset ${i}` };
        stack.push(name);
      }
      i += m[0].length;
    } else if (ch === "&") {
      const m = /^&(lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);/.exec(html.slice(i, i + 12));
      if (m) {
        const name = m[1] ?? "";
        const named: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"' };
        text +=
          named[name] ??
          String.fromCodePoint(
            name.startsWith("#x") ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1)),
          );
        i += m[0].length;
      } else {
        text += "&";
        i += 1;
      }
    } else if (ch === ">") {
      return { error: `unexpected ">" at byte offset ${i}` };
    } else {
      text += ch;
      i += 1;
    }
  }
  if (stack.length > 0) return { error: `can't find end tag corresponding to start tag "${stack.at(-1)}"` };
  return { text };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}

export async function readParams(
  req: IncomingMessage,
  url: URL,
): Promise<{ params: Params; uploads: Map<string, Upload> }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_UPLOAD + 1024 * 1024) throw new ApiError(413, "Request Entity Too Large");
    chunks.push(chunk as Buffer);
  }
  const body = Buffer.concat(chunks);
  const params: Params = Object.fromEntries(url.searchParams);
  const uploads = new Map<string, Upload>();
  const type = req.headers["content-type"] ?? "";
  if (type.includes("application/json") && body.length > 0) {
    Object.assign(params, JSON.parse(body.toString("utf8")) as Params);
  } else if (type.includes("application/x-www-form-urlencoded")) {
    Object.assign(params, Object.fromEntries(new URLSearchParams(body.toString("utf8"))));
  } else if (type.includes("multipart/form-data")) {
    const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type);
    const parts = parseMultipart(body, boundary?.[1] ?? boundary?.[2] ?? "");
    for (const part of parts) {
      if (part.filename !== undefined) uploads.set(part.name, { filename: part.filename, data: part.data });
      else params[part.name] = part.data.toString("utf8");
    }
  }
  for (const field of JSON_FIELDS) {
    const value = params[field];
    if (typeof value === "string") {
      try {
        params[field] = JSON.parse(value);
      } catch {
        throw badRequest(`can't parse ${field} JSON object`);
      }
    }
  }
  return { params, uploads };
}

/** multipart/form-data as grammy writes it (unquoted filenames, lower-case headers) or browsers do. */
export function parseMultipart(
  body: Buffer,
  boundary: string,
): Array<{ name: string; filename?: string | undefined; data: Buffer }> {
  const parts: Array<{ name: string; filename?: string | undefined; data: Buffer }> = [];
  if (boundary === "") return parts;
  const delimiter = Buffer.from(`--${boundary}`);
  const next = Buffer.from(`\r\n--${boundary}`);
  let pos = body.indexOf(delimiter);
  while (pos !== -1) {
    pos += delimiter.length;
    if (body.subarray(pos, pos + 2).toString() === "--") break;
    if (body[pos] === 13 && body[pos + 1] === 10) pos += 2;
    const headerEnd = body.indexOf("\r\n\r\n", pos);
    if (headerEnd === -1) break;
    const headers = body.subarray(pos, headerEnd).toString("utf8");
    const end = body.indexOf(next, headerEnd + 4);
    if (end === -1) break;
    const name = /(?:^|[;\s])name=(?:"([^"]*)"|([^;\r\n]*))/i.exec(headers);
    const filename = /filename=(?:"([^"]*)"|([^;\r\n]*))/i.exec(headers);
    parts.push({
      name: name?.[1] ?? name?.[2] ?? "",
      filename: filename ? (filename[1] ?? filename[2] ?? "") : undefined,
      data: body.subarray(headerEnd + 4, end),
    });
    pos = end + 2;
  }
  return parts;
}

/** The visible text of `text` under `parse_mode`, refused as Telegram refuses it. */
export function checkText(
  text: string,
  parseMode: unknown,
  limit: number,
  what: "message" | "caption",
): string {
  let visible = text;
  if (typeof parseMode === "string" && parseMode.toUpperCase() === "HTML") {
    const parsed = parseTelegramHtml(text);
    if ("error" in parsed) throw badRequest(`can't parse entities: ${parsed.error}`);
    visible = parsed.text;
  } else if (parseMode !== undefined && parseMode !== "" && parseMode !== null) {
    // Markdown modes are not emulated; the adapter under test sends HTML.
    throw badRequest(`unsupported parse_mode in this emulator: ${String(parseMode)}`);
  }
  if (visible.trim() === "" && what === "message") throw badRequest("message text is empty");
  if (visible.length > limit) {
    throw badRequest(what === "message" ? "message is too long" : "message caption is too long");
  }
  return visible;
}

/** `reply_markup` as given, refused when its inline keyboard breaks Telegram's rules. */
export function checkMarkup(markup: unknown): BotMessage["reply_markup"] {
  if (markup === undefined || markup === null) return undefined;
  const keyboard = (markup as { inline_keyboard?: unknown }).inline_keyboard;
  if (keyboard === undefined) return markup as BotMessage["reply_markup"];
  if (!Array.isArray(keyboard) || !keyboard.every(Array.isArray)) {
    throw badRequest('field "inline_keyboard" of the InlineKeyboardMarkup should be an Array of Arrays');
  }
  for (const row of keyboard as unknown[][]) {
    for (const button of row as InlineButton[]) {
      if (typeof button?.text !== "string" || button.text === "")
        throw badRequest("text buttons are unallowed");
      if (button.callback_data !== undefined && Buffer.byteLength(button.callback_data) > 64) {
        throw badRequest("BUTTON_DATA_INVALID");
      }
    }
  }
  return markup as BotMessage["reply_markup"];
}
