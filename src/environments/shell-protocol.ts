/**
 * The bash protocol of a persistent shell, as pure script builders shared by the local session
 * (src/environments/local/shell-session.ts) and the generic remote shell (./remote-shell.ts).
 *
 * bash reads its script from a pipe. Each call sends the command as a quoted string and prints a
 * sentinel line with a fresh nonce, the exit code and `$PWD`. The command runs in a subshell
 * `( eval "$cmd" )`; with job control on (`set -m`) that subshell is a process group of its own
 * holding the whole command line. At its end the subshell writes its state (cwd, variables with
 * their attributes, functions, aliases) to a per-call file that the shell then sources; variables
 * or functions it unset are unset in the shell too. The files live in `stateDir`, a private
 * directory wherever the shell runs (host temp dir, or inside the container / on the remote host).
 */
import { posix } from "node:path";

/**
 * Variables the state file must not carry: bash's own (read-only or dynamic: assigning RANDOM seeds
 * it, SECONDS resets it), the cwd pair (`cd` sets them), and the protocol's.
 */
export const SPECIAL_VARS =
  "BASH|BASH[A-Z_]*|__hermes_*|EUID|UID|PPID|SHELLOPTS|SHLVL|RANDOM|SRANDOM|SECONDS|LINENO|FUNCNAME|GROUPS|HISTCMD|EPOCHSECONDS|EPOCHREALTIME|PIPESTATUS|DIRSTACK|PWD|OLDPWD|_|COMP_WORDBREAKS|OPTIND";

/** Quotes `text` as one bash word. */
export function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Where one shell keeps its state (paths where the shell runs; always POSIX). */
export interface ShellStatePaths {
  /** Owner-only directory holding everything below (exported secrets live here). */
  stateDir: string;
  /** `export -p` of the last finished call: what background processes inherit. */
  envFile: string;
  /** Full state of the last finished call: what a rebuilt shell starts from. */
  stateFile: string;
}

export function statePaths(stateDir: string): ShellStatePaths {
  return {
    stateDir,
    envFile: posix.join(stateDir, "env.sh"),
    stateFile: posix.join(stateDir, "state.sh"),
  };
}

/** A per-call file (`pid`: the call's process group; `state`: the state it left). */
export function callFile(stateDir: string, nonce: string, kind: "pid" | "state"): string {
  return posix.join(stateDir, `${kind}.${nonce}`);
}

/** The sentinel's fixed part; the line continues `<exit code>_<...>` (see `wrapCommand`). */
export function sentinelMarker(nonce: string): string {
  return `__HERMES_DONE_${nonce}_`;
}

export interface WrapOptions {
  nonce: string;
  paths: ShellStatePaths;
  /** Run this one command there; its changes to the shell's state are dropped. */
  workdir?: string;
  /**
   * Do the after-call bookkeeping inside the shell (for shells whose files cannot be read
   * synchronously): keep the state file, remove the call's files, and report the call's process
   * group when `&` jobs still run in it. The sentinel is then `<marker><exit>_<group or 0>_<PWD>`;
   * without it `<marker><exit>_<PWD>` and the caller reads the call's files itself.
   */
  bookkeeping?: boolean;
}

