/**
 * Where the file tools read and write: the active environment. On the local machine they keep
 * their node:fs fast paths (streamed reads, the built-in walker, atomic writes); in any other
 * environment they go through `Environment.files` and `exec`. Relative paths resolve against the
 * agent's cwd locally and against the task shell's cwd elsewhere (the only cwd the model knows
 * there).
 */
import { mkdir, readFile, unlink } from "node:fs/promises";
import { dirname, posix } from "node:path";
import type { Environment } from "../../environments/types.js";
import { resolvePath } from "../../util/abs-path.js";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { hasBinaryExtension, looksBinary, SNIFF_BYTES, sniffBinaryFile } from "../../util/binary-file.js";
import type { RawLine } from "../../util/line-reader.js";
import { environmentHome, taskShell } from "../environment.js";
import type { ToolContext } from "../types.js";
import { statIfExists } from "./shared.js";

/** The stat fields the file tools use, the same for node:fs and an environment. */
export interface FileInfo {
  isDirectory(): boolean;
  isFile(): boolean;
  size: number;
  mtimeMs: number;
}

export interface FileAccess {
  /** The machine hermes runs on: node:fs fast paths apply. */
  local: boolean;
  env: Environment;
  /** Directory relative paths resolve against. */
  cwd: string;
  /** `path` (absolute, relative to `cwd`, or `~/...` with the environment's home) made absolute. */
  resolve(path: string): string;
  stat(abs: string): Promise<FileInfo | undefined>;
  readText(abs: string): Promise<string>;
  /** The file's bytes (bounded like `readText` in a remote environment). */
  readBytes(abs: string): Promise<Buffer>;
  /**
   * Creates parent directories and replaces the file atomically where the backend can. A string is
   * written as UTF-8; bytes (text already encoded in the file's own encoding) as they are.
   */
  writeText(abs: string, content: string | Uint8Array): Promise<void>;
  remove(abs: string): Promise<void>;
  isBinary(abs: string): Promise<boolean>;
  /** Names in `dir` (empty when unreadable), for "did you mean" hints. */
  names(dir: string): Promise<string[]>;
}

/** Files larger than this are not read whole from a remote environment. */
export const REMOTE_READ_MAX_BYTES = 32 * 1024 * 1024;

/** The file access of the context's active environment. */
export async function fileAccess(ctx: ToolContext): Promise<FileAccess> {
  const { env, shell } = await taskShell(ctx);
  if (env.kind === "local") return localAccess(env, ctx.cwd);
  return envAccess(env, shell.cwd, await environmentHome(ctx, env));
}

function localAccess(env: Environment, cwd: string): FileAccess {
  return {
    local: true,
    env,
    cwd,
    resolve: (path) => resolvePath(path, cwd),
    stat: statIfExists,
    readText: (abs) => readFile(abs, "utf8"),
    readBytes: (abs) => readFile(abs),
    async writeText(abs, content) {
      await mkdir(dirname(abs), { recursive: true });
      await atomicWriteFile(abs, content);
    },
    async remove(abs) {
      await unlink(abs).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
    },
    isBinary: async (abs) => hasBinaryExtension(abs) || (await sniffBinaryFile(abs)),
    async names(dir) {
      const entries = await env.files.list(dir).catch(() => []);
      return entries.map((e) => e.name);
    },
  };
}

function envAccess(env: Environment, cwd: string, home: string): FileAccess {
  const readBytes = async (abs: string): Promise<Buffer> => {
    const s = await env.files.stat(abs);
    if (s && s.size > REMOTE_READ_MAX_BYTES) {
      throw new Error(
        `${abs} is ${Math.round(s.size / 1024 / 1024)} MB, more than the ${REMOTE_READ_MAX_BYTES / 1024 / 1024} MB read from a remote environment at once; use terminal (head, sed -n, grep) to read parts of it.`,
      );
    }
    return env.files.read(abs);
  };
  const info = async (abs: string): Promise<FileInfo | undefined> => {
    const s = await env.files.stat(abs);
    if (!s) return undefined;
    return {
      isDirectory: () => s.type === "dir",
      isFile: () => s.type === "file",
      size: s.size,
      mtimeMs: s.mtimeMs,
    };
  };
  return {
    local: false,
    env,
    cwd,
    resolve(path) {
      if (path === "~") return home;
      if (path.startsWith("~/")) return posix.resolve(home, path.slice(2));
      return posix.resolve(cwd, path);
    },
    stat: info,
    readBytes,
    readText: async (abs) => (await readBytes(abs)).toString("utf8"),
    writeText: (abs, content) => env.files.write(abs, content),
    remove: (abs) => env.files.remove(abs),
    async isBinary(abs) {
      if (hasBinaryExtension(abs)) return true;
      return looksBinary(await env.files.read(abs, { maxBytes: SNIFF_BYTES }));
    },
    async names(dir) {
      const entries = await env.files.list(dir).catch(() => []);
      return entries.map((e) => e.name);
    },
  };
}

/** Lines of an in-memory file in `readLineBatches`' shape (one batch), for remote reads. */
export async function* bufferLineBatches(text: string, maxLineBytes: number): AsyncGenerator<RawLine[]> {
  if (text === "") return;
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const batch: RawLine[] = [];
  for (const raw of lines) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const bytes = Buffer.byteLength(line, "utf8");
    if (bytes <= maxLineBytes) batch.push({ text: line, bytes, cut: false });
    else {
      const kept = Buffer.from(line, "utf8").subarray(0, maxLineBytes).toString("utf8");
      batch.push({ text: kept.replace(/\uFFFD$/, ""), bytes, cut: true });
    }
  }
  yield batch;
}
