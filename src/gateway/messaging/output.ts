/**
 * What happens to the agent's answer on its way to a chat: silence tokens suppress it, `MEDIA:`
 * lines and bare media paths become native attachments, and the rest is cut into messages the
 * platform accepts without breaking code blocks apart.
 */
import { lstatSync } from "node:fs";
import { basename, extname, isAbsolute } from "node:path";
import type { MediaKind, OutboundMedia } from "../platforms/types.js";

const SILENCE = new Set(["[silent]", "silent", "no_reply", "[no_reply]"]);

/** Whether the answer asks for no delivery at all (`[SILENT]`, `SILENT`, `NO_REPLY`). */
export function isSilent(text: string): boolean {
  const trimmed = text.trim();
  if (SILENCE.has(trimmed.toLowerCase())) return true;
  return /^\[silent\]/i.test(trimmed);
}

const EXT_KIND: Readonly<Record<string, MediaKind>> = {
  ".jpg": "photo",
  ".jpeg": "photo",
  ".png": "photo",
  ".gif": "photo",
  ".webp": "photo",
  ".ogg": "voice",
  ".opus": "voice",
  ".mp3": "audio",
  ".m4a": "audio",
  ".wav": "audio",
  ".flac": "audio",
  ".mp4": "video",
  ".mov": "video",
  ".webm": "video",
  ".mkv": "video",
  ".pdf": "document",
  ".zip": "document",
  ".csv": "document",
  ".txt": "document",
  ".md": "document",
  ".json": "document",
  ".docx": "document",
  ".xlsx": "document",
  ".pptx": "document",
};

/** File names never sent as attachments, whatever the model says: the home's secrets and keys. */
const NEVER_SEND =
  /^(\.env(\..*)?|auth\.json|\.anthropic_oauth\.json|credentials\.json|id_(rsa|ecdsa|ed25519)|.*\.(pem|key))$/i;

export interface ExtractedMedia {
  /** The answer without the media lines and directives. */
  text: string;
  media: OutboundMedia[];
  /** One line per path that could not be attached (missing, not a file, refused). */
  problems: string[];
}

/** The media kind for a path by its extension; voice notes only with `[[audio_as_voice]]`. */
export function mediaKindOf(
  path: string,
  options: { asDocument?: boolean; audioAsVoice?: boolean } = {},
): MediaKind {
  if (options.asDocument) return "document";
  const kind = EXT_KIND[extname(path).toLowerCase()] ?? "document";
  if (kind === "voice" && !options.audioAsVoice) return "audio";
  return kind;
}

function checkFile(path: string): string | undefined {
  if (NEVER_SEND.test(basename(path))) return `${path}: refused (a secret or key file)`;
  try {
    const stat = lstatSync(path);
    if (!stat.isFile()) return `${path}: not a regular file`;
  } catch {
    return `${path}: no such file`;
  }
  return undefined;
}

/**
 * Pulls attachments out of an answer: `MEDIA:<path>` lines (the path must exist) and lines that
 * are only an absolute path to an existing file with a known media extension. The directives
 * `[[as_document]]` and `[[audio_as_voice]]` change how they are sent and are removed.
 */
export function extractMedia(answer: string): ExtractedMedia {
  const asDocument = answer.includes("[[as_document]]");
  const audioAsVoice = answer.includes("[[audio_as_voice]]");
  const media: OutboundMedia[] = [];
  const problems: string[] = [];
  const kept: string[] = [];
  let inFence = false;
  for (const line of answer.replace(/\[\[(as_document|audio_as_voice)\]\]/g, "").split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    if (!inFence) {
      const tagged = /^\s*MEDIA:\s*(.+?)\s*$/.exec(line);
      const bare = /^\s*[`"']?(\/[^\s`"']+)[`"']?\s*$/.exec(line);
      const path = tagged?.[1]?.replace(/^[`"']|[`"']$/g, "") ?? bare?.[1];
      if (path && isAbsolute(path) && (tagged || EXT_KIND[extname(path).toLowerCase()])) {
        const problem = checkFile(path);
        if (!problem) {
          media.push({ kind: mediaKindOf(path, { asDocument, audioAsVoice }), path });
          continue;
        }
        if (tagged) {
          problems.push(problem);
          continue;
        }
      }
    }
    kept.push(line);
  }
  return {
    text: kept
      .join("\n")
      .replace(/\n{3,}/g, "\n\n")
      .trim(),
    media,
    problems,
  };
}

const FENCE = /^(\s*)(```|~~~)(.*)$/;

/**
 * Cuts markdown into pieces of at most `max` characters: at paragraph breaks when possible, then
 * line breaks, then spaces, then anywhere. A code block cut in two is closed at the end of one
 * piece and reopened (with its language) at the start of the next, so each piece renders.
 */
export function chunkMarkdown(text: string, max: number): string[] {
  const limit = Math.max(16, max);
  if (text.length <= limit) return text ? [text] : [];
  const chunks: string[] = [];
  let rest = text;
  let openFence: string | undefined;
  while (rest.length > 0) {
    const prefix = openFence ? `${openFence}\n` : "";
    // Leave room for a closing fence.
    const room = limit - prefix.length - 4;
    let piece: string;
    if (prefix.length + rest.length <= limit) {
      piece = rest;
      rest = "";
    } else {
      const window = rest.slice(0, room);
      let cut = window.lastIndexOf("\n\n");
      if (cut < room * 0.5) cut = window.lastIndexOf("\n");
      if (cut < room * 0.5) cut = window.lastIndexOf(" ");
      if (cut < room * 0.3) cut = room;
      piece = rest.slice(0, cut);
      rest = rest.slice(cut).replace(/^\n+/, "");
    }
    // Track fences inside this piece to know whether it ends inside a code block.
    let fence = openFence;
    for (const line of piece.split("\n")) {
      const m = FENCE.exec(line);
      if (!m) continue;
      fence = fence ? undefined : `${m[2]}${(m[3] ?? "").trim()}`;
    }
    let body = prefix + piece;
    if (fence && rest.length > 0) body += `\n${fence.slice(0, 3)}`;
    chunks.push(body.replace(/\s+$/, ""));
    openFence = rest.length > 0 ? fence : undefined;
  }
  return chunks.filter((c) => c.trim().length > 0);
}
