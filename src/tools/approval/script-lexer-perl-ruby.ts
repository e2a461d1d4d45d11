/**
 * Tokenizers for Perl and Ruby, the two languages whose strings come in many disguises: Perl's
 * q/qq/qw/qx with any delimiter, heredocs (`<<"EOF"`, `<<~EOF`, backtick heredocs), POD; Ruby's
 * %q/%Q/%w/%x literals, heredocs, symbols and `#{}` interpolation. Regex literals and
 * substitutions become opaque literals. Package separators `::` become `.` in names.
 */
import {
  addText,
  expectsTerm,
  isIdPart,
  isIdStart,
  matchBracket,
  type Part,
  readEscape,
  readInterpolated,
  readNumber,
  readOp,
  readQuoted,
  skipRegex,
  type Token,
  TokenSink,
} from "./script-lexer.js";

const PAIRS: Record<string, string> = { "(": ")", "[": "]", "{": "}", "<": ">" };

/** The body of a delimited literal starting at the delimiter `src[i]`, nesting bracket pairs. */
function delimited(src: string, i: number): { body: string; next: number; open: string } {
  const open = src[i] as string;
  const close = PAIRS[open];
  if (close) {
    const end = open === "<" ? matchAngle(src, i) : matchBracket(src, i);
    return { body: src.slice(i + 1, end), next: Math.min(src.length, end + 1), open };
  }
  let j = i + 1;
  while (j < src.length && src[j] !== open) j += src[j] === "\\" ? 2 : 1;
  return { body: src.slice(i + 1, j), next: Math.min(src.length, j + 1), open };
}

function matchAngle(src: string, i: number): number {
  let depth = 0;
  for (let j = i; j < src.length; j++) {
    if (src[j] === "\\") j++;
    else if (src[j] === "<") depth++;
    else if (src[j] === ">" && --depth === 0) return j;
  }
  return src.length;
}

/** Heredoc bodies are read where their marker is and skipped when the scanner reaches them. */
class Heredocs {
  private lineEnd = -1;
  private resume = -1;

  /** Reads the body for a marker on the line containing `at`; returns it and the text after. */
  take(src: string, at: number, tag: string, indented: boolean): string {
    const lineEnd = this.lineEnd >= at ? this.lineEnd : endOfLine(src, at);
    let start = this.lineEnd >= at ? this.resume : lineEnd + 1;
    const lines: string[] = [];
    while (start < src.length) {
      const end = endOfLine(src, start);
      const line = src.slice(start, end);
      start = end + 1;
      if ((indented ? line.trim() : line.replace(/\r$/, "")) === tag) break;
      lines.push(line);
    }
    this.lineEnd = lineEnd;
    this.resume = Math.min(src.length, start);
    if (!indented) return lines.map((l) => `${l}\n`).join("");
    const indent = Math.min(
      ...lines.filter((l) => l.trim() !== "").map((l) => /^[ \t]*/.exec(l)?.[0].length ?? 0),
    );
    return lines.map((l) => `${l.slice(Number.isFinite(indent) ? indent : 0)}\n`).join("");
  }

  /** Where to continue after the newline at `i` (past the bodies read for that line). */
  after(i: number): number {
    if (i !== this.lineEnd) return i + 1;
    this.lineEnd = -1;
    return this.resume;
  }
}

function endOfLine(src: string, i: number): number {
  const nl = src.indexOf("\n", i);
  return nl < 0 ? src.length : nl;
}

const PERL_OPS =
  "<=> **= ||= //= &&= ... -> => :: == != <= >= =~ !~ .. .= && || // ** ++ -- += -= *= /= x= << >>".split(
    " ",
  );

