/**
 * Building blocks of the per-language sink tables: what a call does with its arguments (runs a
 * command, runs code, touches a path, fetches, decodes) and the path arithmetic the languages
 * share (`~` expansion, joining, making absolute).
 */
import { posix } from "node:path";
import type { PathOp } from "./script-effects.js";
import type { Evaluator } from "./script-eval.js";
import {
  type Args,
  arg,
  FETCHED,
  isTainted,
  mapVal,
  options,
  pathText,
  str,
  UNKNOWN,
  type Val,
} from "./script-values.js";

export type Sink = (args: Args, ev: Evaluator, name: string) => Val;
export type SinkTable = Record<string, Sink>;

/** Runs argument `n` (or keyword `kw`) as a shell command line. */
export const shellArg =
  (n: number, kw?: string): Sink =>
  (a, ev, name) => {
    ev.rep.shell(arg(a, n, kw) ?? UNKNOWN, name);
    return UNKNOWN;
  };

/** Runs argument `n` as source code. */
export const codeArg =
  (n: number | "last", kw?: string): Sink =>
  (a, ev, name) => {
    const v = n === "last" ? a.pos.at(-1) : arg(a, n, kw);
    if (v !== undefined) ev.rep.code(v, name);
    return UNKNOWN;
  };

/** Every positional argument from `from` is a path the call applies `op` to. */
export const pathArgs =
  (op: PathOp, from = 0, to?: number): Sink =>
  (a, ev, name) => {
    const targets = a.pos.slice(from, to);
    if (targets.length === 0) ev.rep.path(op, UNKNOWN, name);
    for (const t of targets) ev.rep.path(op, t, name);
    return UNKNOWN;
  };

/** `(src, dst)`: the source moves away (deleted from its place), the destination is overwritten. */
export const moveArgs =
  (src = 0, dst = 1, dstKw?: string): Sink =>
  (a, ev, name) => {
    ev.rep.path("move", arg(a, src) ?? UNKNOWN, name);
    ev.rep.path("overwrite", arg(a, dst, dstKw) ?? UNKNOWN, name);
    return UNKNOWN;
  };

/** `(src, dst)`: the destination is overwritten. */
export const copyArgs =
  (dst = 1, dstKw?: string): Sink =>
  (a, ev, name) => {
    ev.rep.path("overwrite", arg(a, dst, dstKw) ?? UNKNOWN, name);
    return UNKNOWN;
  };

/** Writes `data` (argument `dataAt`) to the path at `at`; remembers downloads. */
export const writeArgs =
  (op: PathOp, at = 0, dataAt = 1): Sink =>
  (a, ev, name) => {
    const target = arg(a, at) ?? UNKNOWN;
    ev.rep.path(op, target, name);
    if (isTainted(a.pos[dataAt] ?? UNKNOWN)) ev.rep.download(target);
    return UNKNOWN;
  };

/** Runs code from a file (`execfile`, `dofile`, `do FILE`): downloaded is remote, else unreadable. */
export const codeFromFile: Sink = (a, ev, name) => {
  if (ev.rep.isDownloaded(a.pos[0])) ev.rep.remote(name);
  else ev.rep.opaque("opaque_code", `${name} runs code from a file the analyser cannot read (opaque code)`);
  return UNKNOWN;
};

export const fetcher: Sink = () => FETCHED;

/** A fetch that saves to the file in argument `at`. */
export const downloadTo =
  (at: number): Sink =>
  (a, ev, name) => {
    ev.rep.path("overwrite", a.pos[at], name);
    ev.rep.download(a.pos[at]);
    return FETCHED;
  };

export const returns =
  (v: Val | ((a: Args, ev: Evaluator) => Val)): Sink =>
  (a, ev) =>
    typeof v === "function" ? v(a, ev) : v;

/** `~` and `~/x` as the home; `~user` cannot be read. */
export function expandUser(v: Val | undefined, ev: Evaluator): Val {
  return mapVal(pathText(v ?? UNKNOWN), (o) => {
    if (o.k !== "str") return o;
    if (o.s === "~" || o.s.startsWith("~/")) return str(ev.ctx.home + o.s.slice(1), { built: true });
    if (o.s.startsWith("~")) return UNKNOWN;
    return o;
  });
}

/** `$HOME`, `${HOME}`, `$HERMES_HOME` inside a string (`os.path.expandvars`). */
export function expandVars(v: Val | undefined, ev: Evaluator): Val {
  return mapVal(v ?? UNKNOWN, (o) => {
    if (o.k !== "str") return o;
    let readable = true;
    const s = o.s.replace(/\$\{?([A-Za-z_]\w*)\}?/g, (_m, name: string) => {
      const value = ev.envValue(name);
      if (value.k === "str") return value.s;
      readable = false;
      return "";
    });
    return readable ? str(s, { built: true }) : UNKNOWN;
  });
}

/** `os.path.join`, `path.join`, `File.join`: a later absolute part restarts the path. */
export function joinPaths(parts: readonly Val[], absolute = false, ev?: Evaluator): Val {
  let out: Val = str("");
  for (const p of parts) {
    out = joinTwo(out, pathText(p));
  }
  if (absolute && ev !== undefined) return mapVal(out, (o) => (o.k === "str" ? str(ev.rep.abs(o.s)) : o));
  return out;
}

function joinTwo(a: Val, b: Val): Val {
  if (a.k === "alts" || b.k === "alts") {
    const out: Val[] = [];
    for (const x of options(a)) for (const y of options(b)) out.push(joinTwo(x, y));
    return out.length === 1 ? (out[0] as Val) : { k: "alts", opts: out };
  }
  if (a.k !== "str" || b.k !== "str") return UNKNOWN;
  if (a.s === "" || b.s.startsWith("/")) return str(b.s, { built: true });
  return str(posix.join(a.s, b.s), { built: true });
}

