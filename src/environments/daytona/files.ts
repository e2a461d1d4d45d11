/**
 * File access in a Daytona sandbox through the SDK's own file-system calls (the daemon's `/files`
 * API): binary-safe, one request each, no shell in between. Failures come back shaped like Node's
 * fs errors (`code` ENOENT, EISDIR, ENOTDIR, EACCES, EIO), as every other backend gives them.
 */
import { posix } from "node:path";
import type { FileInfo, Sandbox } from "@daytonaio/sdk";
import { EnvFsError } from "../exec-files.js";
import type { DirEntry, EnvFiles, FileStat, FileType } from "../types.js";

function fsError(code: string, syscall: string, path: string, detail?: string): EnvFsError {
  return new EnvFsError(code, syscall, path, detail);
}

function statusOf(error: unknown): number | undefined {
  const code = (error as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof code === "number" ? code : undefined;
}

function codeFor(error: unknown): string {
  const status = statusOf(error);
  if (status === 404) return "ENOENT";
  if (status === 403) return "EACCES";
  const message = error instanceof Error ? error.message : String(error);
  if (/not found|no such file/i.test(message)) return "ENOENT";
  if (/permission denied/i.test(message)) return "EACCES";
  if (/is a directory/i.test(message)) return "EISDIR";
  if (/not a directory/i.test(message)) return "ENOTDIR";
  return "EIO";
}

function wrap(error: unknown, syscall: string, path: string): Error {
  return fsError(codeFor(error), syscall, path, error instanceof Error ? error.message : String(error));
}

/** The daemon's `mode` is Go's FileMode.String(): its first letter is the type (pure). */
export function fileTypeOf(info: Pick<FileInfo, "isDir" | "mode">): FileType {
  if (info.isDir) return "dir";
  const letter = info.mode.charAt(0);
  if (letter === "-") return "file";
  if (letter === "L") return "symlink";
  if (letter === "d") return "dir";
  return "other";
}

/** FileInfo to FileStat (pure). `permissions` is "%04o"; `modTime` RFC 3339 with nanoseconds. */
export function toFileStat(info: FileInfo): FileStat {
  const stamp = (info.modTime || info.modifiedAt || "").replace(/(\.\d{3})\d+/, "$1");
  const mtimeMs = Date.parse(stamp);
  const mode = Number.parseInt(info.permissions, 8);
  return {
    type: fileTypeOf(info),
    size: info.size,
    mtimeMs: Number.isFinite(mtimeMs) ? mtimeMs : 0,
    mode: Number.isFinite(mode) ? mode : 0,
  };
}

/** The mode the daemon gives every uploaded file (it renames a fresh 0644 file into place). */
const UPLOAD_MODE = 0o644;

export function createDaytonaFiles(sandbox: Sandbox): EnvFiles {
  const fs = sandbox.fs;

  async function stat(path: string): Promise<FileStat | undefined> {
    try {
      return toFileStat(await fs.getFileDetails(path));
    } catch (error) {
      if (codeFor(error) === "ENOENT") return undefined;
      throw wrap(error, "stat", path);
    }
  }

  return {
    stat,

    async read(path, options) {
      const info = await stat(path);
      if (!info) throw fsError("ENOENT", "open", path);
      if (info.type === "dir") throw fsError("EISDIR", "read", path);
      let data: Buffer;
      try {
        data = await fs.downloadFile(path);
      } catch (error) {
        throw wrap(error, "open", path);
      }
      const max = options?.maxBytes;
      return max === undefined ? data : data.subarray(0, Math.max(0, Math.floor(max)));
    },

    async write(path, data, options) {
      const before = await stat(path);
      if (before?.type === "dir") throw fsError("EISDIR", "open", path);
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
      try {
        // The daemon creates missing parents and replaces the file atomically.
        await fs.uploadFile(bytes, path);
      } catch (error) {
        throw wrap(error, "open", path);
      }
      const wanted = before ? before.mode & 0o7777 : options?.mode;
      if (wanted !== undefined && wanted !== UPLOAD_MODE) {
        try {
          await fs.setFilePermissions(path, { mode: wanted.toString(8).padStart(3, "0") });
        } catch (error) {
          throw wrap(error, "chmod", path);
        }
      }
    },

    async list(dir) {
      const info = await stat(dir);
      if (!info) throw fsError("ENOENT", "scandir", dir);
      if (info.type !== "dir") throw fsError("ENOTDIR", "scandir", dir);
      try {
        const entries = await fs.listFiles(dir);
        return entries.map(
          (entry): DirEntry => ({ name: posix.basename(entry.name), type: fileTypeOf(entry) }),
        );
      } catch (error) {
        throw wrap(error, "scandir", dir);
      }
    },

    async mkdir(path) {
      const info = await stat(path);
      if (info && info.type !== "dir") throw fsError("EEXIST", "mkdir", path);
      if (info) return;
      try {
        await fs.createFolder(path, "755");
      } catch (error) {
        throw wrap(error, "mkdir", path);
      }
    },

    async remove(path) {
      try {
        await fs.deleteFile(path, true);
      } catch (error) {
        if (codeFor(error) === "ENOENT") return;
        throw wrap(error, "rm", path);
      }
    },
  };
}
