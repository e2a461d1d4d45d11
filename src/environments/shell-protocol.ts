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
   * Do the after-call bookkeeping inside the shell, with builtins only (no extra process per
   * call), for shells whose files cannot be read synchronously: the call writes its pid and its
   * state to fixed files (two state slots, so a save cut short never spoils the last good one;
   * `state.ok` names the good slot), and the sentinel reports the call's process group when `&`
   * jobs still run in it: `<marker><exit>_<group or 0>_<PWD>`. Without it the sentinel is
   * `<marker><exit>_<PWD>` and the caller reads and removes the per-call files itself.
   */
  bookkeeping?: boolean;
}

/** The pid file of the call running now, in bookkeeping mode: `<pid> <nonce>`. */
export function runningPidFile(paths: ShellStatePaths): string {
  return posix.join(paths.stateDir, "call.pid");
}

const SAVE_HEAD = [
  `builtin mapfile -t __hermes_vs < <(builtin compgen -v)`,
  `__hermes_keep=(); __hermes_names=' '`,
  `for __hermes_v in "\${__hermes_vs[@]}"; do case $__hermes_v in ${SPECIAL_VARS}) ;; *) __hermes_keep+=("$__hermes_v"); __hermes_names+="$__hermes_v ";; esac; done`,
  `builtin mapfile -t __hermes_fs < <(builtin compgen -A function)`,
  `{ builtin declare -p -- "\${__hermes_keep[@]}"; builtin declare -f; builtin alias -p`,
  `builtin printf '__hermes_names=%q\\n__hermes_funcs=%q\\nbuiltin cd -- %q\\n' "$__hermes_names" " \${__hermes_fs[*]} " "$PWD"`,
];

const RESTORE_BODY = [
  `builtin unalias -a`,
  `builtin source "$__hermes_state" >/dev/null 2>&1`,
  `builtin mapfile -t __hermes_vs < <(builtin compgen -v)`,
  `for __hermes_v in "\${__hermes_vs[@]}"; do case $__hermes_v in ${SPECIAL_VARS}) ;; *) [[ $__hermes_names == *" $__hermes_v "* ]] || builtin unset -v "$__hermes_v" 2>/dev/null;; esac; done`,
  `builtin mapfile -t __hermes_vs < <(builtin compgen -A function)`,
  `for __hermes_v in "\${__hermes_vs[@]}"; do [[ $__hermes_funcs == *" $__hermes_v "* ]] || builtin unset -f "$__hermes_v"; done`,
];

