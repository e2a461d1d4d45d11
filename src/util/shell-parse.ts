/**
 * A forgiving parser for bash command lines, made for inspecting commands (not running them). It
 * splits a script into pipelines of simple commands and keeps, for every word, the parts bash
 * expands separately (quoted and unquoted text, `$var`/`${var...}`, `$(...)`/backticks, `$((...))`,
 * `<(...)`), so a caller can expand words the way bash will. Bodies of substitutions, wherever they
 * sit (inside `${x:-...}`, `$((...))`, unquoted heredocs), are collected in `subs`.
 *
 * Grouping (`( )`, `{ }`), compound commands (`if`, `while`, `for`, `case`) and function
 * definitions are flattened into the pipeline list; each pipeline records how deep it sits and
 * which functions it belongs to. It never throws: unbalanced quotes or parentheses run to the end
 * of the input. NUL bytes are dropped, as bash drops them from its input.
 */
import { parseExpandingText, type ShellRedirect, type ShellWord, WordReader } from "./shell-words.js";

export type { ShellRedirect, ShellWord, WordPart } from "./shell-words.js";
export { parseExpandingText } from "./shell-words.js";

export interface SimpleCommand {
  words: ShellWord[];
  redirects: ShellRedirect[];
  /**
   * Set for words that are expanded but not run as a command: `for` (the variable and its list),
   * `case` (the subject and the patterns).
   */
  keyword?: "for" | "case";
}

/** Commands joined by `|` or `|&`; a single command is a pipeline of one. */
export type Pipeline = SimpleCommand[];

/** A pipeline and where it sits in the script. */
export interface PipelineInfo {
  commands: SimpleCommand[];
  /** What came before it: "" (start), ";", "\n", "&&", "||", "&" (the previous one ran in the background). */
  connector: string;
  /** Ended by `&`. */
  background: boolean;
  /** Inside a compound command, group, subshell or function body. */
  nested: boolean;
  /** Inside a loop body. */
  loop: boolean;
  /** The functions whose bodies it is in, outermost first. */
  functions: string[];
}

export interface ParsedScript {
  pipelines: PipelineInfo[];
  /** Functions defined anywhere in the script. */
  functions: string[];
}

const KEYWORDS = new Set(
  "if then else elif fi do done while until case esac ! { } time for select function in".split(" "),
);
const REDIRECT_OPS = ["&>>", "<<<", "<<-", "&>", ">>", ">|", "<<", "<>", ">&", "<&", ">", "<"];

interface PendingHeredoc {
  redirect: ShellRedirect;
  delimiter: string;
  stripTabs: boolean;
}

interface Scope {
  kind: "if" | "loop" | "case" | "group" | "subshell";
  fn?: string;
}

/** Splits `source` into pipelines (compound commands flattened). Never throws. */
export function parseShell(source: string): Pipeline[] {
  return parseScript(source)
    .pipelines.map((p) => p.commands.filter((c) => c.keyword === undefined))
    .filter((p) => p.length > 0);
}

/** Parses `source` into pipelines with their position in the script. Never throws. */
export function parseScript(source: string): ParsedScript {
  return new Parser(source.includes("\0") ? source.replaceAll("\0", "") : source).parse();
}

class Parser extends WordReader {
  private readonly pipelines: PipelineInfo[] = [];
  private readonly functions: string[] = [];
  private pipeline: SimpleCommand[] = [];
  private cmd: SimpleCommand = { words: [], redirects: [] };
  private heredocs: PendingHeredoc[] = [];
  private scopes: Scope[] = [];
  private connector = "";
  private pendingFunction: string | undefined;
  /** Inside `case ... in`, reading patterns (until `)`) rather than commands. */
  private casePattern = false;
  private afterTime = false;
  /** Collecting the header of `for`/`select`/`case` as keyword words. */
  private header: "for" | "case" | undefined;