/** Perl source, as `perl -e` and perl scripts are written. */
export function lexPerl(src: string): Token[] {
  const out = new TokenSink(true);
  const here = new Heredocs();
  let i = 0;
  let lineStart = true;
  while (i < src.length) {
    const ch = src[i] as string;
    const atLineStart: boolean = lineStart;
    lineStart = false;
    if (ch === "\n") {
      out.newline();
      i = here.after(i);
      lineStart = true;
      continue;
    }
    if (/\s/.test(ch)) {
      i++;
      lineStart = atLineStart;
      continue;
    }
    if (atLineStart && /^=[a-zA-Z]/.test(src.slice(i, i + 2))) {
      const cut = /^=cut\b.*$/m.exec(src.slice(i));
      i = cut ? i + cut.index + cut[0].length : src.length;
      continue;
    }
    if (atLineStart && /^__(END|DATA)__\b/.test(src.slice(i, i + 8))) break;
    if (ch === "#") {
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    const heredoc = /^<<(~?)(?:(["'`])(.*?)\2|([A-Za-z_]\w*))/.exec(src.slice(i, i + 200));
    if (heredoc) {
      const tag = (heredoc[3] ?? heredoc[4]) as string;
      const body = here.take(src, i, tag, heredoc[1] === "~");
      const quote = heredoc[2] ?? '"';
      const parts = quote === "'" ? [body] : readInterpolated(`${body}\u0000`, 0, "\u0000", "perl").parts;
      out.push({ t: quote === "`" ? "cmd" : "str", parts });
      i += heredoc[0].length;
      continue;
    }
    if (ch === "$" || ch === "@" || ((ch === "%" || ch === "&") && expectsTerm(out.last()))) {
      i = perlVariable(src, i, out);
      continue;
    }
    if (isIdStart(ch) && ch !== "$") {
      let j = i + 1;
      while ((isIdPart(src[j]) && src[j] !== "$") || (src.startsWith("::", j) && isIdStart(src[j + 2]))) {
        j += src.startsWith("::", j) ? 2 : 1;
      }
      const word = src.slice(i, j);
      const quoted = perlQuoteLike(src, i, j, word, out);
      if (quoted !== undefined) {
        i = quoted;
        continue;
      }
      out.push({ t: "id", v: word.replace(/::/g, ".") });
      i = j;
      continue;
    }
    if (ch === "'") {
      const r = readQuoted(src, i, "perl", false);
      out.push({ t: "str", parts: r.parts });
      i = r.next;
    } else if (ch === '"' || ch === "`") {
      const r = readInterpolated(src, i + 1, ch, "perl");
      out.push({ t: ch === "`" ? "cmd" : "str", parts: r.parts });
      i = r.next;
    } else if (ch === "/" && expectsTerm(out.last())) {
      out.push({ t: "lit" });
      i = skipRegex(src, i);
    } else if (ch === "<" && expectsTerm(out.last()) && /^<\$?\w*>/.test(src.slice(i, i + 40))) {
      out.push({ t: "lit" });
      i = src.indexOf(">", i) + 1;
    } else if (/\d/.test(ch)) {
      out.push({ t: "lit" });
      i = readNumber(src, i);
    } else {
      const op = readOp(src, i, PERL_OPS);
      out.push(op === ";" ? { t: "nl" } : { t: "op", v: op });
      i += op.length;
    }
  }
  return out.toks;
}

/** `$x`, `@x`, `%x`, `&x`, `$Foo::x`, `$_`, `$0`, `$#x`; `${...}` and `$$x` leave `$` as an operator. */
function perlVariable(src: string, i: number, out: TokenSink): number {
  const sigil = src[i] as string;
  let j = i + 1;
  if (sigil === "$" && src[j] === "#") {
    out.push({ t: "lit" });
    j++;
    if (src[j] === "{" || src[j] === "$") return j;
    while (isIdPart(src[j])) j++;
    return j;
  }
  if (isIdStart(src[j]) && src[j] !== "$") {
    while ((isIdPart(src[j]) && src[j] !== "$") || (src.startsWith("::", j) && isIdStart(src[j + 2]))) {
      j += src.startsWith("::", j) ? 2 : 1;
    }
    out.push({ t: "id", v: src.slice(i, j).replace(/::/g, ".") });
    return j;
  }
  if (sigil === "$" && src[j] !== undefined && /[0-9!@/\\,;.&<>0_]/.test(src[j] as string)) {
    out.push({ t: "id", v: src.slice(i, j + 1) });
    return j + 1;
  }
  out.push({ t: "op", v: sigil });
  return j;
}

/** q qq qw qx m s tr y with their delimiters; undefined when `word` is not one here. */
function perlQuoteLike(src: string, i: number, j: number, word: string, out: TokenSink): number | undefined {
  if (!/^(q|qq|qw|qx|m|s|tr|y)$/.test(word)) return undefined;
  if (src[i - 1] === "-" || src[i - 1] === ">" || src[i - 1] === "{") return undefined;
  let k = j;
  while (src[k] === " " || src[k] === "\t") k++;
  const delim = src[k];
  if (delim === undefined || /[\w\s,;)=]/.test(delim) || (k > j && delim === "#")) return undefined;
  if (delim === "=" || (src[k] === "=" && src[k + 1] === ">")) return undefined;
  const first = delimited(src, k);
  if (word === "s" || word === "tr" || word === "y") {
    let n = first.next;
    if (PAIRS[first.open]) {
      while (/\s/.test(src[n] ?? "")) n++;
      n = delimited(src, n).next;
    } else n = delimited(src, first.next - 1).next;
    while (/[a-z]/i.test(src[n] ?? "")) n++;
    out.push({ t: "lit" });
    return n;
  }
  if (word === "m") {
    out.push({ t: "lit" });
    let n = first.next;
    while (/[a-z]/i.test(src[n] ?? "")) n++;
    return n;
  }
  if (word === "qw") {
    out.push({ t: "op", v: "(" });
    first.body
      .split(/\s+/)
      .filter((w) => w !== "")
      .forEach((w, n) => {
        if (n > 0) out.push({ t: "op", v: "," });
        out.push({ t: "str", parts: [w] });
      });
    out.push({ t: "op", v: ")" });
    return first.next;
  }
  const interpolate = word !== "q" && first.open !== "'";
  const parts: Part[] = interpolate
    ? readInterpolated(`${first.body}\u0000`, 0, "\u0000", "perl").parts
    : [first.body.replace(/\\([\\'])/g, "$1")];
  out.push({ t: word === "qx" ? "cmd" : "str", parts });
  return first.next;
}

const RUBY_OPS = "**= <=> === ... ||= &&= :: => -> == != =~ !~ <= >= && || &. .. ** += -= *= /= << >>".split(
  " ",
);

/** Ruby source, as `ruby -e` and ruby scripts are written. */
export function lexRuby(src: string): Token[] {
  const out = new TokenSink(true);
  const here = new Heredocs();
  let i = 0;
  let lineStart = true;
  while (i < src.length) {
    const ch = src[i] as string;
    const atLineStart: boolean = lineStart;
    lineStart = false;
    if (ch === "\n") {
      out.newline();
      i = here.after(i);
      lineStart = true;
      continue;
    }
    if (/\s/.test(ch)) {
      i++;
      lineStart = atLineStart;
      continue;
    }
    if (atLineStart && src.startsWith("=begin", i)) {
      const end = /^=end\b.*$/m.exec(src.slice(i));
      i = end ? i + end.index + end[0].length : src.length;
      continue;
    }
    if (atLineStart && src.startsWith("__END__", i)) break;
    if (ch === "#") {
      while (i < src.length && src[i] !== "\n") i++;
      continue;
    }
    const last = out.last();
    const termish = expectsTerm(last) || (last?.t === "id" && src[i - 1] === " ");
    const heredoc = /^<<([~-]?)(?:(["'`])(.*?)\2|([A-Z_]\w*))/.exec(src.slice(i, i + 200));
    if (heredoc && termish) {
      const tag = (heredoc[3] ?? heredoc[4]) as string;
      const body = here.take(src, i, tag, heredoc[1] !== "");
      const quote = heredoc[2] ?? '"';
      const parts = quote === "'" ? [body] : rubyInterpolated(`${body}\u0000`, 0, "\u0000").parts;
      out.push({ t: quote === "`" ? "cmd" : "str", parts });
      i += heredoc[0].length;
      continue;
    }
    const percent = /^%([qQwWiIxrs]?)([^\w\s])/.exec(src.slice(i, i + 3));
    if (percent && termish && src[i + 1] !== "=") {
      i = rubyPercent(src, i + percent[0].length - 1, percent[1] as string, out);
      continue;
    }
    if (
      ch === ":" &&
      src[i + 1] !== ":" &&
      src[i - 1] !== ":" &&
      (isIdStart(src[i + 1]) || src[i + 1] === '"')
    ) {
      if (src[i + 1] === '"') {
        const r = rubyInterpolated(src, i + 2, '"');
        out.push({ t: "str", parts: r.parts });
        i = r.next;
      } else {
        let j = i + 1;
        while (isIdPart(src[j]) && src[j] !== "$") j++;
        if (/[?!=]/.test(src[j] ?? "") && src[j + 1] !== "=") j++;
        out.push({ t: "str", parts: [src.slice(i + 1, j)] });
        i = j;
      }
      continue;
    }
    if (
      isIdStart(ch) ||
      ch === "@" ||
      (ch === "$" && src[i + 1] !== undefined && !/\s/.test(src[i + 1] as string))
    ) {
      let j = i + 1;
      while (src[j] === "@") j++;
      if (ch === "$" && !isIdStart(src[j])) j++;
      else while (isIdPart(src[j]) && src[j] !== "$") j++;
      if (/[?!]/.test(src[j] ?? "") && src[j + 1] !== "=" && ch !== "$") j++;
      out.push({ t: "id", v: src.slice(i, j) });
      i = j;
    } else if (ch === "'") {
      const r = readQuoted(src, i, "ruby", false);
      out.push({ t: "str", parts: r.parts });
      i = r.next;
    } else if (ch === '"' || ch === "`") {
      const r = rubyInterpolated(src, i + 1, ch);
      out.push({ t: ch === "`" ? "cmd" : "str", parts: r.parts });
      i = r.next;
    } else if (ch === "/" && expectsTerm(last)) {
      out.push({ t: "lit" });
      i = skipRegex(src, i);
    } else if (ch === "?" && /^\?[A-Za-z]\b/.test(src.slice(i, i + 3)) && expectsTerm(last)) {
      out.push({ t: "str", parts: [src[i + 1] as string] });
      i += 2;
    } else if (/\d/.test(ch)) {
      out.push({ t: "lit" });
      i = readNumber(src, i);
    } else {
      const op = readOp(src, i, RUBY_OPS);
      out.push(op === ";" ? { t: "nl" } : { t: "op", v: op });
      i += op.length;
    }
  }
  return out.toks;
}

function rubyPercent(src: string, at: number, kind: string, out: TokenSink): number {
  const d = delimited(src, at);
  if (kind === "r" || kind === "s") {
    out.push({ t: kind === "s" ? "str" : "lit", parts: [d.body] } as Token);
    let n = d.next;
    while (/[a-z]/.test(src[n] ?? "")) n++;
    return n;
  }
  if (/[wWiI]/.test(kind)) {
    out.push({ t: "op", v: "[" });
    d.body
      .split(/\s+/)
      .filter((w) => w !== "")
      .forEach((w, n) => {
        if (n > 0) out.push({ t: "op", v: "," });
        out.push({ t: "str", parts: [w] });
      });
    out.push({ t: "op", v: "]" });
    return d.next;
  }
  const parts =
    kind === "q"
      ? [d.body.replace(/\\([\\'])/g, "$1")]
      : rubyInterpolated(`${d.body}\u0000`, 0, "\u0000").parts;
  out.push({ t: kind === "x" ? "cmd" : "str", parts });
  return d.next;
}

/** A double-quoted Ruby body: escapes, `#{expr}`, `#@ivar`, `#$global`. */
function rubyInterpolated(src: string, i: number, close: string): { parts: Part[]; next: number } {
  const parts: Part[] = [];
  while (i < src.length && src[i] !== close) {
    const ch = src[i] as string;
    if (ch === "\\") {
      const e = readEscape(src, i, "ruby");
      if (e.text === undefined) parts.push({ expr: "" });
      else addText(parts, e.text);
      i = e.next;
    } else if (ch === "#" && src[i + 1] === "{") {
      const end = matchBracket(src, i + 1);
      parts.push({ expr: src.slice(i + 2, end) });
      i = end + 1;
    } else if (ch === "#" && (src[i + 1] === "@" || src[i + 1] === "$") && isIdStart(src[i + 2])) {
      let j = i + 2;
      while (isIdPart(src[j]) && src[j] !== "$") j++;
      parts.push({ expr: src.slice(i + 1, j) });
      i = j;
    } else {
      addText(parts, ch);
      i++;
    }
  }
  return { parts: parts.length === 0 ? [""] : parts, next: Math.min(src.length, i + 1) };
}
