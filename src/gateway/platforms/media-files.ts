/**
 * What adapters that carry files themselves (Signal, SMS) share: MIME types and file extensions
 * both ways, the media kind of a content type, keeping a received file, and the checks on a file
 * about to be sent.
 */
import { randomBytes } from "node:crypto";
import { mkdir, stat, writeFile } from "node:fs/promises";
import { extname, join } from "node:path";
import { type MediaKind, PlatformError } from "./types.js";

const MIME_EXT: Readonly<Record<string, string>> = {
  "image/jpeg": ".jpg",
  "image/png": ".png",
  "image/gif": ".gif",
  "image/webp": ".webp",
  "audio/aac": ".aac",
  "audio/mp4": ".m4a",
  "audio/mpeg": ".mp3",
  "audio/ogg": ".ogg",
  "audio/amr": ".amr",
  "video/mp4": ".mp4",
  "video/3gpp": ".3gp",
  "application/pdf": ".pdf",
  "text/plain": ".txt",
  "text/vcard": ".vcf",
};

const EXT_MIME: Readonly<Record<string, string>> = {
  ...Object.fromEntries(Object.entries(MIME_EXT).map(([mime, ext]) => [ext, mime])),
  ".jpeg": "image/jpeg",
  ".opus": "audio/ogg",
  ".wav": "audio/wav",
  ".mov": "video/quicktime",
  ".webm": "video/webm",
  ".json": "application/json",
  ".csv": "text/csv",
  ".md": "text/markdown",
  ".zip": "application/zip",
};

/** The extension a file of this content type is stored under (`fallback` for an unknown one). */
export function extensionFor(contentType: string | undefined, fallback = ".bin"): string {
  return MIME_EXT[contentType ?? ""] ?? fallback;
}

/** The content type a file name suggests (`application/octet-stream` when nothing does). */
export function mimeFor(name: string): string {
  return EXT_MIME[extname(name).toLowerCase()] ?? "application/octet-stream";
}

/** How the gateway treats a received file of this content type. */
export function mediaKindOf(contentType: string | undefined): MediaKind {
  if (contentType?.startsWith("image/")) return "photo";
  if (contentType?.startsWith("audio/")) return "voice";
  if (contentType?.startsWith("video/")) return "video";
  return "document";
}

/**
 * The size of a file about to be sent; a `PlatformError` naming it and the way it would have gone
 * (`to Signal`, `by MMS`) when it is missing or not a regular file.
 */
/**
 * Keeps a received file in the media folder (created when missing), readable by the owner only,
 * under a fresh name `<prefix>-<time>-<random><ext>`; returns its path.
 */
export async function saveInboundFile(
  mediaDir: string,
  prefix: string,
  bytes: Uint8Array,
  ext: string,
): Promise<string> {
  await mkdir(mediaDir, { recursive: true });
  const path = join(mediaDir, `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}${ext}`);
  await writeFile(path, bytes, { mode: 0o600 });
  return path;
}

export async function outboundFileSize(path: string, how: string): Promise<number> {
  try {
    const info = await stat(path);
    if (info.isFile()) return info.size;
  } catch {
    // reported below
  }
  throw new PlatformError(`cannot send ${path} ${how}: the file does not exist or is not a file`);
}

export const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
