/**
 * The command analyser: judges a shell command as bash will run it. The command is parsed (quoted
 * data stays data: `echo "rm -rf /"` is an echo), every word is expanded as bash expands it
 * (`$IFS`, quotes inside words, `${x:-...}`, brace expansion, `$(echo rm)`), wrappers are peeled
 * (sudo, env -S, timeout, xargs, find -exec...), code handed to shells and interpreters is followed
 * (`bash -c`, pipes, heredocs, `python -c`, decoded payloads, scripts written in the same command),
 * and the script's own state is tracked (`R=rm; $R -rf x`, `cd /; rm -rf *`).
 *
 * It fails closed: whatever it cannot resolve (a command name from `$X`, code from a file it cannot
 * see, nesting deeper than MAX_DEPTH) becomes a finding that needs approval, never "safe". Pure
 * except `ctx.realPath` (symlinks).
 */
import {
  type PipelineInfo,
  parseScript,
  type ShellWord,
  type SimpleCommand,
} from "../../util/shell-parse.js";
import { codeCheckFor, fileExecution, sourceOfDynamic } from "./code.js";
import { FILE_CHECKS } from "./commands.js";
import { controlSocketArgument, controlSocketFindings } from "./control-sockets.js";
import { judgePath } from "./effects.js";
import { analyseScript } from "./interpreters.js";
import {
  type CodeSource,
  type Engine,
  type Invocation,
  type Scope,
  type Sink,
  writesTarget,
} from "./model.js";
import { classify, isDecoder, stageOutput } from "./output.js";
import { targetsOf } from "./paths.js";
import { afterPipeline, collectUnsound, forkBombs, isAssignment } from "./state.js";
import { checkSql, SQL_CLIENTS, systemCheckFor } from "./system.js";
import { TEXT_CHECKS } from "./text-tools.js";
import type { AnalysisContext, CommandVerdict, Finding } from "./types.js";
import { type ExpandEnv, expandToString, expandWord, expandWords, type Field, rawWord } from "./words.js";
import { commandName, peel } from "./wrappers.js";

/** How deep nested code (`bash -c "$(eval ...)"`) is followed; deeper needs approval. */
export const MAX_DEPTH = 8;
/** Commands that only look a name up. */
const LOOKUP = new Set(["type", "which", "hash", "whereis", "compgen"]);

/** Judges `command` as bash would run it in `ctx.cwd`. */
export function analyseCommand(command: string, ctx: AnalysisContext): CommandVerdict {
  const out: Finding[] = [];
  analyseShell(command, newScope(ctx), out);
  return verdict(out);
}

/** The findings for `command`, not yet folded into a verdict. */
export function findingsOf(command: string, ctx: AnalysisContext): Finding[] {
  const out: Finding[] = [];
  analyseShell(command, newScope(ctx), out);
  return out;
}

function newScope(ctx: AnalysisContext): Scope {
  return {
    ctx,
    depth: 0,
    vars: new Map(),
    unsound: new Set(),
    cwds: [ctx.cwd],
    files: new Map(),
    functions: new Set(),
    links: new Map(),
  };
}

/** Folds findings into a verdict: deduplicated by key, hardline first. */
export function verdict(findings: readonly Finding[]): CommandVerdict {
  const byKey = new Map<string, Finding>();
  for (const f of findings) {
    const seen = byKey.get(f.key);
    if (!seen || (f.hardline && !seen.hardline) || (f.protectedPath && !seen.protectedPath))
      byKey.set(f.key, { ...seen, ...f });
  }
  const list = [...byKey.values()].sort((a, b) => Number(b.hardline === true) - Number(a.hardline === true));
  if (list.length === 0) return { dangerous: false, hardline: false, protectedPath: false, findings: [] };
  const first = list[0] as Finding;
  const reasons = [
    ...new Set(
      [...findings]
        .sort((a, b) => Number(b.hardline === true) - Number(a.hardline === true))
        .map((f) => f.reason),
    ),
  ];
  return {
    dangerous: true,
    hardline: first.hardline === true,
    protectedPath: list.some((f) => f.protectedPath),
    reason: reasons.join("; "),
    patternKey: first.key,
    findings: list,
  };
}

