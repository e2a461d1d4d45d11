/**
 * What a path argument means for the machine: resolving it (`~`, `$HOME`, relative to the
 * command's directory, symlinks), and whether it is catastrophic to delete or overwrite (`/`, a
 * home, a top-level directory, all of their contents), a Hermes `state.db`, a disk, or on the
 * protected list. Pure except `ctx.realPath`.
 */
import { basename, dirname, isAbsolute, join, posix, resolve } from "node:path";
import { containsProtected, type PathProtection, pathProtection, realPathOf } from "./protected-paths.js";
import type { AnalysisContext, Finding } from "./types.js";
import { type Field, globRegex } from "./words.js";

/** One way a path argument can resolve. */
export interface Target {
  /** Absolute, normalised (for globs: the pattern). Empty when the base directory is unknown. */
  abs: string;
  /** As written after expansion. */
  text: string;
  glob: boolean;
  dynamic: boolean;
  /** Relative, after a `cd` the analyser could not follow: `abs` is unknown. */
  unknownBase: boolean;
}

/** Where the command runs: candidate directories (a `cd` that may fail leaves two); undefined when unknown. */
export type Cwds = readonly string[] | undefined;

/** The targets a path field stands for, one per candidate working directory. */
export function targetsOf(field: Field, cwds: Cwds): Target[] {
  const text = field.text;
  const base = { text, glob: field.glob, dynamic: field.dynamic };
  if (text === "") return [{ ...base, abs: "", unknownBase: false }];
  if (isAbsolute(text)) return [{ ...base, abs: normalise(text), unknownBase: false }];
  if (cwds === undefined || cwds.length === 0) return [{ ...base, abs: "", unknownBase: true }];
  return cwds.map((cwd) => ({ ...base, abs: normalise(join(cwd, text)), unknownBase: false }));
}

function normalise(p: string): string {
  const n = posix.normalize(p);
  return n.length > 1 && n.endsWith("/") ? n.slice(0, -1) : n;
}

/** A glob's last component that matches (nearly) everything: `*`, `.*`, `.??*`, `[!.]*`. */
function matchesAll(component: string): boolean {
  const stripped = component.replace(/\[[^\]]*\]/g, "?").replace(/\./g, "");
  return stripped !== "" && /^[*?]+$/.test(stripped) && /[*]/.test(stripped);
}

/**
 * Why deleting or overwriting `abs` as a whole is catastrophic, or undefined: `/`, a home or
 * Hermes home or an ancestor of one, a top-level directory, or a glob over all contents of one.
 */
