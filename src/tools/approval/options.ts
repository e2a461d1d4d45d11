/**
 * Command-line option parsing as GNU getopt_long and git's parse-options do it: short flags in
 * clusters (`-rf`), attached and detached option arguments (`-s0`, `-s 0`, `--size=0`), options
 * after operands (GNU permutes them: `rm ~ -rf`), `--` ending options, and unique-prefix
 * abbreviations of long options (`--recur` is `--recursive`, `--har` is `--hard`).
 *
 * An abbreviation that matches several long options counts as all of them: the tool may reject it
 * as ambiguous, but the analyser must not assume so (fail closed).
 */
import type { Field } from "./words.js";

/** 0: a flag; 1: takes an argument; 2: takes an optional argument (only as `--opt=value`). */
export type Arity = 0 | 1 | 2;

export interface OptSpec {
  /** Short flags and the long name each stands for: `{ r: "recursive", f: "force" }`. */
  short?: Readonly<Record<string, string>>;
  /** Short options taking an argument: `{ s: "size" }`. */
  shortArg?: Readonly<Record<string, string>>;
  /** Long options and their arity. */
  long?: Readonly<Record<string, Arity>>;
  /** Options end at the first operand (wrappers such as sudo, env, nice, and POSIX tools). */
  stopAtOperand?: boolean;
  /** `-name` style long options with one dash (find). Not used by the getopt tools here. */
}

export interface ParsedOptions {
  /** Long names (or short letters with no long name) seen, with their last value (`true` for flags). */
  opts: Map<string, string | true>;
  operands: Field[];
  /** Fields that looked like options but were only known at run time (fail closed on these). */
  dynamic: Field[];
  /** Index in the input where operands began when `stopAtOperand` (the rest is a command). */
  rest: number;
}

/** Resolves a long option name or a unique prefix of one; several names when ambiguous. */
export function resolveLong(name: string, long: Readonly<Record<string, Arity>>): string[] {
  if (Object.hasOwn(long, name)) return [name];
  if (name === "") return [];
  return Object.keys(long).filter((k) => k.startsWith(name));
}

/** Parses `args` with `spec`. Never throws; unknown options are recorded under their own spelling. */
export function parseOptions(args: readonly Field[], spec: OptSpec): ParsedOptions {
  const short = spec.short ?? {};
  const shortArg = spec.shortArg ?? {};
  const long = spec.long ?? {};
  const opts = new Map<string, string | true>();
  const operands: Field[] = [];
  const dynamic: Field[] = [];
  let k = 0;
  let ended = false;
  for (; k < args.length; k++) {
    const f = args[k] as Field;
    const a = f.text;
    if (ended || a === "-" || !a.startsWith("-") || a === "") {
      if (f.dynamic && !ended) dynamic.push(f);
      if (spec.stopAtOperand && !ended) break;
      operands.push(f);
      continue;
    }
    if (f.dynamic) dynamic.push(f);
    if (a === "--") {
      ended = true;
      if (spec.stopAtOperand) {
        k++;
        break;
      }
      continue;
    }
    if (a.startsWith("--")) {
      const eq = a.indexOf("=");
      const name = a.slice(2, eq < 0 ? undefined : eq);
      const names = resolveLong(name, long);
      if (names.length === 0) opts.set(`--${name}`, eq < 0 ? true : a.slice(eq + 1));
      for (const n of names) {
        if (eq >= 0) opts.set(n, a.slice(eq + 1));
        else if (long[n] === 1 && k + 1 < args.length) {
          opts.set(n, (args[k + 1] as Field).text);
          if (names.length === 1) k++;
        } else opts.set(n, true);
      }
      continue;
    }
    // A cluster of short options.
    for (let j = 1; j < a.length; j++) {
      const c = a[j] as string;
      if (Object.hasOwn(shortArg, c)) {
        const value = j + 1 < a.length ? a.slice(j + 1) : (args[++k]?.text ?? "");
        opts.set(shortArg[c] as string, value);
        break;
      }
      opts.set(short[c] ?? c, true);
    }
  }
  return { opts, operands, dynamic, rest: k };
}
