/**
 * Commands that run another command: sudo, doas, env (incl. -S), nohup, setsid, timeout, nice,
 * ionice, stdbuf, chrt, taskset, flock, chroot, unshare, strace, command, builtin, exec, busybox,
 * su -c, runuser, script -c, watch, xargs, parallel... `peel` strips them and returns the command
 * that really runs, reporting their own risky options (sudo -S, sudo -s) and handing code strings
 * (`su -c STR`, `watch STR`, `sudo -s CMD`) to the shell analyser.
 */
import { judgePath } from "./effects.js";
import type { Invocation } from "./model.js";
import { targetsOf } from "./paths.js";
import type { Field, VarValue } from "./words.js";

interface WrapperSpec {
  /** Short options taking an argument. */
  arg?: string;
  /** Long options taking an argument (when not given as `--opt=value`). */
  longArg?: readonly string[];
  /** Operands between the options and the command (timeout's duration, flock's file). */
  positional?: number;
  /** The short option whose argument is shell code (su -c, flock -c, script -c). */
  code?: string;
  /** Long spelling of the code option. */
  longCode?: string;
  /** Short options that mean "no command follows" (ionice -p, sudo -l). */
  noCommand?: string;
  /** The rest is joined into one shell command (watch, su without -c runs nothing). */
  joined?: boolean;
}

const SPECS: Record<string, WrapperSpec> = {
  sudo: {
    arg: "CDghpRTUurt",
    longArg: [
      "--chdir",
      "--group",
      "--host",
      "--prompt",
      "--role",
      "--type",
      "--user",
      "--other-user",
      "--close-from",
      "--command-timeout",
    ],
    noCommand: "lvkKV",
  },
  doas: { arg: "uC", noCommand: "L" },
  pkexec: { longArg: ["--user"] },
  nohup: {},
  coproc: {},
  setsid: {},
  time: { arg: "of", longArg: ["--output", "--format"] },
  nice: { arg: "n", longArg: ["--adjustment"] },
  ionice: { arg: "cnp", noCommand: "pP" },
  stdbuf: { arg: "ioe", longArg: ["--input", "--output", "--error"] },
  chrt: { arg: "TPD", positional: 1, noCommand: "pm" },
  taskset: { arg: "", positional: 1, noCommand: "p" },
  timeout: { arg: "sk", longArg: ["--signal", "--kill-after"], positional: 1 },
  flock: {
    arg: "wEc",
    longArg: ["--timeout", "--conflict-exit-code", "--command"],
    positional: 1,
    code: "c",
    longCode: "--command",
  },
  chroot: { longArg: ["--userspec", "--groups"], positional: 1 },
  unshare: { arg: "SGRw", longArg: ["--setuid", "--setgid", "--root", "--wd", "--map-user", "--map-group"] },
  nsenter: { arg: "tSGwr", longArg: ["--target", "--setuid", "--setgid", "--wd", "--root"] },
  prlimit: { arg: "p", noCommand: "p" },
  "systemd-run": {
    arg: "pMEHu",
    longArg: [
      "--unit",
      "--property",
      "--description",
      "--slice",
      "--uid",
      "--gid",
      "--working-directory",
      "--setenv",
      "--machine",
      "--host",
      "--on-calendar",
      "--on-active",
    ],
  },
  strace: { arg: "oeEsuIpPbaSX", noCommand: "p" },
  ltrace: { arg: "oeEsuapnSlLx", noCommand: "p" },
  catchsegv: {},
  firejail: {},
  proxychains: { arg: "f" },
  proxychains4: { arg: "f" },
  torsocks: { arg: "uaPpi" },
  torify: {},
  tsocks: {},
  caffeinate: { arg: "tw" },
  command: { noCommand: "vV" },
  builtin: {},
  exec: { arg: "a" },
  "su-exec": { positional: 1 },
  gosu: { positional: 1 },
  sg: { positional: 1, code: "c" },
  faketime: { arg: "f", positional: 1 },
  numactl: {
    arg: "CNmpPil",
    longArg: ["--cpunodebind", "--membind", "--physcpubind", "--preferred", "--interleave"],
  },
  cgexec: { arg: "g" },
  setpriv: {
    longArg: [
      "--reuid",
      "--regid",
      "--groups",
      "--inh-caps",
      "--bounding-set",
      "--securebits",
      "--selinux-label",
      "--apparmor-profile",
    ],
  },
  su: {
    arg: "sgGw",
    longArg: ["--shell", "--group", "--supp-group", "--whitelist-environment"],
    code: "c",
    longCode: "--command",
  },
  runuser: {
    arg: "ugGsw",
    longArg: ["--user", "--group", "--supp-group", "--shell", "--whitelist-environment"],
    code: "c",
    longCode: "--command",
  },
  script: {
    arg: "cEIOBTm",
    longArg: ["--log-in", "--log-out", "--log-io", "--log-timing", "--echo", "--logging-format"],
    code: "c",
    longCode: "--command",
  },
  watch: { arg: "nqd", longArg: ["--interval", "--differences"], joined: true },
};

