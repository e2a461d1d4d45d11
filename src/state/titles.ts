/**
 * Session titles and lineages. A lineage is a base title and its numbered continuations:
 * "work", "work #2", "work #3" (a branch or a continued session takes the next number). Titles
 * are unique when set; an empty title means none.
 */
import { SessionStoreError } from "./types.js";

export const MAX_TITLE_LENGTH = 100;

const NUMBERED = /^(.*?) #(\d+)$/;
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;
const INVISIBLE = /[\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ufffc\ufff9-\ufffb]/g;

/**
 * Cleans a title as Python Hermes does: control, zero-width and bidi characters removed,
 * whitespace collapsed. Returns null for nothing left; throws `invalid` past 100 characters.
 */
export function sanitizeTitle(title: string | null | undefined): string | null {
  if (title === null || title === undefined) return null;
  const cleaned = title.replace(CONTROL, "").replace(INVISIBLE, "").replace(/\s+/g, " ").trim();
  if (!cleaned) return null;
  if ([...cleaned].length > MAX_TITLE_LENGTH) {
    throw new SessionStoreError(
      "invalid",
      `title is too long (${[...cleaned].length} characters, at most ${MAX_TITLE_LENGTH}): "${cleaned.slice(0, 40)}…"`,
    );
  }
  return cleaned;
}

/** "work #3" → { base: "work", number: 3 }; "work" → { base: "work", number: 1 }. */
export function lineageOf(title: string): { base: string; number: number } {
  const m = NUMBERED.exec(title);
  if (m?.[1]) return { base: m[1], number: Number(m[2]) };
  return { base: title, number: 1 };
}

/**
 * The first free title of a lineage given the titles that already exist in it: the base itself
 * when nobody has it and no numbered title exists, else one more than the highest number
 * (the unnumbered original counts as #1).
 */
export function nextTitleIn(base: string, existing: readonly string[]): string {
  if (existing.length === 0) return base;
  let highest = 1;
  for (const title of existing) {
    if (title === base) continue;
    const { base: b, number } = lineageOf(title);
    if (b === base && number > highest) highest = number;
  }
  return `${base} #${highest + 1}`;
}

/** LIKE pattern for "base #…" with wildcards in the base escaped (pair with `ESCAPE '\'`). */
export function numberedPattern(base: string): string {
  return `${base.replace(/[\\%_]/g, (c) => `\\${c}`)} #%`;
}