function child(scope: Scope, depth = scope.depth): Scope {
  return {
    ...scope,
    depth,
    vars: new Map(scope.vars),
    unsound: new Set(scope.unsound),
    files: new Map(scope.files),
    functions: new Set(scope.functions),
    links: new Map(scope.links),
  };
}

const engine: Engine = {
  shell(script, scope, out, what, positional) {
    if (scope.depth + 1 > MAX_DEPTH) {
      out.push({
        key: "nesting_depth",
        reason: `could not analyse ${what}: code nested more than ${MAX_DEPTH} levels deep`,
      });
      return;
    }
    const inner = child(scope, scope.depth + 1);
    if (positional) {
      positional.forEach((v, i) => {
        inner.vars.set(String(i), { value: v.text, known: !v.dynamic, source: v.raw });
      });
      const args = positional.slice(1);
      inner.vars.set("@", { value: args.map((a) => a.text).join(" "), known: args.every((a) => !a.dynamic) });
      inner.vars.set("*", { value: args.map((a) => a.text).join(" "), known: args.every((a) => !a.dynamic) });
    }
    analyseShell(script, inner, out);
  },
  code(sink, source, inv) {
    judgeCode(sink, source, inv);
  },
  run(args, inv, extra) {
    runArgv(args, { ...inv, ...extra });
  },
  output(script, scope) {
    const b = scriptOutput(script, scope, 0);
    return b?.toString("utf8");
  },
};

function judgeCode(sink: Sink, source: CodeSource, inv: Invocation): void {
  const out = inv.out;
  const who = sink.kind === "shell" ? sink.name : `${sink.name} (${sink.language})`;
  switch (source.kind) {
    case "remote":
      out.push({
        key: "remote_script",
        reason: `${who} runs code downloaded from the network (${source.via}): never allowed`,
        hardline: true,
      });
      return;
    case "decoded":
      out.push({
        key: "decoded_script",
        reason: `${who} runs a decoded payload the analyser could not read (${source.via}): never allowed`,
        hardline: true,
      });
      return;
    case "opaque":
      out.push({
        key: "opaque_code",
        reason: `could not analyse the code ${who} runs: it comes from ${source.via}`,
      });
      return;
    case "text": {
      if (source.unknown)
        out.push({
          key: "opaque_code",
          reason: `could not analyse all of the code ${who} runs: ${source.unknown} is only known at run time`,
        });
      if (source.decoded)
        out.push({ key: "decoded_script", reason: `${who} runs a decoded payload (${source.decoded})` });
      if (inv.scope.depth + 1 > MAX_DEPTH) {
        out.push({
          key: "nesting_depth",
          reason: `could not analyse ${who}: code nested more than ${MAX_DEPTH} levels deep`,
        });
        return;
      }
      if (sink.kind === "shell") {
        engine.shell(source.text, inv.scope, out, who);
        return;
      }
      const nested = child(inv.scope, inv.scope.depth + 1);
      const shellOf = (command: string): Finding[] => {
        const o: Finding[] = [];
        engine.shell(command, nested, o, `${sink.language} code`);
        return o;
      };
      out.push(...analyseScript(sink.language, source.text, inv.scope.ctx, shellOf));
    }
  }
}

function analyseShell(script: string, scope: Scope, out: Finding[]): void {
  const parsed = parseScript(script);
  for (const f of parsed.functions) scope.functions.add(f);
  out.push(...controlSocketFindings(script, scope.ctx));
  forkBombs(parsed, out);
  collectUnsound(parsed, scope);
  parsed.pipelines.forEach((p, i) => {
    analysePipeline(p, scope, out);
    afterPipeline(p, parsed.pipelines[i + 1]?.connector ?? "", scope, expandEnv(scope));
  });
}

function expandEnv(scope: Scope, depth = 0): ExpandEnv {
  return {
    lookup(name) {
      const v = scope.vars.get(name);
      if (!v) return scope.unsound.has(name) ? { value: "", known: false, source: `$${name}` } : undefined;
      return scope.unsound.has(name) ? { ...v, known: false, source: v.source ?? `$${name}` } : v;
    },
    // `~` follows a HOME the script set to a known, non-empty value (unset, bash falls back to the user's).
    home:
      scope.vars.get("HOME")?.known && scope.vars.get("HOME")?.value
        ? (scope.vars.get("HOME")?.value as string)
        : scope.ctx.home,
    hermesHome: scope.ctx.hermesHome,
    cwd: scope.cwds?.length === 1 ? scope.cwds[0] : undefined,
    evalSub: (body) => (depth > 4 ? undefined : scriptOutput(body, scope, depth + 1)?.toString("utf8")),
  };
}

