/**
 * Whether a shell command only reads: the checkpoint hook (tools/checkpoints/) snapshots the working
 * directory before any terminal command that may change files, and skips the ones that cannot.
 *
 * The list is short and conservative: a command is read-only only when every simple command in it
 * is a listed reader, no output is redirected anywhere but /dev/null, every substitution inside it
 * is itself read-only, and no argument can turn a reader into a writer (`find -delete`, `sort -o`,
 * `rg --pre`, an option spelled by a glob or a variable). Anything else, including what cannot be
 * read statically (`$CMD`, `eval`, functions, `bash -c`), counts as mutating. Pure.
 */
import {
  parseScript,
  type ShellRedirect,
  type ShellWord,
  type SimpleCommand,
} from "../../util/shell-parse.js";

/** Readers whose arguments cannot make them write, run or change anything. */
const PLAIN_READERS = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "grep",
  "egrep",
  "fgrep",
  "pwd",
  "cd",
  "pushd",
  "popd",
  "dirs",
  "echo",
  "printf",
  "true",
  "false",
  ":",
  "test",
  "[",
  "[[",
  "stat",
  "du",
  "df",
  "which",
  "type",
  "whereis",
  "printenv",
  "whoami",
  "id",
  "uname",
  "diff",
  "cmp",
  "cut",
  "tr",
  "nl",
  "tac",
  "rev",
  "fold",
  "paste",
  "column",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "md5sum",
  "sha1sum",
  "sha256sum",
  "sha512sum",
  "cksum",
  "strings",
  "od",
  "hexdump",
  "jq",
  "seq",
  "ps",
  "uptime",
  "free",
  "nproc",
  "lsof",
]);

/**
 * Readers that some options (or extra operands) turn into writers or launchers: the command is
 * read-only only when `allows` says so for its literal arguments.
 */
const GUARDED_READERS: Record<string, (args: string[]) => boolean> = {
  find: (args) => !args.some((a) => /^-(delete|exec|execdir|ok|okdir|fprint|fprint0|fprintf|fls)$/.test(a)),
  sort: (args) => !args.some((a) => /^(-o|--output|--compress-program|--temporary-directory|-T)/.test(a)),
  rg: (args) => !args.some((a) => /^--pre(=|$)|^--pre-glob/.test(a)),
  tree: (args) => !args.some((a) => /^-o|^-R$/.test(a)),
  date: (args) => !args.some((a) => /^(-s|--set)/.test(a)),
  hostname: (args) => args.every((a) => a.startsWith("-") && !/^-(F|-file|b|-boot)/.test(a)),
  uniq: (args) => args.filter((a) => !a.startsWith("-")).length <= 1,
  env: (args) => args.length === 0,
  file: (args) => !args.some((a) => /^(-C|--compile)/.test(a)),
  git: gitReadOnly,
};

/** Git subcommands that only read (hooks run on none of them). */
const GIT_READERS = new Set([
  "status",
  "log",
  "diff",
  "show",
  "blame",
  "ls-files",
  "ls-tree",
  "rev-parse",
  "describe",
  "shortlog",
  "cat-file",
  "grep",
]);

function gitReadOnly(args: string[]): boolean {
  // Global options before the subcommand (`-c core.pager=…`, `--exec-path`, `-C`) can run programs
  // or point git elsewhere; only `--no-pager` is let through.
  const rest = args[0] === "--no-pager" ? args.slice(1) : args;
  const sub = rest[0];
  if (sub === undefined || !GIT_READERS.has(sub)) return false;
  return !rest.some((a) => /^--(output|ext-diff|textconv|open-files-in-pager)/.test(a) || /^-O/.test(a));
}

/** Variables whose value changes what a later command name runs. */
const RISKY_ASSIGNMENTS =
  /^(PATH|BASH_ENV|ENV|IFS|PROMPT_COMMAND|LD_PRELOAD|LD_LIBRARY_PATH|SHELLOPTS|BASHOPTS|CDPATH)=/;
