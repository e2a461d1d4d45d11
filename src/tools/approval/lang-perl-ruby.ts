/**
 * Perl and Ruby for the interpreter-code analyser: system/exec/backticks/qx/%x, pipes through
 * open, File::Path and FileUtils, File and Dir, string eval, send/method lookups, LWP, HTTP::Tiny,
 * open-uri and Net::HTTP, Base64 decoding.
 */
import type { Evaluator, LangSpec } from "./script-eval.js";
import { lexPerl, lexRuby } from "./script-lexer-perl-ruby.js";
import {
  codeArg,
  codeFromFile,
  copyArgs,
  decode,
  downloadTo,
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
import { type Args, FETCHED, mapVal, options, ref, str, strOf, UNKNOWN, type Val } from "./script-values.js";

/** system/exec/spawn: one argument is a shell command line, several are a program and its arguments. */
const systemLike: Sink = (a, ev, name) => {
  const pos = a.pos[0]?.k === "obj" ? a.pos.slice(1) : a.pos;
  if (pos.length === 0) return UNKNOWN;
  if (pos.length === 1) {
    for (const o of options(pos[0] as Val)) {
      if (o.k === "list") ev.rep.argv(o.items, name);
      else ev.rep.shell(o, name);
    }
  } else ev.rep.argv(pos, name);
  return UNKNOWN;
};

/** `open(FH, MODE, EXPR, LIST)` and the two-argument `open(FH, "| cmd")`. */
const perlOpen: Sink = (a, ev, name) => {
  const mode = a.pos[1];
  if (a.pos.length >= 3) {
    const m = strOf(mode)?.trim();
    const rest = a.pos.slice(2);
    if (m === undefined) {
      ev.rep.opaque(
        "opaque_command",
        `${name} opens with a mode the analyser cannot read (it may run a command)`,
      );
      return UNKNOWN;
    }
    if (m === "-|" || m === "|-") return systemLike({ pos: rest, kw: a.kw }, ev, name);
    return openFile(rest[0], str(m), ev, name);
  }
  return mapVal(mode ?? UNKNOWN, (o) => {
    if (o.k !== "str") {
      ev.rep.opaque(
        "opaque_command",
        `${name} opens an expression the analyser cannot read (it may run a command)`,
      );
      return UNKNOWN;
    }
    const s = o.s.trim();
    if (s.startsWith("|")) ev.rep.shell(str(s.slice(1).trim()), name);
    else if (s.endsWith("|")) ev.rep.shell(str(s.slice(0, -1).trim()), name);
    else {
      const m = /^(\+?[<>]|>>|\+>>)?\s*(.*)$/.exec(s);
      return openFile(str(m?.[2] ?? s), str(m?.[1] ?? "<"), ev, name);
    }
    return UNKNOWN;
  });
};

/** open2/open3: the command follows the handles. */
const openN =
  (handles: number): Sink =>
  (a, ev, name) =>
    systemLike({ pos: a.pos.slice(handles), kw: a.kw }, ev, name);

const glob: Sink = (a, ev) => ({ k: "list", items: [expandUser(a.pos[0], ev)] });

const PERL: SinkTable = {
  system: systemLike,
  exec: systemLike,
  readpipe: shellArg(0),
  open: perlOpen,
  unlink: pathArgs("delete"),
  rmdir: pathArgs("delete"),
  rename: moveArgs(),
  truncate: pathArgs("overwrite", 0, 1),
  chmod: pathArgs("write", 1),
  chown: pathArgs("write", 2),
  symlink: copyArgs(),
  link: copyArgs(),
  mkdir: pathArgs("write", 0, 1),
  sysopen: (a, ev, name) => {
    ev.rep.path("overwrite", a.pos[1] ?? UNKNOWN, name);
    return UNKNOWN;
  },
  rmtree: pathArgs("rdelete"),
  remove_tree: pathArgs("rdelete"),
  "File.Path.rmtree": pathArgs("rdelete"),
  "File.Path.remove_tree": pathArgs("rdelete"),
  copy: copyArgs(),
  cp: copyArgs(),
  move: moveArgs(),
  mv: moveArgs(),
  "File.Copy.copy": copyArgs(),
  "File.Copy.cp": copyArgs(),
  "File.Copy.move": moveArgs(),
  "File.Copy.mv": moveArgs(),
  eval: codeArg(0),
  do: codeFromFile,
  glob,
  "File.Glob.bsd_glob": glob,
  "File.HomeDir.my_home": (_a, ev) => str(ev.ctx.home),
  "LWP.Simple.get": fetcher,
  "LWP.Simple.getstore": downloadTo(1),
  "LWP.Simple.mirror": downloadTo(1),
  "LWP.UserAgent.new": fetcher,
  "HTTP.Tiny.new": fetcher,
  "Mojo.UserAgent.new": fetcher,
  "Furl.new": fetcher,
  "IO.Socket.INET.new": fetcher,
  "MIME.Base64.decode_base64": decode("base64"),
  decode_base64: decode("base64"),
  "Compress.Zlib.uncompress": decode("opaque"),
  unpack: decode("opaque"),
  pack: (a) => (a.pos[0]?.k === "str" && /^[Hh]/.test(a.pos[0].s) ? { k: "decoded" } : UNKNOWN),
  open2: openN(2),
  open3: openN(3),
  "IPC.Open2.open2": openN(2),
  "IPC.Open3.open3": openN(3),
  "IPC.Run.run": systemLike,
  "IPC.Run.start": systemLike,
  "IPC.System.Simple.system": systemLike,
  "IPC.System.Simple.capture": systemLike,
  "Cwd.getcwd": (_a, ev) => str(ev.ctx.cwd),
  getcwd: (_a, ev) => str(ev.ctx.cwd),
};

/** `use LWP::Simple;` brings `get`, `getstore`, `mirror` into scope; `sub name` headers are skipped. */
function perlStatement(ev: Evaluator, i: number): number | undefined {
  const word = ev.idAt(i);
  if (word === "use" || word === "no" || word === "package") {
    const module = ev.idAt(i + 1) ?? "";
    if (module === "LWP.Simple") {
      for (const f of ["get", "getstore", "mirror", "getprint", "head"]) ev.bind(f, ref(`LWP.Simple.${f}`));
    }
    let j = i + 1;
    while (j < ev.toks.length && ev.tok(j)?.t !== "nl") j++;
    return j;
  }
  if (word === "sub" && ev.idAt(i + 1) !== undefined) return i + 2;
  return undefined;
}

export const perl: LangSpec = {
  lang: "perl",
  lex: lexPerl,
  concatOps: new Set(["."]),
  memberOps: new Set(["->"]),
  parenless: true,
  commaList: "list",
  stopWords: new Set([
    "or",
    "and",
    "xor",
    "not",
    "if",
    "unless",
    "while",
    "until",
    "foreach",
    "for",
    "return",
    "sub",
    "use",
    "no",
    "package",
    "last",
    "next",
    "redo",
    "x",
    "eq",
    "ne",
    "lt",
    "gt",
    "le",
    "ge",
    "cmp",
    "else",
    "elsif",
  ]),
  declWords: new Set(["my", "our", "local", "state"]),
  isVariable: (name) => /^[$@%&]/.test(name),
  global: (name) => {
    if (/^[$%]ENV$/.test(name)) return ref("ENV");
    if (name.startsWith("&")) return ref(name.slice(1));
    return /^[$@%]/.test(name) ? UNKNOWN : ref(name);
  },
  call(name, args, ev) {
    const sink = PERL[name.replace(/^CORE\.(GLOBAL\.)?/, "")];
    if (sink) return sink(args, ev, name);
    return undefined;
  },
  method(recv, name, args, ev) {
    return fileMethod(recv, name, args, ev) ?? stringMethod(recv, name, args) ?? listJoin(recv, name, args);
  },
  property: (name, ev) => (name === "File.HomeDir.my_home" ? str(ev.ctx.home) : undefined),
  statement: perlStatement,
  dangerous: new Set(["CORE", "POSIX", "File.Path", "IPC.Open3", "main"]),
};

/** Kernel#open and URI.open: `|cmd` runs a command, a URL fetches (open-uri). */
const rubyOpen: Sink = (a, ev, name) =>
  mapVal(a.pos[0] ?? UNKNOWN, (o) => {
    if (o.k === "str" && o.s.startsWith("|")) {
      ev.rep.shell(str(o.s.slice(1)), name);
      return UNKNOWN;
    }
    if (o.k === "str" && /^(https?|ftp):\/\//i.test(o.s)) return FETCHED;
    if (o.k !== "str" && o.k !== "path" && name !== "File.open") {
      ev.rep.opaque(
        "opaque_command",
        `${name} opens something the analyser cannot read (a "|command" runs it)`,
      );
      return UNKNOWN;
    }
    return openFile(o, a.pos[1], ev, name);
  });

/** `send(:system, cmd)`, `obj.public_send(:x)`: a method by name. */
function rubySend(recv: Val | undefined, args: Args, ev: Evaluator, name: string): Val {
  const [method, ...rest] = args.pos;
  return mapVal(method ?? UNKNOWN, (m) => {
    if (m.k !== "str") {
      ev.rep.opaque("opaque_code", `${name} calls a method the analyser cannot read (opaque code)`);
      return UNKNOWN;
    }
    if (m.built) ev.rep.dynamicName(name, m.s);
    return ev.call(recv === undefined ? ref(m.s) : ev.member(recv, m.s), { pos: rest, kw: args.kw });
  });
}

const pathname: Sink = (a) => ({ k: "path", of: a.pos[0] ?? UNKNOWN });
const fileUtilsChmod = pathArgs("write", 1);

const RUBY: SinkTable = {
  system: systemLike,
  exec: systemLike,
  spawn: systemLike,
  "Process.spawn": systemLike,
  "Process.exec": systemLike,
  "IO.popen": systemLike,
  "Open3.capture2": systemLike,
  "Open3.capture2e": systemLike,
  "Open3.capture3": systemLike,
  "Open3.popen2": systemLike,
  "Open3.popen2e": systemLike,
  "Open3.popen3": systemLike,
  "Open3.pipeline": systemLike,
  open: rubyOpen,
  "URI.open": rubyOpen,
  "File.open": rubyOpen,
  "File.new": rubyOpen,
  "Net.HTTP.get": fetcher,
  "Net.HTTP.get_response": fetcher,
  "Net.HTTP.start": fetcher,
  "Net.HTTP.new": fetcher,
  "Net.HTTP.post": fetcher,
  "HTTParty.get": fetcher,
  "Faraday.get": fetcher,
  "Faraday.new": fetcher,
  "RestClient.get": fetcher,
  "Excon.get": fetcher,
  "FileUtils.rm_rf": pathArgs("rdelete"),
  "FileUtils.rm_r": pathArgs("rdelete"),
  "FileUtils.rmtree": pathArgs("rdelete"),
  "FileUtils.remove_dir": pathArgs("rdelete"),
  "FileUtils.remove_entry": pathArgs("rdelete"),
  "FileUtils.remove_entry_secure": pathArgs("rdelete"),
  "FileUtils.rm": pathArgs("delete"),
  "FileUtils.rm_f": pathArgs("delete"),
  "FileUtils.remove": pathArgs("delete"),
  "FileUtils.safe_unlink": pathArgs("delete"),
  "FileUtils.rmdir": pathArgs("delete"),
  "FileUtils.mv": moveArgs(),
  "FileUtils.move": moveArgs(),
  "FileUtils.cp": copyArgs(),
  "FileUtils.copy": copyArgs(),
  "FileUtils.cp_r": copyArgs(),
  "FileUtils.copy_file": copyArgs(),
  "FileUtils.install": copyArgs(),
  "FileUtils.ln": copyArgs(),
  "FileUtils.ln_s": copyArgs(),
  "FileUtils.ln_sf": copyArgs(),
  "FileUtils.symlink": copyArgs(),
  "FileUtils.touch": pathArgs("write"),
  "FileUtils.mkdir": pathArgs("write"),
  "FileUtils.mkdir_p": pathArgs("write"),
  "FileUtils.chmod": fileUtilsChmod,
  "FileUtils.chmod_R": fileUtilsChmod,
  "FileUtils.chown": pathArgs("write", 2),
  "FileUtils.chown_R": pathArgs("write", 2),
  "File.delete": pathArgs("delete"),
  "File.unlink": pathArgs("delete"),
  "File.rename": moveArgs(),
  "File.write": writeArgs("overwrite"),
  "File.binwrite": writeArgs("overwrite"),
  "IO.write": writeArgs("overwrite"),
  "IO.binwrite": writeArgs("overwrite"),
  "File.truncate": pathArgs("overwrite", 0, 1),
  "File.symlink": copyArgs(),
  "File.link": copyArgs(),
  "File.chmod": pathArgs("write", 1),
  "File.chown": pathArgs("write", 2),
  "Dir.rmdir": pathArgs("delete"),
  "Dir.delete": pathArgs("delete"),
  "Dir.unlink": pathArgs("delete"),
  "Dir.mkdir": pathArgs("write", 0, 1),
  "File.expand_path": (a, ev) =>
    joinPaths([str(ev.ctx.cwd), ...a.pos.slice(1).reverse(), expandUser(a.pos[0], ev)]),
  "File.join": (a) => joinPaths(a.pos),
  "Dir.glob": (a, ev) => ({ k: "list", items: [expandUser(a.pos[0], ev)] }),
  "Dir.home": (_a, ev) => str(ev.ctx.home),
  "Dir.pwd": (_a, ev) => str(ev.ctx.cwd),
  "ENV.fetch": getenv,
  "ENV.[]": getenv,
  Pathname: pathname,
  "Pathname.new": pathname,
  eval: codeArg(0),
  instance_eval: codeArg(0),
  class_eval: codeArg(0),
  module_eval: codeArg(0),
  "binding.eval": codeArg(0),
  "TOPLEVEL_BINDING.eval": codeArg(0),
  load: codeFromFile,
  "Object.const_get": (a, ev, name) => rubySend(undefined, a, ev, name),
  method: (a) => mapVal(a.pos[0] ?? UNKNOWN, (m) => (m.k === "str" ? ref(m.s, m.built === true) : UNKNOWN)),
  "Base64.decode64": decode("base64"),
  "Base64.strict_decode64": decode("base64"),
  "Base64.urlsafe_decode64": decode("base64"),
  "Zlib.Inflate.inflate": decode("opaque"),
  "Zlib.inflate": decode("opaque"),
  "Zlib.gunzip": decode("opaque"),
};

function rubyCall(name: string, args: Args, ev: Evaluator): Val | undefined {
  const bare = name.replace(/^(Kernel|Object)\./, "");
  const send = /^(?:(.*)\.)?(send|public_send|__send__)$/.exec(bare);
  if (send) return rubySend(send[1] === undefined ? undefined : ref(send[1]), args, ev, bare);
  if (bare.endsWith(".call")) return ev.call(ref(bare.slice(0, -5)), args);
  const sink = RUBY[bare];
  if (sink) return sink(args, ev, bare);
  return undefined;
}

function rubyMethod(recv: Val, name: string, args: Args, ev: Evaluator): Val | undefined {
  if (recv.k === "path") {
    const self: Val = recv;
    const what = `Pathname#${name}`;
    if (name === "rmtree") return pathArgs("rdelete")({ pos: [self], kw: args.kw }, ev, what);
    if (name === "delete" || name === "unlink" || name === "rmdir")
      return pathArgs("delete")({ pos: [self], kw: args.kw }, ev, what);
    if (name === "write" || name === "binwrite")
      return writeArgs("overwrite")({ pos: [self, ...args.pos], kw: args.kw }, ev, what);
    if (name === "rename") return moveArgs()({ pos: [self, ...args.pos], kw: args.kw }, ev, what);
    if (name === "open") return openFile(self, args.pos[0], ev, what);
    if (name === "mkpath" || name === "mkdir" || name === "chmod")
      return pathArgs("write")({ pos: [self], kw: args.kw }, ev, what);
    if (name === "expand_path") return { k: "path", of: expandUser(recv.of, ev) };
    if (name === "join" || name === "+") return { k: "path", of: joinPaths([recv.of, ...args.pos]) };
    return undefined;
  }
  if (recv.k === "str" && (name === "unpack1" || name === "unpack") && strOf(args.pos[0])?.startsWith("m")) {
    return decode("base64")({ pos: [recv], kw: args.kw }, ev, name);
  }
  if (name === "send" || name === "public_send" || name === "__send__") return rubySend(recv, args, ev, name);
  return fileMethod(recv, name, args, ev) ?? stringMethod(recv, name, args) ?? listJoin(recv, name, args);
}

function rubyStatement(ev: Evaluator, i: number): number | undefined {
  if (ev.idAt(i) !== "def") return undefined;
  let j = i + 1;
  while (ev.idAt(j) !== undefined || ev.isOp(j, ".")) j++;
  if (ev.isOp(j, "(")) return ev.skipTo(j + 1, ")") + 1;
  while (j < ev.toks.length && ev.tok(j)?.t !== "nl") j++;
  return j;
}

export const ruby: LangSpec = {
  lang: "ruby",
  lex: lexRuby,
  concatOps: new Set(["+"]),
  memberOps: new Set([".", "&.", "::"]),
  parenless: true,
  commaList: "list",
  stopWords: new Set([
    "if",
    "unless",
    "while",
    "until",
    "and",
    "or",
    "not",
    "then",
    "do",
    "end",
    "else",
    "elsif",
    "case",
    "when",
    "begin",
    "rescue",
    "ensure",
    "return",
    "def",
    "class",
    "module",
    "yield",
    "break",
    "next",
    "redo",
    "retry",
    "in",
  ]),
  declWords: new Set(),
  isVariable: (name) => /^[@$]/.test(name),
  global: (name) => (/^[@$]/.test(name) ? UNKNOWN : ref(name)),
  call: rubyCall,
  method: rubyMethod,
  property: (name, ev) => {
    if (name === "Dir.home") return str(ev.ctx.home);
    if (name === "Dir.pwd") return str(ev.ctx.cwd);
    return undefined;
  },
  statement: rubyStatement,
  dangerous: new Set(["Kernel", "Object", "FileUtils", "File", "IO", "Open3", "Process", "Dir"]),
};
