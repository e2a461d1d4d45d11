/**
 * The interpreter-code analyser's engine: a forgiving expression parser over one language's tokens
 * that evaluates what it can (literal strings, concatenation, variables, modules and their members)
 * and hands every call to the language's sink table, which reports what the call does.
 *
 * It reads whole scripts without understanding every statement: a token it cannot place is
 * skipped and parsing resumes at the next one, so each call in the source is still seen once.
 *
 * Variables are flow-insensitive: a name means any value ever assigned to it anywhere in the
 * script. The script is evaluated twice; the first pass collects assignments, the second
 * reports. A name also bound in ways the engine does not evaluate (function parameters, tuple
 * targets, `+=`, `globals()`, `$$name`, names assigned inside exec'd strings) may be anything.
 */

import type { Reporter } from "./script-effects.js";
import type { Part, Token } from "./script-lexer.js";
import type { LanguageSpec } from "./script-spec.js";
import {
  type Args,
  alts,
  concat,
  elements,
  FETCHED,
  isTainted,
  isTaintedAny,
  mapVal,
  options,
  pathJoin,
  percentFormat,
  ref,
  type Scope,
  str,
  UNKNOWN,
  type Val,
} from "./script-values.js";
import type { AnalysisContext } from "./types.js";

/** One language's description, with the engine that evaluates it. */
export type LangSpec = LanguageSpec<Evaluator>;

const ENV_CONTAINERS = ["os.environ", "posix.environ", "process.env", "ENV"];
const COMPARISON = new Set(["==", "===", "!=", "!==", "<=", ">=", "=>", "=~", "!~", "<=>"]);
const CLOSERS = new Set([")", "]", "}", ",", ":", "=", ";"]);
const BINARY_WORDS = new Set(["and", "or", "in", "is", "not", "instanceof"]);

export class Evaluator {
  /** Depth of nested code (`exec` of a literal); deeper than the limit fails closed. */
  readonly depth: number;

  constructor(
    readonly spec: LangSpec,
    readonly toks: Token[],
    readonly scope: Scope,
    readonly rep: Reporter,
    readonly ctx: AnalysisContext,
    depth = 0,
  ) {
    this.depth = depth;
  }

  tok(i: number): Token | undefined {
    return this.toks[i];
  }

  isOp(i: number, v: string): boolean {
    const t = this.toks[i];
    return t?.t === "op" && t.v === v;
  }

  isId(i: number, v?: string): boolean {
    const t = this.toks[i];
    return t?.t === "id" && (v === undefined || t.v === v);
  }

  idAt(i: number): string | undefined {
    const t = this.toks[i];
    return t?.t === "id" ? t.v : undefined;
  }

  /** Runs every statement; returns the value of the last expression (for interpolations). */
  run(): Val {
    let last: Val = UNKNOWN;
    let i = 0;
    while (i < this.toks.length) {
      const r = this.step(i);
      last = r[0];
      i = Math.max(r[1], i + 1);
    }
    return last;
  }

  bind(name: string, v: Val): void {
    if (this.scope.final) return;
    const list = this.scope.bindings.get(name) ?? [];
    list.push(v);
    this.scope.bindings.set(name, list);
  }

  lookup(name: string): Val {
    const bound = this.scope.bindings.get(name);
    const shaky =
      this.scope.opaque.has(name) ||
      (this.scope.dynamic && (bound !== undefined || this.spec.isVariable(name)));
    if (bound === undefined) return shaky ? alts([this.spec.global(name), UNKNOWN]) : this.spec.global(name);
    return shaky ? alts([...bound, UNKNOWN]) : alts(bound);
  }

