/**
 * PHP and Lua for the interpreter-code analyser. PHP: the program-execution functions, backticks,
 * eval/assert/create_function, variable functions and callbacks named by string, include of a
 * URL, the file functions, curl and URL wrappers. Lua: os.execute, io.popen, os.remove,
 * os.rename, io.open, load/loadstring/dofile, LuaSocket.
 */
import type { Evaluator, LangSpec } from "./script-eval.js";
import { lexLua, lexPhp } from "./script-lexer.js";
import {
  codeArg,
  codeFromFile,
  copyArgs,
  decode,
  fetcher,
  fileMethod,
  getenv,
  moveArgs,
  openFile,
  pathArgs,
  type Sink,
  type SinkTable,
  shellArg,
  stringMethod,
  writeArgs,
} from "./script-sinks.js";
import { type Args, FETCHED, mapVal, options, ref, str, UNKNOWN, type Val } from "./script-values.js";

const REMOTE_URL = /^(https?|ftps?|data|expect|phar):/i;

/** proc_open / pcntl_exec: a command line or an argv array. */
const procOpen: Sink = (a, ev, name) => {
  for (const o of options(a.pos[0] ?? UNKNOWN)) {
    if (o.k === "list") ev.rep.argv(o.items, name);
    else ev.rep.shell(o, name);
  }
  return UNKNOWN;
};

/** Reading a URL or a downloaded file yields network content. */
const readContents: Sink = (a, ev) =>
  mapVal(a.pos[0] ?? UNKNOWN, (o) => {
    if (o.k === "str" && REMOTE_URL.test(o.s)) return FETCHED;
    return ev.rep.isDownloaded(o) ? FETCHED : UNKNOWN;
  });

/** call_user_func('system', $cmd), call_user_func_array($f, $args). */
const callUserFunc =
  (spread: boolean): Sink =>
  (a, ev, name) => {
    const [fn, ...rest] = a.pos;
    const args: Args =
      spread && rest[0]?.k === "list" ? { pos: rest[0].items, kw: a.kw } : { pos: rest, kw: a.kw };
    return mapVal(fn ?? UNKNOWN, (f) => {
      if (f.k === "str" || f.k === "ref") return ev.call(f, args);
      ev.rep.opaque("opaque_code", `${name} calls a function the analyser cannot read (opaque code)`);
      return UNKNOWN;
    });
  };

const PHP: SinkTable = {
  system: shellArg(0),
  exec: shellArg(0),
  shell_exec: shellArg(0),
  passthru: shellArg(0),
  popen: shellArg(0),
  proc_open: procOpen,
  expect_popen: shellArg(0),
  pcntl_exec: (a, ev, name) => {
    const args = a.pos[1];
    ev.rep.argv([a.pos[0] ?? UNKNOWN, ...(args?.k === "list" ? args.items : args ? [UNKNOWN] : [])], name);
    return UNKNOWN;
  },
  eval: codeArg(0),
  assert: (a, ev, name) => {
    if (options(a.pos[0] ?? UNKNOWN).some((o) => o.k === "str" || o.k === "fetched"))
      ev.rep.code(a.pos[0] as Val, name);
    return UNKNOWN;
  },
  create_function: codeArg(1),
  call_user_func: callUserFunc(false),
  call_user_func_array: callUserFunc(true),
  unlink: pathArgs("delete", 0, 1),
  rmdir: pathArgs("delete", 0, 1),
  rename: moveArgs(),
  copy: copyArgs(),
  file_put_contents: writeArgs("overwrite"),
  fopen: (a, ev, name) =>
    mapVal(a.pos[0] ?? UNKNOWN, (o) =>
      o.k === "str" && REMOTE_URL.test(o.s) ? FETCHED : openFile(o, a.pos[1], ev, name),
    ),
  touch: pathArgs("write", 0, 1),
  chmod: pathArgs("write", 0, 1),
  chown: pathArgs("write", 0, 1),
  chgrp: pathArgs("write", 0, 1),
  mkdir: pathArgs("write", 0, 1),
  symlink: copyArgs(),
  link: copyArgs(),
  getenv,
  getcwd: (_a, ev) => str(ev.ctx.cwd),
  file_get_contents: readContents,
  file: readContents,
  curl_exec: fetcher,
  fsockopen: fetcher,
  stream_socket_client: fetcher,
  base64_decode: decode("base64"),
  hex2bin: decode("hex"),
  str_rot13: decode("rot13"),
  gzinflate: decode("opaque"),
  gzuncompress: decode("opaque"),
  gzdecode: decode("opaque"),
  convert_uudecode: decode("opaque"),
};

