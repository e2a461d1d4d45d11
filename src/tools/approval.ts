/**
 * Dangerous-command detection for the terminal tool. Pure functions: no I/O, no config reads.
 *
 * The command is parsed (src/util/shell-parse.ts) rather than matched as raw text, so quoting
 * tricks (`r''m -rf /`, `\rm`, `/bin/rm`) resolve to the real command and text that is only data
 * (a grep pattern, an `echo`/`printf` argument, a commit message) does not trip the check.
 * Substitutions (`$(...)`, backticks, `<(...)`), `bash -c`/`sh -c`/`su -c`/`eval`/`watch` strings,
 * heredocs fed to a shell and text echoed into a shell are inspected recursively.
 *
 * Decisions worth knowing:
 * - `echo`/`printf` arguments are data unless the output is piped into a shell, so
 *   `echo "rm -rf /"` is safe and `echo "rm -rf /" | sh` is hardline.
 * - Hardline (refused even in yolo mode): recursive rm of `/`, `/*`, the home directory (`~`,
 *   `~/*`, `$HOME`) or anything with `--no-preserve-root`; fork bombs; mkfs/wipefs on a fixed
 *   disk or partition (sd*, nvme*, hd*, vd*, xvd*, mmcblk*, /dev/mapper/*); `dd of=` or any
 *   redirect/tee onto such a device. Deleting a home directory is as unrecoverable for a personal
 *   agent as deleting `/`, hence its place here.
 * - The fork-bomb check looks at the raw text, so it also fires inside quotes.
 * - Relative paths and variables other than `$HOME`/`$HERMES_HOME` are not resolved.
 */
import { type Pipeline, parseShell, type ShellRedirect, type SimpleCommand } from "../util/shell-parse.js";

export interface DangerCheck {
  dangerous: boolean;
  /** Never allowed, whatever the approval mode. Implies `dangerous`. */
  hardline: boolean;
  /** Human-readable reason, e.g. "recursive delete". */
  reason?: string;
  /** Stable key for "approve for this session/always", e.g. "recursive_delete". */
  patternKey?: string;
}

interface Finding {
  key: string;
  reason: string;
  hardline?: true;
}

const MAX_DEPTH = 6;
const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "busybox"]);
const INTERPRETERS = new Set(["python", "python2", "python3", "perl", "ruby", "node", "php", "lua"]);
const FETCHERS = new Set(["curl", "wget", "fetch", "aria2c", "http", "xh"]);
const SQL_CLIENTS = new Set("psql mysql mariadb sqlite3 sqlcmd duckdb clickhouse-client cqlsh".split(" "));
/** Commands whose arguments are text, not actions: SQL words in them are not statements. */
const TEXT_ARGS = new Set("echo printf grep egrep fgrep rg ag ack git man sed awk".split(" "));
const SYSTEM_DIRS = new Set(
  "bin boot dev etc lib lib32 lib64 libx32 opt proc root sbin srv sys usr var".split(" "),
);
const SAFE_DEVICES =
  /^\/dev\/(null|zero|full|random|urandom|stdout|stderr|stdin|tty|fd\/\d+|pts\/\d+|tcp\/.+|udp\/.+)$/;
const DISK_DEVICE =
  /^\/dev\/((sd|hd|vd|xvd)[a-z]+\d*|nvme\d+n\d+(p\d+)?|mmcblk\d+(p\d+)?|mapper\/.+|md\d+|dm-\d+|disk\/.+|root)$/;
const FORK_BOMBS = [
  /:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:\s*&[^}]*\}\s*;?\s*:/,
  /\b([A-Za-z_]\w*)\s*\(\s*\)\s*\{[^}]*\b\1\s*\|\s*\1\s*&[^}]*\}/,
];

/**
 * Classifies a shell command. Safe commands return `{dangerous: false, hardline: false}` with no
 * reason. When several patterns match, a hardline one wins, then the first found; `reason` lists
 * every distinct reason.
 */
export function detectDangerousCommand(command: string): DangerCheck {
  const findings = findDangers(command);
  if (findings.length === 0) return { dangerous: false, hardline: false };
  const first = findings.find((f) => f.hardline) ?? (findings[0] as Finding);
  const reasons = [first.reason, ...findings.map((f) => f.reason).filter((r) => r !== first.reason)];
  return {
    dangerous: true,
    hardline: first.hardline === true,
    reason: [...new Set(reasons)].join("; "),
    patternKey: first.key,
  };
}

