/**
 * Word expansion as bash does it, statically: brace expansion, tilde expansion, parameter
 * expansion (with the `${x:-...}` family), command substitution (through a caller-supplied static
 * evaluator), field splitting on IFS and glob marking. Pure.
 *
 * Values bash only knows at run time (a variable set outside the command, `$(...)` whose output is
 * not static, `$@`) take their most likely value — empty, as in a fresh shell where they are unset —
 * and mark the field `dynamic`, so callers both judge the likely command (`r${X}m -rf ~` is
 * `rm -rf ~`) and fail closed on the uncertainty.
 */
import type { ShellWord, WordPart } from "../../util/shell-parse.js";

/** One argument after expansion. */
export interface Field {
  /** The most likely value. */
  text: string;
  /** Part of the value is only known at run time. */
  dynamic: boolean;
  /** Holds unquoted glob characters: a pattern, not a literal path. */
  glob: boolean;
  /** The word as written, for messages. */
  raw: string;
}

/** A shell variable's value as far as the analyser knows it. */
export interface VarValue {
  /** The value, or the likely value when not known. */
  value: string;
  known: boolean;
  /** What set it, when not known (`$(pgrep hermes)`), for messages and for checks that look at it. */
  source?: string;
}

export interface ExpandEnv {
  /** A variable's value, or undefined when the command does not set it. */
  lookup(name: string): VarValue | undefined;
  home: string;
  hermesHome: string;
  /** The current directory when known. */
  cwd: string | undefined;
  /** Static output of a command substitution body, or undefined when it cannot be known. */
  evalSub(body: string): string | undefined;
}

const MAX_BRACE = 256;
const ALWAYS_SET: Readonly<Record<string, string>> = {
  PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  SHELL: "/bin/bash",
  BASH: "/bin/bash",
};
const DEFAULT_IFS = " \t\n";

type Tok = { c: string; active: boolean } | { part: WordPart };

