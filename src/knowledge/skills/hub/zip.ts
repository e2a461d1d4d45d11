/**
 * A small, strict ZIP reader for skill archives (ClawHub serves each skill version as a ZIP).
 * It reads the central directory only, and refuses rather than guesses: encrypted entries,
 * ZIP64, multi-disk archives, methods other than stored and deflate, symlinks (Unix mode
 * 0120000 in the external attributes), unsafe or duplicate paths, more entries than the limit,
 * and declared or actual sizes over the limits (inflation stops at the declared size, so a
 * zip bomb never expands in memory).
 */
import { inflateRawSync } from "node:zlib";
import { type BundleLimits, formatSize, HubError, safeRelPath } from "./bundle.js";

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/** Extracts every file of `data`; directories are skipped. Throws {@link HubError} on anything odd. */
export function readZip(data: Buffer, limits: BundleLimits): Map<string, Buffer> {
  const end = findEnd(data);
  const count = data.readUInt16LE(end + 10);
  const size = data.readUInt32LE(end + 12);
  const offset = data.readUInt32LE(end + 16);
  if (data.readUInt16LE(end + 4) !== 0 || data.readUInt16LE(end + 6) !== 0) {
    throw new HubError("the archive spans several disks; refused.");
  }
  if (count === 0xffff || offset === 0xffffffff || size === 0xffffffff) {
    throw new HubError("ZIP64 archives are not accepted.");
  }
  if (count > limits.maxFiles * 2) throw new HubError(`the archive has ${count} entries; refused.`);
  if (offset + size > data.length) throw new HubError("the archive's directory lies outside the file.");
  const files = new Map<string, Buffer>();
  let total = 0;
  let at = offset;
  for (let i = 0; i < count; i++) {
    if (at + 46 > data.length || data.readUInt32LE(at) !== CENTRAL)
      throw new HubError("the archive is corrupt.");
    const flags = data.readUInt16LE(at + 8);
    const method = data.readUInt16LE(at + 10);
    const compressed = data.readUInt32LE(at + 20);
    const declared = data.readUInt32LE(at + 24);
    const nameLen = data.readUInt16LE(at + 28);
    const extraLen = data.readUInt16LE(at + 30);
    const commentLen = data.readUInt16LE(at + 32);
    const external = data.readUInt32LE(at + 38);
    const localOffset = data.readUInt32LE(at + 42);
    const rawName = data.subarray(at + 46, at + 46 + nameLen).toString("utf8");
    at += 46 + nameLen + extraLen + commentLen;
    if (rawName.endsWith("/")) continue;
    if (flags & 0x1) throw new HubError(`${rawName} in the archive is encrypted; refused.`);
    const unixMode = external >>> 16;
    if ((unixMode & 0o170000) === 0o120000)
      throw new HubError(`${rawName} in the archive is a symlink; refused.`);
    const name = safeRelPath(rawName);
    if (!name || name !== rawName.replace(/^\.\//, "")) {
      throw new HubError(`the archive holds an unsafe path "${rawName}"; refused.`);
    }
    if (files.has(name)) throw new HubError(`the archive holds ${name} twice; refused.`);
    if (declared > limits.maxFileBytes) {
      throw new HubError(
        `${name} in the archive is ${formatSize(declared)}; the limit for one file is ${formatSize(limits.maxFileBytes)}.`,
      );
    }
    total += declared;
    if (total > limits.maxTotalBytes)
      throw new HubError("the archive is larger than the size limit once unpacked.");
    if (files.size >= limits.maxFiles)
      throw new HubError(`the archive has more than ${limits.maxFiles} files.`);
    files.set(name, extract(data, localOffset, method, compressed, declared, name));
  }
  return files;
}

function findEnd(data: Buffer): number {
  const min = Math.max(0, data.length - 22 - 0xffff);
  for (let i = data.length - 22; i >= min; i--) {
    if (data.readUInt32LE(i) === EOCD) return i;
  }
  throw new HubError("the download is not a ZIP archive.");
}

function extract(
  data: Buffer,
  offset: number,
  method: number,
  compressed: number,
  size: number,
  name: string,
): Buffer {
  if (offset + 30 > data.length || data.readUInt32LE(offset) !== LOCAL)
    throw new HubError(`${name}: corrupt archive entry.`);
  const start = offset + 30 + data.readUInt16LE(offset + 26) + data.readUInt16LE(offset + 28);
  if (start + compressed > data.length) throw new HubError(`${name}: the archive is truncated.`);
  const body = data.subarray(start, start + compressed);
  let out: Buffer;
  if (method === 0) out = Buffer.from(body);
  else if (method === 8) {
    try {
      out = inflateRawSync(body, { maxOutputLength: Math.max(size, 1) });
    } catch {
      throw new HubError(`${name} in the archive does not unpack to its declared size; refused.`);
    }
  } else throw new HubError(`${name} uses ZIP method ${method}; only stored and deflate are accepted.`);
  if (out.length !== size)
    throw new HubError(`${name} in the archive does not unpack to its declared size; refused.`);
  return out;
}
