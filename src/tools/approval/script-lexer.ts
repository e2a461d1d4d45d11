/**
 * Tokenizers for the interpreter-code analyser: Python, JavaScript (node), PHP and Lua here; Perl
 * and Ruby in script-lexer-perl-ruby.ts. They turn source into identifiers, strings (with escapes
 * decoded and interpolations kept apart), commands (backticks), operators and statement breaks;
 * comments vanish, so text in a comment or a string is never mistaken for a call.
 *
 * A tokenizer never throws: an unterminated string ends at the end of the source.
 */

/** A piece of a string: literal text, or an interpolated expression (`""` when unreadable). */
export type Part = string | { expr: string };

export type Token =
  | { t: "id"; v: string }
  /** A string literal; `parts` has one string when it holds no interpolation. */
  | { t: "str"; parts: Part[] }
  /** Text run as a shell command: backticks, `qx`, `%x`. */
  | { t: "cmd"; parts: Part[] }
  /** A number, regex or other literal the analyser has no use for. */
  | { t: "lit" }
  | { t: "op"; v: string }
  /** A line break that may end a statement. */
  | { t: "nl" };

/** Shared scanning state: the output and the bracket stack that decides where a newline counts. */
export class TokenSink {
  readonly toks: Token[] = [];
  private readonly stack: string[] = [];

  constructor(private readonly newlinesInBraces: boolean) {}

  push(tok: Token): void {
    if (tok.t === "op") {
      if (tok.v === "(" || tok.v === "[" || tok.v === "{") this.stack.push(tok.v);
      else if (tok.v === ")" || tok.v === "]" || tok.v === "}") this.stack.pop();
    }
    this.toks.push(tok);
  }

  newline(): void {
    const top = this.stack.at(-1);
    if (top !== undefined && !(this.newlinesInBraces && top === "{")) return;
    if (this.toks.at(-1)?.t !== "nl") this.toks.push({ t: "nl" });
  }

  /** The last token, for the regex-or-division decision. */
  last(): Token | undefined {
    return this.toks.at(-1);
  }
}

const KEYWORDS_BEFORE_TERM = new Set(
  "return typeof case do else in of new delete void throw yield await and or not if unless while until when split grep map join push x lt gt le ge eq ne cmp".split(
    " ",
  ),
);

/** Whether the next `/` starts a regex (a term is expected) rather than a division. */
export function expectsTerm(last: Token | undefined): boolean {
  if (last === undefined || last.t === "nl") return true;
  if (last.t === "str" || last.t === "cmd" || last.t === "lit") return false;
  if (last.t === "id") return KEYWORDS_BEFORE_TERM.has(last.v);
  return !(last.v === ")" || last.v === "]" || last.v === "}");
}

/** Longest operator from `ops` at `i`, else the single character. */
export function readOp(src: string, i: number, ops: readonly string[]): string {
  for (const op of ops) if (src.startsWith(op, i)) return op;
  return src[i] as string;
}

/** Index of the end of a decimal/hex number starting at `i`. */
export function readNumber(src: string, i: number): number {
  const m = /^(0[xXoObB][\dA-Fa-f_]+|(\d[\d_]*)?\.?\d[\d_]*([eE][+-]?\d+)?)[jJnLlfF]?/.exec(
    src.slice(i, i + 80),
  );
  return i + Math.max(1, m?.[0].length ?? 1);
}

const ID_START = /[\p{L}\p{Nl}_$]/u;
const ID_PART = /[\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}_$\u200c\u200d]/u;

export function isIdStart(ch: string | undefined): boolean {
  return ch !== undefined && ID_START.test(ch);
}

export function isIdPart(ch: string | undefined): boolean {
  return ch !== undefined && ID_PART.test(ch);
}

/** A code point from hex digits, or U+FFFD when out of range. */
function fromHex(hex: string): string {
  const n = Number.parseInt(hex, 16);
  return Number.isFinite(n) && n >= 0 && n <= 0x10ffff ? String.fromCodePoint(n) : "\ufffd";
}

const SIMPLE_ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  f: "\f",
  v: "\v",
  b: "\b",
  a: "\x07",
  e: "\x1b",
  "0": "\0",
};

