/**
 * What a script establishes for the commands after it: variables it assigns (trusted only when
 * assigned unconditionally at top level), the directory `cd` moves to (several candidates when a
 * `cd` may fail), and fork bombs among the functions it defines. Pure.
 */
import type { ParsedScript, PipelineInfo, ShellWord, SimpleCommand } from "../../util/shell-parse.js";
import type { Scope } from "./model.js";
import { targetsOf } from "./paths.js";
import type { Finding } from "./types.js";
import { type ExpandEnv, expandToString, expandWords, isPlain, rawWord } from "./words.js";

const MAX_CWDS = 8;
const ASSIGN = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/** `NAME=value`: the name and `=` unquoted in the word's first part. */
export function isAssignment(w: ShellWord): boolean {
  const first = w.parts[0];
  return first?.kind === "lit" && !first.quoted && ASSIGN.test(first.text);
}

/** A function that runs itself in the background or twice through a pipe: `:(){ :|:& };:`. */
export function forkBombs(parsed: ParsedScript, out: Finding[]): void {
  for (const name of parsed.functions) {
    const body = parsed.pipelines.filter((p) => p.functions.includes(name));
    const calls = body.filter((p) => p.commands.some((c) => c.words[0]?.text === name));
    if (
      calls.some((p) => p.background || p.commands.filter((c) => c.words[0]?.text === name).length > 1) ||
      calls.length > 1
    ) {
      out.push({
        key: "fork_bomb",
        reason: `fork bomb (the function ${name} starts copies of itself): never allowed`,
        hardline: true,
      });
    }
  }
}

/** Variables whose value depends on control flow or input: never trusted. */
export function collectUnsound(parsed: ParsedScript, scope: Scope): void {
  for (const p of parsed.pipelines) {
    const unsoundPlace =
      p.nested ||
      p.loop ||
      p.background ||
      p.commands.length > 1 ||
      p.connector === "&&" ||
      p.connector === "||";
    for (const c of p.commands) {
      if (c.keyword === "for") {
        if (c.words[0]) scope.unsound.add(c.words[0].text);
        continue;
      }
      const names = assignedNames(c);
      for (const n of names.all) if (unsoundPlace || names.fromInput.includes(n)) scope.unsound.add(n);
    }
  }
}

function assignedNames(c: SimpleCommand): { all: string[]; fromInput: string[] } {
  const all: string[] = [];
  const fromInput: string[] = [];
  let k = 0;
  for (; k < c.words.length && isAssignment(c.words[k] as ShellWord); k++) {
    all.push((c.words[k] as ShellWord).text.split(/[[+=]/)[0] as string);
  }
  const name = c.words[k]?.text;
  const rest = c.words.slice(k + 1).map((w) => w.text);
  if (name && /^(declare|typeset|local|export|readonly)$/.test(name)) {
    for (const r of rest) if (ASSIGN.test(r)) all.push(r.split(/[[+=]/)[0] as string);
    if (rest.some((r) => /^-[a-zA-Z]*[naA]/.test(r)))
      for (const r of rest) if (!r.startsWith("-")) fromInput.push(r.split("=")[0] as string);
  }
  if (name && /^(read|mapfile|readarray|getopts|printf)$/.test(name)) {
    const targets =
      name === "printf"
        ? rest.filter((_r, i) => rest[i - 1] === "-v")
        : rest.filter((r) => /^[A-Za-z_]\w*$/.test(r));
    all.push(...targets);
    fromInput.push(...targets);
  }
  return { all: [...all, ...fromInput], fromInput };
}

/** After a pipeline: the assignments and `cd` it made, for the rest of the script. */
export function afterPipeline(p: PipelineInfo, next: string, scope: Scope, env: ExpandEnv): void {
  if (p.commands.length !== 1) return;
  const cmd = p.commands[0] as SimpleCommand;
  if (cmd.keyword === "for") {
    const [v, ...items] = cmd.words;
    if (v)
      scope.vars.set(v.text, {
        value: items[0] ? expandToString(items[0], env).text : "",
        known: false,
        source: `for ${v.text}`,
      });
    return;
  }
  if (cmd.keyword) return;
  const assigns: ShellWord[] = [];
  let k = 0;
  while (k < cmd.words.length && isAssignment(cmd.words[k] as ShellWord))
    assigns.push(cmd.words[k++] as ShellWord);
  const rest = cmd.words.slice(k);
  const name = rest[0] && isPlain(rest[0]) ? rest[0].text : undefined;
  if (rest.length === 0) for (const a of assigns) assign(a, scope, env);
  else if (name && /^(declare|typeset|local|export|readonly)$/.test(name)) {
    for (const a of rest.slice(1)) if (ASSIGN.test(a.text)) assign(a, scope, env);
  } else if (name === "unset") {
    for (const a of rest.slice(1))
      if (!a.text.startsWith("-")) scope.vars.set(a.text, { value: "", known: true });
  } else if (name === "cd" || name === "pushd" || name === "popd") {
    const args = expandWords(rest.slice(1), env).filter((f) => !/^-[LPe@]+$/.test(f.text));
    const dest =
      name === "popd"
        ? undefined
        : (args[0] ?? { text: scope.ctx.home, dynamic: false, glob: false, raw: "~" });
    let target: string[] | undefined;
    if (dest && !dest.dynamic && dest.text !== "-" && !dest.glob) {
      const ts = targetsOf(dest, scope.cwds);
      target = ts.every((t) => t.abs) ? ts.map((t) => t.abs) : undefined;
    }
    if (target === undefined) scope.cwds = undefined;
    else if (next === "&&" && !p.nested) scope.cwds = target;
    else if (scope.cwds !== undefined) {
      const union = [...new Set([...scope.cwds, ...target])];
      scope.cwds = union.length > MAX_CWDS ? undefined : union;
    }
  }
}

function assign(word: ShellWord, scope: Scope, env: ExpandEnv): void {
  const first = word.parts[0];
  if (first?.kind !== "lit") return;
  const eq = first.text.indexOf("=");
  const name = first.text.slice(0, eq).replace(/\+$/, "").replace(/\[.*$/, "");
  const valueWord: ShellWord = {
    ...word,
    parts: [{ ...first, text: first.text.slice(eq + 1) }, ...word.parts.slice(1)],
  };
  const v = expandToString(valueWord, env, true);
  const array =
    word.parts.some((p) => p.kind === "param" && p.name === "(array)") || first.text.includes("[");
  const appended = first.text.slice(0, eq).endsWith("+");
  const prev = scope.vars.get(name);
  const value = appended && prev ? prev.value + v.text : v.text;
  const known = !v.dynamic && !array && (!appended || prev?.known === true);
  scope.vars.set(name, known ? { value, known: true } : { value, known: false, source: rawWord(word) });
}
