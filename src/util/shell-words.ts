/**
 * Reading one bash word the way bash's parser does: quotes, backslashes, ANSI-C strings, and the
 * expansions inside a word (`$x`, `${x...}`, `$(...)`, backticks, `$((...))`, `<(...)`), keeping
 * each part apart so the analyser can expand the word as bash will. Used by shell-parse.ts.
 */
export type WordPart =
  /** Text; `quoted` when it came from quotes or a backslash (no splitting, globbing, braces, tilde). */
  | { kind: "lit"; text: string; quoted: boolean }
  /** `$x`, `${x}`, `${x:-word}`, `${!x}`, `${#x}`, `${a[@]}`, `$1`, `$@`... */
  | {
      kind: "param";
      raw: string;
      quoted: boolean;
      name: string;
      /** `${!x}`: the value names another variable. */
      indirect: boolean;
      /** `${#x}`: the length. */
      length: boolean;
      /** `[...]` after the name, without brackets. */
      subscript?: string;
      /** `:-`, `-`, `:=`, `:+`, `#`, `##`, `%`, `%%`, `/`, `//`, `^^`, `,,`, `:` (substring), `@Q`...; "" when none. */
      op: string;
      /** The word after the operator (for `/`, the pattern and replacement separated by a `/` lit). */
      arg?: ShellWord;
    }
  | { kind: "cmdsub"; raw: string; quoted: boolean; body: string }
  | { kind: "arith"; raw: string; quoted: boolean; body: string }
  | { kind: "procsub"; raw: string; dir: "<" | ">"; body: string };

export interface ShellWord {
  /** The word with quotes removed and escapes resolved; expansions are kept as written. */
  text: string;
  /** True when any part of the word was quoted. */
  quoted: boolean;
  /** Scripts inside `$(...)`, backticks, `<(...)` and `>(...)` anywhere in this word, outermost first. */
  subs: string[];
  /** The word split into the parts bash expands separately. */
  parts: WordPart[];
}

export interface ShellRedirect {
  /** The operator without its fd prefix: `>`, `>>`, `>|`, `&>`, `&>>`, `<`, `<<`, `<<<`, `<>`, `>&`, `<&`. */
  op: string;
  fd?: string;
  target: ShellWord;
  /** Body of a heredoc (`<<`, `<<-`), as written. */
  heredoc?: string;
  /** The heredoc's delimiter was quoted: the body is literal. Otherwise `heredocWord` holds its expansions. */
  heredocQuoted?: boolean;
  /** An unquoted heredoc body as a word (its `$x`, `$(...)`... parts). */
  heredocWord?: ShellWord;
}

export function newWord(): ShellWord {
  return { text: "", quoted: false, subs: [], parts: [] };
}

export function addLit(word: ShellWord, text: string, quoted: boolean): void {
  if (text === "") return;
  word.text += text;
  const last = word.parts.at(-1);
  if (last?.kind === "lit" && last.quoted === quoted) last.text += text;
  else word.parts.push({ kind: "lit", text, quoted });
}

/**
 * Reads `text` as bash reads the body of an unquoted heredoc or `$((...))`: expansions are
 * recognised, quotes are ordinary characters. Never throws.
 */
export function parseExpandingText(text: string): ShellWord {
  const p = new WordReader(text);
  const word = newWord();
  p.readDoubleQuotedBody(word, null);
  return word;
}

const META = /[ \t\n;&|()<>]/;

/** A cursor over bash source that reads words. */
export class WordReader {
  i = 0;

  constructor(protected readonly s: string) {}

