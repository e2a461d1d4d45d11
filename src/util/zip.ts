/**
 * A small zip archive writer and reader (PKZIP, deflate or stored, UTF-8 names) for `hermes backup`
 * and `hermes import`: archives that `unzip`, Python's zipfile and upstream's `hermes import` read.
 *
 * Both stream: a file is deflated chunk by chunk into the archive and inflated chunk by chunk out
 * of it, so a large state.db never sits in memory. No zip64: an archive or member over 4 GiB, or
 * more than 65 535 members, is refused with a ZipError rather than written wrong.
 */
import {
  closeSync,
  createReadStream,
  createWriteStream,
  fstatSync,
  openSync,
  readSync,
  writeSync,
} from "node:fs";
import { pipeline } from "node:stream/promises";
import { crc32, createDeflateRaw, createInflateRaw } from "node:zlib";

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;
const END = 0x06054b50;
const UTF8_FLAG = 0x0800;
const MAX32 = 0xffffffff;

export class ZipError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ZipError";
  }
}

export interface ZipEntry {
  /** The member's path inside the archive, `/`-separated; a directory ends in `/`. */
  name: string;
  /** Uncompressed size in bytes. */
  size: number;
  compressedSize: number;
  method: number;
  crc: number;
  /** Unix permission bits when the archive recorded them (0 when not). */
  mode: number;
  /** Offset of the member's local header. */
  offset: number;
}

interface Written {
  name: Buffer;
  method: number;
  crc: number;
  size: number;
  compressedSize: number;
  offset: number;
  time: number;
  date: number;
  mode: number;
}

/**
 * Writes an archive to `path` (created or truncated). Add members with `addFile`/`addBuffer` one
 * at a time (each awaits), then `close()`; an archive not closed has no central directory and
 * is not readable, which is why callers write to a temporary name and rename afterwards.
 */
export class ZipWriter {
  private readonly fd: number;
  private position = 0;
  private readonly entries: Written[] = [];

  constructor(path: string) {
    this.fd = openSync(path, "w", 0o600);
  }

  /** Adds the file at `source` as `name`, deflated; returns its uncompressed size. */
  async addFile(name: string, source: string, options: { mtime: Date; mode?: number }): Promise<number> {
    return this.add(name, createReadStream(source), options);
  }

  /** Adds `data` as `name`, deflated. */
  async addBuffer(
    name: string,
    data: Buffer | string,
    options: { mtime: Date; mode?: number },
  ): Promise<number> {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    async function* once() {
      yield bytes;
    }
    return this.add(name, once(), options);
  }

  private async add(
    name: string,
    source: AsyncIterable<Buffer | string>,
    options: { mtime: Date; mode?: number },
  ): Promise<number> {
    if (this.entries.length >= 0xffff) throw new ZipError("more than 65535 files: too many for one archive");
    const nameBytes = Buffer.from(name, "utf8");
    const { time, date } = dosTime(options.mtime);
    const offset = this.position;
    // The header is written now with zero sizes and patched once the data is in.
    this.write(localHeader(nameBytes, 8, 0, 0, 0, time, date));
    let crc = 0;
    let size = 0;
    let compressedSize = 0;
    const deflate = createDeflateRaw({ level: 6 });
    const sink = createWriteStream("", { fd: this.fd, autoClose: false, start: this.position });
    deflate.on("data", (chunk: Buffer) => {
      compressedSize += chunk.length;
    });
    await pipeline(
      source,
      async function* (chunks: AsyncIterable<Buffer | string>) {
        for await (const chunk of chunks) {
          const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
          crc = crc32(buffer, crc);
          size += buffer.length;
          yield buffer;
        }
      },
      deflate,
      sink,
    );
    this.position += compressedSize;
    if (size > MAX32 || compressedSize > MAX32 || this.position > MAX32) {
      throw new ZipError(`${name} makes the archive larger than 4 GiB, which this zip writer cannot record`);
    }
    writeSync(this.fd, localHeader(nameBytes, 8, crc, compressedSize, size, time, date), 0, 30, offset);
    this.entries.push({
      name: nameBytes,
      method: 8,
      crc,
      size,
      compressedSize,
      offset,
      time,
      date,
      mode: options.mode ?? 0o644,
    });
    return size;
  }