/**
 * Whether `command_allowlist` (entries persisted from "always" approvals: pattern keys or exact
 * commands) approves this command: an exact match of the trimmed command, or every dangerous
 * pattern it contains is listed. Hardline commands are never allowlisted; a command with no
 * dangerous pattern is allowlisted only by an exact entry.
 */
export function isCommandAllowlisted(command: string, allowlist: readonly string[]): boolean {
  const findings = findDangers(command);
  if (findings.some((f) => f.hardline)) return false;
  const trimmed = command.trim();
  if (allowlist.some((entry) => entry.trim() === trimmed)) return true;
  return findings.length > 0 && findings.every((f) => allowlist.includes(f.key));
}

function findDangers(command: string): Finding[] {
  const out: Finding[] = [];
  if (FORK_BOMBS.some((re) => re.test(command))) {
    out.push({ key: "fork_bomb", reason: "fork bomb", hardline: true });
  }
  scanScript(command, 0, out);
  return out.filter((f, k) => out.findIndex((g) => g.key === f.key) === k);
}

function scanScript(script: string, depth: number, out: Finding[]): void {
  if (depth > MAX_DEPTH) return;
  for (const pipeline of parseShell(script)) scanPipeline(pipeline, depth, out);
}

function scanPipeline(pipeline: Pipeline, depth: number, out: Finding[]): void {
  const stages = pipeline.map((cmd) => unwrap(cmd, depth, out));
  stages.forEach((stage, index) => {
    for (const word of stage.source.words) for (const sub of word.subs) scanScript(sub, depth + 1, out);
    for (const r of stage.source.redirects) {
      checkRedirect(r, out);
      for (const sub of r.target.subs) scanScript(sub, depth + 1, out);
    }
    scanCommand(stage, depth, out);
    if (index > 0 && readsScriptFromStdin(stage)) {
      checkPipedIntoInterpreter(stages.slice(0, index), stage, depth, out);
    }
  });
}

interface Stage {
  source: SimpleCommand;
  /** Basename of the real command after wrappers (sudo, env, nohup, xargs...). */
  name: string;
  args: string[];
  viaXargs: boolean;
}

/** Strips assignments and wrapper commands, reporting risky wrapper flags on the way. */
function unwrap(cmd: SimpleCommand, depth: number, out: Finding[]): Stage {
  const words = cmd.words.map((w) => w.text);
  let i = 0;
  let viaXargs = false;
  const skipOptions = (withArg: RegExp): void => {
    while (i < words.length && (words[i] as string).startsWith("-") && words[i] !== "-") {
      const opt = words[i] as string;
      i++;
      if (opt === "--") break;
      if (withArg.test(opt)) i++;
    }
  };
  for (;;) {
    while (i < words.length && /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(words[i] as string)) i++;
    const name = basename(words[i] ?? "");
    if (name === "sudo" || name === "doas") {
      i++;
      const start = i;
      skipOptions(/^-[CDghprtTuU]$/);
      const opts = words.slice(start, i);
      const flags = opts.filter((w) => /^-[A-Za-z]+$/.test(w));
      if (
        flags.some((f) => f.includes("S") || f.includes("A")) ||
        opts.some((o) => /^--(stdin|askpass)$/.test(o))
      ) {
        out.push({ key: "sudo_stdin", reason: "sudo reading a password non-interactively" });
      }
      if (
        flags.some((f) => f.includes("s") || f.includes("i")) ||
        opts.some((o) => /^--(shell|login)$/.test(o))
      ) {
        out.push({ key: "sudo_shell", reason: "root shell via sudo" });
      }
    } else if (name === "env") {
      i++;
      skipOptions(/^-[uCS]$|^--(unset|chdir|split-string)$/);
    } else if (["nohup", "command", "builtin", "exec", "nice", "ionice", "stdbuf", "time"].includes(name)) {
      i++;
      skipOptions(/^-[ncpo]$/);
    } else if (name === "timeout") {
      i++;
      skipOptions(/^-[sk]$|^--(signal|kill-after)$/);
      i++; // the duration
    } else if (name === "xargs") {
      i++;
      skipOptions(/^-[IiLlnPsdEa]$|^--(max-args|max-procs|delimiter|arg-file|replace)$/);
      viaXargs = true;
    } else if (name === "watch") {
      i++;
      skipOptions(/^-[nqg]$|^--(interval)$/);
      scanScript(words.slice(i).join(" "), depth + 1, out);
      return { source: cmd, name: "watch", args: [], viaXargs };
    } else {
      return { source: cmd, name, args: words.slice(i + 1), viaXargs };
    }
  }
}

