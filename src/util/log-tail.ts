/**
 * Reading log files for `hermes logs`: the last N matching lines (reading backwards in chunks, so
 * a large file costs only what is shown, and into the rotated copies `agent.log.1`, `.2`… when the
 * current file holds too few), and following a file as it grows, across rotations.
 */
import { closeSync, existsSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { hasFilter, type LogFilter, lineFilter, matchesHead, parseLineHead } from "./log-filter.js";

const CHUNK = 64 * 1024;

/** The file and its rotated copies that exist, newest first (`agent.log`, `agent.log.1`, …). */
export function rotationChain(path: string, maxCopies = 20): string[] {
  const chain = existsSync(path) ? [path] : [];
  for (let i = 1; i <= maxCopies && existsSync(`${path}.${i}`); i++) chain.push(`${path}.${i}`);
  return chain;
}

/**
 * The lines of a file from the last to the first, without their newlines; blank lines skipped.
 * `end`: read only the bytes before this offset (what a follower has not taken).
 */
export function* reverseLines(path: string, end?: number): Generator<string> {
  const fd = openSync(path, "r");
  try {
    let position = Math.min(fstatSync(fd).size, end ?? Number.POSITIVE_INFINITY);
    // Bytes of the line that began before the chunk read last (split on 0x0A, which never occurs
    // inside a multi-byte UTF-8 sequence, so each line decodes whole).
    let carry: Buffer = Buffer.alloc(0);
    while (position > 0) {
      const size = Math.min(CHUNK, position);
      position -= size;
      const chunk = Buffer.alloc(size);
      readSync(fd, chunk, 0, size, position);
      let buffer = Buffer.concat([chunk, carry]);
      let end = buffer.length;
      for (let i = buffer.length - 1; i >= 0; i--) {
        if (buffer[i] !== 0x0a) continue;
        const line = buffer
          .subarray(i + 1, end)
          .toString("utf8")
          .replace(/\r$/, "");
        if (line.trim() !== "") yield line;
        end = i;
      }
      carry = Buffer.from(buffer.subarray(0, end));
      buffer = Buffer.alloc(0);
    }
    const first = carry.toString("utf8").replace(/\r$/, "");
    if (first.trim() !== "") yield first;
  } finally {
    closeSync(fd);
  }
}

/**
 * The last `n` lines of `chain` (newest file first) that pass `filter`, oldest first. With a
 * filter, an event's continuation lines (a Python traceback) come with it or not at all.
 */
export function lastLines(
  chain: readonly string[],
  n: number,
  filter: LogFilter,
  /** Offset where the newest file is cut (a follower's start), so no line is shown twice. */
  newestEnd?: number,
): string[] {
  if (n <= 0) return [];
  const groups: string[][] = [];
  let count = 0;
  const filtered = hasFilter(filter);
  outer: for (const path of chain) {
    let pending: string[] = [];
    for (const line of reverseLines(path, path === chain[0] ? newestEnd : undefined)) {
      if (!filtered) {
        groups.push([line]);
        if (++count >= n) break outer;
        continue;
      }
      const head = parseLineHead(line);
      if (!head) {
        pending.push(line);
        continue;
      }
      if (matchesHead(line, head, filter)) {
        groups.push([line, ...pending.reverse()]);
        count += 1 + pending.length;
      }
      pending = [];
      if (count >= n) break outer;
    }
  }
  return groups.reverse().flat().slice(-n);
}

export interface Follower {
  /** Offset in the file where following began (its size then; 0 when it did not exist). */
  readonly start: number;
  /** Reads what was appended since the last call; called by the timer, callable by tests. */
  poll(): void;
  stop(): void;
}

/**
 * Follows `path` from its current end (or from its start when it does not exist yet), giving each
 * new complete line that passes `filter` to `onLine`. When the file is rotated or replaced (its
 * inode changes, or it shrinks), the rest of the old file is read, then the new one from its start.
 * Polls every `intervalMs` (watchers miss renames on some file systems; polling does not).
 */
export function followFile(
  path: string,
  filter: LogFilter,
  onLine: (line: string) => void,
  intervalMs = 250,
): Follower {
  const passes = lineFilter(filter);
  let fd: number | undefined;
  let inode = -1;
  let offset = 0;
  let partial = "";
  // A chunk may end inside a multi-byte character; the decoder keeps those bytes for the next one.
  let decoder = new StringDecoder("utf8");

  const open = (fromEnd: boolean): void => {
    try {
      fd = openSync(path, "r");
    } catch {
      fd = undefined;
      return;
    }
    const stat = fstatSync(fd);
    inode = stat.ino;
    offset = fromEnd ? stat.size : 0;
    partial = "";
    decoder = new StringDecoder("utf8");
  };

  const drain = (): void => {
    if (fd === undefined) return;
    const size = fstatSync(fd).size;
    if (size < offset) offset = 0; // truncated in place
    while (offset < size) {
      const length = Math.min(CHUNK, size - offset);
      const buffer = Buffer.alloc(length);
      const read = readSync(fd, buffer, 0, length, offset);
      if (read <= 0) break;
      offset += read;
      const text = partial + decoder.write(buffer.subarray(0, read));
      const lines = text.split("\n");
      partial = lines.pop() ?? "";
      for (const raw of lines) {
        const line = raw.replace(/\r$/, "");
        if (line.trim() !== "" && passes(line)) onLine(line);
      }
    }
  };

  const poll = (): void => {
    if (fd === undefined) {
      open(false);
      drain();
      return;
    }
    drain();
    let current: number | undefined;
    try {
      current = statSync(path).ino;
    } catch {
      current = undefined; // rotated away and not recreated yet
    }
    if (current !== undefined && current !== inode) {
      closeSync(fd);
      open(false);
      drain();
    }
  };

  open(true);
  const start = offset;
  const timer = setInterval(poll, intervalMs);
  return {
    start,
    poll,
    stop: () => {
      clearInterval(timer);
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