  /** Writes the central directory and closes the file. */
  close(): void {
    const start = this.position;
    for (const e of this.entries) {
      const header = Buffer.alloc(46);
      header.writeUInt32LE(CENTRAL, 0);
      header.writeUInt16LE((3 << 8) | 20, 4); // made by Unix, so the mode bits below are read
      header.writeUInt16LE(20, 6);
      header.writeUInt16LE(UTF8_FLAG, 8);
      header.writeUInt16LE(e.method, 10);
      header.writeUInt16LE(e.time, 12);
      header.writeUInt16LE(e.date, 14);
      header.writeUInt32LE(e.crc >>> 0, 16);
      header.writeUInt32LE(e.compressedSize, 20);
      header.writeUInt32LE(e.size, 24);
      header.writeUInt16LE(e.name.length, 28);
      header.writeUInt32LE(((0o100000 | (e.mode & 0o7777)) << 16) >>> 0, 38);
      header.writeUInt32LE(e.offset, 42);
      this.write(header);
      this.write(e.name);
    }
    const end = Buffer.alloc(22);
    end.writeUInt32LE(END, 0);
    end.writeUInt16LE(this.entries.length, 8);
    end.writeUInt16LE(this.entries.length, 10);
    end.writeUInt32LE(this.position - start, 12);
    end.writeUInt32LE(start, 16);
    this.write(end);
    closeSync(this.fd);
  }

  /** Closes the file without finishing it (after a failure; the caller deletes it). */
  abort(): void {
    try {
      closeSync(this.fd);
    } catch {
      // Already closed.
    }
  }

  private write(bytes: Buffer): void {
    let done = 0;
    while (done < bytes.length)
      done += writeSync(this.fd, bytes, done, bytes.length - done, this.position + done);
    this.position += bytes.length;
  }
}

/**
 * The members of the archive at `path`, from its central directory. Throws ZipError for a file
 * that is not a zip archive, a zip64 or multi-disk one, or an encrypted member.
 */
export function readZipEntries(path: string): ZipEntry[] {
  const fd = openSync(path, "r");
  try {
    const fileSize = fstatSync(fd).size;
    const tailSize = Math.min(fileSize, 22 + 0xffff);
    const tail = Buffer.alloc(tailSize);
    readSync(fd, tail, 0, tailSize, fileSize - tailSize);
    let at = -1;
    for (let i = tailSize - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === END) {
        at = i;
        break;
      }
    }
    if (at < 0) throw new ZipError(`${path} is not a zip archive (no end of central directory)`);
    const count = tail.readUInt16LE(at + 10);
    const cdSize = tail.readUInt32LE(at + 12);
    const cdOffset = tail.readUInt32LE(at + 16);
    if (tail.readUInt16LE(at + 4) !== 0 || count === 0xffff || cdOffset === MAX32) {
      throw new ZipError(`${path} is a multi-disk or zip64 archive, which is not supported`);
    }
    if (cdOffset + cdSize > fileSize)
      throw new ZipError(`${path} is truncated (central directory past the end)`);
    const cd = Buffer.alloc(cdSize);
    readSync(fd, cd, 0, cdSize, cdOffset);
    const entries: ZipEntry[] = [];
    let p = 0;
    for (let i = 0; i < count; i++) {
      if (p + 46 > cd.length || cd.readUInt32LE(p) !== CENTRAL)
        throw new ZipError(`${path}: damaged central directory`);
      const flags = cd.readUInt16LE(p + 8);
      const nameLength = cd.readUInt16LE(p + 28);
      const extraLength = cd.readUInt16LE(p + 30);
      const commentLength = cd.readUInt16LE(p + 32);
      const madeBy = cd.readUInt16LE(p + 4) >> 8;
      const name = cd.subarray(p + 46, p + 46 + nameLength).toString(flags & UTF8_FLAG ? "utf8" : "latin1");
      if (flags & 1) throw new ZipError(`${path}: ${name} is encrypted, which is not supported`);
      entries.push({
        name,
        method: cd.readUInt16LE(p + 10),
        crc: cd.readUInt32LE(p + 16),
        compressedSize: cd.readUInt32LE(p + 20),
        size: cd.readUInt32LE(p + 24),
        mode: madeBy === 3 ? (cd.readUInt32LE(p + 38) >>> 16) & 0o7777 : 0,
        offset: cd.readUInt32LE(p + 42),
      });
      p += 46 + nameLength + extraLength + commentLength;
    }
    return entries;
  } finally {
    closeSync(fd);
  }
}

