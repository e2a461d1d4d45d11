/**
 * Python for the interpreter-code analyser: imports and aliases (`import os as o`, `from os import
 * system as s`, `from subprocess import *`), and what os, subprocess, shutil, pathlib, pty,
 * builtins, urllib/requests and the decoders do.
 */
import type { Evaluator, LangSpec } from "./script-eval.js";
import { lexPython } from "./script-lexer.js";
import {
  codeArg,
  codeFromFile,
  copyArgs,
  decode,
  dirnameOf,
  downloadTo,
  expandUser,
  expandVars,
  fetcher,
  fileMethod,
  getenv,
  joinPaths,
  listJoin,
  moveArgs,
  openFile,
  pathArgs,
  returns,
  type Sink,
  type SinkTable,
  shellArg,
  stringMethod,
  writeArgs,
} from "./script-sinks.js";
import {
  type Args,
  arg,
  FETCHED,
  isTainted,
  mapVal,
  options,
  ref,
  str,
  truthy,
  UNKNOWN,
  type Val,
} from "./script-values.js";

const INTERPRETER = /(^|\/)((ba|z|da|k|c|tc|fi)?sh|python[\d.]*|perl|ruby|node|php|lua)$/;

/** subprocess.run and friends: a string or a list, `shell=`, `cwd=`, `input=`. */
const subprocessRun: Sink = (a, ev, name) => {
  const cmd = arg(a, 0, "args") ?? UNKNOWN;
  const shell = truthy(a.kw.get("shell"));
  const cwd = a.kw.get("cwd");
  for (const o of options(cmd)) {
    if (o.k === "list" && shell === true) ev.rep.shell(o.items[0] ?? UNKNOWN, name, cwd);
    else if (o.k === "list") ev.rep.argv(o.items, name, cwd);
    else ev.rep.shell(o, name, cwd);
  }
  const input = a.kw.get("input");
  if (input !== undefined && isTainted(input)) {
    const program = options(cmd).map((o) => (o.k === "list" ? o.items[0] : o));
    if (shell !== false || program.some((p) => p?.k !== "str" || INTERPRETER.test(p.s))) ev.rep.remote(name);
  }
  return UNKNOWN;
};

/** os.execv(path, argv), os.spawnv(mode, path, argv), os.posix_spawn(path, argv, env). */
const execV =
  (pathAt: number): Sink =>
  (a, ev, name) => {
    const path = a.pos[pathAt] ?? UNKNOWN;
    const argv = a.pos[pathAt + 1] ?? UNKNOWN;
    if (argv.k === "list") ev.rep.argv([path, ...argv.items.slice(1)], name);
    else ev.rep.argv([path, UNKNOWN], name);
    return UNKNOWN;
  };

/** os.execl(path, arg0, ...), os.spawnl(mode, path, arg0, ...); `e` variants end with env. */
const execL =
  (pathAt: number, env: boolean): Sink =>
  (a, ev, name) => {
    const rest = a.pos.slice(pathAt + 2, env ? -1 : undefined);
    ev.rep.argv([a.pos[pathAt] ?? UNKNOWN, ...rest], name);
    return UNKNOWN;
  };

const makePath: Sink = (a, ev) => ({
  k: "path",
  of: a.pos.length === 0 ? str(".") : joinPaths(a.pos, false, ev),
});

/** `importlib.import_module(name)`; `__import__("a.b")` gives the top package `a`. */
const importModule: Sink = (a, ev, name) =>
  mapVal(a.pos[0] ?? UNKNOWN, (o) => {
    if (o.k !== "str") {
      ev.rep.opaque("opaque_code", `${name} imports a module the analyser cannot read (opaque code)`);
      return UNKNOWN;
    }
    if (o.built) ev.rep.dynamicName(name, o.s);
    const module = name === "importlib.import_module" ? o.s : (o.s.split(".")[0] as string);
    return ref(module, o.built === true);
  });

/** `getattr(obj, name)`: a member picked by name. */
const getAttr: Sink = (a, ev) => {
  const obj = a.pos[0] ?? UNKNOWN;
  const key = a.pos[1] ?? UNKNOWN;
  return mapVal(key, (k) => {
    if (k.k === "str") {
      if (k.built) ev.rep.dynamicName("getattr", k.s);
      return ev.member(obj, k.s);
    }
    for (const o of options(obj)) if (o.k === "ref" && ev.isDangerous(o.name)) ev.rep.opaqueMember(o.name);
    return UNKNOWN;
  });
};

const SHELL = shellArg(0, "cmd");

