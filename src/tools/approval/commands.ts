/**
 * Checks for commands that delete, write, move or change files: rm, cp, mv, install, ln, truncate,
 * shred, dd, tee, touch, chmod, chown, rsync. Options are parsed as the GNU tools parse them
 * (clusters, permuted options, abbreviated long options).
 */
import { basename, join, posix } from "node:path";
import { type Effect, judgePath, unresolvedArgs } from "./effects.js";
import type { Check, Invocation } from "./model.js";
import {
  CHMOD_SPEC,
  CHOWN_SPEC,
  CP_SPEC,
  INSTALL_SPEC,
  LN_SPEC,
  RM_SPEC,
  RSYNC_SPEC,
  SHRED_SPEC,
  TEE_SPEC,
  TOUCH_SPEC,
  TRUNCATE_SPEC,
} from "./option-specs.js";
import { parseOptions } from "./options.js";
import { targetsOf } from "./paths.js";
import type { Field } from "./words.js";

function field(text: string, like?: Field): Field {
  return { text, dynamic: like?.dynamic ?? false, glob: like?.glob ?? false, raw: like?.raw ?? text };
}

const rm: Check = (inv) => {
  const p = parseOptions(inv.args, RM_SPEC);
  const recursive = p.opts.has("recursive");
  unresolvedArgs(inv, p.dynamic);
  if (inv.argsFromStdin) unresolvedArgs(inv, []);
  const verb = recursive ? `${inv.name} -r` : inv.name;
  if (p.opts.has("no-preserve-root") && recursive) {
    inv.out.push({
      key: "catastrophic_delete",
      reason: `${inv.name} --no-preserve-root: deleting / is never allowed`,
      hardline: true,
    });
  }
  if (inv.argsFromStdin)
    inv.out.push({ key: "xargs_rm", reason: `${inv.name} of paths read from standard input (xargs)` });
  for (const t of p.operands) judgePath(inv, t, "delete", { recursive, verb });
  if (recursive || inv.subtree) {
    const list = p.operands.map((f) => f.text).join(" ") || "paths from standard input";
    inv.out.push({ key: "recursive_delete", reason: `recursive delete of ${list}` });
  }
};

/** cp, mv, install: the destination is overwritten; for mv the sources go away too. */
function copyLike(effectOnSources: Effect | undefined, spec: typeof CP_SPEC): Check {
  return (inv) => {
    const p = parseOptions(inv.args, spec);
    unresolvedArgs(inv, p.dynamic);
    if (inv.name === "install" && p.opts.has("directory")) {
      for (const d of p.operands) judgePath(inv, d, "create", { verb: "install -d" });
      return;
    }
    const targetDir = p.opts.get("target-directory");
    const sources = typeof targetDir === "string" ? p.operands : p.operands.slice(0, -1);
    const dest = typeof targetDir === "string" ? field(targetDir) : p.operands.at(-1);
    if (!dest || (sources.length === 0 && typeof targetDir !== "string")) return;
    const verb = inv.name;
    for (const s of sources) {
      if (s.dynamic && effectOnSources) unresolvedArgs(inv, [s]);
      if (effectOnSources) judgePath(inv, s, effectOnSources, { verb, recursive: true });
    }
    if (dest.dynamic) unresolvedArgs(inv, [dest]);
    const recursive = p.opts.has("recursive") || p.opts.has("archive") || inv.name === "mv";
    // The destination itself (a file, or a directory replaced with -T), and each source's name inside it.
    judgePath(inv, dest, "overwrite", { verb, recursive: false });
    if (!p.opts.has("no-target-directory")) {
      for (const s of sources)
        judgePath(inv, field(join(dest.text, basename(s.text)), dest), "overwrite", { verb, recursive });
    }
    record(inv, dest, sources);
  };
}

/** Remembers what a copy or move wrote, so running it later in the same command is judged. */
function record(inv: Invocation, dest: Field, sources: Field[]): void {
  for (const t of targetsOf(dest, inv.scope.cwds)) {
    if (!t.abs) continue;
    const from = sources.length === 1 ? targetsOf(sources[0] as Field, inv.scope.cwds)[0] : undefined;
    const known = from?.abs ? inv.scope.files.get(from.abs) : undefined;
    const src = known?.source ?? {
      kind: "opaque" as const,
      via: `${inv.name} ${sources.map((s) => s.text).join(" ")}`,
    };
    inv.scope.files.set(t.abs, { source: src });
    for (const s of sources) inv.scope.files.set(join(t.abs, basename(s.text)), { source: src });
  }
}