  /** One statement: a language form, a `for` loop head, an assignment, or an expression. */
  step(i: number): [Val, number] {
    const t = this.toks[i];
    if (t === undefined) return [UNKNOWN, i + 1];
    if (t.t === "nl" || (t.t === "op" && CLOSERS.has(t.v))) return [UNKNOWN, i + 1];
    const special = this.spec.statement?.(this, i);
    if (special !== undefined) return [UNKNOWN, special];
    if (t.t === "id" && (t.v === "for" || t.v === "foreach")) return [UNKNOWN, this.forHead(i)];
    let k = i;
    if (t.t === "id" && this.spec.declWords.has(t.v)) k++;
    const name = this.idAt(k);
    if (name !== undefined && this.isOp(k + 1, "=") && !this.isOp(i - 1, ",") && !this.isOp(i - 1, ".")) {
      const [v, next] = this.parseExpr(k + 2);
      this.bind(name, v);
      return [v, next];
    }
    const [v, next] = this.parseExpr(i);
    if (this.isId(next, "as") && this.idAt(next + 1) !== undefined) {
      this.bind(this.idAt(next + 1) as string, this.spec.lang === "php" ? elements(v) : v);
      return [v, next + 2];
    }
    return [v, next];
  }

  /** `for x in xs`, `for (const x of xs)`, `for my $x (@xs)`: a single name takes each element. */
  private forHead(i: number): number {
    let j = i + 1;
    const names: string[] = [];
    while (j < this.toks.length) {
      const t = this.toks[j] as Token;
      if (t.t === "id" && (t.v === "in" || t.v === "of")) {
        j++;
        break;
      }
      if (t.t === "op" && (t.v === "=" || (t.v === "(" && names.length > 0))) break;
      if (t.t === "nl" || (t.t === "op" && t.v === ":")) return j;
      if (t.t === "id" && !this.spec.declWords.has(t.v)) names.push(t.v);
      j++;
    }
    if (this.isOp(j, "=")) {
      for (const n of names) this.bind(n, UNKNOWN);
      return j + 1;
    }
    const [v, next] = this.parseExpr(j);
    const each = names.length === 1 ? elements(v) : UNKNOWN;
    for (const n of names) this.bind(n, each);
    return next;
  }

  /** A full expression from `i`; stops before a token it cannot continue with. */
  parseExpr(i: number): [Val, number] {
    let [left, j] = this.parseUnary(i);
    for (;;) {
      let t = this.toks[j];
      if (t?.t === "nl" && this.continues(j)) {
        j++;
        t = this.toks[j];
      }
      if (t === undefined || t.t === "nl") break;
      if (t.t === "id") {
        if (this.spec.lang === "python" && t.v === "if") {
          const [, afterCond] = this.parseExpr(j + 1);
          if (!this.isId(afterCond, "else")) return [UNKNOWN, afterCond];
          const [other, end] = this.parseExpr(afterCond + 1);
          left = alts([left, other]);
          j = end;
          continue;
        }
        const binary = BINARY_WORDS.has(t.v) && !this.spec.stopWords.has(t.v);
        if (!binary) break;
        const [right, end] = this.parseUnary(
          j + 1 + (this.isId(j + 1, "in") || this.isId(j + 1, "not") ? 1 : 0),
        );
        left = t.v === "and" || t.v === "or" ? alts([left, right]) : UNKNOWN;
        j = end;
        continue;
      }
      if (t.t !== "op") break;
      const op = t.v;
      if (op === "?" && this.spec.lang !== "python") {
        const [yes, mid] = this.parseExpr(j + 1);
        if (!this.isOp(mid, ":")) return [UNKNOWN, mid];
        const [no, end] = this.parseExpr(mid + 1);
        left = alts([yes, no]);
        j = end;
        continue;
      }
      if (CLOSERS.has(op) && op !== "=") break;
      if (op === "=" || (op.endsWith("=") && !COMPARISON.has(op) && op.length > 1)) {
        // An assignment inside an expression: evaluate the right side for what it calls.
        const [right, end] = this.parseExpr(j + 1);
        left = op === "=" ? right : UNKNOWN;
        j = end;
        continue;
      }
      if (op === "=>" && this.spec.lang === "node") {
        const [, end] = this.parseExpr(j + 1);
        return [UNKNOWN, end];
      }
      if (op === "=>" || op === "(" || op === "[" || op === "{" || op === "..." || op === "$" || op === "@")
        break;
      const [right, end] = this.parseUnary(j + 1);
      left = this.binary(op, left, right);
      j = end;
    }
    return [left, j];
  }

