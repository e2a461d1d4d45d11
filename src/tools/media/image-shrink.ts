/**
 * Shrinks an image that a vision API would refuse (too many bytes, or a side too long) by
 * scaling it down and re-encoding it as JPEG with ffmpeg. Works on temporary files it removes.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ImageSize, imageSize } from "./image-info.js";
import { runProgram } from "./shared.js";

export interface ShrinkLimits {
  /** Largest accepted encoded file, in bytes. */
  maxBytes: number;
  /** Largest accepted width or height, in pixels. */
  maxSide: number;
}

export interface ShrunkImage {
  data: Buffer;
  width: number;
  height: number;
}

/** Long sides tried in turn, largest first; each is tried at two JPEG qualities (ffmpeg -q:v). */
const SIDES = [4096, 2048, 1568, 1024, 768, 512];
const QUALITIES = [3, 8];

/** True when the image breaks either limit (an unknown size only counts against the bytes). */
export function exceedsLimits(bytes: number, size: ImageSize | undefined, limits: ShrinkLimits): boolean {
  if (bytes > limits.maxBytes) return true;
  return size !== undefined && Math.max(size.width, size.height) > limits.maxSide;
}

/**
 * The image scaled to fit both limits, as JPEG (the first frame of an animation). Tries the
 * largest long side (at most 4096 px) first and steps down until the bytes fit. Throws when ffmpeg fails to read
 * the image or nothing fits.
 */
export async function shrinkImage(
  data: Buffer,
  size: ImageSize | undefined,
  limits: ShrinkLimits,
  options: { ffmpeg: string; signal?: AbortSignal },
): Promise<ShrunkImage> {
  const longest = size ? Math.max(size.width, size.height) : Number.POSITIVE_INFINITY;
  // Vision models downsample to about 1.5-2K px anyway, so a re-encode never needs more than 4K.
  const start = Math.min(longest, limits.maxSide, SIDES[0] ?? 4096);
  const sides = [start, ...SIDES.filter((s) => s < start)];
  const dir = await mkdtemp(join(tmpdir(), "hermes-vision-"));
  try {
    const input = join(dir, "input");
    await writeFile(input, data);
    let smallest: number | undefined;
    for (const side of sides) {
      for (const quality of QUALITIES) {
        const output = join(dir, `out-${side}-${quality}.jpg`);
        await runProgram(
          options.ffmpeg,
          [
            "-v",
            "error",
            "-nostdin",
            "-y",
            "-i",
            input,
            "-frames:v",
            "1",
            "-vf",
            `scale=w='min(${side},iw)':h='min(${side},ih)':force_original_aspect_ratio=decrease:flags=lanczos`,
            "-pix_fmt",
            "yuvj420p",
            "-q:v",
            String(quality),
            output,
          ],
          { timeoutMs: 120_000, ...(options.signal ? { signal: options.signal } : {}) },
        );
        const out = await readFile(output);
        smallest = Math.min(smallest ?? out.length, out.length);
        if (out.length > limits.maxBytes) continue;
        const outSize = imageSize(out, "jpeg");
        if (!outSize) throw new Error("ffmpeg wrote a JPEG whose size cannot be read");
        return { data: out, width: outSize.width, height: outSize.height };
      }
    }
    throw new Error(
      `even at ${SIDES[SIDES.length - 1]} px the image is ${formatBytes(smallest ?? 0)}, over the ${formatBytes(limits.maxBytes)} limit`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${bytes} bytes`;
}
