/**
 * Judging one path a command deletes, truncates, overwrites, moves or changes: the hardline
 * (catastrophic trees, a Hermes state.db, disks), protected paths, and the paths the analyser
 * cannot resolve. Every file-touching check goes through `judgePath`.
 */
import type { Invocation } from "./model.js";
import {
  catastrophic,
  deviceKind,
  protectedFinding,
  protectionOf,
  realPath,
  type Target,
  targetsOf,
  touchesStateDb,
} from "./paths.js";
import type { Finding } from "./types.js";
import type { Field } from "./words.js";

/** What a command does to a path. */
export type Effect = "delete" | "truncate" | "overwrite" | "append" | "move" | "meta" | "create";

export interface JudgeOptions {
  /** Removes or changes the path as a directory tree (rm -r, chmod -R, mv of a directory). */
  recursive?: boolean;
  /** How the command is described to the model: "rm -rf", "truncate", "> (redirection)". */
  verb: string;
}

const SYSTEM_DIRS = new Set(
  "bin boot dev etc lib lib32 lib64 libx32 opt proc root sbin srv sys usr var".split(" "),
);

function shown(t: Target): string {
  return t.abs || t.text || "(empty)";
}

function assumption(f: Field): string {
  return f.dynamic
    ? ` (${f.raw} is only known at run time; judged by its likely value, empty when unset)`
    : "";
}

/** Adds the findings for `effect` on `field`. */
export function judgePath(inv: Invocation, field: Field, effect: Effect, o: JudgeOptions): void {
  const ctx = inv.scope.ctx;
  const out = inv.out;
  const recursive = o.recursive === true || inv.subtree;
  if (field.dynamic) {
    out.push({
      key: "unresolved_path",
      reason: `could not analyse ${o.verb} of ${field.raw}: the path is only known at run time`,
    });
  }
  for (const t of targetsOf(field, inv.scope.cwds).flatMap((x) => viaLinks(x, inv.scope.links))) {
    if (t.unknownBase) {
      judgeUnknownBase(inv, t, effect, o);
      continue;
    }
    if (t.abs === "") continue;
    const hard = hardline(inv, t, field, effect, recursive, o);
    if (hard) {
      // find's filters (-name, -mtime...) narrow `{}` to some paths under the tree: ask instead.
      out.push(inv.narrowed ? { key: hard.key, reason: `${hard.reason}, narrowed by find's filters` } : hard);
    }
    const whole = recursive || effect === "move";
    const prot = protectionOf(t, ctx, whole);
    if (prot) out.push(protectedFinding(describe(effect, o.verb), shown(t), prot));
    if ((effect === "delete" || effect === "move") && isSystemPath(t.abs)) {
      out.push({ key: "system_delete", reason: `${o.verb} in a system directory (${t.abs})` });
    }
  }
}

/** The target, and where a symlink the command made earlier points it (`ln -s / x; rm -rf x/`). */
function viaLinks(t: Target, links: ReadonlyMap<string, string>): Target[] {
  for (const [link, to] of links) {
    if (t.abs === link || t.abs.startsWith(`${link}/`))
      return [t, { ...t, abs: to + t.abs.slice(link.length) }];
  }
  return [t];
}

function describe(effect: Effect, verb: string): string {
  switch (effect) {
    case "delete":
      return `deleting (${verb})`;
    case "truncate":
      return `truncating (${verb})`;
    case "overwrite":
      return `overwriting (${verb})`;
    case "append":
      return `appending to (${verb})`;
    case "move":
      return `moving (${verb})`;
    case "meta":
      return `changing (${verb})`;
    case "create":
      return `creating (${verb})`;
  }
}

function hardline(
  inv: Invocation,
  t: Target,
  f: Field,
  effect: Effect,
  recursive: boolean,
  o: JudgeOptions,
): Finding | undefined {
  const ctx = inv.scope.ctx;
  const note = assumption(f);
  if (effect === "delete" || effect === "move") {
    const all = recursive || t.glob || effect === "move";
    const what = all
      ? (catastrophic(t.abs, t.glob, ctx) ?? catastrophic(realPath(ctx)(t.abs), false, ctx))
      : undefined;
    if (what) {
      return {
        key: "catastrophic_delete",
        reason: `${o.verb} of ${what}${note}: never allowed`,
        hardline: true,
      };
    }
  }
  if (effect !== "meta" && effect !== "append" && effect !== "create") {
    if (touchesStateDb(t.abs, t.glob, ctx, effect === "move" || (effect === "delete" && recursive))) {
      return {
        key: "state_db",
        reason: `${o.verb} of Hermes's session database (${t.abs})${note}: never allowed`,
        hardline: true,
      };
    }
  }
  if (effect !== "delete" && effect !== "move" && effect !== "meta") {
    const dev = deviceKind(t.abs, realPath(ctx));
    if (dev === "disk")
      return {
        key: "block_device",
        reason: `writing to the disk or memory device ${t.abs} (${o.verb}): never allowed`,
        hardline: true,
      };
    if (dev === "device")
      inv.out.push({ key: "device_write", reason: `writing to the device file ${t.abs} (${o.verb})` });
  }
  return undefined;
}

/** A relative path after a `cd` the analyser could not follow. */
function judgeUnknownBase(inv: Invocation, t: Target, effect: Effect, o: JudgeOptions): void {
  const parts = t.text.split("/").filter((p) => p !== "");
  const everything = parts.every((p) => p === "." || p === ".." || /^[.*?]+$/.test(p));
  if ((effect === "delete" || effect === "move") && everything) {
    inv.out.push({
      key: "unresolved_path",
      reason: `could not analyse ${o.verb} of ${t.text}: it is relative to a directory only known at run time (after a cd the analyser could not follow)`,
    });
  }
  if (/^state\.db/.test(parts.at(-1) ?? "") && effect !== "meta" && effect !== "append") {
    inv.out.push({
      key: "unresolved_path",
      reason: `could not analyse ${o.verb} of ${t.text}: after a cd to an unknown directory it may be Hermes's state.db`,
    });
  }
  const prot = protectionOf(t, inv.scope.ctx, false);
  if (prot && effect !== "create") inv.out.push(protectedFinding(describe(effect, o.verb), t.text, prot));
}

function isSystemPath(abs: string): boolean {
  const m = /^\/([^/]+)(\/.*)?$/.exec(abs);
  return m !== null && SYSTEM_DIRS.has(m[1] as string) && m[2] !== undefined;
}

/** Adds one finding for arguments only known at run time, when the command's decision depends on them. */
export function unresolvedArgs(inv: Invocation, fields: readonly Field[]): void {
  const dyn = fields.filter((f) => f.dynamic);
  if (dyn.length === 0 && !inv.argsFromStdin) return;
  const what = dyn.length > 0 ? dyn.map((f) => f.raw).join(" ") : "standard input (xargs)";
  inv.out.push({
    key: "unresolved_args",
    reason: `could not analyse ${inv.name}: its arguments come from ${what} at run time`,
  });
}