/** The script that runs `command` in the persistent shell and prints the sentinel line. */
export function wrapCommand(command: string, options: WrapOptions): string {
  const { nonce, paths, workdir } = options;
  // `builtin` keeps user-defined functions named cd/eval/printf (rvm, nvm...) out of the protocol.
  const state = callFile(paths.stateDir, nonce, "state");
  const pidFile = callFile(paths.stateDir, nonce, "pid");
  const save = [
    `builtin mapfile -t __hermes_vs < <(builtin compgen -v)`,
    `__hermes_keep=(); __hermes_names=' '`,
    `for __hermes_v in "\${__hermes_vs[@]}"; do case $__hermes_v in ${SPECIAL_VARS}) ;; *) __hermes_keep+=("$__hermes_v"); __hermes_names+="$__hermes_v ";; esac; done`,
    `builtin mapfile -t __hermes_fs < <(builtin compgen -A function)`,
    `{ builtin declare -p -- "\${__hermes_keep[@]}"; builtin declare -f; builtin alias -p`,
    `builtin printf '__hermes_names=%q\\n__hermes_funcs=%q\\nbuiltin cd -- %q\\n' "$__hermes_names" " \${__hermes_fs[*]} " "$PWD"`,
    // The "ok" file is written last: a state file cut short by a kill is never sourced.
    `} >${quote(state)} 2>/dev/null && : >${quote(`${state}.ok`)}`,
  ].join("\n");
  // With a workdir the command's changes are its own: nothing is saved.
  const body = workdir
    ? `builtin cd -- ${quote(workdir)} || builtin exit 1\nbuiltin eval "$__hermes_cmd"\n`
    : `builtin eval "$__hermes_cmd"\n__hermes_ec=$?\n${save}\nbuiltin exit "$__hermes_ec"\n`;
  // The subshell's own 2>&1 carries the command's stderr; the group's 2>/dev/null silences the
  // shell's "Killed" notice for a stopped command. `exit` in the command ends only the subshell.
  const restore = [
    `if [[ -f ${quote(`${state}.ok`)} ]]; then`,
    `builtin unalias -a`,
    `builtin source ${quote(state)} >/dev/null 2>&1`,
    `builtin mapfile -t __hermes_vs < <(builtin compgen -v)`,
    `for __hermes_v in "\${__hermes_vs[@]}"; do case $__hermes_v in ${SPECIAL_VARS}) ;; *) [[ $__hermes_names == *" $__hermes_v "* ]] || builtin unset -v "$__hermes_v" 2>/dev/null;; esac; done`,
    `builtin mapfile -t __hermes_vs < <(builtin compgen -A function)`,
    `for __hermes_v in "\${__hermes_vs[@]}"; do [[ $__hermes_funcs == *" $__hermes_v "* ]] || builtin unset -f "$__hermes_v"; done`,
    `builtin export -p >${quote(paths.envFile)} 2>/dev/null`,
    options.bookkeeping ? `command mv -f -- ${quote(state)} ${quote(paths.stateFile)} 2>/dev/null` : "",
    "fi",
  ].filter((line) => line !== "");
  const lines = [
    `__hermes_cmd=${quote(command)}`,
    `{ ( builtin printf %s "$BASHPID" >${quote(pidFile)}`,
    `${body}) 2>&1 ; } </dev/null 2>/dev/null`,
    `__hermes_ec=$?`,
    ...restore,
  ];
  if (options.bookkeeping) {
    // The call's group outlives its subshell only through `&` jobs: remember it then.
    lines.push(
      `__hermes_pg=0; builtin read -r __hermes_pg <${quote(pidFile)} 2>/dev/null`,
      `builtin kill -0 -- "-\${__hermes_pg:-0}" 2>/dev/null || __hermes_pg=0`,
      `command rm -f -- ${quote(pidFile)} ${quote(state)} ${quote(`${state}.ok`)} 2>/dev/null`,
      `builtin printf '\\n${sentinelMarker(nonce)}%s_%s_%s\\n' "$__hermes_ec" "$__hermes_pg" "$PWD"`,
    );
  } else {
    lines.push(`builtin printf '\\n${sentinelMarker(nonce)}%s_%s\\n' "$__hermes_ec" "$PWD"`);
  }
  lines.push("");
  return lines.join("\n");
}

/**
 * The shell's first lines: job control on (each call's subshell its own group), then the last
 * finished call's state, or failing that its exported variables.
 */
export function initScript(paths: ShellStatePaths): string {
  return [
    "builtin set -m 2>/dev/null",
    `if [[ -f ${quote(paths.stateFile)} ]]; then builtin source ${quote(paths.stateFile)} >/dev/null 2>&1`,
    `elif [[ -f ${quote(paths.envFile)} ]]; then builtin source ${quote(paths.envFile)} >/dev/null 2>&1; fi`,
    "",
  ].join("\n");
}

/** Gives a separate bash the shell's exported variables, then enters `cwd` (see EnvShell.envPrelude). */
export function envPreludeScript(envFile: string, cwd: string): string {
  return `builtin source ${quote(envFile)} >/dev/null 2>&1; builtin cd -- ${quote(cwd)} || exit\n`;
}