export function dirnameOf(v: Val | undefined): Val {
  return mapVal(pathText(v ?? UNKNOWN), (o) =>
    o.k === "str" ? str(posix.dirname(o.s), { built: true }) : UNKNOWN,
  );
}

/** base64, hex and rot13 decoded when the input is a literal; anything else is opaque. */
export function decode(kind: "base64" | "hex" | "rot13" | "opaque"): Sink {
  return (a) =>
    mapVal(a.pos[0] ?? UNKNOWN, (o) => {
      if (o.k === "fetched") return FETCHED;
      if (o.k !== "str" || kind === "opaque") return { k: "decoded" };
      let text: string;
      if (kind === "base64") text = Buffer.from(o.s, "base64").toString("utf8");
      else if (kind === "hex") text = Buffer.from(o.s.replace(/\s+/g, ""), "hex").toString("utf8");
      else
        text = o.s.replace(/[a-z]/gi, (c) =>
          String.fromCharCode((((c.charCodeAt(0) & 31) + 12) % 26) + (c.charCodeAt(0) & 96) + 1),
        );
      return str(text, { built: true, decoded: true });
    });
}

/** The value an environment lookup gives (`os.getenv("HOME")`, `ENV.fetch("HOME")`). */
export const getenv: Sink = (a, ev) =>
  mapVal(a.pos[0] ?? UNKNOWN, (o) => (o.k === "str" ? ev.envValue(o.s) : UNKNOWN));

/** Whether a file open mode writes: `w`, `a`, `x`, `+`, `>`; unknown modes count as writing. */
export function writeMode(mode: Val | undefined, dflt = "r"): "read" | "append" | "overwrite" | "unknown" {
  const m = mode === undefined ? str(dflt) : mode;
  if (m.k !== "str") return "unknown";
  // Perl layers (`<:encoding(UTF-8)`) and Ruby encodings (`r:bom|utf-8`) follow a colon.
  const s = (m.s.trim().split(":")[0] ?? "").trim();
  if (/^\+?</.test(s)) return s.startsWith("+") ? "overwrite" : "read";
  if (/^>>/.test(s)) return "append";
  if (/^(\+?>|\|)/.test(s) || /w/.test(s) || /^c/.test(s)) return "overwrite";
  if (/[ax+]/.test(s)) return "append";
  return "read";
}

/** An `open(path, mode)` call: reports writes and returns the file. */
export function openFile(
  path: Val | undefined,
  mode: Val | undefined,
  ev: Evaluator,
  name: string,
  dflt = "r",
): Val {
  const target = path ?? UNKNOWN;
  const how = writeMode(mode, dflt);
  if (how === "overwrite" || how === "unknown") ev.rep.path("overwrite", target, name);
  else if (how === "append") ev.rep.path("write", target, name);
  return { k: "file", path: target, write: how !== "read" };
}

/** Methods of an open file: writing network content makes it a download, reading one back taints. */
export function fileMethod(recv: Val, method: string, args: Args, ev: Evaluator): Val | undefined {
  if (recv.k !== "file") return undefined;
  if (
    /^(write|writelines|puts|print|syswrite|<<)$/.test(method) &&
    recv.write &&
    isTainted(args.pos[0] ?? UNKNOWN)
  ) {
    ev.rep.download(recv.path);
  }
  if (/^(read|readlines|readline|read_text|each_line|gets)$/.test(method)) {
    return ev.rep.isDownloaded(recv.path) ? FETCHED : UNKNOWN;
  }
  return UNKNOWN;
}

/** Methods of a readable string that keep it readable. */
export function stringMethod(recv: Val, method: string, args: Args): Val | undefined {
  if (recv.k !== "str") return undefined;
  const flags = { built: recv.built === true, decoded: recv.decoded === true };
  switch (method) {
    case "decode":
    case "encode":
    case "toString":
    case "to_s":
    case "to_str":
      return recv;
    case "strip":
    case "trim":
    case "chomp":
      return str(recv.s.trim(), flags);
    case "join": {
      const list = args.pos[0];
      if (list?.k !== "list" || !list.items.every((i) => i.k === "str")) return UNKNOWN;
      return str(list.items.map((i) => (i as { s: string }).s).join(recv.s), { built: true });
    }
    case "replace": {
      const [from, to] = args.pos;
      if (from?.k !== "str" || to?.k !== "str") return UNKNOWN;
      return str(recv.s.split(from.s).join(to.s), { built: true, decoded: flags.decoded });
    }
    case "format": {
      let k = 0;
      let readable = true;
      const s = recv.s.replace(/\{(\d*)\}/g, (_m, n: string) => {
        const v = args.pos[n === "" ? k++ : Number(n)];
        if (v?.k === "str") return v.s;
        readable = false;
        return "";
      });
      return readable ? str(s, { built: true }) : UNKNOWN;
    }
    default:
      return undefined;
  }
}

/** `[...].join(" ")` on a list of readable strings. */
export function listJoin(recv: Val, method: string, args: Args): Val | undefined {
  if (recv.k !== "list" || method !== "join") return undefined;
  const sep = args.pos[0] ?? str(",");
  if (sep.k !== "str" || !recv.items.every((i) => i.k === "str")) return UNKNOWN;
  return str(recv.items.map((i) => (i as { s: string }).s).join(sep.s), { built: true });
}
