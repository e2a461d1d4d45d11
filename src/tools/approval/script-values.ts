/**
 * What the interpreter-code analyser knows about a value: a literal string, a list, a module or
 * function (by canonical dotted name), a path object, content fetched from the network, a decoded
 * payload, one of several alternatives, or nothing (`unknown`). Pure helpers over them.
 */

export type Val =
  /** A string the analyser can read; `built` when put together at run time (concatenation). */
  | { k: "str"; s: string; built?: true; decoded?: true }
  | { k: "num" }
  | { k: "bool"; b: boolean }
  | { k: "list"; items: Val[] }
  | { k: "obj"; fields: Map<string, Val> }
  /** A pathlib.Path / Pathname / File object for the path `of`. */
  | { k: "path"; of: Val }
  /** A module, class or function: `os`, `os.system`, `child_process.execSync`. */
  | { k: "ref"; name: string; built?: true }
  /** `recv.name`, not yet called. */
  | { k: "method"; recv: Val; name: string }
  /** An open file (from `open(p, mode)`). */
  | { k: "file"; path: Val; write: boolean }
  /** Content from the network (a response, its body, anything derived from it). */
  | { k: "fetched" }
  /** The output of a decoder (base64, zlib, hex, rot13) the analyser could not read. */
  | { k: "decoded" }
  /** One of these at run time (a conditional, a variable assigned in several places). */
  | { k: "alts"; opts: Val[] }
  | { k: "unknown" };

export const UNKNOWN: Val = { k: "unknown" };
export const FETCHED: Val = { k: "fetched" };

export function str(s: string, flags: { built?: boolean; decoded?: boolean } = {}): Val {
  return {
    k: "str",
    s,
    ...(flags.built ? { built: true as const } : {}),
    ...(flags.decoded ? { decoded: true as const } : {}),
  };
}

export function ref(name: string, built = false): Val {
  return built ? { k: "ref", name, built: true } : { k: "ref", name };
}

/** At most this many alternatives are followed; more becomes `unknown`. */
const MAX_ALTS = 16;

/** The alternatives of `v` (itself when it is not `alts`). */
export function options(v: Val): Val[] {
  return v.k === "alts" ? v.opts : [v];
}

export function alts(values: readonly Val[]): Val {
  const flat: Val[] = [];
  for (const v of values) {
    for (const o of options(v)) if (!flat.some((f) => sameVal(f, o))) flat.push(o);
  }
  if (flat.length === 0) return UNKNOWN;
  if (flat.length === 1) return flat[0] as Val;
  return flat.length > MAX_ALTS ? UNKNOWN : { k: "alts", opts: flat };
}

function sameVal(a: Val, b: Val): boolean {
  if (a.k !== b.k) return false;
  if (a.k === "str" && b.k === "str") return a.s === b.s && a.decoded === b.decoded;
  if (a.k === "ref" && b.k === "ref") return a.name === b.name;
  return a.k === "unknown" || a.k === "fetched" || a.k === "decoded" || a.k === "num";
}

/** Applies `f` to every alternative and joins the results. */
export function mapVal(v: Val, f: (one: Val) => Val): Val {
  return v.k === "alts" ? alts(v.opts.map(f)) : f(v);
}

export function isTainted(v: Val): boolean {
  return options(v).some((o) => o.k === "fetched");
}

/** String concatenation (`+`, `.`, `..`), list concatenation, taint kept. */
export function concat(a: Val, b: Val): Val {
  if (a.k === "alts" || b.k === "alts") {
    const out: Val[] = [];
    for (const x of options(a)) for (const y of options(b)) out.push(concat(x, y));
    return out.length > MAX_ALTS ? UNKNOWN : alts(out);
  }
  if (a.k === "fetched" || b.k === "fetched") return FETCHED;
  if (a.k === "str" && b.k === "str") {
    return str(a.s + b.s, { built: true, decoded: a.decoded === true || b.decoded === true });
  }
  if (a.k === "list" && b.k === "list") return { k: "list", items: [...a.items, ...b.items] };
  if (a.k === "decoded" || b.k === "decoded") return { k: "decoded" };
  return UNKNOWN;
}

/** The string in `v` when it is exactly one readable string. */
export function strOf(v: Val | undefined): string | undefined {
  return v?.k === "str" ? v.s : undefined;
}

/** Path values (`Path(p)`) read as their string. */
export function pathText(v: Val): Val {
  return mapVal(v, (o) => (o.k === "path" ? pathText(o.of) : o));
}

/** Truthiness of an option such as `shell=True` or `{recursive: true}`; undefined when unreadable. */
export function truthy(v: Val | undefined): boolean | undefined {
  if (v === undefined) return false;
  if (v.k === "bool") return v.b;
  if (v.k === "str") return v.s !== "";
  if (v.k === "list" || v.k === "obj" || v.k === "ref") return true;
  return undefined;
}

/** Arguments of one call. */
export interface Args {
  pos: Val[];
  /** Keyword arguments (`shell=True`, `mode: "w"`, `exception: true`). */
  kw: Map<string, Val>;
}

/** The positional argument `n`, else the keyword `name`. */
export function arg(args: Args, n: number, name?: string): Val | undefined {
  return args.pos[n] ?? (name === undefined ? undefined : args.kw.get(name));
}

/** Names and values shared by both passes and by nested code (`exec("...")`). */
export class Scope {
  readonly bindings = new Map<string, Val[]>();
  /** Bound in ways not evaluated; may be anything. */
  readonly opaque = new Set<string>();
  /** The script rewrites variables by name (`globals()`, `$$x`): no variable can be trusted. */
  dynamic = false;
  /** Second pass: bindings are complete and frozen. */
  final = false;
}

/** The elements of a list (each one possible), else unknown. */
export function elements(v: Val): Val {
  return mapVal(v, (o) => (o.k === "list" ? alts(o.items) : o.k === "fetched" ? FETCHED : UNKNOWN));
}

export function isTaintedAny(a: Val, b: Val): boolean {
  return options(a).some((o) => o.k === "fetched") || options(b).some((o) => o.k === "fetched");
}

/** Python's `Path / "x"`. */
export function pathJoin(left: Val, right: Val): Val {
  return mapVal(left, (l) => {
    if (l.k !== "path") return UNKNOWN;
    return mapVal(right, (r) => {
      const base = l.of;
      if (base.k !== "str" || r.k !== "str") return { k: "path", of: UNKNOWN };
      return {
        k: "path",
        of: str(r.s.startsWith("/") ? r.s : `${base.s.replace(/\/$/, "")}/${r.s}`, { built: true }),
      };
    });
  });
}

/** `"rm -rf %s" % target` with readable parts. */
export function percentFormat(left: Val, right: Val): Val {
  if (left.k !== "str") return UNKNOWN;
  const values = right.k === "list" ? right.items : [right];
  let k = 0;
  let readable = true;
  const s = left.s.replace(/%[-#0 +]*\d*(?:\.\d+)?([sdrifx%])/g, (m, conv: string) => {
    if (conv === "%") return "%";
    const v = values[k++];
    if (v?.k === "str" && conv !== "r") return v.s;
    readable = false;
    return m;
  });
  return readable ? str(s, { built: true }) : UNKNOWN;
}