type Check = (stage: Stage, out: Finding[], depth: number) => void;

const SERVICE_STOP = /^(stop|restart|try-restart|reload-or-restart|disable|mask|kill|isolate)$/;
const POWER: Finding = { key: "system_power", reason: "shutting down or rebooting the machine" };
const power: Check = (_s, out) => out.push(POWER);
const copy: Check = (s, out) => checkCopyTarget(s.args, out);
const remoteSubs: Check = (s, out) => {
  if (s.source.words.some((w) => w.subs.some(fetchesRemote))) out.push(remoteScript());
};

/** Per-command checks, keyed by the command's basename after wrappers. */
const CHECKS: Record<string, Check> = {
  rm: checkRm,
  chmod: (s, out) => checkChmod(s.args, out),
  chown: (s, out) => checkChown(s.args, out),
  dd: (s, out) => checkDd(s.args, out),
  find: (s, out) => checkFind(s.args, out),
  git: (s, out) => checkGit(s.args, out),
  kill: (s, out) => checkKill(s.args, out),
  tee: (s, out) => {
    for (const file of s.args.filter((a) => !a.startsWith("-"))) checkWriteTarget(file, out);
  },
  cp: copy,
  mv: copy,
  install: copy,
  ln: copy,
  rsync: copy,
  sed: ({ args }, out) => {
    if (!args.some((a) => /^-[a-zA-Z]*i|^--in-place/.test(a))) return;
    if (args.some((a) => !a.startsWith("-") && isProtectedPath(normalizePath(a)))) out.push(protectedWrite());
  },
  systemctl: ({ args }, out) => {
    const verb = args.find((a) => !a.startsWith("-")) ?? "";
    if (SERVICE_STOP.test(verb))
      out.push({ key: "systemctl_stop", reason: `systemctl ${verb} of a system service` });
    else if (/^(poweroff|reboot|halt|suspend|hibernate)$/.test(verb)) out.push(POWER);
  },
  service: ({ args }, out) => {
    if (args.some((a) => /^(stop|restart)$/.test(a))) {
      out.push({ key: "systemctl_stop", reason: "stopping or restarting a system service" });
    }
  },
  shutdown: power,
  reboot: power,
  poweroff: power,
  halt: power,
  pkill: ({ args }, out) => {
    const force = args.some(
      (a, k) =>
        /^-(9|KILL|SIGKILL)$|^--signal=(9|KILL|SIGKILL)$/.test(a) ||
        (a === "--signal" && /^(9|KILL|SIGKILL)$/.test(args[k + 1] ?? "")),
    );
    if (force) out.push({ key: "pkill_force", reason: "force-killing processes by name" });
    if (args.some((a) => /hermes/i.test(a)))
      out.push({ key: "kill_hermes", reason: "killing Hermes itself" });
  },
  killall: (_s, out) => out.push({ key: "killall", reason: "killing every process with a name" }),
  hermes: ({ args }, out) => {
    const verb = args[args.indexOf("gateway") + 1];
    if (args.includes("gateway") && (verb === "stop" || verb === "restart")) {
      out.push({
        key: "hermes_gateway_stop",
        reason: `stopping the Hermes gateway (hermes gateway ${verb})`,
      });
    }
  },
  eval: (s, out, depth) => {
    remoteSubs(s, out, depth);
    scanScript(s.args.join(" "), depth + 1, out);
  },
  source: remoteSubs,
  ".": remoteSubs,
  su: (s, out, depth) => scanDashC(s, depth, out),
  runuser: (s, out, depth) => scanDashC(s, depth, out),
};

