/**
 * Turns what a script's calls do into findings, with the same rules as the shell side: commands
 * go to the shell analyser; paths are resolved (relative to the context's cwd, symlinks followed)
 * and classified against the protected-path list; recursive deletes of `/`, a home, Hermes's home
 * or a top-level directory, and destroying `state.db`, are hardline; code from the network run as
 * code or as a command is hardline; whatever the analyser cannot read needs approval.
 */
import { basename, dirname, isAbsolute, resolve } from "node:path";
import { containsProtected, pathProtection, realPathOf } from "./protected-paths.js";
import { options, pathText, type Val } from "./script-values.js";
import type { AnalysisContext, Finding } from "./types.js";

/** What a call does to a path. */
export type PathOp = "delete" | "rdelete" | "write" | "overwrite" | "move";

const VERB: Record<PathOp, string> = {
  delete: "deletes",
  rdelete: "recursively deletes",
  write: "writes",
  overwrite: "overwrites",
  move: "moves",
};

/** Programs no argument can turn destructive when run without a shell. */
const READ_ONLY = new Set(
  "ls cat echo printf head tail wc grep egrep fgrep rg file stat du df pwd whoami id date uname which basename dirname realpath readlink true false sleep env printenv hostname nproc".split(
    " ",
  ),
);

const DISK_DEVICE =
  /^\/dev\/((sd|hd|vd|xvd)[a-z]+\d*|nvme\d+n\d+(p\d+)?|mmcblk\d+(p\d+)?|mapper\/.+|md\d+|dm-\d+|disk\/.+|root)$/;

export class Reporter {
  readonly findings: Finding[] = [];
  /** Files written with content from the network; running them is running downloaded code. */
  readonly downloaded = new Set<string>();
  /** The first pass collects bindings only. */
  muted = true;

  constructor(
    private readonly ctx: AnalysisContext,
    private readonly shellAnalyser: (command: string) => Finding[],
    /** Analyses a literal code string in the same language (`exec("...")`). */
    private readonly nested: (source: string) => Finding[],
  ) {}

  add(f: Finding): void {
    if (this.muted) return;
    if (!this.findings.some((g) => g.key === f.key && g.reason === f.reason)) this.findings.push(f);
  }

  opaque(key: "opaque_command" | "opaque_code" | "opaque_path", reason: string): void {
    this.add({ key, reason });
  }

  remote(what: string): void {
    this.add({
      key: "remote_script",
      reason: `${what} runs code downloaded from the network`,
      hardline: true,
    });
  }

  /** A function or module picked by a name put together at run time: `getattr(os, "sys"+"tem")`. */
  dynamicName(where: string, name: string): void {
    this.opaque("opaque_code", `looks up ${name} in ${where} by a name built at run time (opaque code)`);
  }

  /** A member of a dangerous module picked at run time: `getattr(os, name)`. */
  opaqueMember(module: string): void {
    this.opaque("opaque_code", `calls a member of ${module} chosen at run time (opaque code)`);
  }

  /**
   * A command line handed to a shell (`os.system`, backticks, `exec`, `shell=True`). `cwd` is the
   * directory the call runs it in, when given.
   */
  shell(v: Val, what: string, cwd?: Val): void {
    for (const o of options(pathText(v))) {
      if (o.k === "str") {
        if (o.decoded) this.opaque("opaque_code", `${what} runs a decoded payload as a command`);
        this.runText(o.s, what, cwd);
      } else if (o.k === "fetched") this.remote(what);
      else if (o.k === "list") this.argv(o.items, what, cwd);
      else if (o.k === "decoded") this.opaque("opaque_code", `${what} runs a decoded payload as a command`);
      else this.opaque("opaque_command", `${what} runs a command the analyser cannot read`);
    }
  }

  /** A program and its arguments run without a shell (`subprocess.run([...])`, `execFile`). */
  argv(items: readonly Val[], what: string, cwd?: Val): void {
    const words = items.map((v) => pathText(v));
    const program = words[0];
    if (program === undefined) return;
    if (words.some((w) => options(w).some((o) => o.k === "fetched"))) {
      if (program.k === "str" && /(^|\/)(ba|z|da|k|)sh$|python|perl|ruby|node|php/.test(program.s)) {
        this.remote(what);
      }
    }
    if (program.k === "alts") {
      for (const p of program.opts) this.argv([p, ...words.slice(1)], what, cwd);
      return;
    }
    if (program.k !== "str") {
      this.opaque("opaque_command", `${what} runs a program the analyser cannot read`);
      return;
    }
    const readable = words.every((w) => w.k === "str");
    if (!readable && !READ_ONLY.has(basename(program.s))) {
      this.opaque("opaque_command", `${what} runs ${program.s} with arguments the analyser cannot read`);
      return;
    }
    const line = words.map((w) => (w.k === "str" ? shellQuote(w.s) : "x")).join(" ");
    this.runText(line, what, cwd);
  }