function fieldOf(text: string, like?: Field): Field {
  return { text, dynamic: like?.dynamic ?? false, glob: false, raw: like?.raw ?? text };
}

/** Basename of a command word. */
export function commandName(word: string): string {
  const slash = word.lastIndexOf("/");
  return slash >= 0 && slash < word.length - 1 ? word.slice(slash + 1) : word;
}

/** The effect on the invocation of a wrapper's options, and the command it runs. */
export interface Peeled {
  argv: Field[];
  inv: Invocation;
}

/**
 * Strips wrapper commands. Returns undefined when no further command runs (or when the wrapper's
 * command was already handed to the analyser as code).
 */
export function peel(argv: Field[], inv: Invocation): Peeled | undefined {
  let cur = inv;
  let args = argv;
  for (let guard = 0; guard < 32 && args.length > 0; guard++) {
    const head = args[0] as Field;
    const name = commandName(head.text);
    if (name === "env") {
      const r = peelEnv(args.slice(1), cur);
      if (!r) return undefined;
      ({ argv: args, inv: cur } = r);
      continue;
    }
    if (name === "xargs" || name === "parallel") {
      ({ argv: args, inv: cur } = peelXargs(name, args.slice(1), cur));
      continue;
    }
    if (name === "busybox" || name === "toybox") {
      args = args.slice(1);
      if (args[0]?.text.startsWith("-")) return undefined;
      continue;
    }
    if (
      name === "sudoedit" ||
      (name === "sudo" &&
        args.slice(1).some((a) => /^-[a-zA-Z]*e[a-zA-Z]*$/.test(a.text) && !/[CDghpRTUurt]/.test(a.text)))
    ) {
      for (const f of args.slice(1).filter((a) => !a.text.startsWith("-")))
        judgePath(cur, f, "overwrite", { verb: "sudoedit" });
      return undefined;
    }
    const spec = Object.hasOwn(SPECS, name) ? SPECS[name] : undefined;
    if (!spec) return { argv: args, inv: cur };
    const r = peelGeneric(name, spec, args.slice(1), cur);
    if (!r) return undefined;
    ({ argv: args, inv: cur } = r);
  }
  return args.length > 0 ? { argv: args, inv: cur } : undefined;
}