const SINKS: SinkTable = {
  "os.system": SHELL,
  "os.popen": SHELL,
  "os.popen2": SHELL,
  "os.popen3": SHELL,
  "os.popen4": SHELL,
  "commands.getoutput": SHELL,
  "commands.getstatusoutput": SHELL,
  "subprocess.getoutput": SHELL,
  "subprocess.getstatusoutput": SHELL,
  "platform.popen": SHELL,
  "asyncio.create_subprocess_shell": SHELL,
  "subprocess.run": subprocessRun,
  "subprocess.call": subprocessRun,
  "subprocess.check_call": subprocessRun,
  "subprocess.check_output": subprocessRun,
  "subprocess.Popen": subprocessRun,
  "asyncio.create_subprocess_exec": (a, ev, name) => {
    ev.rep.argv(a.pos, name);
    return UNKNOWN;
  },
  "pty.spawn": (a, ev, name) => {
    const v = a.pos[0] ?? UNKNOWN;
    for (const o of options(v)) ev.rep.argv(o.k === "list" ? o.items : [o], name);
    return UNKNOWN;
  },
  "os.startfile": SHELL,
  ...Object.fromEntries(["execv", "execve", "execvp", "execvpe"].map((f) => [`os.${f}`, execV(0)])),
  ...Object.fromEntries(["spawnv", "spawnve", "spawnvp", "spawnvpe"].map((f) => [`os.${f}`, execV(1)])),
  ...Object.fromEntries(
    ["execl", "execlp", "execle", "execlpe"].map((f) => [`os.${f}`, execL(0, f.endsWith("e"))]),
  ),
  ...Object.fromEntries(
    ["spawnl", "spawnlp", "spawnle", "spawnlpe"].map((f) => [`os.${f}`, execL(1, f.endsWith("e"))]),
  ),
  "os.posix_spawn": execV(0),
  "os.posix_spawnp": execV(0),
  "shutil.rmtree": pathArgs("rdelete", 0, 1),
  "os.remove": pathArgs("delete", 0, 1),
  "os.unlink": pathArgs("delete", 0, 1),
  "os.rmdir": pathArgs("delete", 0, 1),
  "os.removedirs": pathArgs("delete", 0, 1),
  "os.truncate": pathArgs("overwrite", 0, 1),
  "os.rename": moveArgs(0, 1, "dst"),
  "os.replace": moveArgs(0, 1, "dst"),
  "os.renames": moveArgs(0, 1),
  "shutil.move": moveArgs(0, 1, "dst"),
  "shutil.copy": copyArgs(1, "dst"),
  "shutil.copy2": copyArgs(1, "dst"),
  "shutil.copyfile": copyArgs(1, "dst"),
  "shutil.copytree": copyArgs(1, "dst"),
  "shutil.copymode": copyArgs(1, "dst"),
  "shutil.copystat": copyArgs(1, "dst"),
  "shutil.copyfileobj": returns(UNKNOWN),
  "os.link": copyArgs(1, "dst"),
  "os.symlink": copyArgs(1, "dst"),
  "os.chmod": pathArgs("write", 0, 1),
  "os.lchmod": pathArgs("write", 0, 1),
  "os.chown": pathArgs("write", 0, 1),
  "os.lchown": pathArgs("write", 0, 1),
  "shutil.chown": pathArgs("write", 0, 1),
  "os.mkdir": pathArgs("write", 0, 1),
  "os.makedirs": pathArgs("write", 0, 1),
  "os.mkfifo": pathArgs("write", 0, 1),
  "os.mknod": pathArgs("write", 0, 1),
  open: (a, ev, name) => openFile(arg(a, 0, "file"), arg(a, 1, "mode"), ev, name),
  "io.open": (a, ev, name) => openFile(arg(a, 0, "file"), arg(a, 1, "mode"), ev, name),
  "codecs.open": (a, ev, name) => openFile(arg(a, 0, "filename"), arg(a, 1, "mode"), ev, name),
  "os.open": (a, ev, name) => {
    const flags = a.pos[1];
    if (!(flags?.k === "ref" && flags.name === "os.O_RDONLY"))
      ev.rep.path("overwrite", a.pos[0] ?? UNKNOWN, name);
    return UNKNOWN;
  },
  "pathlib.Path": makePath,
  "pathlib.PosixPath": makePath,
  "pathlib.PurePath": makePath,
  "pathlib.Path.home": (_a, ev) => ({ k: "path", of: str(ev.ctx.home) }),
  "pathlib.Path.cwd": (_a, ev) => ({ k: "path", of: str(ev.ctx.cwd) }),
  "os.path.expanduser": (a, ev) => expandUser(a.pos[0], ev),
  "os.path.expandvars": (a, ev) => expandVars(a.pos[0], ev),
  "os.path.join": (a, ev) => joinPaths(a.pos, false, ev),
  "os.path.abspath": (a, ev) => joinPaths([str(ev.ctx.cwd), a.pos[0] ?? UNKNOWN]),
  "os.path.realpath": (a, ev) => joinPaths([str(ev.ctx.cwd), a.pos[0] ?? UNKNOWN]),
  "os.path.normpath": (a) => joinPaths([a.pos[0] ?? UNKNOWN]),
  "os.path.dirname": (a) => dirnameOf(a.pos[0]),
  "os.getcwd": (_a, ev) => str(ev.ctx.cwd),
  "os.getenv": getenv,
  "os.environ.get": getenv,
  "os.environ.setdefault": getenv,
  "posix.environ.get": getenv,
  "glob.glob": (a) => ({ k: "list", items: [a.pos[0] ?? UNKNOWN] }),
  "glob.iglob": (a) => ({ k: "list", items: [a.pos[0] ?? UNKNOWN] }),
  exec: codeArg(0),
  eval: codeArg(0),
  execfile: codeFromFile,
  "runpy.run_path": codeFromFile,
  "runpy.run_module": codeFromFile,
  "code.InteractiveInterpreter": returns(UNKNOWN),
  compile: (a) => a.pos[0] ?? UNKNOWN,
  __import__: importModule,
  "importlib.import_module": importModule,
  "importlib.__import__": importModule,
  getattr: getAttr,
  vars: (a) => a.pos[0] ?? UNKNOWN,
  "marshal.loads": decode("opaque"),
  "pickle.loads": (a, ev, name) => {
    if (isTainted(a.pos[0] ?? UNKNOWN)) ev.rep.remote(name);
    return UNKNOWN;
  },
  "base64.b64decode": decode("base64"),
  "base64.standard_b64decode": decode("base64"),
  "base64.urlsafe_b64decode": decode("base64"),
  "base64.decodebytes": decode("base64"),
  "base64.b32decode": decode("opaque"),
  "base64.b16decode": decode("hex"),
  "base64.a85decode": decode("opaque"),
  "base64.b85decode": decode("opaque"),
  "binascii.a2b_base64": decode("base64"),
  "binascii.unhexlify": decode("hex"),
  "binascii.a2b_hex": decode("hex"),
  "bytes.fromhex": decode("hex"),
  "bytearray.fromhex": decode("hex"),
  "codecs.decode": (a, ev, name) => {
    const enc = a.pos[1];
    const kind =
      enc?.k === "str" && /rot.?13/i.test(enc.s)
        ? "rot13"
        : enc?.k === "str" && /base64/.test(enc.s)
          ? "base64"
          : enc?.k === "str" && /hex/.test(enc.s)
            ? "hex"
            : "opaque";
    return decode(kind)(a, ev, name);
  },
  "zlib.decompress": decode("opaque"),
  "gzip.decompress": decode("opaque"),
  "bz2.decompress": decode("opaque"),
  "lzma.decompress": decode("opaque"),
  "urllib.request.urlretrieve": downloadTo(1),
  "urllib.urlretrieve": downloadTo(1),
};

