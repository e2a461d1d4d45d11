/**
 * Log reading for the dashboard's Logs page: the last lines of a log (backwards from its end, with
 * a byte budget so a search through a huge file stops instead of reading gigabytes), and what was
 * appended after a cursor (`<inode>-<offset>`: the file and the byte after the last line given),
 * across a rotation (`agent.log` → `agent.log.1`) or a truncation. Following never reads more than
 * it returns plus one partial line, so a browser polling every second or two costs a `stat` and the
 * new bytes.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { hasFilter, type LogFilter, matchesHead, parseLineHead } from "../util/log-filter.js";
import { reverseLines, rotationChain } from "../util/log-tail.js";

/** Bytes read backwards (across rotated copies) before a filtered tail gives up looking further. */
export const SCAN_BUDGET_BYTES = 64 * 1024 * 1024;
/** Bytes one follow request reads at most; the answer says `more` when the file holds more. */
export const FOLLOW_MAX_BYTES = 1024 * 1024;
const BOUNDARY_CHUNK = 64 * 1024;

export interface LogQuery {
  filter: LogFilter;
  /** Text the line (or an event's continuation lines) must contain, any case. */
  text?: string | undefined;
  /** Checks a candidate line as the user will see it (the redactor), so a search never matches a hidden secret. */
  shown?: (line: string) => string;
}

export interface Cursor {
  /** Inode of the file the offset is in; 0 when the log did not exist yet. */
  ino: number;
  offset: number;
}

export function formatCursor(cursor: Cursor): string {
  return `${cursor.ino}-${cursor.offset}`;
}

/** Reads a cursor a client sent back; undefined for anything malformed. */
export function parseCursor(text: string): Cursor | undefined {
  const m = /^(\d{1,20})-(\d{1,16})$/.exec(text);
  if (!m) return undefined;
  const ino = Number(m[1]);
  const offset = Number(m[2]);
  if (!Number.isSafeInteger(ino) || !Number.isSafeInteger(offset)) return undefined;
  return { ino, offset };
}

export interface TailResult {
  /** Oldest first. */
  lines: string[];
  /** Where a follower continues: just after the last complete line of the newest file. */
  cursor: string;
  /** False when the byte budget ran out before `n` matching lines were found. */
  complete: boolean;
}

/**
 * The head filter, with the session text also found in the line as shown: a session filter is a
 * text search too, and must not tell whether a hidden secret is in a line.
 */
function headMatcher(
  query: LogQuery,
): (line: string, head: NonNullable<ReturnType<typeof parseLineHead>>) => boolean {
  const session = query.filter.session;
  const shown = query.shown;
  return (line, head) =>
    matchesHead(line, head, query.filter) && (!session || !shown || shown(line).includes(session));
}

function textMatcher(query: LogQuery): ((line: string) => boolean) | undefined {
  const needle = query.text?.trim().toLowerCase();
  if (!needle) return undefined;
  const shown = query.shown ?? ((line: string) => line);
  // The raw line is a cheap first test; the shown (redacted) line decides.
  return (line) => line.toLowerCase().includes(needle) && shown(line).toLowerCase().includes(needle);
}

/** The offset just after the last newline at or before `size` (the end of the last whole line). */
function lineBoundary(fd: number, size: number): number {
  if (size === 0) return 0;
  const length = Math.min(BOUNDARY_CHUNK, size);
  const buffer = Buffer.alloc(length);
  readSync(fd, buffer, 0, length, size - length);
  const last = buffer.lastIndexOf(0x0a);
  // No newline in the last 64 KiB: one huge line; take it whole rather than never showing it.
  return last < 0 ? size : size - length + last + 1;
}

/**
 * The last `n` lines of the log at `path` (and its rotated copies) that pass the query, oldest
 * first. With a filter or text, an event and its continuation lines come together or not at all.
 */
export function tailLog(path: string, n: number, query: LogQuery, budget = SCAN_BUDGET_BYTES): TailResult {
  const chain = rotationChain(path);
  let cursor: Cursor = { ino: 0, offset: 0 };
  let newestEnd: number | undefined;
  if (chain[0] === path) {
    const fd = openSync(path, "r");
    try {
      const stat = fstatSync(fd);
      newestEnd = lineBoundary(fd, stat.size);
      cursor = { ino: stat.ino, offset: newestEnd };
    } finally {
      closeSync(fd);
    }
  }
  const lines: string[] = [];
  let complete = true;
  if (n > 0) {
    const groups: string[][] = [];
    const matchText = textMatcher(query);
    const matchHead = headMatcher(query);
    const filtered = hasFilter(query.filter) || matchText !== undefined;
    let count = 0;
    let scanned = 0;
    outer: for (const file of chain) {
      let pending: string[] = [];
      for (const line of reverseLines(file, file === path ? newestEnd : undefined)) {
        scanned += Buffer.byteLength(line) + 1;
        if (!filtered) {
          groups.push([line]);
          if (++count >= n) break outer;
        } else {
          const head = parseLineHead(line);
          if (!head) {
            pending.push(line);
          } else {
            const group = [line, ...pending.reverse()];
            pending = [];
            if (matchHead(line, head) && (!matchText || group.some(matchText))) {
              groups.push(group);
              count += group.length;
              if (count >= n) break outer;
            }
          }
        }
        if (scanned >= budget) {
          complete = false;
          break outer;
        }
      }
    }
    lines.push(...groups.reverse().flat().slice(-n));
  }
  return { lines, cursor: formatCursor(cursor), complete };
}

