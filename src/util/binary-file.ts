/**
 * Tells binary files from text: first by extension (cheap, no I/O), then by sniffing the first
 * 8 KiB for NUL bytes or a high share of bytes that are not valid UTF-8 text.
 */
import { open } from "node:fs/promises";
import { extname } from "node:path";

const BINARY_EXTENSIONS = new Set(
  (
    "png jpg jpeg gif bmp ico webp tif tiff psd heic avif " +
    "mp3 mp4 m4a wav ogg oga flac aac avi mov mkv webm wmv flv " +
    "zip tar gz tgz bz2 xz 7z rar zst lz4 jar war ear apk ipa deb rpm dmg iso img " +
    "exe dll so dylib bin o a obj lib class pyc pyo wasm node " +
    "pdf doc docx xls xlsx ppt pptx odt ods odp " +
    "ttf otf woff woff2 eot " +
    "sqlite sqlite3 db parquet npy npz pkl pickle pt pth onnx safetensors gguf"
  ).split(" "),
);

export const SNIFF_BYTES = 8192;

/** True when the file name's extension names a known binary format. */
export function hasBinaryExtension(path: string): boolean {
  return BINARY_EXTENSIONS.has(extname(path).slice(1).toLowerCase());
}

/**
 * True when `sample` (the start of a file) looks binary: it holds a NUL byte, or over 10% of it is
 * control characters or invalid UTF-8. An empty sample is text.
 */
export function looksBinary(sample: Uint8Array): boolean {
  if (sample.length === 0) return false;
  if (sample.includes(0)) return true;
  let suspicious = 0;
  let i = 0;
  while (i < sample.length) {
    const b = sample[i] as number;
    if (b < 0x80) {
      // Tab, LF, VT, FF, CR and ESC (ANSI colour in logs) are normal in text.
      if (b < 0x20 && b !== 9 && b !== 10 && b !== 11 && b !== 12 && b !== 13 && b !== 27) suspicious++;
      i++;
      continue;
    }
    const len = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 0;
    if (len === 0) {
      suspicious++;
      i++;
      continue;
    }
    if (i + len > sample.length) break; // A character cut by the end of the sample.
    let valid = true;
    for (let k = 1; k < len; k++) {
      if (((sample[i + k] as number) & 0xc0) !== 0x80) valid = false;
    }
    if (valid) {
      i += len;
    } else {
      suspicious++;
      i++;
    }
  }
  return suspicious / sample.length > 0.1;
}

/** Reads up to {@link SNIFF_BYTES} from the start of `path` and applies {@link looksBinary}. */
export async function sniffBinaryFile(path: string): Promise<boolean> {
  const handle = await open(path, "r");
  try {
    const buf = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(buf, 0, SNIFF_BYTES, 0);
    return looksBinary(buf.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}
