/**
 * Reads a text file line by line in bounded memory: the file is read in chunks and each line keeps
 * at most `maxLineBytes`, so a multi-gigabyte file or a single enormous line never has to fit in
 * memory. Stop early by breaking out of the loop; the file is closed either way.
 */
import { open } from "node:fs/promises";

export interface RawLine {
  /** The line without its terminator (`\n` or `\r\n`), cut to `maxLineBytes` when longer. */
  text: string;
  /** Full length of the line in bytes, terminator excluded; larger than the kept text when cut. */
  bytes: number;
  /** True when the line was longer than `maxLineBytes` and `text` holds only its start. */
  cut: boolean;
}

export interface ReadLinesOptions {
  /** Bytes of each line to keep; the rest is counted but dropped. */
  maxLineBytes: number;
  /** Read size per chunk (default 64 KiB). */
  chunkBytes?: number;
  signal?: AbortSignal;
}

/** Yields the file's lines in batches (one batch per chunk read). A final line without `\n` is included. */
export async function* readLineBatches(path: string, options: ReadLinesOptions): AsyncGenerator<RawLine[]> {
  const { maxLineBytes } = options;
  const chunk = Buffer.allocUnsafe(options.chunkBytes ?? 64 * 1024);
  const handle = await open(path, "r");
  try {
    // The start of the current line when it spans chunks: kept parts plus its full byte count.
    let parts: Buffer[] = [];
    let keptBytes = 0;
    let lineBytes = 0;
    let lastByte = -1;
    for (;;) {
      if (options.signal?.aborted) throw new Error("Reading was cancelled.");
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      const batch: RawLine[] = [];
      let start = 0;
      while (start < bytesRead) {
        const nl = chunk.indexOf(10, start);
        const end = nl === -1 || nl >= bytesRead ? bytesRead : nl;
        if (lineBytes === 0 && nl !== -1 && nl < bytesRead) {
          // Fast path: the whole line lies inside this chunk.
          batch.push(makeLine(chunk, start, end, maxLineBytes));
        } else {
          const room = maxLineBytes - keptBytes;
          if (room > 0) {
            const take = Math.min(room, end - start);
            parts.push(Buffer.from(chunk.subarray(start, start + take)));
            keptBytes += take;
          }
          lineBytes += end - start;
          if (end > start) lastByte = chunk[end - 1] as number;
          if (nl !== -1 && nl < bytesRead) {
            batch.push(joinLine(parts, lineBytes, lastByte === 13, maxLineBytes));
            parts = [];
            keptBytes = 0;
            lineBytes = 0;
            lastByte = -1;
          }
        }
        if (nl === -1 || nl >= bytesRead) break;
        start = nl + 1;
      }
      if (batch.length > 0) yield batch;
    }
    if (lineBytes > 0) yield [joinLine(parts, lineBytes, lastByte === 13, maxLineBytes)];
  } finally {
    await handle.close();
  }
}

function makeLine(buf: Buffer, start: number, end: number, maxLineBytes: number): RawLine {
  let bytes = end - start;
  if (bytes > 0 && buf[end - 1] === 13) {
    end--;
    bytes--;
  }
  if (bytes <= maxLineBytes) return { text: buf.toString("utf8", start, end), bytes, cut: false };
  return { text: decodeCut(buf.subarray(start, start + maxLineBytes)), bytes, cut: true };
}

function joinLine(parts: Buffer[], lineBytes: number, endsWithCR: boolean, maxLineBytes: number): RawLine {
  let buf = Buffer.concat(parts);
  let bytes = lineBytes;
  if (endsWithCR) {
    bytes--;
    if (buf.length > bytes) buf = buf.subarray(0, bytes);
  }
  if (bytes <= maxLineBytes) return { text: buf.toString("utf8"), bytes, cut: false };
  return { text: decodeCut(buf), bytes, cut: true };
}

/** Decodes a prefix cut at an arbitrary byte, dropping a character split by the cut. */
function decodeCut(buf: Buffer): string {
  const text = buf.toString("utf8");
  return text.endsWith("\uFFFD") ? text.slice(0, -1) : text;
}