  /** A newline at `j` continues the expression when the next line starts with an operator. */
  private continues(j: number): boolean {
    const next = this.toks[j + 1];
    if (next?.t !== "op") return false;
    return (
      this.spec.memberOps.has(next.v) ||
      this.spec.concatOps.has(next.v) ||
      ["||", "&&", "??", "?", ":"].includes(next.v)
    );
  }

  private binary(op: string, left: Val, right: Val): Val {
    if (this.spec.concatOps.has(op)) return concat(left, right);
    if (op === "||" || op === "&&" || op === "??" || op === "//") {
      if (op === "//" && this.spec.lang === "python") return pathJoin(left, right);
      return alts([left, right]);
    }
    if (op === "/" && this.spec.lang === "python") return pathJoin(left, right);
    if (op === "%" && (this.spec.lang === "python" || this.spec.lang === "ruby"))
      return percentFormat(left, right);
    return isTaintedAny(left, right) ? FETCHED : UNKNOWN;
  }

  parseUnary(i: number): [Val, number] {
    const t = this.toks[i];
    if (t?.t === "nl" && this.spec.lang !== "python") return this.parseUnary(i + 1);
    if (t?.t === "op" && ["-", "+", "!", "~", "*", "**", "...", "&", "\\", "@", "not"].includes(t.v)) {
      const [v, next] = this.parseUnary(i + 1);
      // `@f()` silences errors in PHP; `&:sym` and `\@list` pass the value on.
      return [t.v === "@" || t.v === "\\" || t.v === "&" ? v : UNKNOWN, next];
    }
    if (t?.t === "id" && this.spec.declWords.has(t.v)) return this.parseUnary(i + 1);
    if (
      t?.t === "id" &&
      ["await", "yield", "typeof", "void", "delete", "not", "defined", "scalar"].includes(t.v)
    ) {
      const [v, next] = this.parseUnary(i + 1);
      return [t.v === "await" || t.v === "scalar" ? v : UNKNOWN, next];
    }
    const [v, j] = this.parsePrimary(i);
    return this.parsePostfix(v, j);
  }

  parsePrimary(i: number): [Val, number] {
    const t = this.toks[i];
    if (t === undefined) return [UNKNOWN, i];
    switch (t.t) {
      case "str": {
        // Adjacent literals are one string in Python and Ruby: `'rm ' '-rf x'`.
        let v = this.evalParts(t.parts);
        let j = i + 1;
        while ((this.spec.lang === "python" || this.spec.lang === "ruby") && this.toks[j]?.t === "str") {
          v = concat(v, this.evalParts((this.toks[j] as { parts: Part[] }).parts));
          j++;
        }
        return [v, j];
      }
      case "cmd": {
        const cmd = this.evalParts(t.parts);
        this.rep.shell(cmd, "a backtick command");
        return [UNKNOWN, i + 1];
      }
      case "lit":
        return [{ k: "num" }, i + 1];
      case "nl":
        return [UNKNOWN, i];
      case "id":
        return this.primaryId(t.v, i);
      case "op":
        if (t.v === "(") return this.parseParens(i);
        if (t.v === "[") return this.parseList(i, "]");
        if (t.v === "{") return this.parseObject(i) ?? [UNKNOWN, i + 1];
        if (t.v === "$") {
          // `${"name"}`, `$$name`: a variable chosen by name at run time.
          this.scope.dynamic = true;
          return [UNKNOWN, i + 1];
        }
        return [UNKNOWN, i];
    }
  }