/** The word as written (quotes shown as they matter), for messages. */
export function rawWord(word: ShellWord): string {
  return word.parts
    .map((p) =>
      p.kind === "lit" ? (p.quoted && /[\s$`"'\\*?[{~]/.test(p.text) ? `'${p.text}'` : p.text) : p.raw,
    )
    .join("");
}

/** True when the word is a plain unquoted literal (no expansions, no quotes). */
export function isPlain(word: ShellWord): boolean {
  return !word.quoted && word.parts.every((p) => p.kind === "lit");
}

/** Expands one word into fields, as bash does for a command's arguments. */
export function expandWord(word: ShellWord, env: ExpandEnv): Field[] {
  const raw = rawWord(word);
  const toks = tokens(word);
  const variants = hasActiveBrace(toks) ? braceExpand(toks) : [toks];
  if (variants === undefined) return [{ text: word.text, dynamic: true, glob: false, raw }];
  const out: Field[] = [];
  for (const v of variants) out.push(...expandVariant(v, env, raw, word.quoted));
  return out;
}

/** Expands all words of a command. */
export function expandWords(words: readonly ShellWord[], env: ExpandEnv): Field[] {
  const out: Field[] = [];
  for (const w of words) out.push(...expandWord(w, env));
  return out;
}

/**
 * Expands a word without splitting or globbing (assignment values, `[[ ]]`, here-strings, heredoc
 * bodies). Tilde expansion applies at the start and, for assignments, after `=`-prefix and `:`.
 */
export function expandToString(
  word: ShellWord,
  env: ExpandEnv,
  assignment = false,
): { text: string; dynamic: boolean } {
  let text = "";
  let dynamic = false;
  word.parts.forEach((p, k) => {
    if (p.kind === "lit") {
      let t = p.text;
      if (!p.quoted && (k === 0 || assignment)) t = tildeInText(t, env, k === 0, assignment);
      text += t;
    } else {
      const v = expandPart(p, env);
      text += v.value;
      dynamic ||= !v.known;
    }
  });
  return { text, dynamic };
}

function tildeInText(t: string, env: ExpandEnv, atStart: boolean, assignment: boolean): string {
  const expand = (s: string) => s.replace(/^~(?=\/|$)/, env.home).replace(/^~\+(?=\/|$)/, env.cwd ?? "~+");
  if (!assignment) return atStart ? expand(t) : t;
  return t
    .split(":")
    .map((seg, i) => (i > 0 || atStart ? expand(seg) : seg))
    .join(":");
}

function tokens(word: ShellWord): Tok[] {
  const out: Tok[] = [];
  for (const p of word.parts) {
    if (p.kind === "lit") for (const c of p.text) out.push({ c, active: !p.quoted });
    else out.push({ part: p });
  }
  return out;
}

function hasActiveBrace(toks: Tok[]): boolean {
  return toks.some((t) => "c" in t && t.active && t.c === "{");
}

/** Bash brace expansion over tokens; undefined when it would produce more than MAX_BRACE words. */
function braceExpand(toks: Tok[]): Tok[][] | undefined {
  const results: Tok[][] = [];
  const work: Tok[][] = [toks];
  while (work.length > 0) {
    const t = work.pop() as Tok[];
    const found = findBrace(t);
    if (!found) {
      results.push(t);
      if (results.length > MAX_BRACE) return undefined;
      continue;
    }
    const { open, close, alternatives } = found;
    const prefix = t.slice(0, open);
    const suffix = t.slice(close + 1);
    for (const alt of alternatives.slice().reverse()) work.push([...prefix, ...alt, ...suffix]);
    if (work.length > MAX_BRACE * 4) return undefined;
  }
  return results;
}

function isActive(t: Tok | undefined, c: string): boolean {
  return t !== undefined && "c" in t && t.active && t.c === c;
}

function findBrace(t: Tok[]): { open: number; close: number; alternatives: Tok[][] } | undefined {
  for (let open = 0; open < t.length; open++) {
    if (!isActive(t[open], "{")) continue;
    let depth = 0;
    const commas: number[] = [];
    for (let k = open + 1; k < t.length; k++) {
      if (isActive(t[k], "{")) depth++;
      else if (isActive(t[k], "}")) {
        if (depth > 0) {
          depth--;
          continue;
        }
        const inner = t.slice(open + 1, k);
        if (commas.length > 0) {
          const alts: Tok[][] = [];
          let from = open + 1;
          for (const c of [...commas, k]) {
            alts.push(t.slice(from, c));
            from = c + 1;
          }
          return { open, close: k, alternatives: alts };
        }
        const seq = sequence(inner);
        if (seq)
          return { open, close: k, alternatives: seq.map((s) => [...s].map((c) => ({ c, active: false }))) };
        break;
      } else if (depth === 0 && isActive(t[k], ",")) commas.push(k);
    }
  }
  return undefined;
}

/** `{1..5}`, `{a..e}`, `{01..10..2}`. */
function sequence(inner: Tok[]): string[] | undefined {
  if (!inner.every((x) => "c" in x && x.active)) return undefined;
  const text = inner.map((x) => ("c" in x ? x.c : "")).join("");
  const num = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(text);
  if (num) {
    const a = Number(num[1]);
    const b = Number(num[2]);
    const step = Math.abs(Number(num[3] ?? 1)) || 1;
    if (Math.abs(b - a) / step > MAX_BRACE) return undefined;
    const width =
      /^-?0\d/.test(num[1] as string) || /^-?0\d/.test(num[2] as string)
        ? Math.max((num[1] as string).length, (num[2] as string).length)
        : 0;
    const out: string[] = [];
    for (let v = a; a <= b ? v <= b : v >= b; v += a <= b ? step : -step)
      out.push(String(v).padStart(width, "0"));
    return out;
  }
  const chr = /^(.)\.\.(.)(?:\.\.(-?\d+))?$/.exec(text);
  if (chr) {
    const a = (chr[1] as string).charCodeAt(0);
    const b = (chr[2] as string).charCodeAt(0);
    const step = Math.abs(Number(chr[3] ?? 1)) || 1;
    const out: string[] = [];
    for (let v = a; a <= b ? v <= b : v >= b; v += a <= b ? step : -step) out.push(String.fromCharCode(v));
    return out;
  }
  return undefined;
}

interface Seg {
  text: string;
  split: boolean;
  glob: boolean;
  dynamic: boolean;
}

function expandVariant(toks: Tok[], env: ExpandEnv, raw: string, quoted: boolean): Field[] {
  const segs: Seg[] = [];
  let k = 0;
  // Tilde expansion: an unquoted `~` starting the word, up to the first `/`.
  if (isActive(toks[0], "~")) {
    let j = 1;
    let user = "";
    while (
      j < toks.length &&
      "c" in (toks[j] as Tok) &&
      (toks[j] as { active: boolean }).active &&
      !isActive(toks[j], "/")
    ) {
      user += (toks[j] as { c: string }).c;
      j++;
    }
    if (j === toks.length || isActive(toks[j], "/")) {
      const home = tildeUser(user, env);
      if (home !== undefined) {
        segs.push({ text: home.text, split: false, glob: false, dynamic: home.dynamic });
        k = j;
      }
    }
  }
  for (; k < toks.length; k++) {
    const t = toks[k] as Tok;
    if ("c" in t) {
      const last = segs.at(-1);
      if (last && !last.split && last.glob === t.active && !last.dynamic) last.text += t.c;
      else segs.push({ text: t.c, split: false, glob: t.active, dynamic: false });
    } else {
      const v = expandPart(t.part, env);
      const unquoted = !("quoted" in t.part) || !t.part.quoted;
      segs.push({ text: v.value, split: unquoted, glob: unquoted, dynamic: !v.known });
    }
  }
  const ifsVar = env.lookup("IFS");
  const ifs = ifsVar ? ifsVar.value : DEFAULT_IFS;
  const ifsDynamic = ifsVar !== undefined && !ifsVar.known;
  // Field splitting: only text produced by unquoted expansions splits. A quoted part (even "")
  // makes a field exist.
  const fields: Array<{ text: string; dynamic: boolean; glob: boolean; hasContent: boolean }> = [];
  let cur = { text: "", dynamic: false, glob: false, hasContent: quoted };
  const flush = () => {
    fields.push(cur);
    cur = { text: "", dynamic: false, glob: false, hasContent: false };
  };
  for (const seg of segs) {
    if (!seg.split) {
      cur.text += seg.text;
      cur.dynamic ||= seg.dynamic;
      cur.glob ||= seg.glob && /[*?[]/.test(seg.text);
      cur.hasContent = true;
      continue;
    }
    if (seg.dynamic || ifsDynamic) cur.dynamic = true;
    for (const ch of seg.text) {
      if (ifs.includes(ch)) {
        if (!/\s/.test(ch) || cur.hasContent) flush();
        if (seg.dynamic || ifsDynamic) cur.dynamic = true;
      } else {
        cur.text += ch;
        cur.glob ||= seg.glob && /[*?[]/.test(ch);
        cur.hasContent = true;
      }
    }
  }
  if (cur.hasContent) fields.push(cur);
  const out = fields.map((f) => ({ text: f.text, dynamic: f.dynamic, glob: f.glob, raw }));
  // A dynamic word that likely expands to nothing still stands for an unknown argument.
  if (out.length === 0 && segs.some((s) => s.dynamic)) return [{ text: "", dynamic: true, glob: false, raw }];
  return out;
}

function tildeUser(user: string, env: ExpandEnv): { text: string; dynamic: boolean } | undefined {
  if (user === "") return { text: env.home, dynamic: false };
  if (user === "+")
    return env.cwd === undefined ? { text: "", dynamic: true } : { text: env.cwd, dynamic: false };
  if (user === "-") return { text: "", dynamic: true };
  if (!/^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/.test(user)) return undefined;
  if (user === "root") return { text: "/root", dynamic: false };
  if (env.home.endsWith(`/${user}`)) return { text: env.home, dynamic: false };
  return { text: `/home/${user}`, dynamic: true };
}

/** The value of one expansion part. */
export function expandPart(p: WordPart, env: ExpandEnv): VarValue {
  switch (p.kind) {
    case "lit":
      return { value: p.text, known: true };
    case "cmdsub": {
      const out = env.evalSub(p.body);
      return out === undefined
        ? { value: "", known: false, source: p.raw }
        : { value: out.replace(/\n+$/, ""), known: true };
    }
    case "procsub":
      return { value: "/dev/fd/63", known: true };
    case "arith": {
      const body = p.body.trim();
      return /^-?\d+$/.test(body)
        ? { value: String(Number(body)), known: true }
        : { value: "0", known: false, source: p.raw };
    }
    case "param":
      return expandParam(p, env);
  }
}

function variable(name: string, env: ExpandEnv): VarValue | undefined {
  const v = env.lookup(name);
  if (v) return v;
  if (name === "HOME") return { value: env.home, known: true };
  if (name === "HERMES_HOME") return { value: env.hermesHome, known: true };
  if (name === "PWD")
    return env.cwd === undefined
      ? { value: "", known: false, source: "$PWD" }
      : { value: env.cwd, known: true };
  if (name === "IFS") return { value: DEFAULT_IFS, known: true };
  // Always set in the terminal's environment, with a well-known shape (`${PATH:0:1}` is "/").
  const likely = ALWAYS_SET[name];
  if (likely !== undefined) return { value: likely, known: false, source: `$${name}` };
  return undefined;
}

function expandParam(p: Extract<WordPart, { kind: "param" }>, env: ExpandEnv): VarValue {
  const unknown = (likely = ""): VarValue => ({ value: likely, known: false, source: p.raw });
  if (/^([0-9]+|[@*])$/.test(p.name) && !p.indirect && !p.length) {
    // Positional parameters: known inside `sh -c CODE arg0 args...`.
    const v = env.lookup(p.name);
    if (v && p.op === "") return v;
    if (p.name === "0" && p.op === "") return { value: "bash", known: true };
  }
  if (p.name === "?bad" || p.name === "(array)" || p.indirect || /^[@*#?$!\-0-9]/.test(p.name)) {
    return unknown();
  }
  if (p.op.startsWith("@")) return unknown();
  let v = variable(p.name, env);
  if (v && p.subscript !== undefined) v = /^(0|@|\*)$/.test(p.subscript) && v.known ? v : unknown();
  const argOf = (): VarValue => {
    if (!p.arg) return { value: "", known: true };
    const a = expandToString(p.arg, env);
    return { value: a.text, known: !a.dynamic, source: p.raw };
  };
  if (p.length) return v?.known ? { value: String(v.value.length), known: true } : unknown("0");
  switch (p.op) {
    case "":
      return v ?? unknown();
    case ":-":
    case "-":
    case ":=":
    case "=": {
      if (v?.known) return (p.op.startsWith(":") ? v.value === "" : false) ? argOf() : v;
      const a = argOf();
      return { value: a.value, known: false, source: p.raw };
    }
    case ":?":
    case "?":
      return v ?? unknown();
    case ":+":
    case "+":
      if (v?.known) return v.value === "" && p.op === ":+" ? { value: "", known: true } : argOf();
      return unknown();
  }
  // Operations apply to the likely value too: `${PATH:0:1}` is "/" in any terminal.
  const base = v ?? unknown();
  const arg = argOf();
  const out = applyOp(p.op, base.value, arg.value);
  if (out === undefined) return unknown(base.value);
  return base.known && arg.known ? { value: out, known: true } : { value: out, known: false, source: p.raw };
}

/** `${x#pat}`, `${x^^}`, `${x:1:2}`, `${x/a/b}`...; undefined when the argument does not parse. */
function applyOp(op: string, value: string, arg: string): string | undefined {
  switch (op) {
    case "#":
    case "##":
    case "%":
    case "%%":
      return trimPattern(value, arg, op);
    case "^^":
      return value.toUpperCase();
    case ",,":
      return value.toLowerCase();
    case "^":
      return value.charAt(0).toUpperCase() + value.slice(1);
    case ",":
      return value.charAt(0).toLowerCase() + value.slice(1);
    case ":": {
      const m = /^\s*(-?\d+)\s*(?::\s*(-?\d+)\s*)?$/.exec(arg);
      if (!m) return undefined;
      const off = Number(m[1]);
      const start = off < 0 ? Math.max(0, value.length + off) : off;
      const len = m[2] === undefined ? undefined : Number(m[2]);
      const end = len === undefined ? value.length : len < 0 ? value.length + len : start + len;
      return value.slice(start, Math.max(start, end));
    }
    default: {
      // `/pat/rep`, `//pat/rep`, `/#pat/rep`, `/%pat/rep`.
      const slash = arg.indexOf("/");
      const pat = slash < 0 ? arg : arg.slice(0, slash);
      const rep = slash < 0 ? "" : arg.slice(slash + 1);
      if (pat === "") return value;
      const re = globRegex(pat);
      const flags = op === "//" ? "g" : "";
      const anchored = op === "/#" ? `^(?:${re})` : op === "/%" ? `(?:${re})$` : re;
      return value.replace(new RegExp(anchored, flags), () => rep);
    }
  }
}

function trimPattern(value: string, pat: string, op: string): string {
  const re = globRegex(pat);
  const longest = op.length === 2;
  if (op.startsWith("#")) {
    for (let n = longest ? value.length : 0; longest ? n >= 0 : n <= value.length; n += longest ? -1 : 1) {
      if (new RegExp(`^(?:${re})$`, "s").test(value.slice(0, n))) return value.slice(n);
    }
    return value;
  }
  for (let n = longest ? 0 : value.length; longest ? n <= value.length : n >= 0; n += longest ? 1 : -1) {
    if (new RegExp(`^(?:${re})$`, "s").test(value.slice(n))) return value.slice(0, n);
  }
  return value;
}

/** A bash glob pattern (`*`, `?`, `[...]`) as a regular expression source, unanchored. */
export function globRegex(pat: string): string {
  let out = "";
  for (let i = 0; i < pat.length; i++) {
    const c = pat[i] as string;
    if (c === "*") out += "[\\s\\S]*";
    else if (c === "?") out += "[\\s\\S]";
    else if (c === "[") {
      const close = pat.indexOf("]", i + 2);
      if (close < 0) out += "\\[";
      else {
        let cls = pat.slice(i + 1, close);
        if (cls.startsWith("!")) cls = `^${cls.slice(1)}`;
        out += `[${cls.replace(/\\/g, "\\\\")}]`;
        i = close;
      }
    } else if (c === "\\" && i + 1 < pat.length) {
      out += (pat[i + 1] as string).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
      i++;
    } else out += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return out;
}