export interface FollowResult {
  /** New lines that pass the query, oldest first (at most `maxLines`, the newest kept). */
  lines: string[];
  cursor: string;
  /** The file holds more after the cursor than this answer read: ask again at once. */
  more: boolean;
  /** Set when the cursor's place was lost: the file was truncated, or rotated and its old copy is gone. */
  reset?: "truncated" | "rotated";
  /** Matching lines left out because one answer holds at most `maxLines`. */
  dropped: number;
}

interface Chunk {
  lines: string[];
  consumed: number;
  more: boolean;
}

/** Reads whole lines from `fd` at `offset`, at most `maxBytes`; `final` takes a last partial line too. */
function readForward(fd: number, offset: number, size: number, maxBytes: number, final: boolean): Chunk {
  const length = Math.min(maxBytes, size - offset);
  if (length <= 0) return { lines: [], consumed: 0, more: false };
  const buffer = Buffer.alloc(length);
  const read = readSync(fd, buffer, 0, length, offset);
  const bytes = buffer.subarray(0, read);
  const whole = read === size - offset;
  let consumed = bytes.lastIndexOf(0x0a) + 1;
  // A rotated file will not grow, and one line longer than the read size is taken as it is.
  if ((final && whole) || (consumed === 0 && read === maxBytes)) consumed = read;
  const lines = bytes
    .subarray(0, consumed)
    .toString("utf8")
    .split("\n")
    .map((line) => line.replace(/\r$/, ""))
    .filter((line) => line.trim() !== "");
  return { lines, consumed, more: offset + consumed < size && !whole };
}

function readFile(path: string, offset: number, maxBytes: number, final: boolean): Chunk & { size: number } {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    return { ...readForward(fd, offset, size, maxBytes, final), size };
  } finally {
    closeSync(fd);
  }
}

function inodeOf(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

/**
 * The lines appended to the log at `path` after `cursor` that pass the query. Continuation lines
 * (no timestamp and level) follow the verdict of the event line above them.
 */
export function followLog(
  path: string,
  cursor: Cursor,
  query: LogQuery,
  options: { maxBytes?: number; maxLines?: number } = {},
): FollowResult {
  const maxBytes = options.maxBytes ?? FOLLOW_MAX_BYTES;
  const maxLines = options.maxLines ?? 2000;
  const current = inodeOf(path);
  const raw: string[] = [];
  let next: Cursor = cursor;
  let more = false;
  let reset: FollowResult["reset"];
  if (current === undefined) {
    // Rotated away and not recreated yet: the old copy's rest is read once the new file appears.
    return { lines: [], cursor: formatCursor(cursor), more: false, dropped: 0 };
  }
  let offset = cursor.offset;
  if (cursor.ino !== 0 && cursor.ino !== current) {
    const old = rotationChain(path).find((file) => file !== path && inodeOf(file) === cursor.ino);
    if (old) {
      const chunk = readFile(old, offset, maxBytes, true);
      raw.push(...chunk.lines);
      if (chunk.more) {
        return finish(
          raw,
          { ino: cursor.ino, offset: offset + chunk.consumed },
          true,
          undefined,
          query,
          maxLines,
        );
      }
    } else {
      reset = "rotated";
    }
    offset = 0;
  } else if (cursor.ino === 0) {
    offset = 0;
  }
  const chunk = readFile(path, offset, maxBytes, false);
  if (chunk.size < offset) {
    // Truncated in place (or the cursor is from another life of the file): start over.
    const again = readFile(path, 0, maxBytes, false);
    raw.push(...again.lines);
    next = { ino: current, offset: again.consumed };
    more = again.more;
    reset = "truncated";
  } else {
    raw.push(...chunk.lines);
    next = { ino: current, offset: offset + chunk.consumed };
    more = chunk.more;
  }
  return finish(raw, next, more, reset, query, maxLines);
}

function finish(
  raw: string[],
  cursor: Cursor,
  more: boolean,
  reset: FollowResult["reset"],
  query: LogQuery,
  maxLines: number,
): FollowResult {
  const matchText = textMatcher(query);
  const matchHead = headMatcher(query);
  let lines = raw;
  if (hasFilter(query.filter) || matchText) {
    let last = false;
    lines = raw.filter((line) => {
      const head = parseLineHead(line);
      if (!head) return last || (matchText?.(line) ?? false);
      last = matchHead(line, head) && (!matchText || matchText(line));
      return last;
    });
  }
  const dropped = Math.max(0, lines.length - maxLines);
  return {
    lines: dropped > 0 ? lines.slice(-maxLines) : lines,
    cursor: formatCursor(cursor),
    more,
    ...(reset ? { reset } : {}),
    dropped,
  };
}
