/**
 * JavaScript (node) for the interpreter-code analyser: `require`/`import` in every spelling
 * (`node:` prefix, `fs/promises`, destructuring with renames), child_process, fs, vm, eval and
 * Function, fetch/https, Buffer and atob decoding.
 */
import type { Evaluator, LangSpec } from "./script-eval.js";
import { lexJs } from "./script-lexer.js";
import {
  codeArg,
  codeFromFile,
  copyArgs,
  decode,
  dirnameOf,
  expandUser,
  fetcher,
  fileMethod,
  getenv,
  joinPaths,
  listJoin,
  moveArgs,
  openFile,
  pathArgs,
  type Sink,
  type SinkTable,
  shellArg,
  stringMethod,
  writeArgs,
} from "./script-sinks.js";
import { type Args, mapVal, options, ref, str, truthy, UNKNOWN, type Val } from "./script-values.js";

/** The module a specifier names: `node:fs/promises` and `fs-extra` are fs. */
function moduleName(spec: string): string {
  const bare = spec.replace(/^node:/, "");
  if (bare === "fs/promises" || bare === "fs-extra" || bare === "graceful-fs") return "fs";
  if (bare === "cross-spawn") return "child_process.spawn";
  if (bare === "node-fetch" || bare === "cross-fetch") return "fetch";
  return bare.replace(/\//g, ".");
}

const requireSink: Sink = (a, ev, name) =>
  mapVal(a.pos[0] ?? UNKNOWN, (o) => {
    if (o.k !== "str") {
      ev.rep.opaque("opaque_code", `${name} loads a module the analyser cannot read (opaque code)`);
      return UNKNOWN;
    }
    if (o.built) ev.rep.dynamicName(name, o.s);
    return ref(moduleName(o.s), o.built === true);
  });

/** spawn/execFile(file, args, options): a shell only with `{shell: true}`. */
const spawnLike: Sink = (a, ev, name) => {
  const file = a.pos[0] ?? UNKNOWN;
  const list = a.pos[1]?.k === "list" ? a.pos[1] : undefined;
  const opts = (list ? a.pos[2] : a.pos[1]) ?? UNKNOWN;
  const fields = opts.k === "obj" ? opts.fields : undefined;
  const shell = fields
    ? truthy(fields.get("shell"))
    : opts.k === "unknown" && a.pos.length > 1
      ? undefined
      : false;
  const items = [file, ...(list?.items ?? [])];
  if (shell === false) ev.rep.argv(items, name, fields?.get("cwd"));
  else {
    const words = items.map((v) => (v.k === "str" ? v.s : undefined));
    ev.rep.shell(
      words.every((w) => w !== undefined) ? str(words.join(" ")) : UNKNOWN,
      name,
      fields?.get("cwd"),
    );
  }
  return UNKNOWN;
};

const execLike: Sink = (a, ev, name) => {
  const opts = a.pos[1];
  ev.rep.shell(a.pos[0] ?? UNKNOWN, name, opts?.k === "obj" ? opts.fields.get("cwd") : undefined);
  return UNKNOWN;
};

/** fs.rm(path, {recursive}) / fs.rmdir: recursive unless the options say otherwise. */
const rmLike =
  (defaultRecursive: boolean): Sink =>
  (a, ev, name) => {
    const opts = a.pos[1];
    const recursive =
      opts === undefined || opts.k === "ref"
        ? defaultRecursive
        : opts.k === "obj"
          ? truthy(opts.fields.get("recursive"))
          : undefined;
    ev.rep.path(recursive === false ? "delete" : "rdelete", a.pos[0] ?? UNKNOWN, name);
    return UNKNOWN;
  };

const fsOpen: Sink = (a, ev, name) => {
  const flags = a.pos[1];
  return openFile(a.pos[0], flags?.k === "obj" ? flags.fields.get("flags") : flags, ev, name);
};

const FS: SinkTable = {
  rm: rmLike(false),
  rmdir: rmLike(false),
  unlink: pathArgs("delete", 0, 1),
  writeFile: writeArgs("overwrite"),
  outputFile: writeArgs("overwrite"),
  appendFile: writeArgs("write"),
  createWriteStream: (a, ev, name) => {
    const opts = a.pos[1];
    return openFile(a.pos[0], opts?.k === "obj" ? opts.fields.get("flags") : undefined, ev, name, "w");
  },
  open: fsOpen,
  truncate: pathArgs("overwrite", 0, 1),
  rename: moveArgs(),
  move: moveArgs(),
  copyFile: copyArgs(),
  cp: copyArgs(),
  copy: copyArgs(),
  symlink: copyArgs(),
  link: copyArgs(),
  chmod: pathArgs("write", 0, 1),
  chown: pathArgs("write", 0, 1),
  lchown: pathArgs("write", 0, 1),
  mkdir: pathArgs("write", 0, 1),
  remove: pathArgs("rdelete", 0, 1),
  emptyDir: (a, ev, name) =>
    pathArgs("rdelete")(
      { pos: [mapVal(a.pos[0] ?? UNKNOWN, (o) => (o.k === "str" ? str(`${o.s}/*`) : o))], kw: a.kw },
      ev,
      name,
    ),
};

const SINKS: SinkTable = {
  require: requireSink,
  import: requireSink,
  "module.require": requireSink,
  "child_process.exec": execLike,
  "child_process.execSync": execLike,
  "child_process.spawn": spawnLike,
  "child_process.spawnSync": spawnLike,
  "child_process.execFile": spawnLike,
  "child_process.execFileSync": spawnLike,
  "child_process.fork": codeFromFile,
  "shelljs.exec": shellArg(0),
  execa: spawnLike,
  "execa.execa": spawnLike,
  "execa.execaSync": spawnLike,
  "execa.execaCommand": shellArg(0),
  "execa.execaCommandSync": shellArg(0),
  "execa.$": shellArg(0),
  "shelljs.rm": (a, ev, name) => {
    const flags = a.pos[0]?.k === "str" && a.pos[0].s.startsWith("-") ? a.pos[0].s : "";
    return pathArgs(/r/i.test(flags) ? "rdelete" : "delete", flags ? 1 : 0)(a, ev, name);
  },
  rimraf: pathArgs("rdelete", 0, 1),
  "rimraf.sync": pathArgs("rdelete", 0, 1),
  "rimraf.rimraf": pathArgs("rdelete", 0, 1),
  "rimraf.rimrafSync": pathArgs("rdelete", 0, 1),
  eval: codeArg(0),
  Function: codeArg("last"),
  AsyncFunction: codeArg("last"),
  "vm.runInThisContext": codeArg(0),
  "vm.runInNewContext": codeArg(0),
  "vm.runInContext": codeArg(0),
  "vm.Script": codeArg(0),
  "vm.compileFunction": codeArg(0),
  "vm.SourceTextModule": codeArg(0),
  setTimeout: (a, ev, name) => {
    const first = a.pos[0];
    if (first && options(first).some((o) => o.k === "str" || o.k === "fetched")) ev.rep.code(first, name);
    return UNKNOWN;
  },
  "process.binding": (_a, ev, name) => {
    ev.rep.opaque("opaque_code", `${name} reaches node internals (opaque code)`);
    return UNKNOWN;
  },
  "process.dlopen": codeArg(1),
  "os.homedir": (_a, ev) => str(ev.ctx.home),
  "process.cwd": (_a, ev) => str(ev.ctx.cwd),
  "path.join": (a) => joinPaths(a.pos),
  "path.resolve": (a, ev) => joinPaths([str(ev.ctx.cwd), ...a.pos]),
  "path.dirname": (a) => dirnameOf(a.pos[0]),
  "path.posix.join": (a) => joinPaths(a.pos),
  untildify: (a, ev) => expandUser(a.pos[0], ev),
  atob: decode("base64"),
  "Buffer.from": (a, ev, name) => {
    const enc = a.pos[1];
    if (enc?.k === "str" && /^base64(url)?$/.test(enc.s)) return decode("base64")(a, ev, name);
    if (enc?.k === "str" && enc.s === "hex") return decode("hex")(a, ev, name);
    return a.pos[0] ?? UNKNOWN;
  },
  "zlib.inflateSync": decode("opaque"),
  "zlib.gunzipSync": decode("opaque"),
  "zlib.unzipSync": decode("opaque"),
  "zlib.brotliDecompressSync": decode("opaque"),
  "zlib.inflateRawSync": decode("opaque"),
  "process.env.get": getenv,
};

const FETCHERS = [
  "fetch",
  "https.",
  "http.",
  "http2.",
  "axios",
  "got",
  "undici.",
  "superagent",
  "needle",
  "request",
  "net.connect",
];

function call(name: string, args: Args, ev: Evaluator): Val | undefined {
  const canonical = name
    .replace(/^fs\.promises\./, "fs.")
    .replace(/\.default\./, ".")
    .replace(/^child_process\.default\./, "child_process.");
  if (canonical.endsWith(".call") || canonical.endsWith(".apply")) {
    // `execSync.call(null, cmd)`, `execSync.apply(null, [cmd])`.
    const target = canonical.replace(/\.(call|apply)$/, "");
    const rest = canonical.endsWith(".call")
      ? args.pos.slice(1)
      : args.pos[1]?.k === "list"
        ? args.pos[1].items
        : [UNKNOWN];
    return call(target, { pos: rest, kw: args.kw }, ev);
  }
  const sink = SINKS[canonical];
  if (sink) return sink(args, ev, canonical);
  const fs = /^fs\.(\w+?)(Sync)?$/.exec(canonical);
  if (fs && FS[fs[1] as string]) return (FS[fs[1] as string] as Sink)(args, ev, canonical);
  if (FETCHERS.some((p) => canonical === p.replace(/\.$/, "") || canonical.startsWith(p)))
    return fetcher(args, ev, canonical);
  return undefined;
}

/** `const {execSync: run, spawn} = require("child_process")`, `import {exec as e} from "child_process"`. */
function statement(ev: Evaluator, i: number): number | undefined {
  const word = ev.idAt(i);
  if (word === "import" && !ev.isOp(i + 1, "(")) return importStatement(ev, i + 1);
  if (
    (word === "const" || word === "let" || word === "var") &&
    (ev.isOp(i + 1, "{") || ev.isOp(i + 1, "["))
  ) {
    const close = ev.isOp(i + 1, "{") ? "}" : "]";
    const pattern: Array<[string, string]> = [];
    let j = i + 2;
    let index = 0;
    while (j < ev.toks.length && !ev.isOp(j, close)) {
      const key =
        ev.idAt(j) ??
        (ev.tok(j)?.t === "str" ? String((ev.tok(j) as { parts: unknown[] }).parts[0]) : undefined);
      if (key !== undefined && close === "}" && ev.isOp(j + 1, ":") && ev.idAt(j + 2) !== undefined) {
        pattern.push([key, ev.idAt(j + 2) as string]);
        j += 3;
      } else if (key !== undefined) {
        pattern.push([close === "}" ? key : String(index), key]);
        j++;
      } else j++;
      if (ev.isOp(j, "=")) j = ev.parseExpr(j + 1)[1];
      if (ev.isOp(j, ",")) {
        j++;
        index++;
      } else if (!ev.isOp(j, close)) j = ev.skipTo(j, close);
    }
    if (!ev.isOp(j + 1, "=")) return j + 1;
    const [value, next] = ev.parseExpr(j + 2);
    for (const [key, alias] of pattern) ev.bind(alias, close === "}" ? ev.member(value, key) : UNKNOWN);
    return next;
  }
  if (word === "function" || (word === "async" && ev.isId(i + 1, "function"))) {
    let j = word === "async" ? i + 2 : i + 1;
    if (ev.isOp(j, "*")) j++;
    if (ev.idAt(j) !== undefined) j++;
    if (ev.isOp(j, "(")) return ev.skipTo(j + 1, ")") + 1;
    return j;
  }
  return undefined;
}

function importStatement(ev: Evaluator, start: number): number {
  const bindings: Array<[string, string]> = [];
  let j = start;
  while (j < ev.toks.length && !ev.isId(j, "from") && ev.tok(j)?.t !== "str" && ev.tok(j)?.t !== "nl") {
    if (ev.isOp(j, "*") && ev.isId(j + 1, "as")) {
      bindings.push(["*", ev.idAt(j + 2) ?? ""]);
      j += 3;
    } else if (ev.isOp(j, "{")) {
      j++;
      while (j < ev.toks.length && !ev.isOp(j, "}")) {
        const name =
          ev.idAt(j) ??
          (ev.tok(j)?.t === "str" ? String((ev.tok(j) as { parts: unknown[] }).parts[0]) : undefined);
        if (name !== undefined && ev.isId(j + 1, "as") && ev.idAt(j + 2) !== undefined) {
          bindings.push([name, ev.idAt(j + 2) as string]);
          j += 3;
        } else {
          if (name !== undefined) bindings.push([name, name]);
          j++;
        }
        if (ev.isOp(j, ",")) j++;
      }
      j++;
    } else if (ev.idAt(j) !== undefined) {
      bindings.push(["*", ev.idAt(j) as string]);
      j++;
    } else j++;
  }
  if (ev.isId(j, "from")) j++;
  const spec = ev.tok(j);
  if (spec?.t !== "str") return j;
  const module = moduleName(spec.parts.filter((p) => typeof p === "string").join(""));
  for (const [name, alias] of bindings) {
    if (alias === "") continue;
    ev.bind(alias, name === "*" || name === "default" ? ref(module) : ref(`${module}.${name}`));
  }
  return j + 1;
}

function method(recv: Val, name: string, args: Args, ev: Evaluator): Val | undefined {
  if (recv.k === "file") return fileMethod(recv, name, args, ev);
  return stringMethod(recv, name, args) ?? listJoin(recv, name, args);
}

export const node: LangSpec = {
  lang: "node",
  lex: lexJs,
  concatOps: new Set(["+"]),
  memberOps: new Set([".", "?."]),
  parenless: false,
  commaList: "last",
  stopWords: new Set([
    "return",
    "const",
    "let",
    "var",
    "if",
    "else",
    "for",
    "while",
    "function",
    "class",
    "import",
    "export",
    "throw",
    "try",
    "catch",
    "finally",
    "switch",
    "case",
    "default",
    "do",
    "break",
    "continue",
    "async",
    "static",
    "get",
    "set",
    "extends",
  ]),
  declWords: new Set(["const", "let", "var"]),
  isVariable: () => false,
  global: (name) => ref(name),
  call,
  method,
  statement,
  dangerous: new Set([
    "child_process",
    "fs",
    "vm",
    "process",
    "globalThis",
    "global",
    "window",
    "shelljs",
    "module",
    "execa",
  ]),
};
