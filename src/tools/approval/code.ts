/**
 * Code handed to a shell or an interpreter: `bash -c STR`, `sh <(...)`, `bash < <(...)`, pipes,
 * heredocs and here-strings into a shell, `python -c`, `perl -e`, `node -e`, `ruby -e`, `php -r`,
 * `python3 - <<EOF`, `eval`, `source`, `trap`, `alias`, `at`, and scripts written earlier in the
 * same command (`echo 'rm -rf ~' > x.sh; bash x.sh`). Also records the files downloads write, so
 * `curl -o x.sh URL && sh x.sh` is download-and-run.
 */
import { basename, join } from "node:path";
import { judgePath } from "./effects.js";
import type { Check, CodeSource, Invocation, Sink } from "./model.js";
import { FETCHERS } from "./output.js";
import { targetsOf } from "./paths.js";
import type { ScriptLanguage } from "./types.js";
import type { Field } from "./words.js";

export const SHELLS = new Set("sh bash zsh dash ksh mksh ash fish rbash yash posh tcsh csh".split(" "));

/** The language an interpreter name runs, if any. */
export function languageOf(name: string): ScriptLanguage | undefined {
  if (/^(python|pypy)(\d+(\.\d+)*)?$/.test(name)) return "python";
  if (/^perl(\d+(\.\d+)*)?$/.test(name)) return "perl";
  if (/^(ruby|jruby)(\d+(\.\d+)*)?$/.test(name)) return "ruby";
  if (/^(node|nodejs|deno|bun)$/.test(name)) return "node";
  if (/^php(\d+(\.\d+)*)?(-cli)?$/.test(name)) return "php";
  if (/^(lua(\d+(\.\d+)*)?|luajit)$/.test(name)) return "lua";
  return undefined;
}

/** Where dynamic code (a word only known at run time) comes from, judged by what produces it. */
export function sourceOfDynamic(f: Field): CodeSource {
  const names = [...f.raw.matchAll(/[A-Za-z0-9_.+-]+/g)].map((m) => m[0]);
  const fetch = names.find((n) => FETCHERS.has(n));
  if (fetch) return { kind: "remote", via: f.raw };
  if (/base64|base32|xxd|openssl|gunzip|zcat|gzip|bzip2|\bxz\b|uudecode|\brev\b|\btr\b|gpg/.test(f.raw))
    return { kind: "decoded", via: f.raw };
  return { kind: "opaque", via: f.raw };
}