export function catastrophic(abs: string, glob: boolean, ctx: AnalysisContext): string | undefined {
  if (abs === "") return undefined;
  if (glob) {
    const dir = dirname(abs);
    const last = basename(abs);
    if (dir === "/" && /[*?[]/.test(last)) return `every top-level directory matching ${abs}`;
    if (/[*?[]/.test(dir)) {
      const parent = catastrophic(dir, true, ctx);
      return parent && matchesAll(last) ? `the contents of ${parent}` : undefined;
    }
    if (matchesAll(last)) {
      const whole = catastrophic(dir, false, ctx);
      if (whole) return `all contents of ${whole}`;
    }
    return undefined;
  }
  if (abs === "/") return "/ (the whole filesystem)";
  const homes = ctx.roots.homes;
  const hermes = ctx.roots.hermesHomes;
  if (homes.includes(abs)) return `the home directory ${abs}`;
  if (hermes.includes(abs)) return `Hermes's home ${abs}`;
  if (/^\/[^/]+$/.test(abs)) return `the top-level directory ${abs}`;
  for (const h of [...homes, ...hermes]) {
    if (h.startsWith(`${abs}/`)) return `${abs}, which holds ${h}`;
  }
  return undefined;
}

const STATE_DB = /^state\.db(-wal|-shm|-journal)?$/;

/** Whether `abs` (or a glob) is, or (with `asDirectory`) is a directory holding, a Hermes `state.db`. */
export function touchesStateDb(
  abs: string,
  glob: boolean,
  ctx: AnalysisContext,
  asDirectory: boolean,
): boolean {
  if (abs === "") return false;
  const paths = glob ? [abs] : [...new Set([abs, realPath(ctx)(abs)])];
  for (const p of paths) {
    const dir = dirname(p);
    const name = basename(p);
    for (const h of ctx.roots.hermesHomes) {
      const profiles = join(h, "profiles");
      if (dir === h || dirname(dir) === profiles) {
        if (glob ? DB_NAMES.some((n) => new RegExp(`^${globRegex(name)}$`).test(n)) : STATE_DB.test(name))
          return true;
      }
      if (asDirectory && (p === h || p === profiles || dir === profiles || h.startsWith(`${p}/`)))
        return true;
    }
  }
  return false;
}

const DB_NAMES = ["state.db", "state.db-wal", "state.db-shm"];

const SAFE_DEVICE =
  /^\/dev\/(null|zero|full|random|urandom|stdout|stderr|stdin|tty|console|ptmx|fd\/\d+|pts\/\d+|tcp\/.+|udp\/.+|shm\/.+|mqueue\/.+)$/;
const DISK =
  /^\/dev\/((sd|hd|vd|xvd)[a-z]+\d*|nvme\d+(n\d+(p\d+)?)?|mmcblk\d+(p\d+)?|mapper\/.+|md\d+|dm-\d+|disk\/.+|root|loop\d+|sr\d+|mem|kmem|port|nbd\d+|zd\d+|rbd\d+|block\/.+|bcache\d+)$/;

/** "disk" for a block device or memory, "device" for another device file, undefined otherwise. */
export function deviceKind(abs: string, realPath: (p: string) => string): "disk" | "device" | undefined {
  for (const p of new Set([abs, abs.startsWith("/dev/") ? realPath(abs) : abs])) {
    if (DISK.test(p)) return "disk";
    if (p === "/proc/sysrq-trigger") return "disk";
  }
  if (abs.startsWith("/dev/") && !SAFE_DEVICE.test(abs)) return "device";
  return undefined;
}

/** The realPath of the context (injected in tests), defaulting to the filesystem's. */
export function realPath(ctx: AnalysisContext): (p: string) => string {
  return ctx.realPath ?? realPathOf;
}

/**
 * The protection of writing `t` (the literal path and the path its symlinks resolve to); with
 * `whole`, of removing or moving it as a directory (anything protected inside counts).
 */
export function protectionOf(t: Target, ctx: AnalysisContext, whole: boolean): PathProtection | undefined {
  if (t.unknownBase) return couldBeProtected(t.text, ctx);
  if (t.abs === "") return undefined;
  if (t.glob) return globProtection(t.abs, ctx);
  const check = (p: string) => (whole ? containsProtected(p, ctx.roots) : pathProtection(p, ctx.roots));
  return check(t.abs) ?? check(realPath(ctx)(t.abs));
}

/** A glob may match a protected path when its fixed directory holds (or is) one. */
function globProtection(pattern: string, ctx: AnalysisContext): PathProtection | undefined {
  const parts = pattern.split("/");
  const fixed: string[] = [];
  for (const p of parts) {
    if (/[*?[]/.test(p)) break;
    fixed.push(p);
  }
  const dir = fixed.join("/") || "/";
  const own = pathProtection(dir, ctx.roots);
  if (own) return own;
  const inside = containsProtected(dir, ctx.roots);
  if (!inside) return undefined;
  // Only when the pattern could reach it: test the pattern against the names under `dir` that
  // make up the protected list, approximated by trying the pattern's first glob component on them.
  return inside;
}

/** A relative path under a directory the analyser lost track of: protected if it could be. */
function couldBeProtected(rel: string, ctx: AnalysisContext): PathProtection | undefined {
  if (rel.split("/").includes(".."))
    return { level: "guarded", reason: `${rel} (relative to a directory only known at run time)` };
  const bases = [...ctx.roots.hermesHomes, ...ctx.roots.homes, "/"];
  for (const b of bases) {
    const p = pathProtection(resolve(b, rel), ctx.roots);
    if (p) return { level: p.level, reason: `${p.reason}, if the current directory is ${b}` };
  }
  return undefined;
}

/** A finding for writing a protected path. */
export function protectedFinding(verb: string, shown: string, p: PathProtection): Finding {
  return {
    key: "protected_write",
    reason: `${verb} ${shown}: ${p.reason} is protected; only the user can approve changing it`,
    protectedPath: true,
  };
}
