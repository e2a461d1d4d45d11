/**
 * The V4A multi-file patch format (as used by Hermes and OpenAI's apply_patch): parsing, and
 * applying one file's hunks to its text. Pure: no file I/O here.
 *
 *   *** Begin Patch
 *   *** Update File: src/app.ts
 *   *** Move to: src/main.ts        (optional rename)
 *   @@ function start() {           (optional anchor: a line to find first)
 *    context line
 *   -removed line
 *   +added line
 *   *** Add File: notes.md
 *   +every line starts with "+"
 *   *** Delete File: old.txt
 *   *** End Patch
 */
import { asciiPunctuation, isPureCrlf, reindent } from "./fuzzy-match.js";

export interface Hunk {
  /** Lines to find first, in order, each after the previous (text after `@@`). */
  anchors: string[];
  /** Context and removed lines, in file order: what must be found. */
  oldLines: string[];
  /** Context and added lines, in file order: what replaces it. */
  newLines: string[];
  /** `*** End of File` followed the hunk: it must match at the end of the file. */
  atEnd: boolean;
  /** 1-based line of the patch text where the hunk starts, for error messages. */
  patchLine: number;
}

export type PatchOp =
  | { kind: "add"; path: string; content: string }
  | { kind: "delete"; path: string }
  | { kind: "update"; path: string; moveTo?: string; hunks: Hunk[] };

const HEADER = /^\*\*\* (Add File|Delete File|Update File|Move to): ?(.*)$/;

/** Parses a V4A patch. Throws an Error naming the offending patch line when it is malformed. */
export function parseV4A(patch: string): PatchOp[] {
  const lines = patch.replaceAll("\r\n", "\n").split("\n");
  let i = 0;
  const end = trimEnd(lines);
  while (i < end && (lines[i] as string).trim() === "") i++;
  if (i < end && (lines[i] as string).trim() === "*** Begin Patch") i++;
  const ops: PatchOp[] = [];
  let current: PatchOp | undefined;
  let hunk: Hunk | undefined;

  const fail = (n: number, why: string): never => {
    throw new Error(`Malformed patch at line ${n + 1} ("${(lines[n] ?? "").slice(0, 80)}"): ${why}`);
  };

  for (; i < end; i++) {
    const line = lines[i] as string;
    if (line.trim() === "*** End Patch") {
      if (lines.slice(i + 1, end).some((l) => l.trim() !== "")) fail(i + 1, "text after *** End Patch");
      break;
    }
    const header = HEADER.exec(line.trimEnd());
    if (header) {
      const [, kind, rawPath] = header;
      const path = (rawPath ?? "").trim();
      if (path === "") fail(i, "the header names no file");
      hunk = undefined;
      if (kind === "Move to") {
        if (current?.kind !== "update" || current.moveTo !== undefined || current.hunks.length > 0) {
          fail(i, "*** Move to must directly follow an *** Update File header");
        } else {
          current.moveTo = path;
        }
        continue;
      }
      current =
        kind === "Add File"
          ? { kind: "add", path, content: "" }
          : kind === "Delete File"
            ? { kind: "delete", path }
            : { kind: "update", path, hunks: [] };
      ops.push(current);
      continue;
    }
    if (line.startsWith("*** ") && line.trim() !== "*** End of File") fail(i, "unknown *** header");
    if (!current) fail(i, "expected *** Add File, *** Update File or *** Delete File");
    if (current?.kind === "add") {
      if (!line.startsWith("+")) fail(i, 'every line of an added file must start with "+"');
      current.content += `${line.slice(1)}\n`;
    } else if (current?.kind === "delete") {
      if (line.trim() !== "") fail(i, "*** Delete File takes no content");
    } else if (current?.kind === "update") {
      if (line.trim() === "*** End of File") {
        if (!hunk) fail(i, "*** End of File outside a hunk");
        else hunk.atEnd = true;
        continue;
      }
      if (line.startsWith("@@")) {
        const anchor = line
          .slice(2)
          .replace(/@@\s*$/, "")
          .trim();
        // Consecutive "@@" lines narrow the search step by step (class, then method).
        if (!hunk || hunk.oldLines.length > 0 || hunk.newLines.length > 0 || hunk.atEnd) {
          hunk = { anchors: [], oldLines: [], newLines: [], atEnd: false, patchLine: i + 1 };
          current.hunks.push(hunk);
        }
        if (anchor !== "") hunk.anchors.push(anchor);
        continue;
      }
      if (!hunk || hunk.atEnd) {
        hunk = { anchors: [], oldLines: [], newLines: [], atEnd: false, patchLine: i + 1 };
        current.hunks.push(hunk);
      }
      const marker = line[0];
      const body = line.slice(1);
      if (marker === "+") hunk.newLines.push(body);
      else if (marker === "-") hunk.oldLines.push(body);
      else if (marker === " " || line === "") {
        // Models often drop the leading space of an empty context line.
        hunk.oldLines.push(body);
        hunk.newLines.push(body);
      } else fail(i, 'hunk lines must start with " ", "-" or "+"');
    }
  }
  if (ops.length === 0)
    throw new Error("The patch contains no *** Add File, *** Update File or *** Delete File section.");
  for (const op of ops) {
    if (
      op.kind === "update" &&
      op.moveTo === undefined &&
      !op.hunks.some((h) => h.oldLines.length + h.newLines.length > 0)
    ) {
      throw new Error(`Malformed patch: *** Update File: ${op.path} has no changes.`);
    }
  }
  return ops;
}

