/**
 * Turns free text typed by a person (or a model) into a safe search: FTS5 query syntax is never
 * passed through, so no input can be a syntax error. Pure functions, tested with a table of cases.
 *
 * What the text means:
 * - Words are ANDed: `docker compose` finds messages containing both words.
 * - `"exact phrase"` in balanced double quotes is a phrase; an unbalanced quote is ignored.
 * - `word*` matches words starting with `word`.
 * - Upper-case `OR` between two terms starts an alternative; upper-case `AND` between terms is
 *   the default and ignored; `NOT term` after a term leaves out messages containing it. Anywhere
 *   else (`AND` alone, `NOT` first, lower case) these are ordinary words.
 * - Brackets around a term and leading `-`/`+`/`^` are dropped (`(x` is `x`, `-bar` is `bar`);
 *   other punctuation stays part of the term (`c++`, `a:b`, `what's`) and is left to the tokenizer.
 *
 * Which index answers (see `chooseRoute`): the word index for ordinary words; the trigram index for
 * CJK text and for terms without letters or digits (emoji, symbols), which the word tokenizer
 * cannot index; a LIKE scan when such a term is shorter than three characters (trigrams need three).
 */

export interface QueryTerm {
  /** The literal text to find (no FTS syntax). */
  text: string;
  /** Written with a trailing `*`: words starting with `text`. */
  prefix: boolean;
  /** Preceded by `NOT`: messages containing it are left out. */
  negated: boolean;
  /** Written in double quotes. */
  phrase: boolean;
}

/** Alternatives: a message matches when it satisfies every term of at least one group. */
export interface ParsedQuery {
  groups: QueryTerm[][];
}

export type SearchRoute = "words" | "trigram" | "like";

const MAX_QUERY_CHARS = 2048;

interface RawToken {
  text: string;
  quoted: boolean;
}

