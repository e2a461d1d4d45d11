/** `EnvFiles` over node:fs: the local backend's file access (the file tools' fast paths use node:fs too). */
import type { Stats } from "node:fs";
import { mkdir, open, readdir, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
import { atomicWriteFile } from "../../util/atomic-write.js";
import type { DirEntry, EnvFiles, FileStat, FileType } from "../types.js";

function typeOf(s: Pick<Stats, "isFile" | "isDirectory" | "isSymbolicLink">): FileType {
  if (s.isFile()) return "file";
  if (s.isDirectory()) return "dir";
  if (s.isSymbolicLink()) return "symlink";
  return "other";
}

function code(error: unknown): string | undefined {
  return error && typeof error === "object" && "code" in error ? String(error.code) : undefined;
}

export const localFiles: EnvFiles = {
  async stat(path: string): Promise<FileStat | undefined> {
    try {
      const s = await stat(path);
      return { type: typeOf(s), size: s.size, mtimeMs: s.mtimeMs, mode: s.mode & 0o7777 };
    } catch (error) {
      if (code(error) === "ENOENT" || code(error) === "ENOTDIR") return undefined;
      throw error;
    }
  },

  async read(path: string, options?: { maxBytes?: number }): Promise<Buffer> {
    const handle = await open(path, "r");
    try {
      if (options?.maxBytes === undefined) return await handle.readFile();
      const buffer = Buffer.alloc(options.maxBytes);
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return buffer.subarray(0, filled);
    } finally {
      await handle.close();
    }
  },

  async write(path: string, data: string | Uint8Array, options?: { mode?: number }): Promise<void> {
    await mkdir(dirname(path), { recursive: true });
    await atomicWriteFile(path, data, options?.mode === undefined ? {} : { mode: options.mode });
  },

  async list(dir: string): Promise<DirEntry[]> {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.map((e) => ({ name: e.name, type: typeOf(e) }));
  },

  async mkdir(path: string): Promise<void> {
    await mkdir(path, { recursive: true });
  },

  async remove(path: string): Promise<void> {
    await rm(path, { recursive: true, force: true });
  },
};
