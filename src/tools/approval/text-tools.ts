/**
 * Tools whose arguments are little programs that can run commands or write files: sed (`e`,
 * `s///e`, `w file`, `-i`), awk (`system()`, pipes to and from commands, `print > file`) and find
 * (`-delete`, `-exec`, `-execdir`, `-ok`, `-fprint`).
 */
import { judgePath, unresolvedArgs } from "./effects.js";
import type { Check, Invocation } from "./model.js";
import { resolveLong } from "./options.js";
import type { Field } from "./words.js";

function field(text: string, like?: Field): Field {
  return { text, dynamic: like?.dynamic ?? false, glob: like?.glob ?? false, raw: like?.raw ?? text };
}

interface SedEffects {
  /** Shell commands the script runs (`e cmd`, `s/x/cmd/e`); undefined entries: input lines run as commands. */
  exec: Array<string | undefined>;
  /** Files the script writes (`w file`, `s///w file`). */
  writes: string[];
}

/** Finds the commands a GNU sed script runs and the files it writes. */
export function scanSed(script: string): SedEffects {
  const fx: SedEffects = { exec: [], writes: [] };
  const s = script;
  let i = 0;
  const restOfLine = (): string => {
    const end = s.indexOf("\n", i);
    const text = s.slice(i, end < 0 ? s.length : end);
    i = end < 0 ? s.length : end + 1;
    return text.trim();
  };
  const readDelimited = (delim: string): string => {
    let out = "";
    while (i < s.length && s[i] !== delim) {
      if (s[i] === "\\" && i + 1 < s.length) {
        out += s.slice(i, i + 2);
        i += 2;
      } else out += s[i++];
    }
    i++;
    return out;
  };
  while (i < s.length) {
    const c = s[i] as string;
    if (/[\s;{}!,]/.test(c) || /[0-9$~]/.test(c)) {
      i++;
      continue;
    }
    if (c === "/" || (c === "\\" && i + 1 < s.length)) {
      i += c === "\\" ? 2 : 1;
      readDelimited(c === "\\" ? (s[i - 1] as string) : "/");
      continue;
    }
    i++;
    if (c === "#") restOfLine();
    else if ("aic".includes(c)) restOfLine();
    else if (":btTrRvlLqQ".includes(c) && c !== "l") {
      while (i < s.length && !/[;\n}]/.test(s[i] as string)) i++;
    } else if (c === "w" || c === "W") fx.writes.push(restOfLine());
    else if (c === "e") {
      const cmd = restOfLine();
      fx.exec.push(cmd === "" ? undefined : cmd);
    } else if (c === "s" || c === "y") {
      const delim = s[i++] ?? "/";
      readDelimited(delim);
      const replacement = readDelimited(delim);
      if (c === "s") {
        let flags = "";
        while (i < s.length && /[gpeIiMm0-9]/.test(s[i] as string)) flags += s[i++];
        if (flags.includes("e"))
          fx.exec.push(/\\[0-9]|&/.test(replacement) ? undefined : replacement.replace(/\\(.)/g, "$1"));
        if (s[i] === "w") {
          i++;
          fx.writes.push(restOfLine());
        }
      }
    }
  }
  return fx;
}