interface StageInfo {
  name: string;
  args: string[];
  raw: string;
  remote?: boolean;
  decoder?: boolean;
}

function analysePipeline(p: PipelineInfo, scope: Scope, out: Finding[]): void {
  const stages: StageInfo[] = [];
  let prevOut: Buffer | undefined;
  let decodedVia: string | undefined;
  p.commands.forEach((cmd, k) => {
    for (const w of [...cmd.words, ...cmd.redirects.map((r) => r.target)]) {
      for (const sub of w.subs) engine.shell(sub, scope, out, `the substitution $(${sub.slice(0, 40)})`);
    }
    for (const r of cmd.redirects)
      for (const sub of r.heredocWord?.subs ?? []) engine.shell(sub, scope, out, "a heredoc's substitution");
    if (cmd.keyword) return;
    const env = expandEnv(scope);
    let w = 0;
    while (w < cmd.words.length && isAssignment(cmd.words[w] as ShellWord)) w++;
    for (const a of cmd.words.slice(0, w)) assignmentCode(a, scope, out, env);
    let fields = expandWords(cmd.words.slice(w), env);
    let nameDynamic = false;
    while (fields[0]?.dynamic && fields[0].text === "") {
      nameDynamic = true;
      fields = fields.slice(1);
    }
    if (nameDynamic && fields.length === 0) {
      out.push({
        key: "dynamic_command",
        reason: `could not analyse the command ${cmd.words.slice(w).map(rawWord).join(" ")}: its name is only known at run time`,
      });
    }
    const own = stdinOf(cmd, scope, env);
    const stdin = own ?? (k > 0 ? pipeSource(stages, prevOut, decodedVia) : undefined);
    const base: Invocation = {
      name: "",
      path: "",
      nameDynamic,
      args: [],
      source: cmd,
      argsFromStdin: false,
      narrowed: false,
      subtree: false,
      scope,
      out,
      engine,
    };
    if (stdin) base.stdin = stdin;
    const final = fields.length > 0 ? runArgv(fields, base) : undefined;
    // What this stage prints, for the next stage and for files it redirects into.
    const stdinBuf = own
      ? own.kind === "text" && !own.unknown
        ? Buffer.from(own.text, "utf8")
        : undefined
      : prevOut;
    const produced = final
      ? stageOutput(final.name, final.args, stdinBuf, { cwd: env.cwd, file: (f) => fileText(f, scope) })
      : undefined;
    const info: StageInfo = {
      name: final?.name ?? "",
      args: final?.args.map((a) => a.text) ?? [],
      raw: fields
        .map((f) => f.text)
        .join(" ")
        .slice(0, 80),
    };
    if (final && readsRemote(final, scope)) info.remote = true;
    if (final && isDecoder(final.name, info.args)) {
      info.decoder = true;
      if (produced) decodedVia = info.raw;
    }
    if (stdin?.kind === "remote") info.remote = true;
    stages.push(info);
    prevOut = produced;
    redirects(cmd, scope, out, env, base, produced, stages);
  });
}

/** Whether a stage reads a file the command downloaded. */
function readsRemote(inv: Invocation, scope: Scope): boolean {
  return inv.args.some((a) =>
    targetsOf(a, scope.cwds).some((t) => t.abs !== "" && scope.files.get(t.abs)?.source.kind === "remote"),
  );
}

function fileText(path: string, scope: Scope): string | undefined {
  for (const t of targetsOf({ text: path, dynamic: false, glob: false, raw: path }, scope.cwds)) {
    const s = t.abs ? scope.files.get(t.abs)?.source : undefined;
    if (s?.kind === "text" && !s.unknown) return s.text;
  }
  return undefined;
}