function trimEnd(lines: string[]): number {
  let end = lines.length;
  while (end > 0 && (lines[end - 1] as string).trim() === "") end--;
  return end;
}

const MATCHERS: readonly ((l: string) => string)[] = [
  (l) => l,
  (l) => l.trimEnd(),
  (l) => l.trim(),
  (l) => asciiPunctuation(l).trim().replace(/\s+/g, " "),
];

/**
 * Applies `hunks` to `content` in order and returns the new text. Each hunk's lines are searched
 * after the previous hunk (exact first, then whitespace- and punctuation-tolerant). Throws an Error
 * naming the hunk when one cannot be placed; `content` is never partly changed.
 */
export function applyHunks(content: string, hunks: readonly Hunk[]): string {
  const crlf = isPureCrlf(content);
  const text = crlf ? content.replaceAll("\r\n", "\n") : content;
  const lines = text.split("\n");
  const hadFinalNewline = text.endsWith("\n");
  if (hadFinalNewline) lines.pop();
  if (text === "") lines.length = 0;

  const edits: { start: number; removed: number; lines: string[] }[] = [];
  let cursor = 0;
  hunks.forEach((hunk, n) => {
    const where = `hunk ${n + 1} (patch line ${hunk.patchLine})`;
    for (const anchor of hunk.anchors) {
      const at = findSequence(lines, [anchor], cursor, false);
      if (at === undefined) throw new Error(`${where}: cannot find the @@ anchor line "${anchor}".`);
      cursor = at.index + 1;
    }
    let oldLines = hunk.oldLines;
    let newLines = hunk.newLines;
    if (oldLines.length === 0) {
      const at = hunk.atEnd || hunk.anchors.length === 0 ? lines.length : cursor;
      edits.push({ start: at, removed: 0, lines: newLines });
      cursor = at;
      return;
    }
    let found = findSequence(lines, oldLines, cursor, hunk.atEnd);
    // A trailing blank context line that the file lacks (common at end of file) is forgiven.
    while (!found && oldLines.at(-1) === "" && newLines.at(-1) === "" && oldLines.length > 1) {
      oldLines = oldLines.slice(0, -1);
      newLines = newLines.slice(0, -1);
      found = findSequence(lines, oldLines, cursor, hunk.atEnd);
    }
    if (!found) {
      const preview = hunk.oldLines
        .slice(0, 8)
        .map((l) => `  ${l}`)
        .join("\n");
      throw new Error(
        `${where}: cannot find these lines in the file${hunk.atEnd ? " (at its end)" : ""}:\n${preview}`,
      );
    }
    const matched = lines.slice(found.index, found.index + oldLines.length);
    edits.push({
      start: found.index,
      removed: oldLines.length,
      lines: found.loose ? reindent(newLines, oldLines, matched) : newLines,
    });
    cursor = found.index + oldLines.length;
  });

  const result = [...lines];
  for (const edit of [...edits].sort((a, b) => b.start - a.start))
    result.splice(edit.start, edit.removed, ...edit.lines);
  let out = result.join("\n");
  if (result.length > 0 && (hadFinalNewline || text === "")) out += "\n";
  return crlf ? out.replaceAll("\n", "\r\n") : out;
}

/** First index at or after `from` where `wanted` matches (or, with `atEnd`, the end of the file). */
function findSequence(
  lines: readonly string[],
  wanted: readonly string[],
  from: number,
  atEnd: boolean,
): { index: number; loose: boolean } | undefined {
  for (const [level, normalise] of MATCHERS.entries()) {
    const target = wanted.map(normalise);
    const matchesAt = (i: number) => target.every((t, j) => normalise(lines[i + j] as string) === t);
    if (atEnd) {
      const i = lines.length - wanted.length;
      if (i >= from && matchesAt(i)) return { index: i, loose: level >= 2 };
      continue;
    }
    for (let i = from; i + wanted.length <= lines.length; i++) {
      if (matchesAt(i)) return { index: i, loose: level >= 2 };
    }
  }
  return undefined;
}