  private runText(command: string, what: string, cwd?: Val): void {
    for (const file of this.downloaded) {
      if (command.includes(file) || command.includes(basename(file))) this.remote(what);
    }
    const dir = cwd === undefined ? undefined : pathText(cwd);
    if (dir !== undefined && dir.k !== "str") {
      this.opaque("opaque_command", `${what} runs a command in a directory the analyser cannot read`);
    }
    const prefix = dir?.k === "str" ? `cd ${shellQuote(this.abs(dir.s))} && ` : "";
    if (this.muted) return;
    for (const f of this.shellAnalyser(prefix + command)) this.add(f);
  }

  /** Source code run by `exec`/`eval`/`Function`/`load`. */
  code(v: Val, what: string): void {
    for (const o of options(v)) {
      if (o.k === "fetched") this.remote(what);
      else if (o.k === "str") {
        if (o.decoded) this.opaque("opaque_code", `${what} runs decoded code (opaque code)`);
        for (const f of this.nested(o.s)) this.add(f);
      } else if (o.k === "decoded") this.opaque("opaque_code", `${what} runs decoded code (opaque code)`);
      else this.opaque("opaque_code", `${what} runs code the analyser cannot read (opaque code)`);
    }
  }

  /** A file operation on `v` (a path string, a Path object, or a list of them). */
  path(op: PathOp, v: Val | undefined, what: string): void {
    if (v === undefined) return;
    for (const o of options(pathText(v))) {
      if (o.k === "list") {
        for (const item of o.items) this.path(op, item, what);
      } else if (o.k === "str") this.classify(op, o.s, what);
      else if (o.k === "obj" || o.k === "num" || o.k === "bool") continue;
      else this.opaque("opaque_path", `${what} ${VERB[op]} a path the analyser cannot read`);
    }
  }

  /** Records that `v` now holds content from the network. */
  download(v: Val | undefined): void {
    if (v === undefined) return;
    for (const o of options(pathText(v))) if (o.k === "str") this.downloaded.add(this.abs(o.s));
  }

  isDownloaded(v: Val | undefined): boolean {
    if (v === undefined) return false;
    return options(pathText(v)).some((o) => o.k === "str" && this.downloaded.has(this.abs(o.s)));
  }

  /** `p` made absolute against the context's cwd and normalised. */
  abs(p: string): string {
    return isAbsolute(p) ? resolve(p) : resolve(this.ctx.cwd, p);
  }

  private classify(op: PathOp, raw: string, what: string): void {
    const glob = /\/\.?\*$/.test(raw);
    const written = this.abs(glob ? raw.replace(/\/\.?\*$/, "") || "/" : raw);
    const real = (this.ctx.realPath ?? realPathOf)(written);
    const shown = glob ? `${written.replace(/\/$/, "")}/*` : written;
    for (const p of written === real ? [written] : [written, real]) {
      if ((op === "rdelete" || (glob && op !== "write")) && this.catastrophic(p)) {
        this.add({
          key: "catastrophic_delete",
          reason: `${what} recursively deletes ${shown}${glob ? " (all of its contents)" : ""}`,
          hardline: true,
        });
      }
      if (op !== "write" || /state\.db/.test(p)) {
        if (this.isStateDb(p) && !glob) {
          this.add({
            key: "state_db",
            reason: `${what} ${VERB[op]} the session database ${p}`,
            hardline: true,
          });
        }
      }
      if ((op === "write" || op === "overwrite") && DISK_DEVICE.test(p)) {
        this.add({ key: "block_device", reason: `${what} overwrites the disk ${p}`, hardline: true });
      }
      const hardline = this.findings.some((f) => f.hardline && f.reason.includes(shown));
      const protection = hardline
        ? undefined
        : op === "rdelete" || op === "move" || glob
          ? containsProtected(p, this.ctx.roots)
          : pathProtection(p, this.ctx.roots);
      if (protection) {
        this.add({
          key: "protected_write",
          reason: `${what} ${VERB[op]} ${shown}: ${protection.reason}`,
          protectedPath: true,
        });
      }
    }
    if (op === "rdelete")
      this.add({ key: "recursive_delete", reason: `${what} recursively deletes ${shown}` });
  }

  /** `/`, a top-level directory, a home or Hermes's home. */
  private catastrophic(p: string): boolean {
    if (p === "/" || /^\/[^/]+$/.test(p)) return true;
    const homes = [
      ...this.ctx.roots.homes,
      ...this.ctx.roots.hermesHomes,
      this.ctx.home,
      this.ctx.hermesHome,
    ];
    return homes.some((h) => resolve(h) === p);
  }

  private isStateDb(p: string): boolean {
    if (!/^state\.db(-wal|-shm|-journal)?$/.test(basename(p))) return false;
    const dir = dirname(p);
    const homes = [...this.ctx.roots.hermesHomes, this.ctx.hermesHome].map((h) => resolve(h));
    return homes.some((h) => dir === h || dirname(dirname(dir)) === h);
  }
}

/** A word as a POSIX shell reads it back unchanged. */
export function shellQuote(word: string): string {
  if (word !== "" && /^[A-Za-z0-9_./=:@%+,-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