const FETCH_PREFIXES = [
  "urllib.request.urlopen",
  "urllib.urlopen",
  "urllib2.urlopen",
  "urllib.request.Request",
  "urllib.request.build_opener",
  "requests.",
  "httpx.",
  "http.client.",
  "httplib.",
  "urllib3.",
  "aiohttp.",
  "socket.create_connection",
];

/** `from subprocess import *` binds every known sink of the module. */
function starImport(ev: Evaluator, module: string): void {
  for (const name of Object.keys(SINKS)) {
    if (name.startsWith(`${module}.`) && !name.slice(module.length + 1).includes(".")) {
      ev.bind(name.slice(module.length + 1), ref(name));
    }
  }
}

/** `import a.b as c`, `from a import b as c, d`, and function/class headers (skipped). */
function statement(ev: Evaluator, i: number): number | undefined {
  const word = ev.idAt(i);
  if (word === "import") {
    let j = i + 1;
    for (;;) {
      const [dotted, next] = dottedName(ev, j);
      if (dotted === "") return next;
      j = next;
      if (ev.isId(j, "as") && ev.idAt(j + 1) !== undefined) {
        ev.bind(ev.idAt(j + 1) as string, ref(dotted));
        j += 2;
      } else ev.bind(dotted.split(".")[0] as string, ref(dotted.split(".")[0] as string));
      if (!ev.isOp(j, ",")) return j;
      j++;
    }
  }
  if (word === "from") {
    const [module, afterModule] = dottedName(ev, i + 1);
    if (!ev.isId(afterModule, "import")) return afterModule;
    let j = afterModule + 1;
    const paren = ev.isOp(j, "(");
    if (paren) j++;
    for (;;) {
      while (ev.tok(j)?.t === "nl" && paren) j++;
      if (ev.isOp(j, "*")) {
        starImport(ev, module);
        return j + 1;
      }
      const name = ev.idAt(j);
      if (name === undefined) return paren && ev.isOp(j, ")") ? j + 1 : j;
      j++;
      let alias = name;
      if (ev.isId(j, "as") && ev.idAt(j + 1) !== undefined) {
        alias = ev.idAt(j + 1) as string;
        j += 2;
      }
      ev.bind(alias, ref(`${module}.${name}`));
      if (!ev.isOp(j, ",")) return paren && ev.isOp(j, ")") ? j + 1 : j;
      j++;
    }
  }
  if ((word === "def" || word === "class") && ev.idAt(i + 1) !== undefined) {
    let j = i + 2;
    if (ev.isOp(j, "(")) j = ev.skipTo(j + 1, ")") + 1;
    if (word === "class") return j;
    while (j < ev.toks.length && !ev.isOp(j, ":")) j++;
    return j + 1;
  }
  return undefined;
}

