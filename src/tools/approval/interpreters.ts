/**
 * The interpreter-code analyser: reads code handed to python, perl, ruby, node, php or lua (a
 * `-c`/`-e` one-liner, a heredoc, an `execute_code` script) and reports what it would do to the
 * machine: the shell commands it runs (judged by the shell analyser through `shell`), the files it
 * deletes, writes or moves (judged by the protected-path list and the hardline rules), code it
 * downloads and runs, and code or names it builds at run time.
 *
 * How: each language has a tokenizer (every string form, comments dropped), then a forgiving
 * expression evaluator follows imports and aliases, folds literal strings, concatenation and
 * variables, and recognises calls by their canonical name (`os.system`, `child_process.execSync`).
 * Text inside a string that is only printed is never a call.
 *
 * What it cannot see, honestly: the arguments of a function defined in the script (a parameter
 * is unknown, so a dangerous call on it asks rather than passes), values computed by loops or
 * arithmetic, methods called on objects it did not build (`obj.unlink()` is missed unless `obj`
 * came from `Path(...)`), files read at run time (`exec(open(p).read())` asks), modules the
 * script imports from disk, native extensions, and aliases made through containers
 * (`fns = [os.system]; fns[0](cmd)`: a sink stored in a list and called from it is missed).
 * Wherever a command, a path or code is not readable, the finding asks for approval (fail
 * closed); nothing unreadable is reported safe.
 */

import { controlSocketFindings } from "./control-sockets.js";
import { node } from "./lang-node.js";
import { perl, ruby } from "./lang-perl-ruby.js";
import { lua, php } from "./lang-php-lua.js";
import { python } from "./lang-python.js";
import { Reporter } from "./script-effects.js";
import { Evaluator, type LangSpec } from "./script-eval.js";
import type { Token } from "./script-lexer.js";
import { Scope } from "./script-values.js";
import type { AnalysisContext, Finding, ScriptLanguage } from "./types.js";

const SPECS: Record<ScriptLanguage, LangSpec> = { python, node, perl, ruby, php, lua };

/** Code run by `exec("...")` inside code run by `exec("...")`... is followed this deep. */
const MAX_NESTING = 4;
/** Longer scripts are not analysed (they would be slow to read and hide things well). */
const MAX_SOURCE = 512 * 1024;

/**
 * Findings for `source` in `language`, without duplicates (same key and reason). Empty when the
 * code only computes, prints or reads. `shell` judges each command line the code runs; its
 * findings are included as they are. Pure apart from resolving symlinks (`ctx.realPath`).
 */
export function analyseScript(
  language: ScriptLanguage,
  source: string,
  ctx: AnalysisContext,
  shell: (command: string) => Finding[],
): Finding[] {
  return [
    ...controlSocketFindings(source, ctx),
    ...analyse(SPECS[language], source, ctx, shell, 0, undefined),
  ];
}

function analyse(
  spec: LangSpec,
  source: string,
  ctx: AnalysisContext,
  shell: (command: string) => Finding[],
  depth: number,
  outer: Scope | undefined,
): Finding[] {
  if (source.length > MAX_SOURCE) {
    return [
      { key: "opaque_code", reason: `the ${spec.lang} code is too long to analyse (${source.length} bytes)` },
    ];
  }
  const toks = spec.lex(source.normalize("NFC"));
  const scope = new Scope();
  prepass(spec, toks, scope);
  const reporter: Reporter = new Reporter(ctx, shell, (code) => {
    if (reporter.muted) {
      // First pass: names the nested code assigns may hold anything afterwards.
      for (const name of assignedNames(spec, spec.lex(code))) scope.opaque.add(name);
      return [];
    }
    if (depth + 1 >= MAX_NESTING) {
      return [
        { key: "opaque_code", reason: `${spec.lang} code nested ${MAX_NESTING} levels deep (opaque code)` },
      ];
    }
    return analyse(spec, code, ctx, shell, depth + 1, scope);
  });
  if (outer !== undefined) {
    for (const name of outer.opaque) scope.opaque.add(name);
    for (const [name, values] of outer.bindings)
      if (!scope.bindings.has(name)) scope.bindings.set(name, [...values]);
    scope.dynamic ||= outer.dynamic;
  }
  const evaluator = new Evaluator(spec, toks, scope, reporter, ctx, depth);
  evaluator.run();
  scope.final = true;
  reporter.muted = false;
  evaluator.run();
  return reporter.findings;
}

/** Names that rewrite variables by name: after them, no variable's value can be trusted. */
const DYNAMIC_SCOPE = new Set([
  "globals",
  "locals",
  "vars",
  "setattr",
  "__dict__",
  "$GLOBALS",
  "extract",
  "parse_str",
  "instance_variable_set",
  "local_variable_set",
  "binding",
  "define_method",
]);

const ASSIGN_COMPARE = new Set(["==", "===", "!=", "!==", "<=", ">=", "=>", "=~", "!~", "<=>"]);

function isAssignOp(t: Token | undefined): boolean {
  return t?.t === "op" && t.v.endsWith("=") && !ASSIGN_COMPARE.has(t.v);
}

