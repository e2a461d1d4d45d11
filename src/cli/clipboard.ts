/**
 * Reads an image from the system clipboard for `/paste`, with the tool the desktop provides:
 * `wl-paste` on Wayland, `xclip` on X11, `pngpaste` on macOS. The image is saved under
 * `<home>/images/` (where upstream keeps pasted images) so the session can name its file.
 */
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { findBinary } from "../tools/media/shared.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Image types asked for, best first (the ones every model accepts). */
const PREFERRED = ["image/png", "image/jpeg", "image/webp", "image/gif"] as const;
const EXT: Readonly<Record<string, string>> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/webp": "webp",
  "image/gif": "gif",
};
const TIMEOUT_MS = 5000;

export type ClipboardImage = { ok: true; path: string } | { ok: false; reason: string };

/**
 * Saves the clipboard's image to `<home>/images/clip_<time>.<ext>`. Never throws: `reason` says
 * why there is none (no clipboard tool, no display, the clipboard holds no image) and what to do.
 */
export async function pasteClipboardImage(home: string, env: Env, now = new Date()): Promise<ClipboardImage> {
  const read = await readClipboardImage(env);
  if (!read.ok) return read;
  const dir = join(home, "images");
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
  const path = join(dir, `clip_${stamp}_${process.pid}.${EXT[read.mime] ?? "png"}`);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(path, read.data, { mode: 0o600 });
  } catch (error) {
    return {
      ok: false,
      reason: `the pasted image could not be saved to ${dir}: ${(error as Error).message}`,
    };
  }
  return { ok: true, path };
}

type Read = { ok: true; data: Buffer; mime: string } | { ok: false; reason: string };

async function readClipboardImage(env: Env): Promise<Read> {
  const tried: string[] = [];
  if (process.platform === "darwin") {
    const pngpaste = findBinary("pngpaste", env);
    if (!pngpaste)
      return {
        ok: false,
        reason: "reading images from the clipboard needs pngpaste (brew install pngpaste)",
      };
    const out = await run(pngpaste, ["-"], env);
    if (out.ok && out.data.length > 0) return { ok: true, data: out.data, mime: "image/png" };
    return { ok: false, reason: "the clipboard holds no image" };
  }
  if (env["WAYLAND_DISPLAY"]) {
    const wlPaste = findBinary("wl-paste", env);
    if (wlPaste) return readWith(wlPaste, ["--list-types"], (mime) => ["--no-newline", "--type", mime], env);
    tried.push("wl-paste (package wl-clipboard)");
  }
  if (env["DISPLAY"]) {
    const xclip = findBinary("xclip", env);
    if (xclip)
      return readWith(
        xclip,
        ["-selection", "clipboard", "-t", "TARGETS", "-o"],
        (mime) => ["-selection", "clipboard", "-t", mime, "-o"],
        env,
      );
    tried.push("xclip");
  }
  if (!env["WAYLAND_DISPLAY"] && !env["DISPLAY"])
    return {
      ok: false,
      reason:
        "there is no graphical session here (neither WAYLAND_DISPLAY nor DISPLAY is set), so no clipboard to read; attach a file with /image PATH",
    };
  return {
    ok: false,
    reason: `reading the clipboard needs ${tried.join(" or ")}; install it, or attach a file with /image PATH`,
  };
}

/** Lists the clipboard's types, then reads the best image type it offers. */
async function readWith(
  tool: string,
  listArgs: string[],
  readArgs: (mime: string) => string[],
  env: Env,
): Promise<Read> {
  const listed = await run(tool, listArgs, env);
  if (!listed.ok) return { ok: false, reason: `the clipboard could not be read: ${listed.reason}` };
  const types = listed.data.toString("utf8").split(/\s+/).filter(Boolean);
  const mime = PREFERRED.find((m) => types.includes(m));
  if (!mime) {
    const other = types.find((t) => t.startsWith("image/"));
    return {
      ok: false,
      reason: other
        ? `the clipboard holds a ${other} image, which models do not accept; copy it as PNG or JPEG`
        : "the clipboard holds no image (copy one first, e.g. a screenshot)",
    };
  }
  const out = await run(tool, readArgs(mime), env);
  if (!out.ok) return { ok: false, reason: `the clipboard image could not be read: ${out.reason}` };
  if (out.data.length === 0) return { ok: false, reason: "the clipboard image was empty" };
  return { ok: true, data: out.data, mime };
}

function run(
  file: string,
  args: string[],
  env: Env,
): Promise<{ ok: true; data: Buffer } | { ok: false; reason: string }> {
  return new Promise((done) => {
    execFile(
      file,
      args,
      { encoding: "buffer", timeout: TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024, env: env as NodeJS.ProcessEnv },
      (error, stdout, stderr) => {
        if (error) {
          const tail = Buffer.from(stderr).toString("utf8").trim().split("\n").slice(-2).join(" ");
          done({
            ok: false,
            reason: `${file.split("/").pop()} failed${tail ? `: ${tail}` : ` (${error.message})`}`,
          });
          return;
        }
        done({ ok: true, data: Buffer.from(stdout) });
      },
    );
  });
}