function dottedName(ev: Evaluator, i: number): [string, number] {
  let j = i;
  const parts: string[] = [];
  while (ev.idAt(j) !== undefined || ev.isOp(j, ".")) {
    if (ev.isOp(j, ".")) parts.push("");
    else parts.push(ev.idAt(j) as string);
    j++;
    if (!ev.isOp(j, ".")) break;
    j++;
  }
  return [parts.filter((p) => p !== "").join("."), j];
}

function method(recv: Val, name: string, args: Args, ev: Evaluator): Val | undefined {
  if (recv.k === "path") return pathMethod(recv.of, name, args, ev);
  return fileMethod(recv, name, args, ev) ?? stringMethod(recv, name, args) ?? listJoin(recv, name, args);
}

/** pathlib.Path methods. */
function pathMethod(of: Val, name: string, args: Args, ev: Evaluator): Val | undefined {
  const what = `Path.${name}`;
  const self: Val = { k: "path", of };
  switch (name) {
    case "unlink":
    case "rmdir":
      ev.rep.path("delete", self, what);
      return UNKNOWN;
    case "write_text":
    case "write_bytes":
      return writeArgs("overwrite", 0, 1)({ pos: [self, ...args.pos], kw: args.kw }, ev, what);
    case "touch":
    case "mkdir":
    case "chmod":
    case "lchmod":
    case "symlink_to":
    case "hardlink_to":
      ev.rep.path("write", self, what);
      return UNKNOWN;
    case "rename":
    case "replace":
      return moveArgs(0, 1)({ pos: [self, ...args.pos], kw: args.kw }, ev, what);
    case "open":
      return openFile(self, arg(args, 0, "mode"), ev, what);
    case "read_text":
    case "read_bytes":
      return ev.rep.isDownloaded(self) ? FETCHED : UNKNOWN;
    case "expanduser":
      return { k: "path", of: expandUser(of, ev) };
    case "resolve":
    case "absolute":
      return { k: "path", of: joinPaths([str(ev.ctx.cwd), of]) };
    case "joinpath":
      return { k: "path", of: joinPaths([of, ...args.pos]) };
    case "home":
      return { k: "path", of: str(ev.ctx.home) };
    default:
      return undefined;
  }
}

export const python: LangSpec = {
  lang: "python",
  lex: lexPython,
  concatOps: new Set(["+"]),
  memberOps: new Set(["."]),
  parenless: false,
  commaList: "list",
  stopWords: new Set([
    "else",
    "for",
    "lambda",
    "def",
    "class",
    "return",
    "import",
    "from",
    "with",
    "as",
    "while",
    "del",
    "assert",
    "raise",
    "pass",
    "elif",
    "try",
    "except",
    "finally",
    "global",
    "nonlocal",
    "async",
    "yield",
  ]),
  declWords: new Set(),
  isVariable: () => false,
  global: (name) => {
    if (name === "Path" || name === "PosixPath") return ref("pathlib.Path");
    if (name === "__builtins__" || name === "builtins") return ref("builtins");
    return ref(name);
  },
  call(name, args, ev) {
    const canonical = name.replace(/^pathlib\.PosixPath\./, "pathlib.Path.").replace(/^(sys\.modules\.)/, "");
    const sink = SINKS[canonical];
    if (sink) return sink(args, ev, canonical);
    if (FETCH_PREFIXES.some((p) => canonical.startsWith(p))) return fetcher(args, ev, canonical);
    return undefined;
  },
  method,
  statement,
  dangerous: new Set([
    "os",
    "subprocess",
    "shutil",
    "pty",
    "posix",
    "builtins",
    "commands",
    "importlib",
    "sys.modules",
    "pathlib",
    "asyncio",
  ]),
};