/**
 * Marks the names bound in ways the evaluator does not follow: augmented assignment (`+=`),
 * several targets (`a, b = ...`, `my ($x) = ...`, `obj.x = ...`), function parameters, block
 * parameters; and notes dynamic scope (`globals()`, `$$name`).
 */
function prepass(spec: LangSpec, toks: readonly Token[], scope: Scope): void {
  for (const name of assignedNames(spec, toks, true)) scope.opaque.add(name);
  for (const t of toks) {
    if (t.t === "id" && DYNAMIC_SCOPE.has(t.v)) scope.dynamic = true;
  }
}

/**
 * Names a piece of code assigns. With `onlyOpaque`, only those the evaluator cannot follow (see
 * `prepass`); otherwise every assigned name (for code run by `exec`).
 */
function assignedNames(spec: LangSpec, toks: readonly Token[], onlyOpaque = false): Set<string> {
  const out = new Set<string>();
  let stmtStart = 0;
  let depth = 0;
  for (let k = 0; k < toks.length; k++) {
    const t = toks[k] as Token;
    if (
      t.t === "nl" ||
      (t.t === "op" && (t.v === "{" || t.v === "}" || (t.v === ":" && spec.lang === "python")))
    ) {
      if (depth === 0 || t.t === "op") stmtStart = k + 1;
      if (t.t === "op" && t.v === "{") depth = 0;
      continue;
    }
    if (t.t === "op" && (t.v === "(" || t.v === "[")) depth++;
    if (t.t === "op" && (t.v === ")" || t.v === "]")) depth = Math.max(0, depth - 1);
    if (t.t === "id" && isAssignOp(toks[k + 1])) {
      const op = (toks[k + 1] as { v: string }).v;
      const single =
        k === stmtStart ||
        (k === stmtStart + 1 &&
          toks[stmtStart]?.t === "id" &&
          spec.declWords.has((toks[stmtStart] as { v: string }).v));
      if (!onlyOpaque || op !== "=" || !single) out.add(t.v);
    }
    if (isAssignOp(t) && depth === 0 && (t as { v: string }).v === "=") {
      const lhs = toks.slice(stmtStart, k);
      const declared = lhs[0]?.t === "id" && spec.declWords.has(lhs[0].v) ? lhs.slice(1) : lhs;
      if (declared.length > 1) for (const x of declared) if (x.t === "id") out.add(x.v);
    }
    if (
      t.t === "id" &&
      (t.v === "def" || t.v === "function" || t.v === "sub" || t.v === "lambda" || t.v === "fn")
    ) {
      for (const name of paramNames(toks, k + 1, t.v)) out.add(name);
    }
    if (t.t === "op" && t.v === "=>" && spec.lang === "node") {
      const prev = toks[k - 1];
      if (prev?.t === "id") out.add(prev.v);
      if (prev?.t === "op" && prev.v === ")") for (const name of paramsBefore(toks, k - 1)) out.add(name);
    }
    if (
      t.t === "op" &&
      t.v === "|" &&
      spec.lang === "ruby" &&
      (toks[k - 1]?.t === "op" || toks[k - 1]?.t === "id")
    ) {
      const prev = toks[k - 1];
      if (prev && ((prev.t === "op" && prev.v === "{") || (prev.t === "id" && prev.v === "do"))) {
        for (
          let j = k + 1;
          j < toks.length && !(toks[j]?.t === "op" && (toks[j] as { v: string }).v === "|");
          j++
        ) {
          const p = toks[j];
          if (p?.t === "id") out.add(p.v);
        }
      }
    }
  }
  return out;
}

/** Identifiers of the parameter list after `def name`, `function name`, `sub`, `fn`, `lambda`. */
function paramNames(toks: readonly Token[], i: number, keyword: string): string[] {
  const isOp = (t: Token | undefined, v: string) => t?.t === "op" && t.v === v;
  let j = i;
  if (keyword !== "lambda") {
    while (toks[j]?.t === "id" || isOp(toks[j], ".") || isOp(toks[j], "*")) j++;
  }
  const names: string[] = [];
  if (isOp(toks[j], "(")) {
    let depth = 0;
    for (; j < toks.length; j++) {
      const t = toks[j] as Token;
      if (t.t === "op" && t.v === "(") depth++;
      if (t.t === "op" && t.v === ")" && --depth === 0) break;
      if (t.t === "id") names.push(t.v);
    }
    return names;
  }
  // `lambda a, b:` and Ruby's `def name a, b`.
  for (; j < toks.length; j++) {
    const t = toks[j] as Token;
    if (t.t === "nl" || (t.t === "op" && t.v !== "," && t.v !== "*" && t.v !== "=")) break;
    if (t.t === "id") names.push(t.v);
  }
  return names;
}

function paramsBefore(toks: readonly Token[], close: number): string[] {
  const names: string[] = [];
  let depth = 0;
  for (let j = close; j >= 0; j--) {
    const t = toks[j] as Token;
    if (t.t === "op" && t.v === ")") depth++;
    if (t.t === "op" && t.v === "(" && --depth === 0) break;
    if (t.t === "id") names.push(t.v);
  }
  return names;
}