function scanCommand(stage: Stage, depth: number, out: Finding[]): void {
  const { name, args } = stage;
  if (/^mkfs(\.\w+)?$|^mke2fs$|^mkswap$|^wipefs$/.test(name)) {
    out.push(
      args.some((a) => DISK_DEVICE.test(a))
        ? { key: "mkfs_disk", reason: "formatting a system disk", hardline: true }
        : { key: "mkfs", reason: "formatting a filesystem" },
    );
  }
  if (!TEXT_ARGS.has(name)) checkSql(args.join(" "), out);
  if (Object.hasOwn(CHECKS, name)) CHECKS[name]?.(stage, out, depth);
  for (const r of stage.source.redirects) {
    if (r.heredoc === undefined) continue;
    if (SHELLS.has(name)) scanScript(r.heredoc, depth + 1, out);
    if (SQL_CLIENTS.has(name)) checkSql(r.heredoc, out);
  }
  if (SHELLS.has(name)) scanDashC(stage, depth, out);
}

/** `bash -c STR`, `sh -lc STR`, `su -c STR`: inspect STR, and flag it when it runs downloaded code. */
function scanDashC(stage: Stage, depth: number, out: Finding[]): void {
  const words = stage.source.words;
  const offset = words.length - stage.args.length;
  stage.args.forEach((arg, k) => {
    if (!/^-[a-zA-Z]*c[a-zA-Z]*$/.test(arg) && arg !== "--command") return;
    const script = words[offset + k + 1];
    if (!script) return;
    if (script.subs.some(fetchesRemote)) out.push(remoteScript());
    scanScript(script.text, depth + 1, out);
  });
  if (stage.source.words.some((w) => /^[<>]\(/.test(w.text) && w.subs.some(fetchesRemote))) {
    out.push(remoteScript());
  }
}

function checkRm(stage: Stage, out: Finding[]): void {
  let recursive = false;
  let noPreserveRoot = false;
  const targets: string[] = [];
  let optionsDone = false;
  for (const a of stage.args) {
    if (!optionsDone && a === "--") optionsDone = true;
    else if (!optionsDone && a.startsWith("--")) {
      if (a === "--recursive") recursive = true;
      if (a === "--no-preserve-root") noPreserveRoot = true;
    } else if (!optionsDone && /^-[a-zA-Z]+$/.test(a)) {
      if (/[rR]/.test(a)) recursive = true;
    } else targets.push(normalizePath(a));
  }
  const catastrophic = targets.some((t) => ["/", "/*", "~", "~/*", "/.", "/.."].includes(t));
  if (noPreserveRoot || (recursive && catastrophic)) {
    out.push({ key: "rm_root", reason: "recursive delete of / or the home directory", hardline: true });
    return;
  }
  if (stage.viaXargs) out.push({ key: "xargs_rm", reason: "rm fed by xargs" });
  if (recursive) out.push({ key: "recursive_delete", reason: "recursive delete" });
  if (targets.some(isSystemPath))
    out.push({ key: "rm_system", reason: "delete in a root-level or system directory" });
}

function checkChmod(args: string[], out: Finding[]): void {
  const recursive = args.some((a) => a === "--recursive" || /^-[cfvR]*R[cfvR]*$/.test(a));
  const rest = args.filter((a) => !/^-[cfvR]+$/.test(a) && !a.startsWith("--"));
  const [mode, ...targets] = rest;
  if (mode && isWorldWritable(mode))
    out.push({ key: "chmod_world_writable", reason: "world-writable permissions" });
  if (recursive && targets.map(normalizePath).some(isSystemPath)) {
    out.push({ key: "chmod_recursive_system", reason: "recursive chmod on a system directory" });
  }
}

function isWorldWritable(mode: string): boolean {
  if (/^[0-7]{3,4}$/.test(mode)) return "2367".includes(mode.at(-1) as string);
  return mode.split(",").some((clause) => {
    const m = /^([ugoa]*)[+=]([rwxXst]*)$/.exec(clause);
    return m !== null && /[oa]/.test(m[1] as string) && (m[2] as string).includes("w");
  });
}

function checkChown(args: string[], out: Finding[]): void {
  const recursive = args.some((a) => a === "--recursive" || /^-[a-zA-Z]*R/.test(a));
  if (!recursive) return;
  const [owner, ...targets] = args.filter((a) => !a.startsWith("-"));
  if (owner && /^(root|0)([:.]|$)/.test(owner)) {
    out.push({ key: "chown_recursive_root", reason: "recursive chown to root" });
  } else if (targets.map(normalizePath).some(isSystemPath)) {
    out.push({ key: "chown_recursive_system", reason: "recursive chown on a system directory" });
  }
}

function checkDd(args: string[], out: Finding[]): void {
  for (const a of args) {
    if (!a.startsWith("of=")) continue;
    const target = a.slice(3);
    if (DISK_DEVICE.test(target)) out.push(diskOverwrite());
    else if (target.startsWith("/dev/") && !SAFE_DEVICES.test(target)) {
      out.push({ key: "dd_device", reason: "dd writing to a device" });
    } else if (isProtectedPath(normalizePath(target))) out.push(protectedWrite());
  }
}

function checkFind(args: string[], out: Finding[]): void {
  if (args.includes("-delete")) out.push({ key: "find_delete", reason: "find -delete" });
  args.forEach((a, k) => {
    if (/^-(exec|execdir|ok|okdir)$/.test(a) && basename(args[k + 1] ?? "") === "rm") {
      out.push({ key: "find_delete", reason: "find -exec rm" });
    }
  });
}

function checkGit(args: string[], out: Finding[]): void {
  let k = 0;
  while (k < args.length && (args[k] as string).startsWith("-")) {
    k += /^(-C|-c|--git-dir|--work-tree|--namespace)$/.test(args[k] as string) ? 2 : 1;
  }
  const sub = args[k];
  const rest = args.slice(k + 1);
  const shortHas = (letter: string): boolean =>
    rest.some((a) => /^-[a-zA-Z]+$/.test(a) && a.includes(letter));
  if (sub === "reset" && rest.includes("--hard")) {
    out.push({ key: "git_reset_hard", reason: "git reset --hard discards uncommitted work" });
  } else if (
    sub === "push" &&
    (shortHas("f") || rest.some((a) => /^--(force|force-with-lease|mirror)(=|$)/.test(a) || /^\+\S/.test(a)))
  ) {
    out.push({ key: "git_force_push", reason: "git force push rewrites remote history" });
  } else if (sub === "clean" && (shortHas("f") || rest.includes("--force"))) {
    out.push({ key: "git_clean", reason: "git clean -f deletes untracked files" });
  } else if (
    sub === "branch" &&
    (shortHas("D") ||
      ((shortHas("d") || rest.includes("--delete")) && (shortHas("f") || rest.includes("--force"))))
  ) {
    out.push({ key: "git_branch_delete", reason: "git branch -D deletes an unmerged branch" });
  }
}

function checkKill(args: string[], out: Finding[]): void {
  let signalSeen = false;
  for (let k = 0; k < args.length; k++) {
    const a = args[k] as string;
    if (a === "--" || (!a.startsWith("-") && !signalSeen)) signalSeen = true;
    if (a === "-s" || a === "-n") {
      k++;
      signalSeen = true;
    } else if (a === "-1" && signalSeen) {
      out.push({ key: "kill_all", reason: "kill -1 signals every process you own" });
      return;
    } else if (a.startsWith("-")) signalSeen = true;
  }
}

function checkSql(text: string, out: Finding[]): void {
  if (!/\b(drop|truncate|delete)\b/i.test(text)) return;
  if (/\bdrop\s+(table|database|schema|view|index|user|role)\b/i.test(text)) {
    out.push({ key: "sql_drop", reason: "SQL DROP" });
  }
  if (/\btruncate\s+(table\s+)?[\w."`[]+/i.test(text))
    out.push({ key: "sql_truncate", reason: "SQL TRUNCATE" });
  for (const statement of text.split(";")) {
    if (/\bdelete\s+from\s+\S+/i.test(statement) && !/\bwhere\b/i.test(statement)) {
      out.push({ key: "sql_delete_all", reason: "SQL DELETE without WHERE" });
      break;
    }
  }
}

function checkRedirect(r: ShellRedirect, out: Finding[]): void {
  if (!/^(>|>>|>\||&>|&>>|<>|>&)$/.test(r.op)) return;
  if (r.op === ">&" && /^\d+-?$|^-$/.test(r.target.text)) return;
  checkWriteTarget(r.target.text, out);
}

function checkWriteTarget(raw: string, out: Finding[]): void {
  if (DISK_DEVICE.test(raw)) out.push(diskOverwrite());
  else if (raw.startsWith("/dev/") && !SAFE_DEVICES.test(raw)) {
    out.push({ key: "block_device_write", reason: "writing to a device file" });
  } else if (isProtectedPath(normalizePath(raw))) out.push(protectedWrite());
}

function checkCopyTarget(args: string[], out: Finding[]): void {
  const targetDirIdx = args.findIndex((a) => a === "-t" || a === "--target-directory");
  const inline = args.find((a) => a.startsWith("--target-directory="));
  const positional = args.filter((a) => !a.startsWith("-"));
  const dest = inline?.split("=")[1] ?? (targetDirIdx >= 0 ? args[targetDirIdx + 1] : positional.at(-1));
  if (dest !== undefined && positional.length + (targetDirIdx >= 0 || inline ? 1 : 0) >= 2) {
    if (isProtectedPath(normalizePath(dest))) out.push(protectedWrite());
  }
}

/** Whether this pipeline stage runs a script read from stdin (`| sh`, `| sudo bash -s`, `| python3 -`). */
function readsScriptFromStdin(stage: Stage): boolean {
  if (!SHELLS.has(stage.name) && !INTERPRETERS.has(stage.name)) return false;
  if (stage.args.some((a) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(a) || a === "-e")) return false;
  const positional = stage.args.filter((a) => !a.startsWith("-") || a === "-");
  return positional.length === 0 || positional[0] === "-" || stage.args.includes("-s");
}

function checkPipedIntoInterpreter(upstream: Stage[], sink: Stage, depth: number, out: Finding[]): void {
  for (const stage of upstream) {
    if (FETCHERS.has(stage.name)) out.push(remoteScript());
    const decodes =
      (stage.name === "base64" && stage.args.some((a) => /^(-d|-D|--decode)$/.test(a))) ||
      (stage.name === "xxd" && stage.args.some((a) => /^-r/.test(a))) ||
      (stage.name === "openssl" && stage.args.includes("-d"));
    if (decodes) out.push({ key: "decoded_script", reason: "decoded content piped into an interpreter" });
    if ((stage.name === "echo" || stage.name === "printf") && SHELLS.has(sink.name)) {
      scanScript(stage.args.filter((a) => !/^-[neE]+$/.test(a)).join(" "), depth + 1, out);
    }
  }
}

function fetchesRemote(script: string): boolean {
  return parseShell(script).some((p) => p.some((c) => FETCHERS.has(basename(c.words[0]?.text ?? ""))));
}

function remoteScript(): Finding {
  return { key: "remote_script", reason: "running a script downloaded from the network" };
}

function diskOverwrite(): Finding {
  return { key: "disk_overwrite", reason: "overwriting a system disk", hardline: true };
}

function protectedWrite(): Finding {
  return { key: "protected_write", reason: "writing to a protected path (/etc, ~/.ssh or ~/.hermes/.env)" };
}

function basename(word: string): string {
  const slash = word.lastIndexOf("/");
  return slash >= 0 && slash < word.length - 1 ? word.slice(slash + 1) : word;
}

/** Collapses slashes and trailing `/` and `/.`, and spells home as `~`. */
function normalizePath(path: string): string {
  let p = path
    .replace(/^(\$HOME|\$\{HOME\})(?=\/|$)/, "~")
    .replace(/^(\$HERMES_HOME|\$\{HERMES_HOME\})(?=\/|$)/, "~/.hermes");
  p = p.replace(/\/+/g, "/");
  while (p.length > 1 && (p.endsWith("/") || p.endsWith("/.")))
    p = p.endsWith("/") ? p.slice(0, -1) : p.slice(0, -2);
  return p === "~/" ? "~" : p;
}

function isSystemPath(p: string): boolean {
  if (p === "/" || p === "/*" || p === "~" || p === "~/*") return true;
  const m = /^\/([^/]+)(\/.*)?$/.exec(p);
  if (!m) return false;
  return m[2] === undefined || m[2] === "/*" || SYSTEM_DIRS.has(m[1] as string);
}

function isProtectedPath(p: string): boolean {
  return (
    /^\/etc(\/|$)/.test(p) ||
    /^(~|\/root|\/home\/[^/]+)\/\.ssh(\/|$)/.test(p) ||
    /^(~|\/root|\/home\/[^/]+)\/\.hermes\/(profiles\/[^/]+\/)?\.env$/.test(p)
  );
}