/** Code from a script argument: a process substitution, a file written earlier, a URL. */
function scriptFile(f: Field, inv: Invocation): CodeSource | undefined {
  if (/^\/(dev\/stdin|dev\/fd\/0|proc\/self\/fd\/0)$/.test(f.text))
    return stdinCode(inv) ?? { kind: "opaque", via: f.text };
  if (/^<\(/.test(f.raw)) {
    const body = f.raw.slice(2, -1);
    const text = inv.engine.output(body, inv.scope);
    if (text !== undefined) return { kind: "text", text, via: f.raw };
    return sourceOfDynamic({ ...f, raw: body });
  }
  if (/^https?:\/\//.test(f.text)) return { kind: "remote", via: f.text };
  if (f.dynamic) return sourceOfDynamic(f);
  for (const t of targetsOf(f, inv.scope.cwds)) {
    const w = t.abs ? inv.scope.files.get(t.abs) : undefined;
    if (w) return w.source;
  }
  return undefined;
}

/** Sink for a file run directly (`./x.sh`): its shebang decides. */
function sinkForText(text: string): Sink {
  const first = text.split("\n", 1)[0] ?? "";
  const m = /^#!\s*\S*?([A-Za-z0-9.]+)(?:\s+(\S+))?/.exec(first);
  const prog = m ? (m[1] === "env" ? (m[2] ?? "sh") : (m[1] as string)) : "sh";
  const language = languageOf(prog);
  return language ? { kind: "interpreter", name: prog, language } : { kind: "shell", name: prog };
}

function runSource(inv: Invocation, sink: Sink, source: CodeSource | undefined): void {
  if (source) inv.engine.code(sink, source, inv);
}

/** `bash [opts] [-c STR | script | -s] ...` */
const shell: Check = (inv) => {
  const args = inv.args;
  let k = 0;
  let dashC = false;
  let dashS = false;
  for (; k < args.length; k++) {
    const a = (args[k] as Field).text;
    if (a === "--" || a === "-") {
      k++;
      break;
    }
    if (a.startsWith("--")) {
      if (/^--(rcfile|init-file)$/.test(a)) k++;
      continue;
    }
    if (!/^[-+][A-Za-z]+$/.test(a)) break;
    for (const c of a.slice(1)) {
      if (c === "c") dashC = true;
      else if (c === "s") dashS = true;
      else if (c === "o" || c === "O") k++;
    }
  }
  const operands = args.slice(k);
  const sink: Sink = { kind: "shell", name: inv.name };
  if (inv.argsFromStdin && (dashC || operands.length === 0)) {
    runSource(inv, sink, { kind: "opaque", via: "arguments read from standard input (xargs)" });
  }
  if (dashC) {
    const code = operands[0];
    if (code?.dynamic) runSource(inv, sink, sourceOfDynamic(code));
    else if (code) inv.engine.shell(code.text, inv.scope, inv.out, `${inv.name} -c`, operands.slice(1));
  } else if (dashS || operands.length === 0) {
    runSource(inv, sink, stdinCode(inv));
  } else {
    runSource(inv, sink, scriptFile(operands[0] as Field, inv));
  }
};

/** Standard input as code: a file given with `<` that the command did not write is a script like any other. */
function stdinCode(inv: Invocation): CodeSource | undefined {
  const s = inv.stdin;
  if (s?.kind === "opaque" && s.via.startsWith("< ")) {
    const path = s.via.slice(2);
    return inv.scope.files.get(path)?.source;
  }
  return s;
}

/** Options of each interpreter: which letters take code, which take another argument. */
const INTERP_OPTS: Record<
  ScriptLanguage,
  { code: string; arg: string; inPlace?: string; long: Record<string, "code" | "arg" | "flag" | "stop"> }
> = {
  python: { code: "c", arg: "WXm", long: { "--check-hash-based-pycs": "arg" } },
  perl: { code: "eE", arg: "IMmxdDCF0l", inPlace: "i", long: {} },
  ruby: { code: "e", arg: "rICEFx", inPlace: "i", long: { "--require": "arg", "--encoding": "arg" } },
  node: {
    code: "ep",
    arg: "r",
    long: {
      "--eval": "code",
      "--print": "code",
      "--require": "arg",
      "--import": "arg",
      "--loader": "arg",
      "--input-type": "arg",
      "--check": "stop",
      "-c": "stop",
    },
  },
  php: { code: "rBRE", arg: "dcfz", long: {} },
  lua: { code: "e", arg: "lW", long: {} },
};

const interpreter: Check = (inv) => {
  const language = languageOf(inv.name) as ScriptLanguage;
  const opts = INTERP_OPTS[language];
  let args = inv.args;
  // deno eval CODE, deno run FILE, bun run FILE, bun -e CODE.
  if (inv.name === "deno" || inv.name === "bun") {
    const sub = args[0]?.text;
    if (sub === "eval") args = [{ text: "-e", dynamic: false, glob: false, raw: "eval" }, ...args.slice(1)];
    else if (sub === "run" || sub === "x") args = args.slice(1).filter((a) => !a.text.startsWith("-"));
    else if (sub !== undefined && !sub.startsWith("-") && inv.name === "deno") return;
  }
  const codes: Field[] = [];
  let inPlace = false;
  let module = false;
  let k = 0;
  for (; k < args.length; k++) {
    const f = args[k] as Field;
    const a = f.text;
    if (a === "-") break;
    if (a === "--") {
      k++;
      break;
    }
    if (a.startsWith("--")) {
      const [name = "", value] = a.split(/=(.*)/s);
      const kind = opts.long[name];
      if (kind === "stop") return;
      if (kind === "code") codes.push(value !== undefined ? { ...f, text: value } : (args[++k] ?? f));
      else if (kind === "arg" && value === undefined) k++;
      continue;
    }
    if (!a.startsWith("-") || a.length < 2) break;
    for (let j = 1; j < a.length; j++) {
      const c = a[j] as string;
      const rest = a.slice(j + 1);
      if (opts.code.includes(c)) {
        codes.push(rest !== "" ? { ...f, text: rest } : (args[++k] ?? { ...f, text: "" }));
        break;
      }
      if (opts.inPlace?.includes(c)) {
        inPlace = true;
        if (rest.includes("e") && opts.code.includes("e")) {
          codes.push(args[++k] ?? { ...f, text: "" });
        }
        break;
      }
      if (c === "m" && language === "python") {
        module = true;
        break;
      }
      if (opts.arg.includes(c)) {
        if (rest === "") k++;
        break;
      }
    }
    if (module) return;
  }
  const operands = args.slice(k);
  const sink: Sink = { kind: "interpreter", name: inv.name, language };
  if (codes.length > 0) {
    const dyn = codes.find((c) => c.dynamic);
    const text = codes.map((c) => c.text).join("\n");
    runSource(
      inv,
      sink,
      dyn
        ? sourceOfDynamic(dyn)
        : { kind: "text", text, via: `${inv.name} ${language === "php" ? "-r" : "-e"}` },
    );
    if (inPlace) for (const f of operands) judgePath(inv, f, "overwrite", { verb: `${inv.name} -i` });
    return;
  }
  if (operands.length === 0 || operands[0]?.text === "-") runSource(inv, sink, stdinCode(inv));
  else runSource(inv, sink, scriptFile(operands[0] as Field, inv));
};

const evalCheck: Check = (inv) => {
  if (inv.args.length === 0) return;
  const dyn = inv.args.find((a) => a.dynamic);
  const text = inv.args.map((a) => a.text).join(" ");
  runSource(
    inv,
    { kind: "shell", name: "eval" },
    dyn ? sourceOfDynamic(dyn) : { kind: "text", text, via: "eval" },
  );
};

const source: Check = (inv) => {
  const file = inv.args[0];
  if (!file) return;
  runSource(
    inv,
    { kind: "shell", name: inv.name },
    scriptFile(file, inv) ?? (file.dynamic ? sourceOfDynamic(file) : undefined),
  );
};

const trap: Check = (inv) => {
  const operands = inv.args.filter((a) => !/^-[lpP]$/.test(a.text) && a.text !== "--");
  if (operands.length < 2) return;
  const code = operands[0] as Field;
  if (code.text === "-" || code.text === "") return;
  runSource(
    inv,
    { kind: "shell", name: "trap" },
    code.dynamic ? sourceOfDynamic(code) : { kind: "text", text: code.text, via: "trap" },
  );
};

const alias: Check = (inv) => {
  for (const a of inv.args) {
    const eq = a.text.indexOf("=");
    if (eq > 0) inv.engine.shell(a.text.slice(eq + 1), inv.scope, inv.out, "alias");
  }
};

const at: Check = (inv) => {
  const f = inv.args.findIndex((a) => a.text === "-f");
  const file = f >= 0 ? inv.args[f + 1] : undefined;
  runSource(inv, { kind: "shell", name: inv.name }, file ? scriptFile(file, inv) : stdinCode(inv));
};

/** Downloads that write a file: remembered as remote code, so running it later is download-and-run. */
const fetch: Check = (inv) => {
  const args = inv.args;
  const urls = args.filter(
    (a) => /^[a-z][a-z0-9+.-]*:\/\//i.test(a.text) || /^[\w.-]+\.[a-z]{2,}(\/|$)/i.test(a.text),
  );
  const outputs: string[] = [];
  let dir = "";
  for (let k = 0; k < args.length; k++) {
    const a = (args[k] as Field).text;
    const next = args[k + 1]?.text;
    if (inv.name === "curl" || inv.name === "aria2c" || inv.name === "fetch") {
      if ((a === "--output" || a === "--out") && next) outputs.push(next);
      else if (a.startsWith("--output=")) outputs.push(a.slice(9));
      else if (a === "--remote-name" || a === "--remote-name-all")
        outputs.push(...urls.map((u) => urlName(u.text)));
      else if (/^-[a-zA-Z]+$/.test(a) || /^-[a-zA-Z]*o./.test(a)) {
        // A cluster such as -sLo FILE, -fsSLO or -o/tmp/x.
        for (let j = 1; j < a.length; j++) {
          if (a[j] === "o") {
            const value = a.slice(j + 1) || next;
            if (value) outputs.push(value);
            break;
          }
          if (a[j] === "O") outputs.push(...urls.map((u) => urlName(u.text)));
        }
      } else if ((a === "--output-dir" || a === "-d" || a === "--dir") && next) dir = next;
    } else if (inv.name === "wget" || inv.name === "wget2") {
      if ((a === "-O" || a === "--output-document") && next) outputs.push(next);
      else if (/^-O./.test(a)) outputs.push(a.slice(2));
      else if (a.startsWith("--output-document=")) outputs.push(a.slice(18));
      else if ((a === "-P" || a === "--directory-prefix") && next) dir = next;
    }
  }
  if ((inv.name === "wget" || inv.name === "wget2") && outputs.length === 0)
    outputs.push(...urls.map((u) => urlName(u.text)));
  for (const o of outputs) {
    if (o === "-" || o === "/dev/stdout") continue;
    const f: Field = {
      text: dir && !o.startsWith("/") ? join(dir, o) : o,
      dynamic: false,
      glob: false,
      raw: o,
    };
    for (const t of targetsOf(f, inv.scope.cwds)) {
      if (t.abs)
        inv.scope.files.set(t.abs, {
          source: { kind: "remote", via: `${inv.name} ${urls.map((u) => u.text).join(" ")}` },
        });
    }
    judgePath(inv, f, "overwrite", { verb: `${inv.name} download` });
  }
};

function urlName(url: string): string {
  const path = url.replace(/^[a-z]+:\/\/[^/]*/i, "").split(/[?#]/)[0] ?? "";
  return basename(path) || "index.html";
}

/** A path run directly (`./x.sh`): judged when the command wrote it first. */
export function fileExecution(inv: Invocation): void {
  if (!inv.path.includes("/")) return;
  const f: Field = { text: inv.path, dynamic: inv.nameDynamic, glob: false, raw: inv.path };
  for (const t of targetsOf(f, inv.scope.cwds)) {
    const w = t.abs ? inv.scope.files.get(t.abs) : undefined;
    if (!w) continue;
    const sink =
      w.source.kind === "text" ? sinkForText(w.source.text) : ({ kind: "shell", name: inv.path } as Sink);
    inv.engine.code(sink, w.source, inv);
    return;
  }
}

export const CODE_CHECKS: Readonly<Record<string, Check>> = {
  ...Object.fromEntries([...SHELLS].map((s) => [s, shell])),
  eval: evalCheck,
  source,
  ".": source,
  trap,
  alias,
  at,
  batch: at,
  ...Object.fromEntries([...FETCHERS].map((n) => [n, fetch])),
};

/** The code check for a command name: shells, interpreters, eval, source... */
export function codeCheckFor(name: string): Check | undefined {
  if (Object.hasOwn(CODE_CHECKS, name)) return CODE_CHECKS[name];
  if (languageOf(name)) return interpreter;
  return undefined;
}