/** Function names that run a command or code when passed as a callback string (`array_map('system', $x)`). */
const CALLBACK_SINKS = new Set([
  "system",
  "exec",
  "shell_exec",
  "passthru",
  "popen",
  "proc_open",
  "pcntl_exec",
  "assert",
  "create_function",
  "unlink",
  "rmdir",
]);

function phpCall(name: string, args: Args, ev: Evaluator): Val | undefined {
  const sink = PHP[name];
  if (name !== "call_user_func" && name !== "call_user_func_array") {
    for (const a of args.pos) {
      for (const o of options(a)) {
        if (o.k === "str" && CALLBACK_SINKS.has(o.s.toLowerCase()) && name !== o.s.toLowerCase() && !sink) {
          (PHP[o.s.toLowerCase()] as Sink)({ pos: [UNKNOWN], kw: new Map() }, ev, o.s.toLowerCase());
        }
      }
    }
  }
  return sink?.(args, ev, name);
}

/** `include`/`require` of a URL runs remote code; of an unreadable path, unknown code. */
function phpStatement(ev: Evaluator, i: number): number | undefined {
  const word = ev.idAt(i);
  if (word !== "include" && word !== "require" && word !== "include_once" && word !== "require_once")
    return undefined;
  const [v, next] = ev.parseExpr(i + 1);
  for (const o of options(v)) {
    if (o.k === "str" && REMOTE_URL.test(o.s)) ev.rep.remote(word);
    else if (o.k === "str" && ev.rep.isDownloaded(o)) ev.rep.remote(word);
    else if (o.k !== "str")
      ev.rep.opaque("opaque_code", `${word} loads a file the analyser cannot read (opaque code)`);
  }
  return next;
}

export const php: LangSpec = {
  lang: "php",
  lex: lexPhp,
  concatOps: new Set(["."]),
  memberOps: new Set(["->", "?->", "::"]),
  parenless: false,
  commaList: "list",
  stopWords: new Set([
    "or",
    "and",
    "xor",
    "echo",
    "print",
    "return",
    "function",
    "fn",
    "if",
    "else",
    "elseif",
    "foreach",
    "for",
    "while",
    "new",
    "as",
    "class",
    "use",
    "namespace",
  ]),
  declWords: new Set(),
  isVariable: (name) => name.startsWith("$"),
  global: (name) => {
    if (name === "$_SERVER" || name === "$_ENV") return ref("ENV");
    return name.startsWith("$") ? UNKNOWN : ref(name);
  },
  call: phpCall,
  method: (recv, name, args, ev) => fileMethod(recv, name, args, ev) ?? stringMethod(recv, name, args),
  statement: phpStatement,
  dangerous: new Set(),
};

const LUA: SinkTable = {
  "os.execute": shellArg(0),
  "io.popen": shellArg(0),
  "os.remove": pathArgs("delete", 0, 1),
  "os.rename": moveArgs(),
  "io.open": (a, ev, name) => openFile(a.pos[0], a.pos[1], ev, name),
  "io.output": (a, ev, name) => openFile(a.pos[0], str("w"), ev, name),
  load: codeArg(0),
  loadstring: codeArg(0),
  dofile: codeFromFile,
  loadfile: codeFromFile,
  "os.getenv": getenv,
  require: (a) => mapVal(a.pos[0] ?? UNKNOWN, (o) => (o.k === "str" ? ref(o.s) : UNKNOWN)),
  "socket.http.request": fetcher,
  "ssl.https.request": fetcher,
  "http.request": fetcher,
  "http.request.new_from_uri": fetcher,
};

export const lua: LangSpec = {
  lang: "lua",
  lex: lexLua,
  concatOps: new Set([".."]),
  memberOps: new Set([".", ":"]),
  parenless: false,
  commaList: "list",
  stopWords: new Set([
    "then",
    "do",
    "end",
    "else",
    "elseif",
    "function",
    "return",
    "local",
    "if",
    "while",
    "repeat",
    "until",
    "for",
    "in",
    "not",
    "break",
    "goto",
  ]),
  declWords: new Set(["local"]),
  isVariable: () => false,
  global: (name) => ref(name),
  call: (name, args, ev) => LUA[name.replace(/^_G\./, "")]?.(args, ev, name),
  method: (recv, name, args, ev) => fileMethod(recv, name, args, ev) ?? stringMethod(recv, name, args),
  dangerous: new Set(["os", "io", "_G"]),
};