  /** Reads one word starting at `this.i`; stops at a blank or an unquoted operator. */
  readWord(): ShellWord {
    const s = this.s;
    const word = newWord();
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if ((c === "<" || c === ">") && s[this.i + 1] === "(") {
        const inner = this.readBalanced(this.i + 2);
        const raw = s.slice(this.i, inner.end);
        word.parts.push({ kind: "procsub", raw, dir: c, body: inner.body });
        word.subs.push(inner.body);
        word.text += raw;
        this.i = inner.end;
        continue;
      }
      if (c === "(" && /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=$/.test(word.text) && !word.quoted) {
        this.readArrayLiteral(word);
        continue;
      }
      if (META.test(c)) break;
      if (c === "\\") {
        if (s[this.i + 1] !== "\n" && this.i + 1 < s.length) addLit(word, s[this.i + 1] as string, true);
        word.quoted = word.quoted || this.i + 1 < s.length;
        this.i += 2;
      } else if (c === "'") {
        const end = s.indexOf("'", this.i + 1);
        const stop = end < 0 ? s.length : end;
        word.quoted = true;
        addLit(word, s.slice(this.i + 1, stop), true);
        if (stop === this.i + 1) word.parts.push({ kind: "lit", text: "", quoted: true });
        this.i = stop + 1;
      } else if (c === "$" && s[this.i + 1] === "'") {
        this.readAnsiC(word);
      } else if (c === "$" && s[this.i + 1] === '"') {
        this.i++;
        this.readDoubleQuoted(word);
      } else if (c === '"') {
        this.readDoubleQuoted(word);
      } else if (c === "$" || c === "`") {
        this.readDollarOrBacktick(word, false);
      } else {
        addLit(word, c, false);
        this.i++;
      }
    }
    return word;
  }

  /** `a=(x y $(z))`: kept as one unquoted literal; substitutions inside are collected. */
  protected readArrayLiteral(word: ShellWord): void {
    const inner = this.readBalanced(this.i + 1);
    const sub = new WordReader(inner.body);
    while (sub.i < inner.body.length) {
      const before = sub.i;
      if (/[\s]/.test(inner.body[sub.i] as string)) {
        sub.i++;
        continue;
      }
      const w = sub.readWord();
      word.subs.push(...w.subs);
      if (sub.i === before) sub.i++;
    }
    // The value is an array: mark it so expansion treats it as unknown.
    word.parts.push({
      kind: "param",
      raw: this.s.slice(this.i, inner.end),
      quoted: false,
      name: "(array)",
      indirect: false,
      length: false,
      op: "",
    });
    word.text += this.s.slice(this.i, inner.end);
    this.i = inner.end;
  }

  protected readAnsiC(word: ShellWord): void {
    const s = this.s;
    word.quoted = true;
    this.i += 2;
    let out = "";
    let truncated = false;
    while (this.i < s.length && s[this.i] !== "'") {
      if (s[this.i] === "\\" && this.i + 1 < s.length) {
        const { text, length } = ansiEscape(s, this.i + 1);
        // A NUL ends the string in bash; the rest up to the quote is dropped.
        if (text === "\0") truncated = true;
        if (!truncated) out += text;
        this.i += 1 + length;
      } else {
        if (!truncated) out += s[this.i];
        this.i++;
      }
    }
    this.i++;
    addLit(word, out, true);
    if (out === "") word.parts.push({ kind: "lit", text: "", quoted: true });
  }

  protected readDoubleQuoted(word: ShellWord): void {
    word.quoted = true;
    this.i++;
    const start = word.parts.length;
    this.readDoubleQuotedBody(word, '"');
    this.i++;
    if (word.parts.length === start) word.parts.push({ kind: "lit", text: "", quoted: true });
  }

  /** Reads double-quoted text up to `end` (or the end of input when null). */
  readDoubleQuotedBody(word: ShellWord, end: string | null): void {
    const s = this.s;
    while (this.i < s.length && (end === null || s[this.i] !== end)) {
      const c = s[this.i] as string;
      if (c === "\\" && /["\\$`\n]/.test(s[this.i + 1] ?? "") && (end !== null || s[this.i + 1] !== '"')) {
        if (s[this.i + 1] !== "\n") addLit(word, s[this.i + 1] as string, true);
        this.i += 2;
      } else if (c === "$" || c === "`") {
        this.readDollarOrBacktick(word, true);
      } else {
        addLit(word, c, true);
        this.i++;
      }
    }
  }

  protected readDollarOrBacktick(word: ShellWord, quoted: boolean): void {
    const s = this.s;
    const start = this.i;
    if (s[this.i] === "`") {
      let j = this.i + 1;
      let body = "";
      while (j < s.length && s[j] !== "`") {
        if (s[j] === "\\" && /[$`\\]/.test(s[j + 1] ?? "")) {
          body += s[j + 1];
          j += 2;
        } else {
          body += s[j];
          j++;
        }
      }
      this.i = Math.min(j + 1, s.length);
      word.parts.push({ kind: "cmdsub", raw: s.slice(start, this.i), quoted, body });
      word.subs.push(body);
    } else if (s.startsWith("$((", this.i)) {
      const inner = this.readBalanced(this.i + 2);
      const body = inner.body.slice(1).replace(/\)$/, "");
      this.i = inner.end;
      word.parts.push({ kind: "arith", raw: s.slice(start, this.i), quoted, body });
      word.subs.push(...parseExpandingText(body).subs);
    } else if (s[this.i + 1] === "(") {
      const inner = this.readBalanced(this.i + 2);
      this.i = inner.end;
      word.parts.push({ kind: "cmdsub", raw: s.slice(start, this.i), quoted, body: inner.body });
      word.subs.push(inner.body);
    } else if (s[this.i + 1] === "{") {
      const end = this.findBraceEnd(this.i + 2);
      this.i = end;
      const part = parseParam(s.slice(start, end), s.slice(start + 2, Math.max(start + 2, end - 1)), quoted);
      word.parts.push(part);
      if (part.kind === "param" && part.arg) word.subs.push(...part.arg.subs);
      if (part.kind === "param" && part.subscript) word.subs.push(...parseExpandingText(part.subscript).subs);
    } else {
      const m = /^([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(s.slice(this.i + 1, this.i + 200));
      if (m) {
        this.i += 1 + (m[1] as string).length;
        word.parts.push({
          kind: "param",
          raw: s.slice(start, this.i),
          quoted,
          name: m[1] as string,
          indirect: false,
          length: false,
          op: "",
        });
      } else {
        this.i++;
        addLit(word, "$", quoted);
        return;
      }
    }
    word.text += s.slice(start, this.i);
  }

  /** From just inside `${`, the index after the matching `}`, skipping quotes and nested expansions. */
  protected findBraceEnd(from: number): number {
    const s = this.s;
    let j = from;
    while (j < s.length) {
      const c = s[j];
      if (c === "\\") j += 2;
      else if (c === "}") return j + 1;
      else if (c === "'") {
        const end = s.indexOf("'", j + 1);
        j = end < 0 ? s.length : end + 1;
      } else if (c === '"') {
        j++;
        while (j < s.length && s[j] !== '"') j += s[j] === "\\" ? 2 : 1;
        j++;
      } else if (c === "$" && s[j + 1] === "{") j = this.findBraceEnd(j + 2);
      else if (c === "$" && s[j + 1] === "(") j = this.readBalanced(j + 2).end;
      else if (c === "`") {
        j++;
        while (j < s.length && s[j] !== "`") j += s[j] === "\\" ? 2 : 1;
        j++;
      } else j++;
    }
    return s.length;
  }

  /** From just inside an opening `(`, finds the matching `)`, skipping quotes and nested parens. */
  protected readBalanced(from: number): { body: string; end: number } {
    const s = this.s;
    let depth = 1;
    let j = from;
    while (j < s.length) {
      const c = s[j];
      if (c === "\\") {
        j += 2;
        continue;
      }
      if (c === "'") {
        const end = s.indexOf("'", j + 1);
        j = end < 0 ? s.length : end + 1;
        continue;
      }
      if (c === '"') {
        j++;
        while (j < s.length && s[j] !== '"') j += s[j] === "\\" ? 2 : 1;
        j++;
        continue;
      }
      if (c === "`") {
        j++;
        while (j < s.length && s[j] !== "`") j += s[j] === "\\" ? 2 : 1;
        j++;
        continue;
      }
      if (c === "(") depth++;
      if (c === ")" && --depth === 0) return { body: s.slice(from, j), end: j + 1 };
      j++;
    }
    return { body: s.slice(from), end: s.length };
  }
}

const PARAM_OPS = [
  ":-",
  ":=",
  ":?",
  ":+",
  "-",
  "=",
  "?",
  "+",
  "##",
  "#",
  "%%",
  "%",
  "//",
  "/#",
  "/%",
  "/",
  "^^",
  "^",
  ",,",
  ",",
];

/** Parses the inside of `${...}`. */
function parseParam(raw: string, inner: string, quoted: boolean): WordPart {
  let rest = inner;
  let length = false;
  let indirect = false;
  if (rest.startsWith("#") && rest.length > 1 && !/^#[#%:\-=?+/]/.test(rest.slice(0, 2))) {
    length = true;
    rest = rest.slice(1);
  } else if (rest.startsWith("!") && rest.length > 1) {
    indirect = true;
    rest = rest.slice(1);
  }
  const m = /^([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])/.exec(rest);
  const name = m ? (m[1] as string) : "";
  rest = rest.slice(name.length);
  let subscript: string | undefined;
  if (rest.startsWith("[")) {
    const close = rest.indexOf("]");
    subscript = rest.slice(1, close < 0 ? rest.length : close);
    rest = close < 0 ? "" : rest.slice(close + 1);
  }
  let op = "";
  if (/^@[A-Za-z]/.test(rest)) {
    op = rest.slice(0, 2);
    rest = rest.slice(2);
  } else if (/^:[^-=?+]/.test(rest) || rest === ":") {
    op = ":";
    rest = rest.slice(1);
  } else {
    op = PARAM_OPS.find((o) => rest.startsWith(o)) ?? "";
    rest = rest.slice(op.length);
  }
  const part: WordPart = { kind: "param", raw, quoted, name: name || "?bad", indirect, length, op };
  if (subscript !== undefined) part.subscript = subscript;
  if (op !== "" || rest !== "") {
    const p = new WordReader(rest);
    const arg = newWord();
    // The argument is read like a word whose blanks do not split (`${x:-a b}` is one value).
    while (p.i < rest.length) {
      const w = p.readWord();
      arg.parts.push(...w.parts);
      arg.subs.push(...w.subs);
      arg.text += w.text;
      arg.quoted = arg.quoted || w.quoted;
      if (p.i < rest.length) {
        addLit(arg, rest[p.i] as string, quoted);
        p.i++;
      }
    }
    part.arg = arg;
    if (name === "" || (op === "" && rest !== "")) part.name = "?bad";
  }
  return part;
}

/** Decodes one ANSI-C escape starting after the backslash at `s[k]`. */
function ansiEscape(s: string, k: number): { text: string; length: number } {
  const n = s[k] as string;
  const simple: Record<string, string> = {
    n: "\n",
    t: "\t",
    r: "\r",
    a: "\x07",
    b: "\b",
    e: "\x1b",
    E: "\x1b",
    f: "\f",
    v: "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
  };
  if (n in simple) return { text: simple[n] as string, length: 1 };
  let m = /^[0-7]{1,3}/.exec(s.slice(k, k + 3));
  if (m) return { text: String.fromCharCode(Number.parseInt(m[0], 8) & 0xff), length: m[0].length };
  m = /^x([0-9a-fA-F]{1,2})/.exec(s.slice(k, k + 3));
  if (m) return { text: String.fromCharCode(Number.parseInt(m[1] as string, 16)), length: m[0].length };
  m = /^u([0-9a-fA-F]{1,4})/.exec(s.slice(k, k + 5));
  if (m) return { text: String.fromCodePoint(Number.parseInt(m[1] as string, 16)), length: m[0].length };
  m = /^U([0-9a-fA-F]{1,8})/.exec(s.slice(k, k + 9));
  if (m) {
    const cp = Number.parseInt(m[1] as string, 16);
    return { text: cp <= 0x10ffff ? String.fromCodePoint(cp) : "", length: m[0].length };
  }
  if (n === "c" && k + 1 < s.length)
    return { text: String.fromCharCode((s.charCodeAt(k + 1) & 0x1f) >>> 0), length: 2 };
  return { text: `\\${n}`, length: 1 };
}