  private primaryId(name: string, i: number): [Val, number] {
    if (name === "True" || name === "true") return [{ k: "bool", b: true }, i + 1];
    if (name === "False" || name === "false") return [{ k: "bool", b: false }, i + 1];
    if (["None", "null", "nil", "undefined", "NULL", "undef"].includes(name)) return [UNKNOWN, i + 1];
    if (name === "new" && this.spec.lang === "node") {
      let [callee, j] = this.parsePrimary(i + 1);
      while (this.tok(j)?.t === "op" && this.spec.memberOps.has((this.tok(j) as { v: string }).v)) {
        const member = this.idAt(j + 1);
        if (member === undefined) break;
        callee = this.member(callee, member);
        j += 2;
      }
      if (!this.isOp(j, "(")) return [this.call(callee, { pos: [], kw: new Map() }), j];
      const [args, next] = this.parseArgs(j + 1, ")");
      return [this.call(callee, args), next];
    }
    if (this.spec.stopWords.has(name)) return [UNKNOWN, i];
    return [this.lookup(name), i + 1];
  }

  parsePostfix(v: Val, i: number): [Val, number] {
    let j = i;
    let cur = v;
    for (;;) {
      const t = this.toks[j];
      if (
        t?.t === "nl" &&
        this.continues(j) &&
        this.spec.memberOps.has((this.toks[j + 1] as { v: string }).v)
      ) {
        j++;
        continue;
      }
      if (t?.t === "op" && this.spec.memberOps.has(t.v)) {
        const next = this.toks[j + 1];
        if (next?.t === "id") {
          cur = this.member(cur, next.v);
          j += 2;
          // Perl's `Class->new` and `$obj->method` are calls even without parentheses.
          if (this.spec.lang === "perl" && t.v === "->" && !this.isOp(j, "(")) {
            cur = this.call(cur, { pos: [], kw: new Map() });
          }
          continue;
        }
        if (next?.t === "op" && (next.v === "(" || next.v === "[" || next.v === "{")) {
          j++;
          continue;
        }
        return [cur, j];
      }
      if (t?.t === "op" && t.v === "(") {
        const [args, next] = this.parseArgs(j + 1, ")");
        cur = this.call(cur, args);
        j = next;
        continue;
      }
      if (t?.t === "op" && (t.v === "[" || (t.v === "{" && this.hashSubscript(j)))) {
        const [key, next] = this.parseSubscript(j + 1, t.v === "[" ? "]" : "}");
        cur = this.subscript(cur, key);
        j = next;
        continue;
      }
      if (this.spec.lang === "lua" && t?.t === "str") {
        cur = this.call(cur, { pos: [this.evalParts(t.parts)], kw: new Map() });
        j++;
        continue;
      }
      if (this.spec.parenless && (cur.k === "ref" || cur.k === "method") && this.startsArgument(j)) {
        const [args, next] = this.parseArgs(j, undefined);
        return [this.call(cur, args), next];
      }
      return [cur, j];
    }
  }

  /** Perl's `$h{key}` / `$x->{key}` (a hash element), not a block. */
  private hashSubscript(j: number): boolean {
    if (this.spec.lang !== "perl") return false;
    const prev = this.toks[j - 1];
    return (
      (prev?.t === "id" && /^[$]/.test(prev.v)) || (prev?.t === "op" && ["->", "}", "]"].includes(prev.v))
    );
  }

  private parseSubscript(i: number, close: string): [Val, number] {
    // Perl's `{HOME}` is the string HOME.
    if (close === "}" && this.tok(i)?.t === "id" && this.isOp(i + 1, "}")) {
      return [str(this.idAt(i) as string), i + 2];
    }
    const [key, j] = this.parseExpr(i);
    if (this.isOp(j, close)) return [key, j + 1];
    return [UNKNOWN, this.skipTo(j, close)];
  }

  /** Whether the token at `j` can start a parenthesis-less argument list (`system "ls"`). */
  private startsArgument(j: number): boolean {
    const t = this.toks[j];
    if (t === undefined || t.t === "nl" || t.t === "lit") return t?.t === "lit";
    if (t.t === "str" || t.t === "cmd") return true;
    if (t.t === "id") return !this.spec.stopWords.has(t.v) && !BINARY_WORDS.has(t.v);
    return (
      t.v === "[" || (t.v === "$" && this.spec.lang === "perl") || (t.v === "\\" && this.spec.lang === "perl")
    );
  }

