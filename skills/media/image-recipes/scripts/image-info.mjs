#!/usr/bin/env node
// Reads image headers without any library: format, width x height, file size, and whether a JPEG
// carries EXIF (and GPS) metadata or a PNG carries text chunks. Works on files or whole folders, so
// results of a resize or a metadata strip can be checked without ImageMagick. Read-only.
//
// usage: node image-info.mjs PATH... [--json]
import { closeSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { extname, join } from "node:path";

const args = process.argv.slice(2);
const json = args.includes("--json");
const paths = args.filter((a) => a !== "--json");
if (paths.length === 0) {
  console.error("usage: node image-info.mjs PATH... [--json]");
  process.exit(2);
}
const IMAGE_EXT = new Set([".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp"]);
const HEAD = 256 * 1024;

function head(file) {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(Math.min(HEAD, statSync(file).size));
    readSync(fd, buf, 0, buf.length, 0);
    return buf;
  } finally {
    closeSync(fd);
  }
}

function png(b) {
  const info = { format: "png", width: b.readUInt32BE(16), height: b.readUInt32BE(20), metadata: [] };
  let at = 8;
  while (at + 8 <= b.length) {
    const len = b.readUInt32BE(at);
    const type = b.toString("latin1", at + 4, at + 8);
    if (["tEXt", "iTXt", "zTXt", "eXIf"].includes(type) && !info.metadata.includes(type)) info.metadata.push(type);
    if (type === "IEND") break;
    at += 12 + len;
  }
  return info;
}

function jpeg(b) {
  const info = { format: "jpeg", width: 0, height: 0, metadata: [] };
  let at = 2;
  while (at + 4 <= b.length && b[at] === 0xff) {
    const marker = b[at + 1];
    const len = b.readUInt16BE(at + 2);
    if (marker === 0xe1 && b.toString("latin1", at + 4, at + 8) === "Exif") {
      info.metadata.push("exif");
      // A GPS IFD pointer is tag 0x8825 in the first IFD; look for it in either byte order.
      const segment = b.subarray(at + 10, at + 2 + len);
      if (segment.includes(Buffer.from([0x88, 0x25])) || segment.includes(Buffer.from([0x25, 0x88]))) {
        info.metadata.push("gps");
      }
    } else if (marker === 0xe1) info.metadata.push("xmp");
    else if (marker === 0xed) info.metadata.push("iptc");
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
      info.height = b.readUInt16BE(at + 5);
      info.width = b.readUInt16BE(at + 7);
      break;
    }
    at += 2 + len;
  }
  return info;
}

function webp(b) {
  const chunk = b.toString("latin1", 12, 16);
  const info = { format: "webp", width: 0, height: 0, metadata: [] };
  if (chunk === "VP8X") {
    info.width = 1 + b.readUIntLE(24, 3);
    info.height = 1 + b.readUIntLE(27, 3);
    if (b[20] & 0x08) info.metadata.push("exif");
    if (b[20] & 0x04) info.metadata.push("xmp");
  } else if (chunk === "VP8L") {
    const bits = b.readUInt32LE(21);
    info.width = (bits & 0x3fff) + 1;
    info.height = ((bits >> 14) & 0x3fff) + 1;
  } else if (chunk === "VP8 ") {
    info.width = b.readUInt16LE(26) & 0x3fff;
    info.height = b.readUInt16LE(28) & 0x3fff;
  }
  return info;
}

function identify(file) {
  const b = head(file);
  const size = statSync(file).size;
  let info;
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47) info = png(b);
  else if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) info = jpeg(b);
  else if (b.length >= 10 && b.toString("latin1", 0, 3) === "GIF")
    info = { format: "gif", width: b.readUInt16LE(6), height: b.readUInt16LE(8), metadata: [] };
  else if (b.length >= 30 && b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP")
    info = webp(b);
  else if (b.length >= 26 && b.toString("latin1", 0, 2) === "BM")
    info = { format: "bmp", width: b.readInt32LE(18), height: Math.abs(b.readInt32LE(22)), metadata: [] };
  else info = { format: "unknown", width: 0, height: 0, metadata: [] };
  return { path: file, bytes: size, ...info };
}

function expand(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return [path];
  return readdirSync(path)
    .filter((name) => IMAGE_EXT.has(extname(name).toLowerCase()))
    .sort()
    .map((name) => join(path, name));
}

const results = [];
let failed = false;
for (const p of paths) {
  try {
    for (const file of expand(p)) results.push(identify(file));
  } catch (error) {
    failed = true;
    console.error(`image-info: ${p}: ${error.message}`);
  }
}
if (json) console.log(JSON.stringify(results, null, 2));
else {
  for (const r of results) {
    const kib = (r.bytes / 1024).toFixed(1);
    const meta = r.metadata.length ? `metadata: ${r.metadata.join(", ")}` : "no metadata";
    console.log(`${r.path}: ${r.format} ${r.width}x${r.height}, ${kib} KiB, ${meta}`);
  }
}
process.exit(failed ? 1 : 0);
