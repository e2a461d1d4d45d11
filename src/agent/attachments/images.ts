/**
 * Images the user attaches to a message (`--image`, `/image`, `/paste`, a path dropped into the
 * REPL): read from disk, checked to be PNG, JPEG, GIF or WebP by their bytes, shrunk with ffmpeg
 * when a provider would refuse them, and carried as `image_url` data-URL parts of the user
 * message, which each transport writes in its own wire's image format (and the session stores).
 */
import { readFile, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { extname, isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { ContentPart, Message } from "../../ai/types.js";
import { describeContent, IMAGE_MIME, imageSize, sniffImage } from "../../tools/media/image-info.js";
import {
  exceedsLimits,
  formatBytes,
  type ShrinkLimits,
  shrinkImage,
} from "../../tools/media/image-shrink.js";

/** Larger files are not read at all. */
export const MAX_IMAGE_FILE_BYTES = 20 * 1024 * 1024;
/**
 * What every wire accepts: Anthropic and Bedrock take 5 MB of base64 (3.75 MB of image) and 8000
 * px a side; the others take more. One limit for all, since a session may switch models.
 */
export const IMAGE_LIMITS: ShrinkLimits = { maxBytes: Math.floor((5 * 1024 * 1024 * 3) / 4), maxSide: 8000 };

/** File extensions treated as images when a path is dropped into the chat. */
export const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set([".png", ".jpg", ".jpeg", ".gif", ".webp"]);

export interface ImageAttachment {
  /** The file it came from (absolute). */
  path: string;
  part: Extract<ContentPart, { type: "image_url" }>;
  /** Bytes sent (after any shrinking). */
  bytes: number;
  /** Set when the image was shrunk to fit: what was done. */
  note?: string;
}

export interface LoadImageOptions {
  cwd: string;
  /** HOME for `~/` (default the OS's). */
  home?: string;
  /** ffmpeg's path, for shrinking an image over the limits; absent: such an image is refused. */
  ffmpeg?: string;
  limits?: ShrinkLimits;
  signal?: AbortSignal;
}

/** Absolute path of what the user typed: `~/`, `file://` URLs and relative paths resolved. */
export function resolveUserPath(typed: string, cwd: string, home = homedir()): string {
  const trimmed = typed.trim();
  if (/^file:\/\//i.test(trimmed)) return fileURLToPath(trimmed);
  if (trimmed === "~") return home;
  if (trimmed.startsWith("~/")) return resolve(home, trimmed.slice(2));
  return isAbsolute(trimmed) ? resolve(trimmed) : resolve(cwd, trimmed);
}

/**
 * Reads `typed` as an image to attach. Throws an Error the user can act on: no such file, too
 * large, not an image (and what it is instead), over the limits with no ffmpeg to shrink it.
 */
export async function loadImageAttachment(
  typed: string,
  options: LoadImageOptions,
): Promise<ImageAttachment> {
  const path = resolveUserPath(typed, options.cwd, options.home);
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new Error(`${path} is not a file.`);
    size = info.size;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new Error(`No such file: ${path}.`);
    if (code) throw new Error(`Cannot read ${path}: ${code}.`);
    throw error;
  }
  if (size > MAX_IMAGE_FILE_BYTES)
    throw new Error(
      `${path} is ${formatBytes(size)}; images over ${formatBytes(MAX_IMAGE_FILE_BYTES)} are not attached.`,
    );
  let data: Buffer = await readFile(path);
  const type = sniffImage(data);
  if (!type) throw new Error(`${path} is ${describeContent(data)}, not an image (PNG, JPEG, GIF or WebP).`);
  let mime = IMAGE_MIME[type];
  let note: string | undefined;
  const limits = options.limits ?? IMAGE_LIMITS;
  const dims = imageSize(data, type);
  if (exceedsLimits(data.length, dims, limits)) {
    const what = `${formatBytes(data.length)}${dims ? `, ${dims.width}x${dims.height} px` : ""}`;
    if (!options.ffmpeg)
      throw new Error(
        `${path} (${what}) is over what models accept (${formatBytes(limits.maxBytes)}, ${limits.maxSide} px a side), and ffmpeg is not installed to shrink it. Install ffmpeg or attach a smaller image.`,
      );
    const shrunk = await shrinkImage(data, dims, limits, {
      ffmpeg: options.ffmpeg,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    note = `shrunk from ${what} to ${shrunk.width}x${shrunk.height} JPEG to fit the model's limits`;
    data = shrunk.data;
    mime = "image/jpeg";
  }
  return {
    path,
    part: { type: "image_url", image_url: { url: `data:${mime};base64,${data.toString("base64")}` } },
    bytes: data.length,
    ...(note ? { note } : {}),
  };
}

/** The user message's content: the text alone, or the text followed by the images as parts. */
export function userContent(text: string, images: readonly ImageAttachment[]): Message["content"] {
  if (images.length === 0) return text;
  const parts: ContentPart[] = [];
  if (text.trim() !== "") parts.push({ type: "text", text });
  for (const image of images) parts.push(image.part);
  return parts;
}

/** An image path dropped (or pasted) at the start of a message, and the text after it. */
export interface DroppedImage {
  path: string;
  remainder: string;
}

/**
 * Recognises a message that starts with the path of an existing image file, as a terminal types
 * it when a file is dragged in: absolute, `~/`, `./`, `../` or `file://`, possibly quoted or with
 * backslash-escaped spaces. Null for anything else (a path to a non-image, a missing file, text).
 */
export async function detectDroppedImage(
  text: string,
  cwd: string,
  home = homedir(),
): Promise<DroppedImage | null> {
  const trimmed = text.trim();
  // A dragged path with spaces arrives unquoted from some terminals: the whole text may be it.
  const whole = await imageFileAt(trimmed, cwd, home);
  if (whole) return { path: whole, remainder: "" };
  const token = firstPathToken(trimmed);
  if (!token) return null;
  const path = await imageFileAt(token.path, cwd, home);
  return path ? { path, remainder: token.rest.trim() } : null;
}

/** The absolute path when `typed` looks like a path and names an existing image file. */
async function imageFileAt(typed: string, cwd: string, home: string): Promise<string | null> {
  if (!/^(\/|~\/|\.\.?\/|file:\/\/)/i.test(typed)) return null;
  let path: string;
  try {
    path = resolveUserPath(typed, cwd, home);
  } catch {
    return null;
  }
  if (!IMAGE_EXTENSIONS.has(extname(path).toLowerCase())) return null;
  try {
    return (await stat(path)).isFile() ? path : null;
  } catch {
    return null;
  }
}

/** The leading path of `text`: quoted, or up to the first unescaped space (escapes removed). */
function firstPathToken(text: string): { path: string; rest: string } | null {
  const quote = text[0];
  if (quote === '"' || quote === "'") {
    const close = text.indexOf(quote, 1);
    if (close < 0) return null;
    return { path: text.slice(1, close), rest: text.slice(close + 1) };
  }
  let path = "";
  let i = 0;
  for (; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === "\\" && i + 1 < text.length) {
      path += text[i + 1];
      i++;
      continue;
    }
    if (/\s/.test(ch)) break;
    path += ch;
  }
  return path ? { path, rest: text.slice(i) } : null;
}