  /**
   * Arguments up to `close` (`)`), or to the end of the statement when `close` is undefined.
   * Keyword arguments: `name=v` (Python), `name: v` (Ruby, PHP), `key => v` (Ruby, Perl, PHP).
   */
  parseArgs(i: number, close: string | undefined): [Args, number] {
    const args: Args = { pos: [], kw: new Map() };
    let j = i;
    for (;;) {
      while (close !== undefined && this.toks[j]?.t === "nl") j++;
      const t = this.toks[j];
      if (t === undefined) return [args, j];
      if (close !== undefined && t.t === "op" && t.v === close) return [args, j + 1];
      if (close === undefined && (t.t === "nl" || (t.t === "op" && [")", "]", "}"].includes(t.v))))
        return [args, j];
      if (t.t === "op" && t.v === "**") {
        const [, next] = this.parseExpr(j + 1);
        args.kw.set("**", UNKNOWN);
        j = next;
      } else if (
        t.t === "id" &&
        (this.isOp(j + 1, "=") || (this.isOp(j + 1, ":") && this.spec.lang !== "python"))
      ) {
        const [v, next] = this.parseExpr(j + 2);
        args.kw.set(t.v, v);
        j = next;
      } else {
        const [v, next] = this.parseExpr(j);
        j = next;
        if (this.isOp(j, "=>")) {
          const [value, after] = this.parseExpr(j + 1);
          if (v.k === "str" && this.spec.lang !== "perl") args.kw.set(v.s, value);
          else args.pos.push(v, value);
          j = after;
        } else if (t.t === "op" && (t.v === "*" || t.v === "..."))
          args.pos.push({ k: "list", items: [UNKNOWN] });
        else args.pos.push(v);
      }
      const after = this.toks[j];
      if (after?.t === "op" && after.v === ",") {
        j++;
        continue;
      }
      if (close === undefined) return [args, j];
      if (after?.t === "op" && after.v === close) continue;
      // Something this parser does not follow (a comprehension, a lambda): the call's
      // arguments are unreadable, but what is inside is still analysed.
      args.pos.push(UNKNOWN);
      j = this.skipTo(j, close);
      if (this.isOp(j, close)) return [args, j + 1];
      return [args, j];
    }
  }

  /** Analyses statements until `close` at this level (not consumed) or a stray closer. */
  skipTo(i: number, close: string): number {
    let j = i;
    let braces = 0;
    while (j < this.toks.length) {
      const t = this.toks[j] as Token;
      if (t.t === "op" && t.v === close && braces === 0) return j;
      if (t.t === "op" && t.v === "}" && braces > 0) {
        braces--;
        j++;
        continue;
      }
      if (t.t === "op" && (t.v === ")" || t.v === "]" || t.v === "}")) return j;
      if (t.t === "op" && t.v === "{" && this.parseObject(j) === undefined) {
        braces++;
        j++;
        continue;
      }
      if (t.t === "nl" || (t.t === "op" && (t.v === "," || t.v === ":" || t.v === "=>" || t.v === "="))) {
        j++;
        continue;
      }
      const [, next] = this.step(j);
      j = Math.max(next, j + 1);
    }
    return j;
  }

  private parseParens(i: number): [Val, number] {
    const [list, next] = this.parseList(i, ")");
    if (list.k !== "list") return [list, next];
    if (list.items.length === 1 && !this.isOp(next - 2, ",")) return [list.items[0] as Val, next];
    if (list.items.length === 0) return [UNKNOWN, next];
    return [this.spec.commaList === "last" ? (list.items.at(-1) as Val) : list, next];
  }