const ln: Check = (inv) => {
  const p = parseOptions(inv.args, LN_SPEC);
  unresolvedArgs(inv, p.dynamic);
  const targetDir = p.opts.get("target-directory");
  const sources = typeof targetDir === "string" ? p.operands : p.operands.slice(0, -1);
  const name =
    typeof targetDir === "string" ? field(targetDir) : p.operands.length >= 2 ? p.operands.at(-1) : undefined;
  const effect: Effect = p.opts.has("force") ? "overwrite" : "create";
  const verb = p.opts.has("symbolic") ? "ln -s" : "ln";
  if (!name) {
    for (const s of p.operands) judgePath(inv, field(basename(s.text), s), effect, { verb });
    return;
  }
  // A link replaces the path itself: judge the literal name, and the name inside it when a directory.
  judgePath(inv, name, effect, { verb });
  for (const s of sources) judgePath(inv, field(join(name.text, basename(s.text)), name), effect, { verb });
  const target = sources[0];
  if (p.opts.has("symbolic") && sources.length === 1 && target && !target.dynamic && !name.dynamic) {
    for (const t of targetsOf(name, inv.scope.cwds)) {
      if (t.abs) inv.scope.links.set(t.abs, posix.resolve(posix.dirname(t.abs), target.text));
    }
  }
};

const truncate: Check = (inv) => {
  const p = parseOptions(inv.args, TRUNCATE_SPEC);
  unresolvedArgs(inv, p.dynamic);
  for (const f of p.operands) judgePath(inv, f, "truncate", { verb: "truncate" });
};

const shred: Check = (inv) => {
  const p = parseOptions(inv.args, SHRED_SPEC);
  unresolvedArgs(inv, p.dynamic);
  for (const f of p.operands) {
    judgePath(inv, f, "truncate", { verb: "shred" });
    if (p.opts.has("remove")) judgePath(inv, f, "delete", { verb: "shred -u" });
  }
  if (p.operands.length > 0) {
    inv.out.push({
      key: "shred",
      reason: `shred destroys the contents of ${p.operands.map((f) => f.text).join(" ")}`,
    });
  }
};

const dd: Check = (inv) => {
  for (const a of inv.args) {
    if (!a.text.startsWith("of=")) continue;
    const target = field(a.text.slice(3), a);
    const notrunc = inv.args.some((x) => /^conv=.*notrunc/.test(x.text));
    judgePath(inv, target, notrunc ? "overwrite" : "truncate", { verb: "dd of=" });
    inv.scope.files.set(target.text, { source: { kind: "opaque", via: "dd" } });
  }
  unresolvedArgs(
    inv,
    inv.args.filter((a) => a.dynamic && !a.text.startsWith("if=")),
  );
};

const tee: Check = (inv) => {
  const p = parseOptions(inv.args, TEE_SPEC);
  unresolvedArgs(inv, p.dynamic);
  const append = p.opts.has("append");
  for (const f of p.operands) {
    judgePath(inv, f, append ? "append" : "overwrite", { verb: append ? "tee -a" : "tee" });
    for (const t of targetsOf(f, inv.scope.cwds)) {
      if (t.abs) inv.scope.files.set(t.abs, { source: inv.stdin ?? { kind: "opaque", via: "tee" } });
    }
  }
};

const touch: Check = (inv) => {
  const p = parseOptions(inv.args, TOUCH_SPEC);
  for (const f of p.operands) judgePath(inv, f, "meta", { verb: "touch" });
};

/** A chmod mode that gives others write access. */
function worldWritable(mode: string): boolean {
  if (/^[0-7]{3,4}$/.test(mode)) return "2367".includes(mode.at(-1) as string);
  return mode.split(",").some((clause) => {
    const m = /^([ugoa]*)[+=]([rwxXst]*)$/.exec(clause);
    return m !== null && /[oa]/.test(m[1] as string) && (m[2] as string).includes("w");
  });
}