  parse(): ParsedScript {
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (c === " " || c === "\t") {
        this.i++;
      } else if (c === "\\" && s[this.i + 1] === "\n") {
        this.i += 2;
      } else if (c === "\n") {
        this.i++;
        this.readHeredocBodies();
        if (this.header === "for") this.header = undefined;
        this.endPipeline("\n");
      } else if (c === "#" && this.atWordStart()) {
        while (this.i < s.length && s[this.i] !== "\n") this.i++;
      } else if (s.startsWith(";;", this.i) || s.startsWith(";&", this.i)) {
        this.i += s.startsWith(";;&", this.i) ? 3 : 2;
        this.endPipeline(";");
        if (this.scopes.at(-1)?.kind === "case") this.casePattern = true;
      } else if (s.startsWith("||", this.i) || s.startsWith("&&", this.i)) {
        const op = s.slice(this.i, this.i + 2);
        this.i += 2;
        this.endPipeline(op);
      } else if (s.startsWith("|&", this.i) || (c === "|" && !this.casePattern)) {
        this.i += s[this.i + 1] === "&" ? 2 : 1;
        this.endCommand();
      } else if (c === "|") {
        this.i++; // alternative in a case pattern
      } else if (c === ";" || (c === "&" && s[this.i + 1] !== ">")) {
        this.i++;
        if (this.header === "for") this.header = undefined;
        if (c === "&") this.endPipeline("&", true);
        else this.endPipeline(";");
      } else if (c === "(") {
        this.i++;
        if (!this.casePattern) this.openGroup("subshell");
      } else if (c === ")") {
        this.i++;
        if (this.casePattern) {
          this.casePattern = false;
          this.endPipeline(";");
        } else {
          this.endPipeline(";");
          this.closeScope(["subshell"]);
        }
      } else if (this.tryRedirect()) {
        // consumed
      } else {
        this.readCommandWord();
      }
    }
    this.readHeredocBodies();
    this.endPipeline(";");
    return { pipelines: this.pipelines, functions: this.functions };
  }

  private readCommandWord(): void {
    const before = this.i;
    const word = this.readWord();
    if (this.i === before) this.i++; // defensive: never loop on an unexpected character
    const plain = !word.quoted && word.parts.every((p) => p.kind === "lit");
    if (this.casePattern) {
      if (plain && word.text === "esac" && this.cmd.words.length === 0) {
        this.casePattern = false;
        this.endPipeline(";");
        this.closeScope(["case"]);
        return;
      }
      this.cmd.keyword = "case";
      this.cmd.words.push(word);
      return;
    }
    if (this.header === "case") {
      if (plain && word.text === "in") {
        this.endPipeline(";");
        this.header = undefined;
        this.casePattern = true;
        return;
      }
      this.cmd.words.push(word);
      return;
    }
    if (this.header === "for") {
      if (plain && word.text === "do") {
        this.header = undefined;
        this.endPipeline(";");
        return;
      }
      if (!(plain && word.text === "in")) this.cmd.words.push(word);
      return;
    }
    // `time -p cmd`: -p belongs to the time keyword.
    if (this.afterTime && plain && this.cmd.words.length === 0 && (word.text === "-p" || word.text === "--"))
      return;
    this.afterTime = false;
    if (this.cmd.words.length === 0 && this.cmd.redirects.length === 0 && plain && KEYWORDS.has(word.text)) {
      this.afterTime = word.text === "time";
      this.keyword(word.text);
      return;
    }
    // `name () compound`: a function definition.
    if (this.cmd.words.length === 0 && plain && /^[^=\s]+$/.test(word.text)) {
      const m = /^[ \t]*\([ \t]*\)/.exec(this.s.slice(this.i, this.i + 16));
      if (m) {
        this.i += m[0].length;
        this.defineFunction(word.text);
        return;
      }
    }
    this.cmd.words.push(word);
  }

  private keyword(k: string): void {
    switch (k) {
      case "if":
        this.endPipeline(";");
        this.scopes.push({ kind: "if" });
        return;
      case "while":
      case "until":
        this.endPipeline(";");
        this.scopes.push({ kind: "loop" });
        return;
      case "for":
      case "select":
        this.endPipeline(";");
        this.scopes.push({ kind: "loop" });
        this.header = "for";
        this.cmd.keyword = "for";
        return;
      case "case":
        this.endPipeline(";");
        this.scopes.push({ kind: "case" });
        this.header = "case";
        this.cmd.keyword = "case";
        return;
      case "fi":
        this.endPipeline(";");
        this.closeScope(["if"]);
        return;
      case "done":
        this.endPipeline(";");
        this.closeScope(["loop"]);
        return;
      case "esac":
        this.endPipeline(";");
        this.casePattern = false;
        this.closeScope(["case"]);
        return;
      case "{":
        this.openGroup("group");
        return;
      case "}":
        this.endPipeline(";");
        this.closeScope(["group"]);
        return;
      case "function": {
        while (this.s[this.i] === " " || this.s[this.i] === "\t") this.i++;
        const name = this.readWord().text;
        const m = /^[ \t]*\([ \t]*\)/.exec(this.s.slice(this.i, this.i + 16));
        if (m) this.i += m[0].length;
        if (name) this.defineFunction(name);
        return;
      }
      default:
        // then, else, elif, do, !, time, in: separators for our purposes.
        this.endPipeline(this.connector || ";");
    }
  }

  private defineFunction(name: string): void {
    this.endPipeline(";");
    this.functions.push(name);
    this.pendingFunction = name;
  }

  private openGroup(kind: "group" | "subshell"): void {
    this.endPipeline(";");
    const scope: Scope = { kind };
    if (this.pendingFunction !== undefined) scope.fn = this.pendingFunction;
    this.pendingFunction = undefined;
    this.scopes.push(scope);
  }

  private closeScope(kinds: Scope["kind"][]): void {
    for (let k = this.scopes.length - 1; k >= 0; k--) {
      if (kinds.includes((this.scopes[k] as Scope).kind)) {
        this.scopes.length = k;
        return;
      }
    }
  }

  private atWordStart(): boolean {
    const prev = this.s[this.i - 1];
    return prev === undefined || /[\s;&|()]/.test(prev);
  }

  private endCommand(): void {
    if (this.cmd.words.length > 0 || this.cmd.redirects.length > 0) this.pipeline.push(this.cmd);
    this.cmd = { words: [], redirects: [] };
    if (this.header) this.cmd.keyword = this.header;
  }

  private endPipeline(next: string, background = false): void {
    this.endCommand();
    if (this.pipeline.length > 0) {
      this.pipelines.push({
        commands: this.pipeline,
        connector: this.connector,
        background,
        nested: this.scopes.length > 0,
        loop: this.scopes.some((s) => s.kind === "loop"),
        functions: this.scopes.flatMap((s) => (s.fn === undefined ? [] : [s.fn])),
      });
      this.connector = next;
    } else if (next !== ";" || this.connector === "") {
      // Keep the stronger connector when empty pipelines (keywords, groups) sit between two commands.
      if (this.connector === "" || next === "&&" || next === "||" || next === "&") this.connector = next;
    }
    this.pipeline = [];
  }

  private tryRedirect(): boolean {
    const s = this.s;
    let j = this.i;
    while (j < s.length && /[0-9]/.test(s[j] as string)) j++;
    let fd = j > this.i ? s.slice(this.i, j) : undefined;
    if (fd === undefined && s[j] === "{") {
      // {varname}>file: bash allocates an fd and stores it in varname.
      const m = /^\{[A-Za-z_][A-Za-z0-9_]*\}(?=[<>])/.exec(s.slice(j, j + 40));
      if (m) {
        fd = m[0];
        j += m[0].length;
      }
    }
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
      redirect.heredocQuoted = target.quoted;
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
      const body = lines.join("\n");
      h.redirect.heredoc = body;
      if (!h.redirect.heredocQuoted) h.redirect.heredocWord = parseExpandingText(body);
    }
    this.heredocs = [];
  }
}
