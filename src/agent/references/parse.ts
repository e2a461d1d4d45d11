/**
 * `@` context references in a typed message (upstream's syntax): `@file:PATH[:START[-END]]`,
 * `@folder:PATH`, `@diff` (unstaged changes), `@staged`, `@git:N` (the last N commits, 1-10) and
 * `@url:URL`. A value may be quoted with backticks or quotes to hold spaces. Pure: finding them
 * only; reading what they name is expand.ts's.
 */

export type ReferenceKind = "file" | "folder" | "diff" | "staged" | "git" | "url";

export interface ContextReference {
  /** The reference as typed (`@file:src/a.ts:3-9`). */
  raw: string;
  kind: ReferenceKind;
  /** Path, URL or commit count; "" for `@diff` and `@staged`. */
  target: string;
  /** Offsets of `raw` in the message. */
  start: number;
  end: number;
  /** `@file:` line range, 1-based and inclusive. */
  lineStart?: number;
  lineEnd?: number;
}

const QUOTED = "(?:`[^`\\n]+`|\"[^\"\\n]+\"|'[^'\\n]+')";
/**
 * Not after a word character or `/`, so `me@file:x` (an address) and `a/@diff` are text. `\b`
 * after diff/staged keeps `@diffs` text.
 */
const REFERENCE = new RegExp(
  `(?<![\\w/])@(?:(diff|staged)\\b|(file|folder|git|url):(${QUOTED}(?::\\d+(?:-\\d+)?)?|\\S+))`,
  "g",
);
const FILE_VALUE = /^(?:([`"'])(.+?)\1|(.+?))(?::(\d+)(?:-(\d+))?)?$/;
const TRAILING_PUNCTUATION = /[,.;!?]+$/;
const OPENERS: Readonly<Record<string, string>> = { ")": "(", "]": "[", "}": "{" };

/** Every reference in `message`, in order; none when it holds no `@`. */
export function parseReferences(message: string): ContextReference[] {
  if (!message.includes("@")) return [];
  const found: ContextReference[] = [];
  for (const match of message.matchAll(REFERENCE)) {
    const simple = match[1] as "diff" | "staged" | undefined;
    const start = match.index ?? 0;
    if (simple) {
      found.push({ raw: match[0], kind: simple, target: "", start, end: start + match[0].length });
      continue;
    }
    const kind = match[2] as Exclude<ReferenceKind, "diff" | "staged">;
    const value = trimTrailing(match[3] ?? "");
    // The sentence's punctuation is not part of the reference: "see @file:a.ts." ends at ".ts".
    const raw = `@${kind}:${value}`;
    const reference: ContextReference = { raw, kind, target: unquote(value), start, end: start + raw.length };
    if (kind === "file") {
      const parsed = FILE_VALUE.exec(value);
      const first = parsed?.[4];
      if (parsed && first !== undefined) {
        reference.target = parsed[2] ?? parsed[3] ?? value;
        reference.lineStart = Number(first);
        reference.lineEnd = Number(parsed[5] ?? first);
      }
    }
    found.push(reference);
  }
  return found;
}

/** `value` without sentence punctuation or a closing bracket it never opened (`(see @file:a.ts)`). */
function trimTrailing(value: string): string {
  let out = value.replace(TRAILING_PUNCTUATION, "");
  for (;;) {
    const last = out.at(-1) ?? "";
    const opener = OPENERS[last];
    if (!opener || count(out, last) <= count(out, opener)) return out;
    out = out.slice(0, -1).replace(TRAILING_PUNCTUATION, "");
  }
}

function count(text: string, char: string): number {
  return text.split(char).length - 1;
}

function unquote(value: string): string {
  const first = value[0];
  return value.length >= 2 && first === value.at(-1) && first !== undefined && "`\"'".includes(first)
    ? value.slice(1, -1)
    : value;
}

/**
 * `value` written so `parseReferences` reads it back whole: quoted when it holds a space,
 * bracket or quote (with the first quote character it does not contain).
 */
export function formatReferenceValue(value: string): string {
  if (!/[\s()[\]{}<>"'`]/.test(value)) return value;
  for (const quote of ["`", '"', "'"]) if (!value.includes(quote)) return `${quote}${value}${quote}`;
  return value;
}