  /** `[a, b]` or `(a, b)`; a comprehension or anything unfollowed makes the list unknown. */
  private parseList(i: number, close: string): [Val, number] {
    const items: Val[] = [];
    let j = i + 1;
    for (;;) {
      while (this.toks[j]?.t === "nl") j++;
      if (this.toks[j] === undefined) return [UNKNOWN, j];
      if (this.isOp(j, close)) return [{ k: "list", items }, j + 1];
      const spread = this.isOp(j, "*") || this.isOp(j, "...");
      const [v, next] = this.parseExpr(j);
      items.push(spread ? UNKNOWN : v);
      j = next;
      while (this.toks[j]?.t === "nl") j++;
      if (this.isOp(j, ",") || this.isOp(j, "=>")) {
        j++;
        continue;
      }
      if (this.isOp(j, close)) continue;
      j = this.skipTo(j, close);
      return [UNKNOWN, this.isOp(j, close) ? j + 1 : j];
    }
  }

  /**
   * `{key: v}`, `{"k" => v}`, `{k = v}`, `{a, b}`; undefined when `{` opens a block, so the caller
   * reads the block's statements instead.
   */
  parseObject(i: number): [Val, number] | undefined {
    const fields = new Map<string, Val>();
    const items: Val[] = [];
    let j = i + 1;
    for (;;) {
      while (this.toks[j]?.t === "nl") j++;
      const t = this.toks[j];
      if (t === undefined) return undefined;
      if (t.t === "op" && t.v === "}") {
        return [fields.size > 0 || items.length === 0 ? { k: "obj", fields } : { k: "list", items }, j + 1];
      }
      let key: string | undefined;
      if (t.t === "id" || t.t === "str") {
        key = t.t === "id" ? t.v : t.parts.every((p) => typeof p === "string") ? t.parts.join("") : undefined;
      }
      const sep = this.toks[j + 1];
      if (key !== undefined && sep?.t === "op" && [":", "=>", "="].includes(sep.v)) {
        if (sep.v === "=" && this.spec.lang !== "lua") return undefined;
        const [v, next] = this.parseExpr(j + 2);
        fields.set(key, v);
        j = next;
      } else if (t.t === "op" && (t.v === "..." || t.v === "[" || t.v === "**")) {
        const [, next] = this.parseExpr(t.v === "[" ? j : j + 1);
        j = next;
        if (t.v === "[" && (this.isOp(j, ":") || this.isOp(j, "="))) j = this.parseExpr(j + 1)[1];
      } else if (
        t.t === "id" &&
        this.spec.lang === "node" &&
        (this.isOp(j + 1, ",") || this.isOp(j + 1, "}"))
      ) {
        fields.set(t.v, this.lookup(t.v));
        j++;
      } else {
        if (t.t === "op" && t.v !== "(" && t.v !== "[" && t.v !== "-") return undefined;
        if (t.t === "id" && this.spec.stopWords.has(t.v)) return undefined;
        const [v, next] = this.parseExpr(j);
        if (next === j) return undefined;
        j = next;
        if (this.isOp(j, ":") || this.isOp(j, "=>")) {
          const [value, after] = this.parseExpr(j + 1);
          if (v.k === "str") fields.set(v.s, value);
          j = after;
        } else items.push(v);
      }
      while (this.toks[j]?.t === "nl") j++;
      if (this.isOp(j, ",") || this.isOp(j, ";")) {
        j++;
        continue;
      }
      if (!this.isOp(j, "}")) return undefined;
    }
  }

  /** A string with interpolations; each interpolated expression is analysed too. */
  evalParts(parts: readonly (string | { expr: string })[]): Val {
    let out: Val = str("");
    let built = false;
    for (const p of parts) {
      if (typeof p === "string") out = concat(out, str(p));
      else {
        built = true;
        out = concat(out, p.expr.trim() === "" ? UNKNOWN : this.evalSource(p.expr));
      }
    }
    if (!built) return mapVal(out, (o) => (o.k === "str" ? str(o.s) : o));
    return out;
  }

  /** Evaluates a fragment of source in this scope (an interpolation, a field). */
  evalSource(src: string): Val {
    return new Evaluator(this.spec, this.spec.lex(src), this.scope, this.rep, this.ctx, this.depth).run();
  }