/**
 * Decodes one backslash escape at `src[i] === "\\"` in the style of `lang`. Returns the text and
 * the index after the escape; `text` undefined means the escape cannot be read (`\N{name}`).
 */
export function readEscape(src: string, i: number, lang: "python" | "js" | "php" | "lua" | "perl" | "ruby") {
  const c = src[i + 1] ?? "";
  const rest = src.slice(i + 2, i + 12);
  let m: RegExpExecArray | null;
  if (c === "\n") return { text: "", next: i + 2 };
  if (c === "x") {
    m = (lang === "perl" ? /^\{([0-9A-Fa-f]+)\}|^([0-9A-Fa-f]{1,2})/ : /^([0-9A-Fa-f]{1,2})/).exec(rest);
    if (m) return { text: fromHex((m[1] ?? m[2]) as string), next: i + 2 + m[0].length };
  }
  if (c === "u" && lang !== "perl") {
    m = /^\{([0-9A-Fa-f]+)\}|^([0-9A-Fa-f]{4})/.exec(rest);
    if (m) return { text: fromHex((m[1] ?? m[2]) as string), next: i + 2 + m[0].length };
  }
  if (c === "U" && lang === "python") {
    m = /^[0-9A-Fa-f]{8}/.exec(rest);
    if (m) return { text: fromHex(m[0]), next: i + 10 };
  }
  if (c === "N") return { text: undefined, next: src.indexOf("}", i) > 0 ? src.indexOf("}", i) + 1 : i + 2 };
  if (lang === "lua" && /\d/.test(c)) {
    m = /^\d{1,3}/.exec(src.slice(i + 1, i + 4));
    return { text: String.fromCharCode(Number(m?.[0] ?? 0)), next: i + 1 + (m?.[0].length ?? 1) };
  }
  if (lang === "lua" && c === "z") {
    let j = i + 2;
    while (/\s/.test(src[j] ?? "")) j++;
    return { text: "", next: j };
  }
  if (/[0-7]/.test(c) && lang !== "js") {
    m = /^[0-7]{1,3}/.exec(src.slice(i + 1, i + 4));
    return {
      text: String.fromCharCode(Number.parseInt(m?.[0] ?? "0", 8)),
      next: i + 1 + (m?.[0].length ?? 1),
    };
  }
  if (lang === "ruby" && c === "s") return { text: " ", next: i + 2 };
  if ((lang === "perl" || lang === "ruby") && /[lLuUQEc]/.test(c)) return { text: undefined, next: i + 2 };
  if (Object.hasOwn(SIMPLE_ESCAPES, c) && !(lang === "python" && c === "e")) {
    return { text: SIMPLE_ESCAPES[c] as string, next: i + 2 };
  }
  // Python and PHP keep the backslash of an escape they do not know; the others drop it.
  if ((lang === "python" || lang === "php") && !/["'\\$`]/.test(c)) return { text: `\\${c}`, next: i + 2 };
  return { text: c, next: i + 2 };
}

/** Appends literal text to `parts`, merging with a preceding literal. */
export function addText(parts: Part[], text: string): void {
  const last = parts.at(-1);
  if (typeof last === "string") parts[parts.length - 1] = last + text;
  else parts.push(text);
}

/**
 * The index of the bracket closing the one at `open` (`{`, `(`, `[`), skipping quoted strings,
 * or the source length when unbalanced. Used for interpolations (`${...}`, `{...}`, `#{...}`).
 */
export function matchBracket(src: string, open: number): number {
  const pairs: Record<string, string> = { "{": "}", "(": ")", "[": "]", "<": ">" };
  const stack: string[] = [pairs[src[open] as string] ?? "}"];
  for (let i = open + 1; i < src.length; i++) {
    const ch = src[i] as string;
    if (ch === "\\") {
      i++;
    } else if (ch === '"' || ch === "'" || ch === "`") {
      for (i++; i < src.length && src[i] !== ch; i++) if (src[i] === "\\") i++;
    } else if (ch === stack.at(-1)) {
      stack.pop();
      if (stack.length === 0) return i;
    } else if (Object.hasOwn(pairs, ch) && ch !== "<") stack.push(pairs[ch] as string);
  }
  return src.length;
}

const PY_OPS = "**= //= >>= <<= ... -> := == != <= >= ** // << >> += -= *= /= %= &= |= ^= @=".split(" ");

/** Python: every string prefix (r, b, u, f and pairs), triple quotes, f-string fields. */
export function lexPython(src: string): Token[] {
  const out = new TokenSink(false);
  let i = 0;
  while (i < src.length) {
    const ch = src[i] as string;
    if (ch === "\n") {
      out.newline();
      i++;
    } else if (ch === "\\" && src[i + 1] === "\n") i += 2;
    else if (/\s/.test(ch)) i++;
    else if (ch === "#") {
      while (i < src.length && src[i] !== "\n") i++;
    } else if (isIdStart(ch) && ch !== "$") {
      let j = i + 1;
      while (isIdPart(src[j]) && src[j] !== "$") j++;
      const word = src.slice(i, j);
      if (/^[rRbBuUfF]{1,2}$/.test(word) && (src[j] === '"' || src[j] === "'")) {
        const r = readPyString(src, j, word.toLowerCase());
        out.push({ t: "str", parts: r.parts });
        i = r.next;
      } else {
        // Python compares identifiers after NFKC normalisation: `ｅｘｅｃ` is `exec`.
        out.push({ t: "id", v: word.normalize("NFKC") });
        i = j;
      }
    } else if (ch === '"' || ch === "'") {
      const r = readPyString(src, i, "");
      out.push({ t: "str", parts: r.parts });
      i = r.next;
    } else if (/\d/.test(ch) || (ch === "." && /\d/.test(src[i + 1] ?? ""))) {
      out.push({ t: "lit" });
      i = readNumber(src, i);
    } else {
      const op = readOp(src, i, PY_OPS);
      out.push(op === ";" ? { t: "nl" } : { t: "op", v: op });
      i += op.length;
    }
  }
  return out.toks;
}

function readPyString(src: string, start: number, prefix: string): { parts: Part[]; next: number } {
  const q = src[start] as string;
  const triple = src.startsWith(q.repeat(3), start);
  const close = triple ? q.repeat(3) : q;
  const raw = prefix.includes("r");
  const fmt = prefix.includes("f");
  const parts: Part[] = [];
  let i = start + close.length;
  while (i < src.length && !src.startsWith(close, i)) {
    const ch = src[i] as string;
    if (!triple && ch === "\n") break;
    if (ch === "\\") {
      if (raw) {
        addText(parts, src.slice(i, i + 2));
        i += 2;
      } else {
        const e = readEscape(src, i, "python");
        if (e.text === undefined) parts.push({ expr: "" });
        else addText(parts, e.text);
        i = e.next;
      }
    } else if (fmt && ch === "{" && src[i + 1] === "{") {
      addText(parts, "{");
      i += 2;
    } else if (fmt && ch === "}" && src[i + 1] === "}") {
      addText(parts, "}");
      i += 2;
    } else if (fmt && ch === "{") {
      const end = matchBracket(src, i);
      parts.push({ expr: fieldExpr(src.slice(i + 1, end)) });
      i = end + 1;
    } else {
      addText(parts, ch);
      i++;
    }
  }
  return { parts: parts.length === 0 ? [""] : parts, next: Math.min(src.length, i + close.length) };
}

/**
 * The expression of an f-string field. A conversion (`!r`), a format spec (`:>10`) or `=` makes
 * the text unreadable, but the expression is still analysed for the calls it makes.
 */
function fieldExpr(field: string): string {
  let depth = 0;
  for (let k = 0; k < field.length; k++) {
    const ch = field[k] as string;
    if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) depth--;
    else if (depth === 0 && (ch === ":" || (ch === "!" && field[k + 1] !== "="))) {
      return `__hermes_unreadable__(${field.slice(0, k)})`;
    } else if (depth === 0 && ch === "=" && !/[=!<>]/.test(field[k - 1] ?? "") && field[k + 1] !== "=") {
      return `__hermes_unreadable__(${field.slice(0, k)})`;
    }
  }
  return field;
}

const JS_OPS =
  ">>>= ... === !== **= <<= >>= >>> &&= ||= ??= => ?. ?? == != <= >= && || ** ++ -- += -= *= /= %= &= |= ^= << >>".split(
    " ",
  );

/** JavaScript: '', "", template literals with `${}`, regex literals, `\u` escapes in names. */
export function lexJs(src: string): Token[] {
  const out = new TokenSink(true);
  let i = src.startsWith("#!") ? src.indexOf("\n") : 0;
  if (i < 0) return [];
  while (i < src.length) {
    const ch = src[i] as string;
    if (ch === "\n") {
      out.newline();
      i++;
    } else if (/\s/.test(ch)) i++;
    else if (src.startsWith("//", i)) {
      while (i < src.length && src[i] !== "\n") i++;
    } else if (src.startsWith("/*", i)) {
      const end = src.indexOf("*/", i + 2);
      const body = src.slice(i, end < 0 ? src.length : end);
      if (body.includes("\n")) out.newline();
      i = end < 0 ? src.length : end + 2;
    } else if (isIdStart(ch) || ch === "\\" || ch === "#") {
      const r = readJsName(src, i);
      out.push({ t: "id", v: r.name });
      i = r.next;
    } else if (ch === '"' || ch === "'") {
      const r = readQuoted(src, i, "js");
      out.push({ t: "str", parts: r.parts });
      i = r.next;
    } else if (ch === "`") {
      const r = readTemplate(src, i);
      out.push({ t: "str", parts: r.parts });
      i = r.next;
    } else if (ch === "/" && expectsTerm(out.last())) {
      i = skipRegex(src, i);
      out.push({ t: "lit" });
    } else if (/\d/.test(ch) || (ch === "." && /\d/.test(src[i + 1] ?? ""))) {
      out.push({ t: "lit" });
      i = readNumber(src, i);
    } else {
      const op = readOp(src, i, JS_OPS);
      out.push(op === ";" ? { t: "nl" } : { t: "op", v: op });
      i += op.length;
    }
  }
  return out.toks;
}

/** A JS identifier; `\u0065val` is the identifier `eval`. */
function readJsName(src: string, i: number): { name: string; next: number } {
  let name = "";
  let j = i;
  if (src[j] === "#") {
    name = "#";
    j++;
  }
  while (j < src.length) {
    if (src[j] === "\\" && src[j + 1] === "u") {
      const e = readEscape(src, j, "js");
      name += e.text ?? "";
      j = e.next;
    } else if (isIdPart(src[j])) {
      name += src[j];
      j++;
    } else break;
  }
  return { name: name === "" ? (src[i] as string) : name, next: Math.max(j, i + 1) };
}

/** A '...' or "..." string with escapes in the style of `lang`. */
export function readQuoted(
  src: string,
  start: number,
  lang: "js" | "php" | "lua" | "perl" | "ruby",
  escapes = true,
): { parts: Part[]; next: number } {
  const q = src[start] as string;
  const parts: Part[] = [];
  let i = start + 1;
  while (i < src.length && src[i] !== q) {
    if (src[i] === "\\" && escapes) {
      const e = readEscape(src, i, lang);
      if (e.text === undefined) parts.push({ expr: "" });
      else addText(parts, e.text);
      i = e.next;
    } else if (src[i] === "\\" && (src[i + 1] === q || src[i + 1] === "\\")) {
      addText(parts, src[i + 1] as string);
      i += 2;
    } else {
      addText(parts, src[i] as string);
      i++;
    }
  }
  return { parts: parts.length === 0 ? [""] : parts, next: Math.min(src.length, i + 1) };
}

function readTemplate(src: string, start: number): { parts: Part[]; next: number } {
  const parts: Part[] = [];
  let i = start + 1;
  while (i < src.length && src[i] !== "`") {
    if (src[i] === "\\") {
      const e = readEscape(src, i, "js");
      addText(parts, e.text ?? "");
      i = e.next;
    } else if (src.startsWith("${", i)) {
      const end = matchBracket(src, i + 1);
      parts.push({ expr: src.slice(i + 2, end) });
      i = end + 1;
    } else {
      addText(parts, src[i] as string);
      i++;
    }
  }
  return { parts: parts.length === 0 ? [""] : parts, next: Math.min(src.length, i + 1) };
}

/** Index after a `/regex/flags` literal starting at `i`. */
export function skipRegex(src: string, i: number, close = "/"): number {
  let j = i + 1;
  let inClass = false;
  while (j < src.length && src[j] !== "\n") {
    const ch = src[j];
    if (ch === "\\") j++;
    else if (ch === "[") inClass = true;
    else if (ch === "]") inClass = false;
    else if (ch === close && !inClass) break;
    j++;
  }
  j++;
  while (/[a-z]/i.test(src[j] ?? "")) j++;
  return j;
}

const PHP_OPS =
  "<<< === !== <=> **= ??= ?-> ... -> :: => .= == != <> <= >= && || ?? ** ++ -- += -= *= /= %= &= |= ^= << >>".split(
    " ",
  );

/**
 * PHP: code between `<?php` and `?>` (all of it when there is no tag, as `php -r` runs), variables
 * as `$name`, function names lower-cased (PHP resolves them case-insensitively), heredocs,
 * nowdocs and backticks.
 */
export function lexPhp(src: string): Token[] {
  const out = new TokenSink(true);
  const tagged = /<\?(php|=)?/i.test(src);
  let i = 0;
  if (tagged) {
    const open = /<\?(php|=)?/i.exec(src);
    i = open ? open.index + open[0].length : 0;
  }
  while (i < src.length) {
    const ch = src[i] as string;
    if (ch === "\n") {
      out.newline();
      i++;
    } else if (/\s/.test(ch)) i++;
    else if (tagged && src.startsWith("?>", i)) {
      const open = /<\?(php|=)?/gi;
      open.lastIndex = i + 2;
      const m = open.exec(src);
      out.push({ t: "nl" });
      i = m ? m.index + m[0].length : src.length;
    } else if (src.startsWith("//", i) || (ch === "#" && src[i + 1] !== "[")) {
      while (i < src.length && src[i] !== "\n" && !src.startsWith("?>", i)) i++;
    } else if (src.startsWith("/*", i)) {
      const end = src.indexOf("*/", i + 2);
      i = end < 0 ? src.length : end + 2;
    } else if (ch === "$" && isIdStart(src[i + 1]) && src[i + 1] !== "$") {
      let j = i + 1;
      while (isIdPart(src[j]) && src[j] !== "$") j++;
      out.push({ t: "id", v: src.slice(i, j) });
      i = j;
    } else if (isIdStart(ch) || (ch === "\\" && isIdStart(src[i + 1]))) {
      let j = i;
      while ((isIdPart(src[j]) && src[j] !== "$") || src[j] === "\\") j++;
      const name = src.slice(i, j).replace(/^\\/, "").replace(/\\/g, ".").toLowerCase();
      out.push({ t: "id", v: name });
      i = j;
    } else if (ch === "'") {
      const r = readQuoted(src, i, "php", false);
      out.push({ t: "str", parts: r.parts });
      i = r.next;
    } else if (ch === '"' || ch === "`") {
      const r = readInterpolated(src, i + 1, ch, "php");
      out.push({ t: ch === "`" ? "cmd" : "str", parts: r.parts });
      i = r.next;
    } else if (src.startsWith("<<<", i)) {
      const m = /^<<<[ \t]*(["']?)([A-Za-z_]\w*)\1\r?\n/.exec(src.slice(i, i + 80));
      if (!m) {
        out.push({ t: "op", v: "<<" });
        i += 2;
        continue;
      }
      const bodyStart = i + m[0].length;
      const end = new RegExp(`^[ \\t]*${m[2]}\\b`, "m");
      const rest = src.slice(bodyStart);
      const found = end.exec(rest);
      const body = rest.slice(0, found ? Math.max(0, found.index - 1) : rest.length);
      const parts = m[1] === "'" ? [body] : readInterpolated(`${body}\u0000`, 0, "\u0000", "php").parts;
      out.push({ t: "str", parts });
      i = bodyStart + (found ? found.index + found[0].length : rest.length);
    } else if (/\d/.test(ch)) {
      out.push({ t: "lit" });
      i = readNumber(src, i);
    } else {
      const op = readOp(src, i, PHP_OPS);
      out.push(op === ";" ? { t: "nl" } : { t: "op", v: op });
      i += op.length;
    }
  }
  return out.toks;
}

/**
 * A double-quoted PHP or Perl string body from `i` to the closing `close`: `$var`, `${var}`,
 * `{$expr}`, `$var[...]`, `$var->x`, `@var`, `@{[ expr ]}` become interpolated parts.
 */
export function readInterpolated(
  src: string,
  i: number,
  close: string,
  lang: "php" | "perl",
  open?: string,
): { parts: Part[]; next: number } {
  const parts: Part[] = [];
  let depth = 0;
  while (i < src.length) {
    const ch = src[i] as string;
    if (ch === close && depth === 0) break;
    if (open !== undefined && ch === open) depth++;
    if (open !== undefined && ch === close) depth--;
    if (ch === "\\") {
      const e = readEscape(src, i, lang);
      if (e.text === undefined) parts.push({ expr: "" });
      else addText(parts, e.text);
      i = e.next;
    } else if (lang === "php" && ch === "{" && src[i + 1] === "$") {
      const end = matchBracket(src, i);
      parts.push({ expr: src.slice(i + 1, end) });
      i = end + 1;
    } else if ((ch === "$" || (lang === "perl" && ch === "@")) && src[i + 1] === "{") {
      const end = matchBracket(src, i + 1);
      const inner = src.slice(i + 2, end);
      parts.push({ expr: /^\w+$/.test(inner) ? `${ch}${inner}` : `${ch}{${inner}}` });
      i = end + 1;
    } else if (
      (ch === "$" || (lang === "perl" && ch === "@")) &&
      isIdStart(src[i + 1]) &&
      src[i + 1] !== "$"
    ) {
      let j = i + 1;
      while ((isIdPart(src[j]) && src[j] !== "$") || (lang === "perl" && src.startsWith("::", j))) {
        j += src.startsWith("::", j) ? 2 : 1;
      }
      // Subscripts and method arrows belong to the variable.
      for (;;) {
        if (src[j] === "[" || (src[j] === "{" && lang === "perl")) j = matchBracket(src, j) + 1;
        else if (src.startsWith("->", j) && /[[{\w]/.test(src[j + 2] ?? "")) {
          j += 2;
          if (src[j] === "[" || src[j] === "{") j = matchBracket(src, j) + 1;
          else while (isIdPart(src[j]) && src[j] !== "$") j++;
        } else break;
      }
      parts.push({ expr: src.slice(i, j) });
      i = j;
    } else {
      addText(parts, ch);
      i++;
    }
  }
  return { parts: parts.length === 0 ? [""] : parts, next: Math.min(src.length, i + 1) };
}

const LUA_OPS = ["...", "..", "==", "~=", "<=", ">=", "::", "//", "<<", ">>"];

/** Lua: '', "", long brackets `[[...]]`/`[==[...]==]`, `--` and `--[[ ]]` comments. */
export function lexLua(src: string): Token[] {
  const out = new TokenSink(true);
  let i = src.startsWith("#!") ? Math.max(0, src.indexOf("\n")) : 0;
  while (i < src.length) {
    const ch = src[i] as string;
    const long = /^\[(=*)\[/.exec(src.slice(ch === "-" ? i + 2 : i, i + 64));
    if (ch === "\n") {
      out.newline();
      i++;
    } else if (/\s/.test(ch)) i++;
    else if (src.startsWith("--", i)) {
      if (long) {
        const end = src.indexOf(`]${long[1]}]`, i + 2 + long[0].length);
        i = end < 0 ? src.length : end + long[0].length;
      } else while (i < src.length && src[i] !== "\n") i++;
    } else if (long && ch === "[") {
      const bodyStart = i + long[0].length + (src[i + long[0].length] === "\n" ? 1 : 0);
      const end = src.indexOf(`]${long[1]}]`, bodyStart);
      out.push({ t: "str", parts: [src.slice(bodyStart, end < 0 ? src.length : end)] });
      i = end < 0 ? src.length : end + long[0].length;
    } else if (isIdStart(ch) && ch !== "$") {
      let j = i + 1;
      while (isIdPart(src[j]) && src[j] !== "$") j++;
      out.push({ t: "id", v: src.slice(i, j) });
      i = j;
    } else if (ch === '"' || ch === "'") {
      const r = readQuoted(src, i, "lua");
      out.push({ t: "str", parts: r.parts });
      i = r.next;
    } else if (/\d/.test(ch)) {
      out.push({ t: "lit" });
      i = readNumber(src, i);
    } else {
      const op = readOp(src, i, LUA_OPS);
      out.push(op === ";" ? { t: "nl" } : { t: "op", v: op });
      i += op.length;
    }
  }
  return out.toks;
}