function tokenize(input: string): RawToken[] {
  const tokens: RawToken[] = [];
  let i = 0;
  const s = input.slice(0, MAX_QUERY_CHARS);
  while (i < s.length) {
    const ch = s[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if (ch === '"') {
      const close = s.indexOf('"', i + 1);
      if (close === -1) {
        // An unbalanced quote is dropped; the rest is read as ordinary words.
        i++;
        continue;
      }
      const inner = s.slice(i + 1, close).trim();
      if (inner) tokens.push({ text: inner.replace(/\s+/g, " "), quoted: true });
      i = close + 1;
      continue;
    }
    let j = i;
    while (j < s.length && !/\s/.test(s[j]!) && s[j] !== '"') j++;
    tokens.push({ text: s.slice(i, j), quoted: false });
    i = j;
  }
  return tokens;
}

const OPERATORS = new Set(["AND", "OR", "NOT"]);

/** Strips query syntax from an unquoted word; `null` when nothing searchable is left. */
function cleanWord(word: string): { text: string; prefix: boolean } | null {
  let text = word.replace(/^[([{]+|[)\]}]+$/g, "").replace(/^[-+^]+/, "");
  let prefix = false;
  if (/\*+$/.test(text)) {
    text = text.replace(/\*+$/, "");
    prefix = true;
  }
  text = text.replace(/^[([{*]+|[)\]}(]+$/g, "");
  return text ? { text, prefix: prefix && text.length > 0 } : null;
}

export function parseSearchQuery(input: string): ParsedQuery {
  const raw = tokenize(input);
  type Item = { kind: "term"; term: QueryTerm } | { kind: "op"; op: string; literal: string };
  const items: Item[] = [];
  for (const token of raw) {
    if (!token.quoted && OPERATORS.has(token.text)) {
      items.push({ kind: "op", op: token.text, literal: token.text });
      continue;
    }
    if (token.quoted) {
      items.push({ kind: "term", term: { text: token.text, prefix: false, negated: false, phrase: true } });
      continue;
    }
    const cleaned = cleanWord(token.text);
    if (cleaned) items.push({ kind: "term", term: { ...cleaned, negated: false, phrase: false } });
  }

  const groups: QueryTerm[][] = [[]];
  const literal = (text: string): QueryTerm => ({ text, prefix: false, negated: false, phrase: false });
  for (let k = 0; k < items.length; k++) {
    const item = items[k]!;
    if (item.kind === "term") {
      groups[groups.length - 1]!.push(item.term);
      continue;
    }
    const group = groups[groups.length - 1]!;
    const prevIsTerm = items[k - 1]?.kind === "term";
    const next = items[k + 1];
    const nextIsTerm = next?.kind === "term";
    if (item.op === "OR" && prevIsTerm && nextIsTerm && group.some((t) => !t.negated)) {
      groups.push([]);
    } else if (item.op === "AND" && prevIsTerm && nextIsTerm) {
      // The default conjunction.
    } else if (item.op === "NOT" && nextIsTerm && group.some((t) => !t.negated)) {
      const term = (next as { term: QueryTerm }).term;
      group.push({ ...term, negated: true });
      k++;
    } else {
      group.push(literal(item.literal));
    }
  }
  const kept = groups.filter((g) => g.some((t) => !t.negated));
  if (kept.length === 0) {
    // Nothing but syntax (`*`, `()`): look for the text itself.
    const whole = input.trim().slice(0, MAX_QUERY_CHARS);
    return { groups: whole ? [[literal(whole)]] : [] };
  }
  return { groups: kept };
}

export function isEmptyQuery(q: ParsedQuery): boolean {
  return q.groups.length === 0;
}

const CJK =
  /[\u2E80-\u2FDF\u3000-\u303F\u3040-\u30FF\u3100-\u31FF\u3400-\u4DBF\u4E00-\u9FFF\uA960-\uA97F\uAC00-\uD7AF\uF900-\uFAFF\uFF00-\uFFEF]|[\u{20000}-\u{2FA1F}]/u;
const WORD_CHAR = /[\p{L}\p{N}]/u;

export function hasCjk(text: string): boolean {
  return CJK.test(text);
}

/** Characters (code points), not UTF-16 units: what the trigram tokenizer counts. */
export function charLength(text: string): number {
  return [...text].length;
}

function allTerms(q: ParsedQuery): QueryTerm[] {
  return q.groups.flat();
}

/** Every positive term is long enough for the trigram index (three characters). */
export function trigramEligible(q: ParsedQuery): boolean {
  const positive = allTerms(q).filter((t) => !t.negated);
  return positive.length > 0 && positive.every((t) => charLength(t.text) >= 3);
}

/**
 * Which index can answer the query: the word index unless a term is CJK or has no letters or
 * digits; then the trigram index when every term is at least three characters, else a LIKE scan.
 */
export function chooseRoute(q: ParsedQuery): SearchRoute {
  const terms = allTerms(q);
  const needsSubstring = terms.some((t) => hasCjk(t.text) || !WORD_CHAR.test(t.text));
  if (!needsSubstring) return "words";
  return trigramEligible(q) ? "trigram" : "like";
}

function quote(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
}

function toMatch(q: ParsedQuery, withPrefix: boolean): string {
  const groups = q.groups.map((group) => {
    const positive = group.filter((t) => !t.negated);
    const negative = group.filter((t) => t.negated);
    const pos = positive.map((t) => quote(t.text) + (withPrefix && t.prefix ? "*" : "")).join(" AND ");
    const neg = negative.map((t) => ` NOT ${quote(t.text)}${withPrefix && t.prefix ? "*" : ""}`).join("");
    return `(${pos}${neg})`;
  });
  return groups.join(" OR ");
}

/** FTS5 MATCH text for the word index: every term quoted, only our own operators between them. */
export function toFtsMatch(q: ParsedQuery): string {
  return toMatch(q, true);
}

/** FTS5 MATCH text for the trigram index: quoted substrings (a prefix is just a substring there). */
export function toTrigramMatch(q: ParsedQuery): string {
  return toMatch(q, false);
}

/** `%text%` with LIKE wildcards escaped (pair with `ESCAPE '\'`). */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * A WHERE fragment that matches the query with LIKE over `columns` (any column may hold a term),
 * and its parameters. LIKE ignores case for ASCII letters only.
 */
export function toLikeClause(q: ParsedQuery, columns: string[]): { sql: string; params: string[] } {
  const params: string[] = [];
  const termSql = (t: QueryTerm) => {
    const any = columns.map((c) => `${c} LIKE ? ESCAPE '\\'`).join(" OR ");
    for (let i = 0; i < columns.length; i++) params.push(likePattern(t.text));
    return t.negated ? `NOT (${any})` : `(${any})`;
  };
  const sql = q.groups.map((g) => `(${g.map(termSql).join(" AND ")})`).join(" OR ");
  return { sql: `(${sql})`, params };
}

/** The positive terms, longest first (what a snippet should show). */
export function highlightTerms(q: ParsedQuery): string[] {
  const seen = new Set<string>();
  for (const t of allTerms(q)) if (!t.negated) seen.add(t.text);
  return [...seen].sort((a, b) => b.length - a.length);
}