function peelGeneric(name: string, spec: WrapperSpec, args: Field[], inv: Invocation): Peeled | undefined {
  let k = 0;
  const flags = new Set<string>();
  let code: Field | undefined;
  let cwd: string | undefined;
  for (; k < args.length; k++) {
    const a = (args[k] as Field).text;
    if (a === "--") {
      k++;
      break;
    }
    if (a.startsWith("--")) {
      const [opt = "", value] = a.split(/=(.*)/s);
      if (spec.longCode && opt === spec.longCode)
        code = value !== undefined ? fieldOf(value, args[k]) : args[++k];
      else if (spec.longArg?.includes(opt) && value === undefined) {
        if (opt === "--chdir" || opt === "--wd" || opt === "--working-directory") cwd = args[k + 1]?.text;
        k++;
      } else if (opt === "--chdir" || opt === "--wd" || opt === "--working-directory") cwd = value;
      flags.add(opt);
      continue;
    }
    if (!/^-[A-Za-z0-9]/.test(a)) break;
    for (let j = 1; j < a.length; j++) {
      const c = a[j] as string;
      flags.add(c);
      const rest = a.slice(j + 1);
      if (spec.code === c) {
        code = rest !== "" ? fieldOf(rest, args[k]) : args[++k];
        break;
      }
      if (spec.arg?.includes(c)) {
        const value = rest !== "" ? rest : args[++k]?.text;
        if (name === "sudo" && c === "D") cwd = value;
        break;
      }
      if (/\d/.test(c) && name === "nice") break;
    }
  }
  if (name === "sudo" || name === "doas") {
    if (flags.has("S") || flags.has("A") || flags.has("--stdin") || flags.has("--askpass")) {
      inv.out.push({ key: "sudo_stdin", reason: `${name} reading a password non-interactively` });
    }
    const shellMode = flags.has("s") || flags.has("i") || flags.has("--shell") || flags.has("--login");
    if (shellMode) {
      const rest = args.slice(k);
      if (rest.length === 0) {
        inv.out.push({ key: "sudo_shell", reason: `root shell via ${name}` });
        return undefined;
      }
      inv.engine.shell(rest.map((f) => f.text).join(" "), inv.scope, inv.out, `${name} -s`);
      return undefined;
    }
  }
  if (spec.noCommand && [...spec.noCommand].some((c) => flags.has(c))) return undefined;
  const next = cwd === undefined ? inv : withCwd(inv, cwd);
  if (code) {
    if (code.dynamic) inv.engine.code({ kind: "shell", name }, { kind: "opaque", via: code.raw }, next);
    else inv.engine.shell(code.text, next.scope, inv.out, `${name} -c`);
    return undefined;
  }
  if (name === "su" || (name === "runuser" && !flags.has("u") && !flags.has("--user"))) {
    // su [-] [user [shell arguments...]]: arguments after the user go to the user's shell.
    let r = args.slice(k);
    if (r[0]?.text === "-") r = r.slice(1);
    const shellArgs = r.slice(1);
    if (shellArgs.length > 0) return { argv: [fieldOf("sh"), ...shellArgs], inv: next };
    if (name === "su") inv.out.push({ key: "sudo_shell", reason: "root shell via su" });
    return undefined;
  }
  k += spec.positional ?? 0;
  let rest = args.slice(k);
  // flock FILE -c STRING: the code option may follow the file.
  if (spec.code && (rest[0]?.text === `-${spec.code}` || rest[0]?.text === spec.longCode)) {
    const c = rest[1];
    if (!c) return undefined;
    if (c.dynamic) inv.engine.code({ kind: "shell", name }, { kind: "opaque", via: c.raw }, next);
    else inv.engine.shell(c.text, next.scope, inv.out, `${name} -c`);
    return undefined;
  }
  rest = rest.filter((_f, i) => i > 0 || rest[0]?.text !== "--");
  if (name === "chroot" && rest.length === 0) return undefined;
  if (spec.joined) {
    if (!flags.has("x") && !flags.has("--exec") && rest.length > 0) {
      inv.engine.shell(rest.map((f) => f.text).join(" "), next.scope, inv.out, name);
      return undefined;
    }
  }
  return { argv: rest, inv: next };
}

function withCwd(inv: Invocation, dir: string): Invocation {
  const f = fieldOf(dir);
  const targets = targetsOf(f, inv.scope.cwds);
  const cwds = targets.every((t) => t.abs) ? targets.map((t) => t.abs) : undefined;
  return { ...inv, scope: { ...inv.scope, cwds } };
}

/** env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... COMMAND */
function peelEnv(args: Field[], inv: Invocation): Peeled | undefined {
  let k = 0;
  let cur = inv;
  const split: Field[] = [];
  for (; k < args.length; k++) {
    const f = args[k] as Field;
    const a = f.text;
    if (a === "--") {
      k++;
      break;
    }
    if (a === "-") continue;
    if (a.startsWith("--")) {
      const [opt = "", value] = a.split(/=(.*)/s);
      const v = value ?? (/^--(unset|chdir|split-string)$/.test(opt) ? args[++k]?.text : undefined);
      if (opt === "--chdir" && v !== undefined) cur = withCwd(cur, v);
      if (opt === "--split-string" && v !== undefined) split.push(...splitString(v, f, inv));
      continue;
    }
    if (a.startsWith("-")) {
      for (let j = 1; j < a.length; j++) {
        const c = a[j] as string;
        if ("uCSP".includes(c)) {
          const value = j + 1 < a.length ? a.slice(j + 1) : (args[++k]?.text ?? "");
          if (c === "C") cur = withCwd(cur, value);
          if (c === "S") split.push(...splitString(value, f, inv));
          break;
        }
      }
      continue;
    }
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(a)) continue;
    break;
  }
  const argv = [...split, ...args.slice(k)];
  return argv.length > 0 ? { argv, inv: cur } : undefined;
}

