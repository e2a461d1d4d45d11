/** Saving a file a Telegram user sent into the media cache: the Bot API's file server or a local Bot API server's disk. */
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { copyFile, mkdir, rm, stat } from "node:fs/promises";
import { basename, extname, isAbsolute, join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { TelegramMediaRef } from "./telegram-inbound.js";

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${bytes} bytes`;
}

function safeFileName(ref: TelegramMediaRef, remotePath: string | undefined): string {
  const original = ref.fileName ?? (remotePath ? basename(remotePath) : "");
  const ext = (extname(original) || extname(remotePath ?? "")).replace(/[^A-Za-z0-9.]/g, "").slice(0, 10);
  const stem = basename(original, extname(original))
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^[._]+/, "")
    .slice(0, 60);
  const unique = `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
  return `telegram-${ref.kind}-${unique}${stem ? `-${stem}` : ""}${ext}`;
}

/**
 * Copies the file at `filePath` (as getFile answered it) into `mediaDir`, at most `limit` bytes;
 * `fileUrl` makes the file server's URL for a relative path. Answers the stored copy's path.
 * Throws with a message free of the token (`redact`).
 */
export async function saveTelegramFile(options: {
  ref: TelegramMediaRef;
  filePath: string;
  fileUrl: (path: string) => string;
  mediaDir: string;
  limit: number;
  tooLarge: (size?: number) => Error;
  redact: (text: string) => string;
  signal: AbortSignal;
}): Promise<string> {
  const { filePath, limit, tooLarge } = options;
  await mkdir(options.mediaDir, { recursive: true });
  const dest = join(options.mediaDir, safeFileName(options.ref, filePath));
  try {
    if (isAbsolute(filePath)) {
      // A self-hosted Bot API server in --local mode hands out paths on its own disk.
      const info = await stat(filePath);
      if (info.size > limit) throw tooLarge(info.size);
      await copyFile(filePath, dest);
    } else {
      const url = options.fileUrl(filePath.split("/").map(encodeURIComponent).join("/"));
      const res = await fetch(url, { signal: options.signal });
      if (!res.ok || !res.body) throw new Error(`the file server answered ${res.status} ${res.statusText}`);
      const declared = Number(res.headers.get("content-length"));
      if (Number.isFinite(declared) && declared > limit) throw tooLarge(declared);
      let received = 0;
      const cap = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          received += chunk.length;
          callback(received > limit ? tooLarge() : null, chunk);
        },
      });
      await pipeline(Readable.fromWeb(res.body as WebReadableStream), cap, createWriteStream(dest));
    }
  } catch (err) {
    await rm(dest, { force: true });
    throw new Error(options.redact(err instanceof Error ? err.message : String(err)));
  }
  return dest;
}
