/** The per-language contract of the interpreter-code analyser (see script-eval.ts). */
import type { Token } from "./script-lexer.js";
import type { Args, Val } from "./script-values.js";
import type { ScriptLanguage } from "./types.js";

/**
 * What the interpreter-code engine needs to know about one language. Generic over the engine
 * (`E`, script-eval.ts's `Evaluator`) so this contract does not import the engine it serves.
 */
export interface LanguageSpec<E> {
  lang: ScriptLanguage;
  lex(src: string): Token[];
  /** Operators that concatenate strings: `+`, `.`, `..`. */
  concatOps: ReadonlySet<string>;
  /** Member access: `.`, `?.`, `->`, `::`, `&.`, Lua's `:`. */
  memberOps: ReadonlySet<string>;
  /** Calls without parentheses (`system "ls"`, `FileUtils.rm_rf dir`). */
  parenless: boolean;
  /** `(a, b)` is a list (Python, Perl) or the last value (JavaScript's comma operator). */
  commaList: "list" | "last";
  /** Words that end an expression (`or`, `if` as a statement modifier...). */
  stopWords: ReadonlySet<string>;
  /** Declarations before an assignment: `const`, `my`, `local`. */
  declWords: ReadonlySet<string>;
  /** Whether an unbound name is a variable (unknown) rather than a global (module, function). */
  isVariable(name: string): boolean;
  /** An unbound global name: `%ENV` is `ENV`, `__builtins__` is the builtins. */
  global(name: string): Val;
  /** What calling the function `name` (canonical dotted) does; undefined when not a sink. */
  call(name: string, args: Args, ev: E): Val | undefined;
  /** What calling method `name` on a value does (paths, files, strings). */
  method(recv: Val, name: string, args: Args, ev: E): Val | undefined;
  /** Language statements (imports, requires, destructuring); returns the index after, or undefined. */
  statement?(ev: E, i: number): number | undefined;
  /** A member read without a call that has a value (Ruby's `Dir.home`, Perl's `->my_home`). */
  property?(name: string, ev: E): Val | undefined;
  /** Modules whose members picked at run time must be approved: `getattr(os, name)`. */
  dangerous: ReadonlySet<string>;
}