/**
 * Extracts one member of the archive at `path` into the file `target` (created or truncated, mode
 * 0600 until the caller sets another). Throws ZipError when the data does not match its checksum
 * or size, or the member is stored with a method other than deflate or none.
 */
export async function extractZipEntry(path: string, entry: ZipEntry, target: string): Promise<void> {
  if (entry.method !== 0 && entry.method !== 8) {
    throw new ZipError(
      `${entry.name} uses compression method ${entry.method}; only deflate and stored are supported`,
    );
  }
  const fd = openSync(path, "r");
  let dataStart: number;
  try {
    const header = Buffer.alloc(30);
    readSync(fd, header, 0, 30, entry.offset);
    if (header.readUInt32LE(0) !== LOCAL) throw new ZipError(`${path}: ${entry.name} has no local header`);
    dataStart = entry.offset + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
  } finally {
    closeSync(fd);
  }
  let crc = 0;
  let size = 0;
  const limit = entry.size;
  const check = async function* (chunks: AsyncIterable<Buffer>) {
    for await (const chunk of chunks) {
      size += chunk.length;
      // A member that inflates past its declared size is damaged or hostile (a zip bomb).
      if (size > limit) throw new ZipError(`${entry.name} is larger than the archive says (${limit} bytes)`);
      crc = crc32(chunk, crc);
      yield chunk;
    }
  };
  const sink = createWriteStream(target, { mode: 0o600 });
  if (entry.compressedSize === 0) {
    await pipeline(async function* () {}, sink);
  } else {
    const source = createReadStream(path, { start: dataStart, end: dataStart + entry.compressedSize - 1 });
    if (entry.method === 8) await pipeline(source, createInflateRaw(), check, sink);
    else await pipeline(source, check, sink);
  }
  if (size !== entry.size || crc >>> 0 !== entry.crc >>> 0) {
    throw new ZipError(`${entry.name} is damaged in the archive (checksum or size does not match)`);
  }
}

function localHeader(
  name: Buffer,
  method: number,
  crc: number,
  compressedSize: number,
  size: number,
  time: number,
  date: number,
): Buffer {
  const header = Buffer.alloc(30 + name.length);
  header.writeUInt32LE(LOCAL, 0);
  header.writeUInt16LE(20, 4);
  header.writeUInt16LE(UTF8_FLAG, 6);
  header.writeUInt16LE(method, 8);
  header.writeUInt16LE(time, 10);
  header.writeUInt16LE(date, 12);
  header.writeUInt32LE(crc >>> 0, 14);
  header.writeUInt32LE(Math.min(compressedSize, MAX32), 18);
  header.writeUInt32LE(Math.min(size, MAX32), 22);
  header.writeUInt16LE(name.length, 26);
  name.copy(header, 30);
  return header;
}

/** MS-DOS date and time (local time, 2-second resolution, 1980 at the earliest). */
function dosTime(when: Date): { time: number; date: number } {
  const year = Math.max(1980, when.getFullYear());
  return {
    time: (when.getHours() << 11) | (when.getMinutes() << 5) | Math.floor(when.getSeconds() / 2),
    date: ((year - 1980) << 9) | ((when.getMonth() + 1) << 5) | when.getDate(),
  };
}
