/**
 * File access inside a non-local environment, built only on `ShellChannel.exec` (bash -c) and, for
 * upload/download, `ShellChannel.open` with tar on both ends. Every backend whose environment has
 * bash gets the file tools this way, so docker, ssh, singularity, daytona and modal differ only in
 * their channel.
 *
 * The commands stay within what GNU coreutils and busybox both accept (`stat -L -c '%f ...'`, `head
 * -c`, `mktemp` with a template, `mv -f`, `tar -C ... -cf/-xf`), the rest is bash itself (tests,
 * globs, printf). Paths reach the remote bash single-quoted, so spaces, quotes, newlines, `$` and
 * leading dashes arrive as written. Failures come back as Node-style errors (`code` ENOENT, EISDIR,
 * ENOTDIR, EACCES, EEXIST, EIO) so a tool treats the local and a remote filesystem alike.
 */

import { spawn } from "node:child_process";
import { stat as hostStat, mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { DirEntry, EnvFiles, ExecResult, FileStat, FileType, ShellChannel } from "./types.js";

/** Quotes one word for bash: single quotes, with each `'` closed, escaped and reopened. */
export function shq(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** An error shaped like Node's fs errors, so callers can branch on `code` whichever backend ran. */
export class EnvFsError extends Error {
  constructor(
    readonly code: string,
    readonly syscall: string,
    readonly path: string,
    detail?: string,
  ) {
    super(`${code}: ${describeCode(code)}, ${syscall} '${path}'${detail ? ` (${detail})` : ""}`);
    this.name = "EnvFsError";
  }
}

function describeCode(code: string): string {
  switch (code) {
    case "ENOENT":
      return "no such file or directory";
    case "EISDIR":
      return "illegal operation on a directory";
    case "ENOTDIR":
      return "not a directory";
    case "EACCES":
      return "permission denied";
    case "EEXIST":
      return "file already exists";
    default:
      return "i/o error in the environment";
  }
}

/*
 * The scripts report a failure as one line `hermes-fs:CODE` on stderr and exit 1; anything else on
 * stderr is the tool's own message, kept as detail. The checks run before the operation so a
 * missing path or a directory is told apart from other failures without reading localised text.
 */
const TAG = "hermes-fs:";

/** Shell code: fail with CODE unless the test holds. */
function need(test: string, code: string): string {
  return `if ! ${test}; then echo ${TAG}${code} >&2; exit 1; fi`;
}

const EXISTS = need(`[ -e "$p" ]`, "ENOENT");
/** Sets `d` to the directory part of `$p` (bash only: busybox dirname takes no `--`). */
const DIR_OF = `case $p in */*) d=\${p%/*}; d=\${d:-/} ;; *) d=. ;; esac`;
/** A parent that exists but is not a directory is ENOTDIR, as on the host. */
const PARENT_OK = `${DIR_OF}\nif [ -e "$d" ] && [ ! -d "$d" ]; then echo ${TAG}ENOTDIR >&2; exit 1; fi`;

function fail(result: ExecResult, syscall: string, path: string): EnvFsError {
  const lines = result.stderr.split("\n");
  const tag = lines.find((line) => line.startsWith(TAG));
  const detail = lines
    .filter((line) => line && !line.startsWith(TAG))
    .join("; ")
    .slice(0, 400);
  if (result.exitCode === null)
    return new EnvFsError("EIO", syscall, path, detail || "the command was killed");
  return new EnvFsError(tag ? tag.slice(TAG.length).trim() : "EIO", syscall, path, detail || undefined);
}

/** The type bits of a raw st_mode (`stat -c %f` prints it in hex). */
function fileType(rawMode: number): FileType {
  const bits = rawMode & 0o170000;
  if (bits === 0o100000) return "file";
  if (bits === 0o040000) return "dir";
  if (bits === 0o120000) return "symlink";
  return "other";
}

/** Parses `stat -c '%f %s %Y'` output; undefined when it is not that shape. */
export function parseStat(text: string): FileStat | undefined {
  const match = /^([0-9a-fA-F]+) (\d+) (\d+)\s*$/.exec(text);
  if (!match) return undefined;
  const raw = Number.parseInt(match[1] ?? "", 16);
  return {
    type: fileType(raw),
    size: Number(match[2]),
    mtimeMs: Number(match[3]) * 1000,
    mode: raw & 0o7777,
  };
}

/** Parses the NUL-separated `T name` records the list script prints. */
export function parseList(stdout: Buffer): DirEntry[] {
  const entries: DirEntry[] = [];
  const types: Record<string, FileType> = { f: "file", d: "dir", l: "symlink", o: "other" };
  for (const record of stdout.toString("utf8").split("\0")) {
    if (record.length < 3) continue;
    const type = types[record[0] ?? ""];
    if (!type || record[1] !== " ") continue;
    entries.push({ name: record.slice(2), type });
  }
  return entries;
}

/**
 * EnvFiles over a channel's `exec`. Writes go to a temporary file in the same directory and are
 * renamed over the target, so a reader never sees half a file; an existing file keeps its mode,
 * a write through a symlink replaces the file it points at (as on the host), and parents are
 * created. `remove` deletes recursively and is silent when nothing is there.
 */
export function createExecFiles(channel: ShellChannel): EnvFiles {
  const run = async (path: string, body: string, stdin?: string | Uint8Array): Promise<ExecResult> =>
    channel.exec(`p=${shq(path)}\n${body}`, stdin === undefined ? {} : { stdin });

  return {
    async stat(path) {
      const result = await run(path, `${EXISTS}\nstat -L -c '%f %s %Y' -- "$p"`);
      if (result.exitCode !== 0) {
        const error = fail(result, "stat", path);
        if (error.code === "ENOENT") return undefined;
        throw error;
      }
      const parsed = parseStat(result.stdout.toString("utf8"));
      if (!parsed)
        throw new EnvFsError(
          "EIO",
          "stat",
          path,
          `unexpected stat output ${JSON.stringify(result.stdout.toString("utf8").slice(0, 80))}`,
        );
      return parsed;
    },

    async read(path, options) {
      const max = options?.maxBytes;
      const reader = max === undefined ? `cat -- "$p"` : `head -c ${Math.max(0, Math.floor(max))} -- "$p"`;
      const script = [EXISTS, need(`[ ! -d "$p" ]`, "EISDIR"), need(`[ -r "$p" ]`, "EACCES"), reader].join(
        "\n",
      );
      const result = await run(path, script);
      if (result.exitCode !== 0) throw fail(result, "open", path);
      return result.stdout;
    },

    async write(path, data, options) {
      const newMode = options?.mode === undefined ? "" : (options.mode & 0o7777).toString(8);
      const script = [
        // Write through a symlink to the file it names, as fs.writeFile does.
        `if [ -L "$p" ]; then t=$(readlink -f -- "$p") && p=$t; fi`,
        need(`[ ! -d "$p" ]`, "EISDIR"),
        PARENT_OK,
        `mkdir -p -- "$d" || { echo ${TAG}EACCES >&2; exit 1; }`,
        `tmp=$(mktemp "$d/.hermes-write.XXXXXX") || { echo ${TAG}EACCES >&2; exit 1; }`,
        `trap 'rm -f -- "$tmp"' EXIT`,
        // The mode: the existing file's, else the requested one, else what umask leaves of 0666.
        `if [ -e "$p" ]; then m=$(stat -L -c %a -- "$p"); elif [ -n ${shq(newMode)} ]; then m=${shq(newMode)}; else m=$(printf '%o' $(( 0666 & ~0$(umask) ))); fi`,
        `cat > "$tmp" || { echo ${TAG}EIO >&2; exit 1; }`,
        `chmod "$m" "$tmp" && mv -f -- "$tmp" "$p" || { echo ${TAG}EACCES >&2; exit 1; }`,
      ].join("\n");
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
      const result = await run(path, script, bytes);
      if (result.exitCode !== 0) throw fail(result, "open", path);
    },

    async list(dir) {
      const script = [
        EXISTS,
        need(`[ -d "$p" ]`, "ENOTDIR"),
        need(`[ -r "$p" ] && [ -x "$p" ]`, "EACCES"),
        `cd -- "$p" || exit 1`,
        "shopt -s dotglob nullglob",
        `for f in *; do if [ -L "$f" ]; then t=l; elif [ -d "$f" ]; then t=d; elif [ -f "$f" ]; then t=f; else t=o; fi; printf '%s %s\\0' "$t" "$f"; done`,
      ].join("\n");
      const result = await run(dir, script);
      if (result.exitCode !== 0) throw fail(result, "scandir", dir);
      return parseList(result.stdout);
    },

    async mkdir(path) {
      const script = [
        PARENT_OK,
        `if [ -e "$p" ] && [ ! -d "$p" ]; then echo ${TAG}EEXIST >&2; exit 1; fi`,
        `mkdir -p -- "$p" || { echo ${TAG}EACCES >&2; exit 1; }`,
      ].join("\n");
      const result = await run(path, script);
      if (result.exitCode !== 0) throw fail(result, "mkdir", path);
    },

    async remove(path) {
      const result = await run(path, `rm -rf -- "$p" || { echo ${TAG}EACCES >&2; exit 1; }`);
      if (result.exitCode !== 0) throw fail(result, "rm", path);
    },
  };
}

/** Runs a local program with its stdout piped into (or its stdin fed from) the other side. */
function hostProcess(argv: readonly string[], cwd?: string) {
  const child = spawn(argv[0] ?? "tar", argv.slice(1), { cwd, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    if (stderr.length < 4000) stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => {
    child.on("error", (error) => {
      stderr += String(error.message);
      resolve(127);
    });
    child.on("close", (code) => resolve(code));
  });
  return { child, exited, stderr: () => stderr.trim() };
}

function collect(stream: NodeJS.ReadableStream): () => string {
  let text = "";
  stream.on("data", (chunk: Buffer | string) => {
    if (text.length < 4000) text += chunk.toString();
  });
  return () => text.trim();
}

/**
 * Copies a host file or directory to `envPath` in the environment: tar on the host, piped over the
 * channel's stdin to tar in the environment. A directory is merged into `envPath` (created with its
 * parents; files there are overwritten); a file replaces `envPath` (extracted beside it, then
 * renamed over it). Owners are not restored; modes are.
 */
export async function uploadOver(channel: ShellChannel, hostPath: string, envPath: string): Promise<void> {
  const info = await hostStat(hostPath).catch(() => undefined);
  if (!info) throw new EnvFsError("ENOENT", "upload", hostPath, "nothing at this host path");
  const dir = info.isDirectory();
  const host = hostProcess(
    dir
      ? ["tar", "-C", hostPath, "-cf", "-", "."]
      : ["tar", "-C", dirname(hostPath), "-cf", "-", `./${basename(hostPath)}`],
  );
  const envScript = dir
    ? `p=${shq(envPath)}\nmkdir -p -- "$p" && tar -C "$p" -xof -`
    : [
        `p=${shq(envPath)}`,
        DIR_OF,
        `mkdir -p -- "$d" || exit 1`,
        need(`[ ! -d "$p" ]`, "EISDIR"),
        `t=$(mktemp -d "$d/.hermes-upload.XXXXXX") || exit 1`,
        `trap 'rm -rf -- "$t"' EXIT`,
        `tar -C "$t" -xof - || exit 1`,
        `mv -f -- "$t"/${shq(basename(hostPath))} "$p"`,
      ].join("\n");
  const remote = channel.open(["bash", "-c", envScript]);
  const remoteErr = collect(remote.stderr);
  remote.stdout.resume();
  // The far side may exit first (a bad path); its closed stdin must not throw EPIPE here.
  remote.stdin.on("error", () => {});
  host.child.stdout.pipe(remote.stdin);
  const [hostCode, remoteCode] = await Promise.all([host.exited, remote.exited]);
  if (hostCode !== 0)
    throw new EnvFsError(
      "EIO",
      "upload",
      hostPath,
      `tar on the host: ${host.stderr() || `exit ${hostCode}`}`,
    );
  if (remoteCode !== 0)
    throw new EnvFsError(
      "EIO",
      "upload",
      envPath,
      `tar in the environment: ${remoteErr() || `exit ${remoteCode}`}`,
    );
}

/**
 * Copies `envPath` (a file or directory in the environment) to `hostPath`: tar in the environment,
 * piped over the channel's stdout into tar on the host, extracted into a temporary directory beside
 * `hostPath` and renamed into place. An existing directory at `hostPath` is replaced as a whole.
 */
export async function downloadOver(channel: ShellChannel, envPath: string, hostPath: string): Promise<void> {
  const envScript = [
    `p=${shq(envPath)}`,
    need(`[ -e "$p" ]`, "ENOENT"),
    DIR_OF,
    `tar -C "$d" -cf - "./\${p##*/}"`,
  ].join("\n");
  const parent = dirname(hostPath);
  await mkdir(parent, { recursive: true });
  const staging = await mkdtemp(join(parent, ".hermes-download."));
  try {
    const host = hostProcess(["tar", "-C", staging, "-xof", "-"]);
    const remote = channel.open(["bash", "-c", envScript]);
    const remoteErr = collect(remote.stderr);
    host.child.stdin.on("error", () => {});
    remote.stdout.pipe(host.child.stdin);
    remote.stdin.end();
    const [remoteCode, hostCode] = await Promise.all([remote.exited, host.exited]);
    if (remoteCode !== 0) {
      const text = remoteErr();
      const code = text.includes(`${TAG}ENOENT`) ? "ENOENT" : "EIO";
      throw new EnvFsError(
        code,
        "download",
        envPath,
        code === "ENOENT" ? undefined : `tar in the environment: ${text || `exit ${remoteCode}`}`,
      );
    }
    if (hostCode !== 0)
      throw new EnvFsError(
        "EIO",
        "download",
        hostPath,
        `tar on the host: ${host.stderr() || `exit ${hostCode}`}`,
      );
    const name = envPath.replace(/\/+$/, "").split("/").pop() ?? "";
    await rm(hostPath, { recursive: true, force: true });
    await rename(join(staging, name), hostPath);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