/** env -S: splits on blanks with quotes and backslashes; expands `${NAME}` (not `~`). */
function splitString(s: string, like: Field, inv: Invocation): Field[] {
  const out: Field[] = [];
  let cur = "";
  let has = false;
  let quote: string | undefined;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && i + 1 < s.length) cur += s[++i];
      else cur += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      has = true;
    } else if (c === "\\" && i + 1 < s.length) {
      const n = s[++i] as string;
      cur += n === "_" ? " " : n === "n" ? "\n" : n === "t" ? "\t" : n;
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) out.push(fieldOf(cur, like));
      cur = "";
      has = false;
    } else if (c === "#" && !has && cur === "") break;
    else {
      cur += c;
      has = true;
    }
  }
  if (has || cur) out.push(fieldOf(cur, like));
  const scope = inv.scope;
  return out.map((f) => {
    let dynamic = f.dynamic;
    const text = f.text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, n: string) => {
      const v: VarValue | undefined =
        scope.vars.get(n) ??
        (n === "HOME"
          ? { value: scope.ctx.home, known: true }
          : n === "HERMES_HOME"
            ? { value: scope.ctx.hermesHome, known: true }
            : undefined);
      if (!v?.known) dynamic = true;
      return v?.value ?? "";
    });
    return { ...f, text, dynamic };
  });
}

/** xargs/parallel: the command gets arguments from standard input (known when the input is static). */
function peelXargs(name: string, args: Field[], inv: Invocation): Peeled {
  let k = 0;
  let replace: string | undefined;
  let delimiter: string | undefined;
  for (; k < args.length; k++) {
    const a = (args[k] as Field).text;
    if (a === "--") {
      k++;
      break;
    }
    if (!a.startsWith("-") || a === "-") break;
    if (name === "parallel") {
      if (/^-[jSN]$|^--(jobs|sshlogin|arg-file|colsep|delimiter)$/.test(a)) k++;
      continue;
    }
    if (/^-I$/.test(a)) replace = args[++k]?.text ?? "{}";
    else if (/^-I./.test(a)) replace = a.slice(2);
    else if (/^-i$|^--replace$/.test(a)) replace = "{}";
    else if (/^--replace=/.test(a)) replace = a.slice(10);
    else if (a === "-0" || a === "--null") delimiter = "\0";
    else if (a === "-d") delimiter = args[++k]?.text;
    else if (/^--delimiter=/.test(a)) delimiter = a.slice(12);
    else if (
      /^-[aEeLlnPs]$|^--(arg-file|eof|max-lines|max-args|max-procs|max-chars|process-slot-var)$/.test(a)
    )
      k++;
  }
  let rest = args.slice(k);
  // parallel's `:::` arguments are inline.
  let inline: Field[] | undefined;
  if (name === "parallel") {
    const sep = rest.findIndex((f) => f.text === ":::" || f.text === "::::");
    if (sep >= 0) {
      inline = rest.slice(sep + 1).filter((f) => f.text !== ":::");
      rest = rest.slice(0, sep);
    }
  }
  if (rest.length === 0) rest = [fieldOf("echo")];
  const stdin = inv.stdin;
  const items =
    inline ?? (stdin?.kind === "text" ? tokens(stdin.text, delimiter).map((t) => fieldOf(t)) : undefined);
  if (items === undefined) {
    return { argv: rest, inv: { ...inv, argsFromStdin: true } };
  }
  if (replace !== undefined || name === "parallel") {
    const r = replace ?? "{}";
    const has = rest.some((f) => f.text.includes(r));
    const argv =
      items.length === 0
        ? rest
        : rest.map((f) =>
            f.text.includes(r) ? fieldOf(items.map((i) => f.text.split(r).join(i.text)).join(" "), f) : f,
          );
    return { argv: has ? argv : [...rest, ...items], inv };
  }
  return { argv: [...rest, ...items], inv };
}

function tokens(text: string, delimiter: string | undefined): string[] {
  if (delimiter !== undefined) return text.split(delimiter).filter((t) => t !== "" && t !== "\n");
  const out: string[] = [];
  for (const m of text.matchAll(/'([^']*)'|"([^"]*)"|((?:\\.|[^\s'"])+)/g))
    out.push(m[1] ?? m[2] ?? (m[3] as string).replace(/\\(.)/g, "$1"));
  return out;
}