const sed: Check = (inv) => {
  const scripts: string[] = [];
  const operands: Field[] = [];
  let inPlace = false;
  let hasScriptOpt = false;
  const args = inv.args;
  for (let k = 0; k < args.length; k++) {
    const f = args[k] as Field;
    const a = f.text;
    if (a === "--") {
      operands.push(...args.slice(k + 1));
      break;
    }
    if (a.startsWith("--")) {
      const [name = "", value] = a.slice(2).split(/=(.*)/s);
      const names = resolveLong(name, {
        "in-place": 2,
        expression: 1,
        file: 1,
        quiet: 0,
        silent: 0,
        debug: 0,
        "follow-symlinks": 0,
        "line-length": 1,
        "null-data": 0,
        "zero-terminated": 0,
        "regexp-extended": 0,
        separate: 0,
        sandbox: 0,
        unbuffered: 0,
        posix: 0,
      });
      if (names.includes("in-place")) inPlace = true;
      if (names.length === 1 && names[0] === "expression") {
        scripts.push(value ?? args[++k]?.text ?? "");
        hasScriptOpt = true;
      } else if (names.length === 1 && names[0] === "file") {
        hasScriptOpt = true;
        if (value === undefined) k++;
      } else if (names.length === 1 && names[0] === "line-length" && value === undefined) k++;
      continue;
    }
    if (a.startsWith("-") && a.length > 1) {
      for (let j = 1; j < a.length; j++) {
        const c = a[j] as string;
        if (c === "i") {
          inPlace = true;
          break; // the rest of the cluster is the backup suffix
        }
        if (c === "e" || c === "f" || c === "l") {
          const value = j + 1 < a.length ? a.slice(j + 1) : (args[++k]?.text ?? "");
          if (c === "e") scripts.push(value);
          if (c !== "l") hasScriptOpt = true;
          break;
        }
      }
      continue;
    }
    operands.push(f);
  }
  if (!hasScriptOpt && operands.length > 0) scripts.push((operands.shift() as Field).text);
  for (const script of scripts) {
    const fx = scanSed(script);
    for (const cmd of fx.exec) {
      if (cmd === undefined)
        inv.out.push({
          key: "opaque_code",
          reason: "could not analyse sed: its e command runs text from its input as shell commands",
        });
      else inv.engine.shell(cmd, inv.scope, inv.out, "sed's e command");
    }
    for (const w of fx.writes)
      if (w !== "" && !/^\/dev\/(stdout|stderr)$/.test(w))
        judgePath(inv, field(w), "overwrite", { verb: "sed w" });
  }
  if (inPlace) {
    unresolvedArgs(inv, operands);
    for (const f of operands) judgePath(inv, f, "overwrite", { verb: "sed -i" });
  }
};

/** Shell commands in an awk program: `system("...")`, `print | "..."`, `"..." | getline`; files it writes. */
export function scanAwk(program: string): { exec: Array<string | undefined>; writes: string[] } {
  const exec: Array<string | undefined> = [];
  const writes: string[] = [];
  const str = String.raw`"((?:[^"\\]|\\.)*)"`;
  const unquote = (t: string) =>
    t.replace(/\\(.)/g, (_m, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c));
  for (const m of program.matchAll(/\bsystem\s*\(\s*([^)]*)\)/g)) {
    const lit = new RegExp(`^${str}$`).exec((m[1] as string).trim());
    exec.push(lit ? unquote(lit[1] as string) : undefined);
  }
  for (const m of program.matchAll(new RegExp(String.raw`\|&?\s*(${str}|[A-Za-z_(])`, "g"))) {
    exec.push(m[2] !== undefined ? unquote(m[2]) : undefined);
  }
  for (const m of program.matchAll(new RegExp(String.raw`${str}\s*\|&?\s*getline`, "g")))
    exec.push(unquote(m[1] as string));
  for (const m of program.matchAll(new RegExp(String.raw`(?:print|printf)[^;}\n]*?>>?\s*${str}`, "g")))
    writes.push(unquote(m[1] as string));
  return { exec, writes };
}

