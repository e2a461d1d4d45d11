/**
 * What Discord's own markdown lacks, converted (tables become code blocks, deep headings bold), text
 * split to its 2000-character limit without breaking code blocks, the bot's mention stripped, media
 * kinds of attachments, and approval buttons as message components. Pure functions.
 */
import stringWidth from "string-width";
import type { Button, MediaKind } from "./types.js";

export const DISCORD_MAX_MESSAGE_LENGTH = 2000;

const FENCE = /^\s*(```|~~~)/;
const TABLE_SEPARATOR = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
const DEEP_HEADING = /^\s{0,3}#{4,6}\s+(.+?)\s*#*\s*$/;

function tableCells(line: string): string[] {
  const trimmed = line.trim().replace(/^\|/, "").replace(/\|$/, "");
  return trimmed.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\*\*|__|`/g, ""));
}

function renderTable(lines: string[]): string[] {
  const rows = lines.filter((_, i) => i !== 1).map(tableCells);
  const columns = Math.max(...rows.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, c) =>
    Math.max(3, ...rows.map((r) => stringWidth(r[c] ?? ""))),
  );
  const pad = (cell: string, c: number) => cell + " ".repeat((widths[c] ?? 0) - stringWidth(cell));
  const format = (row: string[]) =>
    widths
      .map((_, c) => pad(row[c] ?? "", c))
      .join(" | ")
      .trimEnd();
  const [header = [], ...body] = rows;
  return ["```", format(header), widths.map((w) => "-".repeat(w)).join("-+-"), ...body.map(format), "```"];
}

/**
 * Adapts agent markdown to what Discord renders: tables (which Discord shows as raw pipes) become
 * aligned code blocks, headings deeper than `###` become bold lines. Everything else (bold, italics,
 * code, lists, links, `#`–`###`) is Discord markdown already. Code blocks are left untouched.
 */
export function toDiscordMarkdown(text: string): string {
  const lines = text.split("\n");
  const out: string[] = [];
  let fence: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fenceMatch = FENCE.exec(line);
    if (fence) {
      out.push(line);
      if (fenceMatch?.[1] === fence) fence = undefined;
      continue;
    }
    if (fenceMatch) {
      fence = fenceMatch[1];
      out.push(line);
      continue;
    }
    const next = lines[i + 1];
    if (line.includes("|") && next !== undefined && TABLE_SEPARATOR.test(next) && next.includes("-")) {
      const block = [line, next];
      let j = i + 2;
      while (j < lines.length && (lines[j] ?? "").includes("|") && (lines[j] ?? "").trim() !== "") {
        block.push(lines[j] ?? "");
        j++;
      }
      out.push(...renderTable(block));
      i = j - 1;
      continue;
    }
    const heading = DEEP_HEADING.exec(line);
    out.push(heading ? `**${heading[1]}**` : line);
  }
  return out.join("\n");
}

/**
 * Splits text into pieces of at most `limit` characters, at line breaks where possible; a code
 * block cut in two is closed at the end of one piece and reopened at the start of the next.
 * Returns `[text]` when it already fits (also for the empty string).
 */
export function splitForDiscord(text: string, limit = DISCORD_MAX_MESSAGE_LENGTH): string[] {
  if (text.length <= limit) return [text];
  const room = limit - 8; // space for a closing fence
  const pieces: string[] = [];
  let current = "";
  let opener: string | undefined;
  const flush = () => {
    pieces.push(opener ? `${current}\n${opener.trim().slice(0, 3)}` : current);
    current = opener ? opener.slice(0, 64) : "";
  };
  for (const whole of text.split("\n")) {
    const parts: string[] = [];
    for (let rest = whole; ; rest = rest.slice(room - 80)) {
      parts.push(rest.slice(0, room - 80));
      if (rest.length <= room - 80) break;
    }
    for (const line of parts) {
      if (current !== "" && current.length + 1 + line.length > room) flush();
      current = current === "" ? line : `${current}\n${line}`;
    }
    const fence = FENCE.exec(whole);
    if (fence) opener = opener ? undefined : whole.trim();
  }
  if (current.trim() !== "" || pieces.length === 0) pieces.push(current);
  return pieces;
}

/** Removes `<@id>` / `<@!id>` mentions of the bot and tidies the spacing left behind. */
export function stripBotMention(content: string, botId: string): string {
  return content
    .replace(new RegExp(`<@!?${botId}>`, "g"), " ")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

/** Picks how an attachment is presented to the agent, from its MIME type and the voice-message flag. */
export function mediaKindFor(contentType: string | null | undefined, voiceMessage: boolean): MediaKind {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (type.startsWith("image/")) return "photo";
  if (type.startsWith("audio/")) return voiceMessage ? "voice" : "audio";
  if (type.startsWith("video/")) return "video";
  return "document";
}

/** Gateway button rows → Discord action rows (at most 5 rows of 5 buttons; extra ones are dropped). */
export function buttonComponents(rows: readonly Button[][]): Record<string, unknown>[] {
  return rows
    .filter((row) => row.length > 0)
    .slice(0, 5)
    .map((row) => ({
      type: 1,
      components: row.slice(0, 5).map((button) => ({
        type: 2,
        // Primary 1, Secondary 2, Danger 4.
        style: button.style === "primary" ? 1 : button.style === "danger" ? 4 : 2,
        label: button.label.slice(0, 80),
        custom_id: button.data.slice(0, 100),
      })),
    }));
}
