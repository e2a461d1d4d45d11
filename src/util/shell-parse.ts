/**
 * A small, forgiving parser for bash command lines, made for inspecting commands (not running
 * them): it splits a script into pipelines of simple commands, resolves quoting and escapes in
 * words, and hands back the text of command/process substitutions and heredoc bodies so callers
 * can inspect those too. Grouping (`( )`, `{ }`) and keywords (`if`, `then`, ...) are treated as
 * separators. It never throws: unbalanced quotes or parentheses run to the end of the input.
 */

export interface ShellWord {
  /** The word with quotes removed and escapes resolved; substitutions are kept as written. */
  text: string;
  /** True when any part of the word was quoted. */
  quoted: boolean;
  /** Scripts inside `$(...)`, backticks, `<(...)` and `>(...)` in this word. */
  subs: string[];
}

export interface ShellRedirect {
  /** The operator without its fd prefix: `>`, `>>`, `>|`, `&>`, `&>>`, `<`, `<<`, `<<<`, `<>`, `>&`, `<&`. */
  op: string;
  fd?: string;
  target: ShellWord;
  /** Body of a heredoc (`<<`, `<<-`). */
  heredoc?: string;
}

export interface SimpleCommand {
  words: ShellWord[];
  redirects: ShellRedirect[];
}

/** Commands joined by `|` or `|&`; a single command is a pipeline of one. */
export type Pipeline = SimpleCommand[];

const KEYWORDS = new Set("if then else elif fi do done while until case esac ! { } time".split(" "));

const REDIRECT_OPS = ["&>>", "<<<", "<<-", "&>", ">>", ">|", "<<", "<>", ">&", "<&", ">", "<"];

interface PendingHeredoc {
  redirect: ShellRedirect;
  delimiter: string;
  stripTabs: boolean;
}

/** Splits `source` into pipelines. Never throws. */
export function parseShell(source: string): Pipeline[] {
  return new Parser(source).parse();
}

class Parser {
  private i = 0;
  private readonly pipelines: Pipeline[] = [];
  private pipeline: Pipeline = [];
  private cmd: SimpleCommand = { words: [], redirects: [] };
  private heredocs: PendingHeredoc[] = [];

  constructor(private readonly s: string) {}

