/**
 * What an image file is, from its bytes alone: the format (PNG, JPEG, GIF, WebP: the four every
 * vision API accepts) and its pixel size, read from the header. Pure.
 */

export type ImageType = "png" | "jpeg" | "gif" | "webp";

export const IMAGE_MIME: Readonly<Record<ImageType, string>> = {
  png: "image/png",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
};

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The image format by magic bytes; undefined for anything else (even another image format). */
export function sniffImage(data: Buffer): ImageType | undefined {
  if (data.length >= 8 && data.subarray(0, 8).equals(PNG_MAGIC)) return "png";
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return "jpeg";
  const head6 = data.subarray(0, 6).toString("latin1");
  if (head6 === "GIF87a" || head6 === "GIF89a") return "gif";
  if (
    data.length >= 12 &&
    data.subarray(0, 4).toString("latin1") === "RIFF" &&
    data.subarray(8, 12).toString("latin1") === "WEBP"
  ) {
    return "webp";
  }
  return undefined;
}

/** A short name for what a non-image file seems to be, for error messages ("a PDF document"). */
export function describeContent(data: Buffer): string {
  if (data.length === 0) return "an empty file";
  const head = data.subarray(0, 512).toString("latin1");
  const text = head.trimStart().toLowerCase();
  if (head.startsWith("%PDF")) return "a PDF document";
  if (head.startsWith("BM")) return "a BMP image (not accepted by vision APIs; convert it to PNG)";
  if (head.startsWith("II*\0") || head.startsWith("MM\0*")) return "a TIFF image (convert it to PNG or JPEG)";
  if (
    head.slice(4, 12) === "ftypheic" ||
    head.slice(4, 12) === "ftypheix" ||
    head.slice(4, 12) === "ftypmif1"
  ) {
    return "a HEIC image (convert it to JPEG)";
  }
  if (text.startsWith("<svg") || (text.startsWith("<?xml") && text.includes("<svg"))) {
    return "an SVG drawing (convert it to PNG)";
  }
  if (text.startsWith("<!doctype html") || text.startsWith("<html")) return "an HTML page";
  if (head.startsWith("PK\x03\x04")) return "a ZIP archive";
  const sample = data.subarray(0, 512);
  const printable = sample.filter((b) => b === 9 || b === 10 || b === 13 || (b >= 32 && b < 127)).length;
  if (printable / sample.length > 0.95) return "a text file";
  return `an unrecognised binary file (starts with ${data.subarray(0, 4).toString("hex")})`;
}

export interface ImageSize {
  width: number;
  height: number;
}

/** Pixel size read from the header; undefined when the header is cut short or malformed. */
export function imageSize(data: Buffer, type: ImageType): ImageSize | undefined {
  try {
    switch (type) {
      case "png":
        if (data.length < 24) return undefined;
        return valid(data.readUInt32BE(16), data.readUInt32BE(20));
      case "gif":
        if (data.length < 10) return undefined;
        return valid(data.readUInt16LE(6), data.readUInt16LE(8));
      case "webp":
        return webpSize(data);
      case "jpeg":
        return jpegSize(data);
    }
  } catch {
    return undefined;
  }
}

function valid(width: number, height: number): ImageSize | undefined {
  return width > 0 && height > 0 ? { width, height } : undefined;
}

function webpSize(data: Buffer): ImageSize | undefined {
  if (data.length < 30) return undefined;
  const chunk = data.subarray(12, 16).toString("latin1");
  if (chunk === "VP8 ") return valid(data.readUInt16LE(26) & 0x3fff, data.readUInt16LE(28) & 0x3fff);
  if (chunk === "VP8L") {
    const bits = data.readUInt32LE(21);
    return valid((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (chunk === "VP8X") return valid(data.readUIntLE(24, 3) + 1, data.readUIntLE(27, 3) + 1);
  return undefined;
}

/** Start-of-frame markers (baseline, progressive, lossless, ...) that carry the frame size. */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function jpegSize(data: Buffer): ImageSize | undefined {
  let i = 2;
  while (i + 9 < data.length) {
    if (data[i] !== 0xff) {
      i++;
      continue;
    }
    const marker = data[i + 1] ?? 0;
    // Fill bytes, standalone markers (RSTn, SOI, TEM) carry no length.
    if (marker === 0xff) {
      i++;
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    if (SOF.has(marker)) return valid(data.readUInt16BE(i + 7), data.readUInt16BE(i + 5));
    if (marker === 0xd9 || marker === 0xda) return undefined;
    i += 2 + data.readUInt16BE(i + 2);
  }
  return undefined;
}