/** The script that runs `command` in the persistent shell and prints the sentinel line. */
export function wrapCommand(command: string, options: WrapOptions): string {
  const { nonce, paths, workdir } = options;
  const fixed = options.bookkeeping === true;
  // `builtin` keeps user-defined functions named cd/eval/printf (rvm, nvm...) out of the protocol.
  const ok = quote(posix.join(paths.stateDir, "state.ok"));
  const slot = (n: string) => `${quote(posix.join(paths.stateDir, "state."))}${n}`;
  const state = fixed ? slot("$__hermes_w") : quote(callFile(paths.stateDir, nonce, "state"));
  const pidFile = quote(fixed ? runningPidFile(paths) : callFile(paths.stateDir, nonce, "pid"));
  const save = [
    ...(fixed ? [`__hermes_w=$((1 - \${__hermes_slot:-0}))`] : []),
    ...SAVE_HEAD,
    // The "ok" file is written last: a state file cut short by a kill is never sourced.
    fixed
      ? `} >${state} 2>/dev/null && builtin printf '%s ${nonce}\\n' "$__hermes_w" >${ok}`
      : `} >${state} 2>/dev/null && : >${quote(`${callFile(paths.stateDir, nonce, "state")}.ok`)}`,
  ].join("\n");
  // With a workdir the command's changes are its own: nothing is saved.
  const body = workdir
    ? `builtin cd -- ${quote(workdir)} || builtin exit 1\nbuiltin eval "$__hermes_cmd"\n`
    : `builtin eval "$__hermes_cmd"\n__hermes_ec=$?\n${save}\nbuiltin exit "$__hermes_ec"\n`;
  // The subshell's own 2>&1 carries the command's stderr; the group's 2>/dev/null silences the
  // shell's "Killed" notice for a stopped command. `exit` in the command ends only the subshell.
  const restore = fixed
    ? [
        `__hermes_ok=; builtin read -r __hermes_s __hermes_ok 2>/dev/null <${ok}`,
        `if [[ $__hermes_ok == ${nonce} ]]; then`,
        `__hermes_slot=$__hermes_s; __hermes_state=${slot("$__hermes_s")}`,
      ]
    : [
        `if [[ -f ${quote(`${callFile(paths.stateDir, nonce, "state")}.ok`)} ]]; then`,
        `__hermes_state=${state}`,
      ];
  restore.push(...RESTORE_BODY, `builtin export -p >${quote(paths.envFile)} 2>/dev/null`, "fi");
  const lines = [
    `__hermes_cmd=${quote(command)}`,
    fixed
      ? `{ ( builtin printf '%s ${nonce}\\n' "$BASHPID" >${pidFile}`
      : `{ ( builtin printf %s "$BASHPID" >${pidFile}`,
    `${body}) 2>&1 ; } </dev/null 2>/dev/null`,
    `__hermes_ec=$?`,
    ...restore,
  ];
  if (fixed) {
    // The call's group outlives its subshell only through `&` jobs: remember it then.
    lines.push(
      `__hermes_pg=0; builtin read -r __hermes_pg __hermes_ok 2>/dev/null <${pidFile}`,
      `[[ $__hermes_ok == ${nonce} ]] && builtin kill -0 -- "-\${__hermes_pg:-0}" 2>/dev/null || __hermes_pg=0`,
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
 * finished call's state, or failing that its exported variables. `bookkeeping` as in WrapOptions.
 */
export function initScript(paths: ShellStatePaths, bookkeeping = false): string {
  const env = quote(paths.envFile);
  const state = bookkeeping
    ? [
        `if builtin read -r __hermes_s _ 2>/dev/null <${quote(posix.join(paths.stateDir, "state.ok"))} && [[ -f ${quote(posix.join(paths.stateDir, "state."))}$__hermes_s ]]; then`,
        `__hermes_slot=$__hermes_s; builtin source ${quote(posix.join(paths.stateDir, "state."))}$__hermes_s >/dev/null 2>&1`,
      ]
    : [
        `if [[ -f ${quote(paths.stateFile)} ]]; then builtin source ${quote(paths.stateFile)} >/dev/null 2>&1`,
      ];
  return [
    "builtin set -m 2>/dev/null",
    ...state,
    `elif [[ -f ${env} ]]; then builtin source ${env} >/dev/null 2>&1; fi`,
    "",
  ].join("\n");
}

/** Gives a separate bash the shell's exported variables, then enters `cwd` (see EnvShell.envPrelude). */
export function envPreludeScript(envFile: string, cwd: string): string {
  return `builtin source ${quote(envFile)} >/dev/null 2>&1; builtin cd -- ${quote(cwd)} || exit\n`;
}

/**
 * Bash helpers for the scripts below: `__hermes_scan` fills ppid/pgid/state from /proc (the
 * command name in `stat` may hold spaces and parentheses, so fields are read after the last ")"),
 * `__hermes_nap` waits 50 ms (whole seconds where `sleep` takes no fractions), `__hermes_alive`
 * tells whether any non-zombie process is left in the groups of `__hermes_groups`.
 */
const PROC_HELPERS = [
  "__hermes_scan() { __hermes_ppid=(); __hermes_pgid=(); __hermes_state=(); local d p l r",
  `  for d in /proc/[0-9]*; do p=\${d#/proc/}; builtin read -r l 2>/dev/null <"$d/stat" || continue; r=\${l##*) }`,
  '    builtin read -r __hermes_s1 __hermes_s2 __hermes_s3 _ <<<"$r"; __hermes_state[p]=$__hermes_s1; __hermes_ppid[p]=$__hermes_s2; __hermes_pgid[p]=$__hermes_s3; done; }',
  "__hermes_nap() { command sleep 0.05 2>/dev/null || command sleep 1; }",
  `__hermes_alive() { __hermes_scan; local p; for p in "\${!__hermes_pgid[@]}"; do [[ \${__hermes_state[p]} != Z && " \${__hermes_groups[*]} " == *" \${__hermes_pgid[p]} "* ]] && return 0; done; return 1; }`,
  // All descendants of $1 (breadth first), into __hermes_desc.
  `__hermes_descend() { __hermes_desc=(); local queue=("$1") c p; while ((\${#queue[@]})); do c=\${queue[0]}; queue=("\${queue[@]:1}")`,
  `  for p in "\${!__hermes_ppid[@]}"; do [[ \${__hermes_ppid[p]} == "$c" ]] && { __hermes_desc+=("$p"); queue+=("$p"); }; done; done; }`,
  // Waits up to $1 naps for the groups to be gone.
  "__hermes_wait_gone() { local n=0; while __hermes_alive; do ((n++ < $1)) || return 1; __hermes_nap; done; return 0; }",
].join("\n");

/**
 * Stops a running call (run with `bash -c` through the channel, not in the shell): the subshell
 * interpreting the command line (pid and group from the pid file, once it names this call) is killed at once, then
 * every group of it and its descendants gets SIGTERM, and SIGKILL after `graceMs`. Prints
 * `running <command line>` for up to five processes that ran, then `killed 0|1`.
 */
export function stopScript(paths: ShellStatePaths, nonce: string, graceMs: number): string {
  const naps = Math.max(1, Math.ceil(graceMs / 50));
  return [
    PROC_HELPERS,
    // The pid file is the subshell's first act: it may be a moment away when the stop comes early.
    `__hermes_g=; __hermes_n=0`,
    `while :; do builtin read -r __hermes_g __hermes_o 2>/dev/null <${quote(runningPidFile(paths))}; [[ $__hermes_o == ${nonce} ]] && break; ((__hermes_n++ < 40)) || break; __hermes_nap; done`,
    `[[ $__hermes_o == ${nonce} && $__hermes_g =~ ^[0-9]+$ ]] || { builtin echo 'killed 0'; builtin exit 0; }`,
    `__hermes_scan; __hermes_descend "$__hermes_g"; __hermes_groups=("$__hermes_g")`,
    `for p in "\${__hermes_desc[@]}"; do g=\${__hermes_pgid[p]}; [[ $g -gt 1 && " \${__hermes_groups[*]} " != *" $g "* ]] && __hermes_groups+=("$g"); done`,
    `__hermes_n=0; for p in "\${__hermes_desc[@]}"; do ((__hermes_n++ < 5)) || break; builtin mapfile -d '' a <"/proc/$p/cmdline" 2>/dev/null; [[ \${#a[@]} -gt 0 ]] && builtin printf 'running %s\\n' "\${a[*]}"; done`,
    `builtin kill -KILL "$__hermes_g" 2>/dev/null`,
    `for g in "\${__hermes_groups[@]}"; do builtin kill -TERM -- "-$g" 2>/dev/null; done`,
    `__hermes_k=0`,
    `if ! __hermes_wait_gone ${naps}; then __hermes_k=1; for g in "\${__hermes_groups[@]}"; do builtin kill -KILL -- "-$g" 2>/dev/null; done; __hermes_wait_gone ${naps}; fi`,
    `builtin echo "killed $__hermes_k"`,
    "",
  ].join("\n");
}

/** Lines that SIGKILL process `pid` (a number or a shell expression), all below it and their groups but the launcher's. */
function killTreeLines(pid: string): string[] {
  return [
    `__hermes_scan; __hermes_descend ${pid}`,
    // The process's own group may hold its launcher (docker exec, sshd): only groups below it.
    `__hermes_sg=\${__hermes_pgid[${pid}]:-0}`,
    `for p in "\${__hermes_desc[@]}"; do g=\${__hermes_pgid[p]}; [[ $g -gt 1 && $g != "$__hermes_sg" ]] && __hermes_groups+=("$g"); builtin kill -KILL "$p" 2>/dev/null; done`,
    `builtin kill -KILL ${pid} 2>/dev/null`,
  ];
}

/**
 * SIGKILLs a shell (pid `shellPid`), everything below it with their groups, and the given `&` job
 * groups. Run with `bash -c` through the channel.
 */
export function killScript(shellPid: number | undefined, jobGroups: Iterable<number>): string {
  const jobs = [...jobGroups].filter((g) => g > 1).join(" ");
  const lines = [PROC_HELPERS, `__hermes_groups=(${jobs})`];
  if (shellPid !== undefined && shellPid > 1) lines.push(...killTreeLines(String(shellPid)));
  lines.push(
    `for g in "\${__hermes_groups[@]}"; do builtin kill -KILL -- "-$g" 2>/dev/null; done`,
    "true",
    "",
  );
  return lines.join("\n");
}

/**
 * A one-off exec that can be stopped from outside: the remote end of a killed client (ssh through
 * a master, docker exec) lives on, so the script leaves its pid in `pidFile` for `killExecScript`.
 * A stop can come before the script has started (a slow exec): `killExecScript` then leaves
 * `pidFile.stop` behind, and the script ends at once when it finds it. Writing the pid before
 * looking for the stop file (and the stop the other way round) means one of the two always sees the other.
 */
export function stoppableExecScript(pidFile: string, script: string): string {
  const f = quote(pidFile);
  const stop = quote(`${pidFile}.stop`);
  return `builtin echo $$ > ${f}; trap 'command rm -f ${f} ${stop}' EXIT; [[ -e ${stop} ]] && builtin exit 137\n${script}`;
}

/** Ends a stopped `stoppableExecScript` run: the pid in `pidFile` and everything it started, or it before it starts. */
export function killExecScript(pidFile: string): string {
  const f = quote(pidFile);
  return [
    `: > ${quote(`${pidFile}.stop`)}`,
    `__hermes_p=$(command cat ${f} 2>/dev/null) || builtin exit 0; command rm -f ${f}`,
    `[[ $__hermes_p =~ ^[0-9]+$ && $__hermes_p -gt 1 ]] || builtin exit 0`,
    // Stopped, it starts nothing new while its tree is read; a group it leads (docker exec and
    // sshd start it as a session leader) goes at once, atomically.
    `builtin kill -STOP "$__hermes_p" 2>/dev/null`,
    PROC_HELPERS,
    "__hermes_groups=(); __hermes_scan",
    `[[ \${__hermes_pgid[$__hermes_p]} == "$__hermes_p" ]] && builtin kill -KILL -- "-$__hermes_p" 2>/dev/null`,
    ...killTreeLines("$__hermes_p"),
    `for g in "\${__hermes_groups[@]}"; do builtin kill -KILL -- "-$g" 2>/dev/null; done`,
    "true",
    "",
  ].join("\n");
}

/** Parses `stopScript`'s output. */
export function parseStopOutput(text: string): { killed: boolean; running: string[] } {
  const running: string[] = [];
  let killed = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("running ")) {
      const c = line.slice(8).trim();
      if (c) running.push(c.length > 80 ? `${c.slice(0, 77)}...` : c);
    } else if (line.startsWith("killed ")) killed = line.slice(7).trim() === "1";
  }
  return { killed, running };
}

/** A running call's live-output state (see `RunOptions.onOutput`). */
export interface LiveScan {
  /** stdout not yet committed to the call's buffer (it may end in part of the sentinel). */
  scan: string;
  /** How much of `scan` was already passed to `onOutput`. */
  live: number;
  onOutput: ((chunk: string) => void) | undefined;
}

/** Passes `scan` up to `end` to the call's live listener, once. */
export function streamLive(pending: LiveScan, end: number): void {
  if (!pending.onOutput || end <= pending.live) return;
  const chunk = pending.scan.slice(pending.live, end);
  pending.live = end;
  showLive(pending, chunk);
}

/** Hands `chunk` (stdout already cleared of the sentinel, or stderr) to the live listener. */
export function showLive(pending: Pick<LiveScan, "onOutput">, chunk: string): void {
  try {
    pending.onOutput?.(chunk);
  } catch {
    // A failing display must not break the command's bookkeeping.
  }
}

/**
 * Moves `scan` up to `cut` into the call's buffer (live-showing it first), keeping the rest for the
 * sentinel search. Used by every shell when the scan grows without a sentinel in sight.
 */
export function commitScan(pending: LiveScan & { buffer: { write(text: string): void } }, cut: number): void {
  streamLive(pending, cut);
  pending.buffer.write(pending.scan.slice(0, cut));
  pending.scan = pending.scan.slice(cut);
  pending.live = Math.max(0, pending.live - cut);
}