  parse(): Pipeline[] {
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (c === " " || c === "\t" || c === "\r") {
        this.i++;
      } else if (c === "\\" && s[this.i + 1] === "\n") {
        this.i += 2;
      } else if (c === "\n") {
        this.i++;
        this.readHeredocBodies();
        this.endPipeline();
      } else if (c === "#" && this.atWordStart()) {
        while (this.i < s.length && s[this.i] !== "\n") this.i++;
      } else if (s.startsWith("||", this.i) || s.startsWith("&&", this.i) || s.startsWith(";;", this.i)) {
        this.i += 2;
        this.endPipeline();
      } else if (s.startsWith("|&", this.i) || (c === "|" && s[this.i + 1] !== "|")) {
        this.i += c === "|" && s[this.i + 1] === "&" ? 2 : 1;
        this.endCommand();
      } else if (c === ";" || c === "(" || c === ")" || (c === "&" && s[this.i + 1] !== ">")) {
        this.i++;
        this.endPipeline();
      } else if (this.tryRedirect()) {
        // consumed
      } else {
        const before = this.i;
        const word = this.readWord();
        if (this.i === before) this.i++; // defensive: never loop on an unexpected character
        if (this.cmd.words.length === 0 && !word.quoted && KEYWORDS.has(word.text)) continue;
        this.cmd.words.push(word);
      }
    }
    this.endPipeline();
    return this.pipelines;
  }

  private atWordStart(): boolean {
    const prev = this.s[this.i - 1];
    return prev === undefined || /[\s;&|()]/.test(prev);
  }

  private endCommand(): void {
    if (this.cmd.words.length > 0 || this.cmd.redirects.length > 0) this.pipeline.push(this.cmd);
    this.cmd = { words: [], redirects: [] };
  }

  private endPipeline(): void {
    this.endCommand();
    if (this.pipeline.length > 0) this.pipelines.push(this.pipeline);
    this.pipeline = [];
  }

  private tryRedirect(): boolean {
    const s = this.s;
    let j = this.i;
    while (j < s.length && /[0-9]/.test(s[j] as string)) j++;
    const fd = j > this.i ? s.slice(this.i, j) : undefined;
    // `<(` and `>(` are process substitutions, which are words.
    if ((s[j] === "<" || s[j] === ">") && s[j + 1] === "(") return false;
    const op = REDIRECT_OPS.find((o) => s.startsWith(o, j));
    if (!op || (fd !== undefined && !this.atWordStart())) return false;
    this.i = j + op.length;
    while (s[this.i] === " " || s[this.i] === "\t") this.i++;
    const target = this.readWord();
    const redirect: ShellRedirect = { op: op === "<<-" ? "<<" : op, target };
    if (fd !== undefined) redirect.fd = fd;
    this.cmd.redirects.push(redirect);
    if (op === "<<" || op === "<<-") {
      this.heredocs.push({ redirect, delimiter: target.text, stripTabs: op === "<<-" });
    }
    return true;
  }

  private readHeredocBodies(): void {
    for (const h of this.heredocs) {
      const lines: string[] = [];
      while (this.i < this.s.length) {
        let end = this.s.indexOf("\n", this.i);
        if (end < 0) end = this.s.length;
        let line = this.s.slice(this.i, end);
        this.i = end + 1;
        if (h.stripTabs) line = line.replace(/^\t+/, "");
        if (line === h.delimiter) break;
        lines.push(line);
      }
      h.redirect.heredoc = lines.join("\n");
    }
    this.heredocs = [];
  }

  /** Reads one word starting at `this.i`; stops at whitespace or an unquoted operator. */
  private readWord(): ShellWord {
    const s = this.s;
    const word: ShellWord = { text: "", quoted: false, subs: [] };
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (/[\s;&|()]/.test(c)) break;
      if ((c === "<" || c === ">") && s[this.i + 1] === "(") {
        const inner = this.readBalanced(this.i + 2);
        word.subs.push(inner.body);
        word.text += s.slice(this.i, inner.end);
        this.i = inner.end;
      } else if (c === "<" || c === ">") {
        break;
      } else if (c === "\\") {
        if (s[this.i + 1] !== "\n") word.text += s[this.i + 1] ?? "";
        this.i += 2;
      } else if (c === "'") {
        const end = s.indexOf("'", this.i + 1);
        const stop = end < 0 ? s.length : end;
        word.text += s.slice(this.i + 1, stop);
        word.quoted = true;
        this.i = stop + 1;
      } else if (c === "$" && s[this.i + 1] === "'") {
        this.readAnsiC(word);
      } else if (c === '"') {
        this.readDoubleQuoted(word);
      } else if (c === "$" || c === "`") {
        this.readDollarOrBacktick(word);
      } else {
        word.text += c;
        this.i++;
      }
    }
    return word;
  }

  private readAnsiC(word: ShellWord): void {
    const s = this.s;
    word.quoted = true;
    this.i += 2;
    while (this.i < s.length && s[this.i] !== "'") {
      if (s[this.i] === "\\" && this.i + 1 < s.length) {
        const n = s[this.i + 1] as string;
        word.text += n === "n" ? "\n" : n === "t" ? "\t" : n;
        this.i += 2;
      } else {
        word.text += s[this.i];
        this.i++;
      }
    }
    this.i++;
  }

  private readDoubleQuoted(word: ShellWord): void {
    const s = this.s;
    word.quoted = true;
    this.i++;
    while (this.i < s.length && s[this.i] !== '"') {
      const c = s[this.i] as string;
      if (c === "\\" && /["\\$`\n]/.test(s[this.i + 1] ?? "")) {
        if (s[this.i + 1] !== "\n") word.text += s[this.i + 1];
        this.i += 2;
      } else if (c === "$" || c === "`") {
        this.readDollarOrBacktick(word);
      } else {
        word.text += c;
        this.i++;
      }
    }
    this.i++;
  }

  private readDollarOrBacktick(word: ShellWord): void {
    const s = this.s;
    const start = this.i;
    if (s[this.i] === "`") {
      let j = this.i + 1;
      while (j < s.length && s[j] !== "`") j += s[j] === "\\" ? 2 : 1;
      word.subs.push(s.slice(this.i + 1, Math.min(j, s.length)));
      this.i = Math.min(j + 1, s.length);
    } else if (s.startsWith("$((", this.i)) {
      this.i = this.readBalanced(this.i + 2).end;
    } else if (s[this.i + 1] === "(") {
      const inner = this.readBalanced(this.i + 2);
      word.subs.push(inner.body);
      this.i = inner.end;
    } else if (s[this.i + 1] === "{") {
      const close = s.indexOf("}", this.i + 2);
      this.i = close < 0 ? s.length : close + 1;
    } else {
      this.i++;
    }
    word.text += s.slice(start, this.i);
  }

  /** From just inside an opening `(`, finds the matching `)`, skipping quotes and nested parens. */
  private readBalanced(from: number): { body: string; end: number } {
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
      if (c === "(") depth++;
      if (c === ")" && --depth === 0) return { body: s.slice(from, j), end: j + 1 };
      j++;
    }
    return { body: s.slice(from), end: s.length };
  }
}