const awk: Check = (inv) => {
  const args = inv.args;
  const programs: string[] = [];
  let fromFile = false;
  let k = 0;
  for (; k < args.length; k++) {
    const a = (args[k] as Field).text;
    if (a === "--") {
      k++;
      break;
    }
    if (!a.startsWith("-") || a === "-") break;
    if (/^-[Fvfi]$|^-[lE]$|^--(file|include|load|assign|field-separator)$/.test(a)) {
      if (/^-f$|^-E$|^--file$/.test(a)) fromFile = true;
      k++;
    } else if (/^-e$|^--source$/.test(a)) programs.push(args[++k]?.text ?? "");
    else if (/^--source=/.test(a)) programs.push(a.slice(9));
    else if (/^-f./.test(a)) fromFile = true;
  }
  if (programs.length === 0 && !fromFile && k < args.length) programs.push((args[k] as Field).text);
  for (const p of programs) {
    const fx = scanAwk(p);
    for (const cmd of fx.exec) {
      const consumer =
        /^\s*(\S+)/
          .exec(cmd ?? "")?.[1]
          ?.split("/")
          .pop() ?? "";
      if (
        cmd !== undefined &&
        /^(sh|bash|zsh|dash|ksh|python\d*|perl|ruby|node|php|lua)$/.test(consumer) &&
        !/\s-c\s/.test(cmd)
      ) {
        inv.out.push({
          key: "opaque_code",
          reason: `could not analyse ${inv.name}: it pipes text built at run time into ${consumer}`,
        });
      } else if (cmd === undefined)
        inv.out.push({
          key: "opaque_code",
          reason: `could not analyse ${inv.name}: it runs a shell command built at run time`,
        });
      else inv.engine.shell(cmd, inv.scope, inv.out, `${inv.name}'s system()`);
    }
    for (const w of fx.writes) judgePath(inv, field(w), "overwrite", { verb: `${inv.name} print >` });
  }
};

const FIND_FILTERS =
  /^-(i?name|i?path|i?wholename|i?regex|newer\w*|[acm]time|[acm]min|size|empty|user|group|nouser|nogroup|perm|uid|gid|links|inum|samefile|i?lname|used|fstype|context|readable|writable|executable)$/;

const find: Check = (inv) => {
  const args = inv.args;
  let k = 0;
  while (k < args.length && /^-(H|L|P|D|O\d*)$/.test((args[k] as Field).text))
    k += (args[k] as Field).text === "-D" ? 2 : 1;
  const starts: Field[] = [];
  while (k < args.length && !/^[-(!]/.test((args[k] as Field).text)) starts.push(args[k++] as Field);
  if (starts.length === 0) starts.push(field("."));
  const expr = args.slice(k);
  const narrowed = expr.some((a) => FIND_FILTERS.test(a.text));
  unresolvedArgs(inv, starts);
  for (let j = 0; j < expr.length; j++) {
    const a = (expr[j] as Field).text;
    if (a === "-delete") {
      inv.out.push({
        key: "find_delete",
        reason: `find -delete under ${starts.map((s) => s.text).join(" ")}`,
      });
      for (const s of starts)
        judgePath({ ...inv, narrowed }, s, "delete", { verb: "find -delete", recursive: true });
    } else if (/^-(fprint0?|fprintf|fls)$/.test(a)) {
      const target = expr[j + 1];
      if (target) judgePath(inv, target, "overwrite", { verb: `find ${a}` });
    } else if (/^-(exec|execdir|ok|okdir)$/.test(a)) {
      const end = expr.findIndex((x, n) => n > j && (x.text === ";" || x.text === "+"));
      const cmd = expr.slice(j + 1, end < 0 ? expr.length : end);
      j = end < 0 ? expr.length : end;
      for (const s of starts) {
        // `{}` stands for the start path and everything under it.
        const argv = cmd.map((c) => (c.text.includes("{}") ? field(c.text.split("{}").join(s.text), s) : c));
        const deletes = /^(rm|unlink|shred|rmdir|srm)$/.test((argv[0]?.text ?? "").split("/").pop() ?? "");
        if (deletes)
          inv.out.push({ key: "find_delete", reason: `find ${a} ${argv[0]?.text} under ${s.text}` });
        inv.engine.run(argv, inv, { narrowed, subtree: true });
      }
    }
  }
};

export const TEXT_CHECKS: Readonly<Record<string, Check>> = {
  sed,
  gsed: sed,
  awk,
  gawk: awk,
  mawk: awk,
  nawk: awk,
  busybox_awk: awk,
  find,
  gfind: find,
};

export type { Invocation };