/** Redirections that only read. */
const INPUT_REDIRECTS = new Set(["<", "<<", "<<-", "<<<"]);

/**
 * True when `command` cannot change a file: every part is a listed reader with harmless arguments.
 * An empty command reads nothing and is read-only. Never throws.
 */
export function isReadOnlyCommand(command: string, depth = 0): boolean {
  if (depth > 4) return false;
  const script = parseScript(command);
  if (script.functions.length > 0) return false;
  for (const pipeline of script.pipelines) {
    for (const simple of pipeline.commands) {
      if (!simpleReadOnly(simple, depth)) return false;
    }
  }
  return true;
}

function simpleReadOnly(simple: SimpleCommand, depth: number): boolean {
  for (const redirect of simple.redirects) if (!redirectReadOnly(redirect, depth)) return false;
  for (const word of simple.words) if (!subsReadOnly(word, depth)) return false;
  // `for x in …` and `case … in` headers only expand words; their substitutions are checked above.
  if (simple.keyword !== undefined) return true;

  const words = [...simple.words];
  while (words[0] && isAssignmentWord(words[0])) {
    if (RISKY_ASSIGNMENTS.test(words[0].text)) return false;
    words.shift();
  }
  const head = words[0];
  if (!head) return true;
  if (!literal(head)) return false;
  const name = commandNameOf(head.text);
  if (name === undefined) return false;
  const args = words.slice(1);
  if (PLAIN_READERS.has(name)) return true;
  const allows = GUARDED_READERS[name];
  if (!allows) return false;
  // A glob or a variable could expand to an option (a file named `-delete`), so only literal words.
  if (!args.every((w) => literal(w) && !hasUnquotedGlob(w))) return false;
  return allows(args.map((w) => w.text));
}

function redirectReadOnly(redirect: ShellRedirect, depth: number): boolean {
  if (!subsReadOnly(redirect.target, depth)) return false;
  if (redirect.heredocWord && !subsReadOnly(redirect.heredocWord, depth)) return false;
  if (INPUT_REDIRECTS.has(redirect.op)) return true;
  // `2>&1`, `>&2`: duplicating a descriptor writes no file.
  if ((redirect.op === ">&" || redirect.op === "<&") && /^(\d+|-)$/.test(redirect.target.text)) return true;
  return literal(redirect.target) && redirect.target.text === "/dev/null";
}

function subsReadOnly(word: ShellWord, depth: number): boolean {
  for (const part of word.parts) {
    // `>(cmd)` runs cmd with our output: read-only only if cmd is; same for `<(cmd)`, `$(cmd)`.
    if (part.kind === "cmdsub" || part.kind === "procsub") {
      if (!isReadOnlyCommand(part.body, depth + 1)) return false;
    } else if (part.kind === "arith") {
      // `$((x=1))` only sets a variable, but `$(( $(rm x) ))` hides a command in it.
      if (part.body.includes("$(") || part.body.includes("`")) return false;
    } else if (part.kind === "param" && part.arg && !subsReadOnly(part.arg, depth)) return false;
  }
  return word.subs.every((body) => isReadOnlyCommand(body, depth + 1));
}

function isAssignmentWord(word: ShellWord): boolean {
  const first = word.parts[0];
  return (
    first?.kind === "lit" && !first.quoted && /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(first.text)
  );
}

/** A word with no expansion in it: what is written is what runs. */
function literal(word: ShellWord): boolean {
  return word.parts.every((p) => p.kind === "lit");
}

function hasUnquotedGlob(word: ShellWord): boolean {
  return word.parts.some((p) => p.kind === "lit" && !p.quoted && /[*?[]/.test(p.text));
}

/**
 * The reader a command word names: a bare name, or a path into the system's binary folders
 * (`/usr/bin/cat`). Any other path (`./ls`, `/tmp/cat`) is a program of unknown behaviour.
 */
function commandNameOf(text: string): string | undefined {
  if (!text.includes("/")) return text;
  const match = /^\/(?:usr\/)?(?:local\/)?s?bin\/([^/]+)$/.exec(text);
  return match?.[1];
}
