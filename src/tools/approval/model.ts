/**
 * The analyser's working state, shared by its modules: what the script has done so far (variables,
 * `cd`, files written, symlinks made), one command as bash will run it, and the engine callbacks
 * that let per-command checks hand nested code back to the analyser without import cycles.
 */
import type { ShellRedirect, SimpleCommand } from "../../util/shell-parse.js";
import type { Cwds } from "./paths.js";
import type { AnalysisContext, Finding, ScriptLanguage } from "./types.js";
import type { Field, VarValue } from "./words.js";

/** Where code comes from, as far as the analyser can see it. */
export type CodeSource =
  /** Text the analyser can read. */
  | {
      kind: "text";
      text: string;
      via: string;
      /** Parts of the text only known at run time (their likely value, empty, is in `text`). */
      unknown?: string;
      /** The text came out of a decoder (base64 -d...) the analyser replayed. */
      decoded?: string;
    }
  /** Downloaded from the network. */
  | { kind: "remote"; via: string }
  /** Produced by a decoder the analyser could not replay (`base64 -d file`, `openssl enc -d`). */
  | { kind: "decoded"; via: string }
  /** Anything else it cannot see (a file, a variable, another program's output). */
  | { kind: "opaque"; via: string };

/** A file the command writes before it may run it. */
export interface WrittenFile {
  /** Its content, or where it came from when unknown. */
  source: CodeSource;
}

/** What the script has established by the point being analysed. */
export interface Scope {
  ctx: AnalysisContext;
  depth: number;
  /** Variables the script set, with their values where known. */
  vars: Map<string, VarValue>;
  /** Variables set in loops, branches, pipelines or by `read`: never trusted. */
  unsound: Set<string>;
  /** Candidate working directories; undefined after a `cd` the analyser could not follow. */
  cwds: Cwds;
  /** Files written earlier in the command, by absolute path. */
  files: Map<string, WrittenFile>;
  /** Shell functions the script defines. */
  functions: Set<string>;
  /** Symlinks made earlier in the command (`ln -s / x`), link path to target, absolute. */
  links: Map<string, string>;
}

/** One command about to run, after expansion and after peeling wrappers (`sudo`, `env`, `nohup`...). */
export interface Invocation {
  /** The command's basename (`rm` for `/bin/rm`). */
  name: string;
  /** The command word after expansion (`/bin/rm`). */
  path: string;
  /** The command name is only known at run time (its likely value is `name`). */
  nameDynamic: boolean;
  args: Field[];
  /** The words as written (before expansion) and redirections of the simple command. */
  source: SimpleCommand;
  /** What its standard input carries, when it is code-like: a pipe, a heredoc, a here-string, `< file`. */
  stdin?: CodeSource;
  /** Its arguments come from standard input too (xargs). */
  argsFromStdin: boolean;
  /** The arguments stand for paths found under a directory (find -exec's `{}`): filters may narrow them. */
  narrowed: boolean;
  /** Path arguments stand for whole trees (find -exec's `{}`): every delete is recursive. */
  subtree: boolean;
  scope: Scope;
  out: Finding[];
  engine: Engine;
}

/** Callbacks into the analyser for nested code. */
export interface Engine {
  /** Analyses shell code (one level deeper). `what` names it in messages: "bash -c". */
  shell(script: string, scope: Scope, out: Finding[], what: string, positional?: Field[]): void;
  /** Judges code handed to a shell or an interpreter. */
  code(sink: Sink, source: CodeSource, inv: Invocation): void;
  /** Analyses a nested command given as an argument vector (xargs, find -exec, sudo, env...). */
  run(args: Field[], inv: Invocation, extra?: Partial<Invocation>): void;
  /** Statically evaluates a command's output, or undefined. */
  output(script: string, scope: Scope): string | undefined;
}

/** Who runs the code: a shell, or an interpreter for a language the interpreter analyser reads. */
export type Sink =
  | { kind: "shell"; name: string }
  | { kind: "interpreter"; name: string; language: ScriptLanguage };

/** A check for one command name. */
export type Check = (inv: Invocation) => void;

/** Redirections that write their target. */
export function writesTarget(r: ShellRedirect): boolean {
  if (!/^(>|>>|>\||&>|&>>|<>|>&)$/.test(r.op)) return false;
  return !(r.op === ">&" && /^(\d+-?|-)$/.test(r.target.text));
}

export function add(inv: { out: Finding[] }, f: Finding): void {
  inv.out.push(f);
}