  member(v: Val, name: string): Val {
    return mapVal(v, (o) => {
      if (o.k === "ref") {
        const full = `${o.name}.${name}`;
        const env = /^[A-Z_][A-Z0-9_]*$/.test(name)
          ? ENV_CONTAINERS.find((c) => full === `${c}.${name}`)
          : undefined;
        if (env !== undefined) return this.envValue(name);
        if (o.name === "sys.modules") return ref(name, o.built === true);
        return this.spec.property?.(full, this) ?? ref(full.replace(/\.__dict__$/, ""), o.built === true);
      }
      if (o.k === "fetched") return FETCHED;
      if (o.k === "obj") return o.fields.get(name) ?? UNKNOWN;
      if (o.k === "unknown" || o.k === "num" || o.k === "bool") return UNKNOWN;
      return { k: "method", recv: o, name };
    });
  }

  subscript(v: Val, key: Val): Val {
    return mapVal(v, (o) => {
      if (o.k === "fetched") return FETCHED;
      if (o.k === "obj" && key.k === "str") return o.fields.get(key.s) ?? UNKNOWN;
      if (o.k !== "ref") return UNKNOWN;
      if (key.k === "str") {
        if (key.built) this.rep.dynamicName(`${o.name}[...]`, key.s);
        return this.member(o.built || !key.built ? o : ref(o.name, true), key.s);
      }
      if (this.isDangerous(o.name)) this.rep.opaqueMember(o.name);
      return UNKNOWN;
    });
  }

  isDangerous(name: string): boolean {
    return this.spec.dangerous.has(name) || this.spec.dangerous.has(name.split(".")[0] as string);
  }

  /** `$HOME`, `$HERMES_HOME`, `$PWD` as the analysis context gives them. */
  envValue(name: string): Val {
    if (name === "HOME" || name === "USERPROFILE") return str(this.ctx.home);
    if (name === "HERMES_HOME") return str(this.ctx.hermesHome);
    if (name === "PWD") return str(this.ctx.cwd);
    return UNKNOWN;
  }

  call(callee: Val, args: Args): Val {
    // A sink handed over as a value (`map(os.system, cmds)`, `.then(eval)`) runs unreadable input.
    for (const a of [...args.pos, ...args.kw.values()]) {
      for (const o of options(a)) {
        if (o.k === "ref" && callee.k !== "unknown") {
          this.spec.call(
            o.name,
            { pos: [isTaintedAny(callee, callee) ? FETCHED : UNKNOWN], kw: new Map() },
            this,
          );
        }
      }
    }
    return mapVal(callee, (c) => {
      if (c.k === "ref") {
        const name = c.name.replace(
          /^(builtins|__builtins__|globalThis|global|window|CORE|CORE\.GLOBAL|Kernel|_G)\./,
          "",
        );
        const out = this.spec.call(name, args, this);
        if (out !== undefined) return out;
        // An unknown function applied to network content may hand it back (`str(body)`, `trim($x)`).
        return [...args.pos, ...args.kw.values()].some(isTainted) ? FETCHED : UNKNOWN;
      }
      if (c.k === "method") {
        const out = this.spec.method(c.recv, c.name, args, this);
        if (out !== undefined) return out;
        return c.recv.k === "fetched" || isTaintedAny(c.recv, c.recv) ? FETCHED : UNKNOWN;
      }
      if (c.k === "fetched") return FETCHED;
      // Ruby and Perl call zero-argument methods without parentheses: `Dir.home()` is `Dir.home`.
      if ((c.k === "str" || c.k === "path") && (this.spec.lang === "ruby" || this.spec.lang === "perl"))
        return c;
      if (c.k === "str" && this.spec.lang === "php") {
        if (c.built) this.rep.dynamicName("a variable function", c.s);
        return this.call(ref(c.s.toLowerCase()), args);
      }
      return UNKNOWN;
    });
  }
}
