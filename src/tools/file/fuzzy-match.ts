/**
 * Find-and-replace that tolerates the ways a model's copy of a file drifts from the file: line
 * endings, trailing whitespace, indentation, runs of spaces, typographic quotes and dashes. Exact
 * matching is always tried first; a looser strategy is used only when every stricter one finds
 * nothing, and the result says which one matched. Pure: strings in, strings out.
 */

export type ReplaceOutcome =
  | { ok: true; content: string; count: number; strategy: string }
  | { ok: false; reason: "not_found"; hint?: string }
  | { ok: false; reason: "ambiguous"; count: number; strategy: string };

type LineNormaliser = (line: string) => string;

const collapse = (line: string) => line.trim().replace(/\s+/g, " ");

/** Looser and looser views of a line, each paired with the name reported to the model. */
export const LINE_STRATEGIES: readonly { name: string; normalise: LineNormaliser; reindent: boolean }[] = [
  { name: "trailing-whitespace-insensitive", normalise: (l) => l.trimEnd(), reindent: false },
  { name: "indentation-insensitive", normalise: (l) => l.trim(), reindent: true },
  { name: "whitespace-insensitive", normalise: collapse, reindent: true },
  {
    name: "unicode-punctuation-insensitive",
    normalise: (l) => collapse(asciiPunctuation(l)),
    reindent: true,
  },
];

/** Typographic quotes, dashes, ellipses and odd spaces as their ASCII look-alikes. */
export function asciiPunctuation(text: string): string {
  return text
    .replace(/[\u2018\u2019\u201A\u201B\u2032]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F\u2033]/g, '"')
    .replace(/[\u2010-\u2015\u2212]/g, "-")
    .replace(/\u2026/g, "...")
    .replace(/[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g, " ");
}

/** Replaces `oldString` with `newString` in `content` (every match when `replaceAll`). */
export function fuzzyReplace(
  content: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
): ReplaceOutcome {
  const exact = countOccurrences(content, oldString);
  if (exact > 0) {
    if (exact > 1 && !replaceAll) return { ok: false, reason: "ambiguous", count: exact, strategy: "exact" };
    const next = replaceAll
      ? content.split(oldString).join(newString)
      : replaceFirst(content, oldString, newString);
    return { ok: true, content: next, count: replaceAll ? exact : 1, strategy: "exact" };
  }

  // Work on LF text; a file that uses CRLF throughout gets CRLF back. Mixed files stay LF-split
  // (a stray "\r" is trailing whitespace to the line strategies) so untouched lines keep their endings.
  const crlf = isPureCrlf(content);
  const text = crlf ? content.replaceAll("\r\n", "\n") : content;
  const oldLf = oldString.replaceAll("\r\n", "\n");
  const newLf = newString.replaceAll("\r\n", "\n");
  const restore = (s: string) => (crlf ? s.replaceAll("\n", "\r\n") : s);

  if (oldLf !== oldString || crlf) {
    const n = countOccurrences(text, oldLf);
    if (n > 1 && !replaceAll)
      return { ok: false, reason: "ambiguous", count: n, strategy: "line-ending-insensitive" };
    if (n > 0) {
      const next = replaceAll ? text.split(oldLf).join(newLf) : replaceFirst(text, oldLf, newLf);
      return {
        ok: true,
        content: restore(next),
        count: replaceAll ? n : 1,
        strategy: "line-ending-insensitive",
      };
    }
  }

  const lines = text.split("\n");
  const oldLines = oldLf.split("\n");
  let newBody = newLf;
  if (oldLines.length > 1 && oldLines[oldLines.length - 1] === "") {
    oldLines.pop();
    if (newBody.endsWith("\n")) newBody = newBody.slice(0, -1);
  }
  if (oldLines.every((l) => l.trim() === "")) return { ok: false, reason: "not_found" };
  const newLines = newBody === "" ? [] : newBody.split("\n");

  for (const strategy of LINE_STRATEGIES) {
    const starts = findLineMatches(lines, oldLines, strategy.normalise);
    if (starts.length === 0) continue;
    if (starts.length > 1 && !replaceAll) {
      return { ok: false, reason: "ambiguous", count: starts.length, strategy: strategy.name };
    }
    const result = [...lines];
    for (const start of [...starts].reverse()) {
      const replacement = strategy.reindent
        ? reindent(newLines, oldLines, lines.slice(start, start + oldLines.length))
        : newLines;
      result.splice(start, oldLines.length, ...replacement);
    }
    return { ok: true, content: restore(result.join("\n")), count: starts.length, strategy: strategy.name };
  }
  return { ok: false, reason: "not_found", hint: notFoundHint(lines, oldLines) };
}

/** Start indexes of non-overlapping windows of `lines` equal to `wanted` under `normalise`. */
export function findLineMatches(
  lines: readonly string[],
  wanted: readonly string[],
  normalise: LineNormaliser,
  from = 0,
): number[] {
  const target = wanted.map(normalise);
  const seen = lines.map(normalise);
  const starts: number[] = [];
  const k = target.length;
  for (let i = from; i + k <= seen.length; i++) {
    let j = 0;
    while (j < k && seen[i + j] === target[j]) j++;
    if (j === k) {
      starts.push(i);
      i += k - 1;
    }
  }
  return starts;
}

/**
 * Shifts `newLines` by the difference between the indentation the model assumed (`modelLines`)
 * and the file's real indentation at the match (`fileLines`), measured on the first non-blank line.
 */
export function reindent(
  newLines: readonly string[],
  modelLines: readonly string[],
  fileLines: readonly string[],
): string[] {
  const idx = modelLines.findIndex((l) => l.trim() !== "");
  if (idx === -1) return [...newLines];
  const modelIndent = leadingWhitespace(modelLines[idx] as string);
  const fileIndent = leadingWhitespace(fileLines[idx] ?? "");
  if (modelIndent === fileIndent) return [...newLines];
  return newLines.map((line) => {
    if (line.trim() === "") return line;
    if (line.startsWith(modelIndent)) return fileIndent + line.slice(modelIndent.length);
    return line;
  });
}

function leadingWhitespace(line: string): string {
  return /^[ \t]*/.exec(line)?.[0] ?? "";
}

function countOccurrences(haystack: string, needle: string): number {
  if (needle === "") return 0;
  let n = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) n++;
  return n;
}

function replaceFirst(haystack: string, needle: string, replacement: string): string {
  const i = haystack.indexOf(needle);
  return haystack.slice(0, i) + replacement + haystack.slice(i + needle.length);
}

/** True when the text has line breaks and every one of them is CRLF. */
export function isPureCrlf(text: string): boolean {
  const crlf = text.split("\r\n").length - 1;
  return crlf > 0 && crlf === text.split("\n").length - 1;
}

function notFoundHint(lines: readonly string[], oldLines: readonly string[]): string | undefined {
  if (oldLines.filter((l) => l.trim() !== "").every((l) => /^\s*\d+\|/.test(l))) {
    return "old_string starts its lines with read_file's line-number prefixes (`  12|`); remove them.";
  }
  const first = oldLines.find((l) => l.trim() !== "");
  if (first === undefined) return undefined;
  const wanted = collapse(asciiPunctuation(first));
  const at: number[] = [];
  lines.forEach((l, i) => {
    if (at.length < 5 && collapse(asciiPunctuation(l)) === wanted) at.push(i + 1);
  });
  if (at.length === 0) return undefined;
  return `Its first line matches line ${at.join(", ")} of the file, but the lines after it differ.`;
}