function pipeSource(
  stages: StageInfo[],
  prevOut: Buffer | undefined,
  decodedVia: string | undefined,
): CodeSource {
  if (prevOut !== undefined) {
    const src: CodeSource = {
      kind: "text",
      text: prevOut.toString("utf8"),
      via: stages.map((s) => s.raw).join(" | "),
    };
    if (decodedVia) src.decoded = decodedVia;
    return src;
  }
  const remote = stages.find((s) => s.remote);
  if (remote) return { kind: "remote", via: remote.raw };
  return classify(stages);
}

/** Standard input given by the command's own redirections (heredoc, here-string, `<`). */
function stdinOf(cmd: SimpleCommand, scope: Scope, env: ExpandEnv): CodeSource | undefined {
  let src: CodeSource | undefined;
  for (const r of cmd.redirects) {
    if (r.fd !== undefined && r.fd !== "0") continue;
    if (r.op === "<<") {
      if (r.heredocQuoted || !r.heredocWord)
        src = { kind: "text", text: `${r.heredoc ?? ""}\n`, via: "a heredoc" };
      else src = textSource(expandToString(r.heredocWord, env), "a heredoc", r.heredocWord);
    } else if (r.op === "<<<") {
      src = textSource(expandToString(r.target, env), "a here-string", r.target, true);
    } else if (r.op === "<&" && !/^(0|-)$/.test(r.target.text)) {
      src = { kind: "opaque", via: `file descriptor ${r.target.text}` };
    } else if (r.op === "<") {
      const proc = r.target.parts.find((x) => x.kind === "procsub");
      if (proc && proc.kind === "procsub") {
        const text = scriptOutput(proc.body, scope, 0);
        src =
          text !== undefined
            ? { kind: "text", text: text.toString("utf8"), via: proc.raw }
            : sourceOfDynamic({ text: "", dynamic: true, glob: false, raw: proc.body });
        if (src.kind === "opaque" && /\b(curl|wget)\b/.test(proc.body))
          src = { kind: "remote", via: proc.raw };
      } else {
        const target = expandWord(r.target, env)[0];
        if (!target) continue;
        if (/^\/dev\/(tcp|udp)\//.test(target.text)) src = { kind: "remote", via: `< ${target.text}` };
        else if (target.dynamic) src = { kind: "opaque", via: `< ${target.raw}` };
        else {
          const t = targetsOf(target, scope.cwds)[0];
          const written = t?.abs ? scope.files.get(t.abs) : undefined;
          src = written?.source ?? { kind: "opaque", via: `< ${t?.abs || target.text}` };
        }
      }
    }
  }
  return src;
}

function textSource(
  e: { text: string; dynamic: boolean },
  via: string,
  word: ShellWord,
  newline = false,
): CodeSource {
  const text = newline ? `${e.text}\n` : e.text;
  if (!e.dynamic) return { kind: "text", text, via };
  const judged = sourceOfDynamic({ text, dynamic: true, glob: false, raw: rawWord(word) });
  if (judged.kind !== "opaque") return judged;
  return { kind: "text", text, via, unknown: rawWord(word).slice(0, 80) };
}

/** Redirections that write: judge the target and remember what was written. */
function redirects(
  cmd: SimpleCommand,
  scope: Scope,
  out: Finding[],
  env: ExpandEnv,
  base: Invocation,
  produced: Buffer | undefined,
  stages: StageInfo[],
): void {
  for (const r of cmd.redirects) {
    if (!writesTarget(r)) continue;
    const target = expandWord(r.target, env)[0] ?? {
      text: "",
      dynamic: true,
      glob: false,
      raw: rawWord(r.target),
    };
    if (
      /^\/dev\/(null|stdout|stderr|fd\/\d+)$/.test(target.text) ||
      (r.op === ">&" && /^\d+$/.test(target.text))
    )
      continue;
    const append = r.op === ">>" || r.op === "&>>";
    const verb = `${r.fd ?? ""}${r.op} (redirection)`;
    judgePath({ ...base, out }, target, append ? "append" : r.op === "<>" ? "overwrite" : "truncate", {
      verb,
    });
    const fd = r.fd ?? (r.op.startsWith("&") ? "1" : "1");
    if (fd !== "1" || target.dynamic) continue;
    for (const t of targetsOf(target, scope.cwds)) {
      if (!t.abs) continue;
      const before = scope.files.get(t.abs)?.source;
      let source: CodeSource =
        produced !== undefined
          ? { kind: "text", text: produced.toString("utf8"), via: `${t.abs}` }
          : pipeSource(stages, undefined, undefined);
      if (append && before)
        source =
          before.kind === "text" && source.kind === "text"
            ? { ...source, text: before.text + source.text }
            : before.kind === "text"
              ? source
              : before;
      scope.files.set(t.abs, { source });
    }
  }
}

/** Assignments that carry code: PROMPT_COMMAND runs before every prompt. */
function assignmentCode(word: ShellWord, scope: Scope, out: Finding[], env: ExpandEnv): void {
  if (/^(PROMPT_COMMAND|BASH_ENV|ENV)\+?=/.test(word.text)) {
    const value = expandToString({ ...word, parts: word.parts.slice(1) }, env, true).text;
    const first = word.parts[0];
    const inline = first?.kind === "lit" ? first.text.replace(/^[^=]*=/, "") : "";
    if (/^PROMPT_COMMAND/.test(word.text)) engine.shell(inline + value, scope, out, "PROMPT_COMMAND");
    else
      out.push({
        key: "opaque_code",
        reason: `could not analyse ${word.text.split("=")[0]}: it names a script bash runs on start`,
      });
  }
}

/** Peels wrappers from `fields` and runs the checks for the command that really runs. */
function runArgv(fields: Field[], base: Invocation): Invocation | undefined {
  const peeled = peel(fields, base);
  if (!peeled) return undefined;
  const head = peeled.argv[0] as Field;
  const name = commandName(head.text);
  const inv: Invocation = {
    ...peeled.inv,
    name,
    path: head.text,
    nameDynamic: peeled.inv.nameDynamic || head.dynamic,
    args: peeled.argv.slice(1),
  };
  if (inv.nameDynamic) {
    inv.out.push({
      key: "dynamic_command",
      reason: `could not analyse the command ${head.raw || "(empty)"}: its name is only known at run time${name ? ` (likely ${name})` : ""}`,
    });
  }
  for (const field of peeled.argv)
    inv.out.push(...controlSocketArgument(field.text, inv.scope.cwds, inv.scope.ctx));
  if (LOOKUP.has(name)) return inv;
  fileExecution(inv);
  checkFor(name)?.(inv);
  if (SQL_CLIENTS.has(name) && inv.stdin?.kind === "text") checkSql(inv.stdin.text, inv.out);
  return inv;
}

function checkFor(name: string): ((inv: Invocation) => void) | undefined {
  if (Object.hasOwn(FILE_CHECKS, name)) return FILE_CHECKS[name];
  if (Object.hasOwn(TEXT_CHECKS, name)) return TEXT_CHECKS[name];
  return systemCheckFor(name) ?? codeCheckFor(name);
}

/** The static output of a whole script (`$(...)` bodies, `<(...)`), or undefined. */
function scriptOutput(script: string, scope: Scope, depth: number): Buffer | undefined {
  const parsed = parseScript(script);
  if (parsed.pipelines.length === 0) return Buffer.alloc(0);
  if (parsed.pipelines.length > 4 || parsed.functions.length > 0) return undefined;
  const env = expandEnv(scope, depth);
  const chunks: Buffer[] = [];
  for (const p of parsed.pipelines) {
    let buf: Buffer | undefined;
    for (const cmd of p.commands) {
      if (cmd.keyword || cmd.redirects.some((r) => r.op !== "<<" && r.op !== "<<<")) return undefined;
      const fields = expandWords(cmd.words, env);
      if (fields.some((f) => f.dynamic || f.glob)) return undefined;
      const [head, ...args] = fields;
      if (!head) return undefined;
      const own = stdinOf(cmd, scope, env);
      const stdin = own?.kind === "text" && !own.unknown ? Buffer.from(own.text) : buf;
      const name = commandName(head.text);
      if (name === "command" && args[0]?.text === "-v" && args[1]) {
        buf = Buffer.from(`/usr/bin/${args[1].text}\n`);
        continue;
      }
      buf = stageOutput(name, args, stdin, { cwd: env.cwd, file: (f) => fileText(f, scope) });
      if (buf === undefined) return undefined;
    }
    if (buf) chunks.push(buf);
  }
  return Buffer.concat(chunks);
}