const chmod: Check = (inv) => {
  // A mode such as `-w` or `-x` looks like an option; chmod takes it as the mode.
  const modeLike = (t: string) => /^-[rwxXst]+$/.test(t);
  const args = inv.args.filter((a) => !modeLike(a.text));
  const p = parseOptions(args, CHMOD_SPEC);
  unresolvedArgs(inv, p.dynamic);
  const recursive = p.opts.has("recursive");
  const hasRef = p.opts.has("reference");
  const mode = hasRef ? undefined : (inv.args.find((a) => modeLike(a.text)) ?? p.operands[0]);
  const targets = hasRef || inv.args.some((a) => modeLike(a.text)) ? p.operands : p.operands.slice(1);
  if (mode && worldWritable(mode.text)) {
    inv.out.push({
      key: "chmod_world_writable",
      reason: `chmod ${mode.text} makes files writable by every user`,
    });
  }
  if (mode?.dynamic) unresolvedArgs(inv, [mode]);
  for (const t of targets) {
    judgePath(inv, t, "meta", { verb: recursive ? "chmod -R" : "chmod", recursive });
    if (recursive && isTopLevelish(t.text)) {
      inv.out.push({ key: "chmod_recursive_system", reason: `recursive chmod of ${t.text}` });
    }
  }
};

const chown: Check = (inv) => {
  const p = parseOptions(inv.args, CHOWN_SPEC);
  unresolvedArgs(inv, p.dynamic);
  const recursive = p.opts.has("recursive");
  const hasRef = p.opts.has("reference");
  const owner = hasRef ? undefined : p.operands[0];
  const targets = hasRef ? p.operands : p.operands.slice(1);
  if (recursive && owner && inv.name === "chown" && /^(root|0)([:.]|$)/.test(owner.text)) {
    inv.out.push({ key: "chown_recursive_root", reason: "recursive chown to root" });
  }
  for (const t of targets) {
    judgePath(inv, t, "meta", { verb: recursive ? `${inv.name} -R` : inv.name, recursive });
    if (recursive && isTopLevelish(t.text)) {
      inv.out.push({ key: "chown_recursive_system", reason: `recursive ${inv.name} of ${t.text}` });
    }
  }
};

function isTopLevelish(path: string): boolean {
  return (
    /^\/[^/]*$/.test(path) ||
    /^\/(bin|boot|dev|etc|lib\w*|opt|proc|root|sbin|srv|sys|usr|var)(\/|$)/.test(path)
  );
}

const rsync: Check = (inv) => {
  const p = parseOptions(inv.args, RSYNC_SPEC);
  unresolvedArgs(inv, p.dynamic);
  if (p.operands.length < 2) return;
  const dest = p.operands.at(-1) as Field;
  const sources = p.operands.slice(0, -1);
  const remote = (f: Field) => /^[^/]*:/.test(f.text) && !f.text.startsWith("./");
  const deletes = [...p.opts.keys()].some((k) => k.startsWith("delete"));
  if (!remote(dest)) {
    if (deletes) judgePath(inv, dest, "delete", { verb: "rsync --delete", recursive: true });
    judgePath(inv, dest, "overwrite", { verb: "rsync", recursive: true });
  }
  if (p.opts.has("remove-source-files")) {
    for (const s of sources.filter((s) => !remote(s)))
      judgePath(inv, s, "move", { verb: "rsync --remove-source-files" });
  }
};

/** Checks by command basename. */
export const FILE_CHECKS: Readonly<Record<string, Check>> = {
  rm,
  unlink: rm,
  srm: rm,
  cp: copyLike(undefined, CP_SPEC),
  mv: copyLike("move", CP_SPEC),
  install: copyLike(undefined, INSTALL_SPEC),
  ln,
  truncate,
  shred,
  dd,
  tee,
  touch,
  chmod,
  chown,
  chgrp: chown,
  chattr: (inv) => {
    for (const f of inv.args.filter(
      (a) => !/^[-+=][aAcCdDeFijmPsStTux]+$/.test(a.text) && !a.text.startsWith("-"),
    )) {
      judgePath(inv, f, "meta", { verb: "chattr" });
    }
  },
  rsync,
};
