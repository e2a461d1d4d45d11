/**
 * vision_analyze: loads an image (local file, http(s) URL or data: URL), checks it really is a
 * PNG, JPEG, GIF or WebP, shrinks it with ffmpeg when the provider would refuse it, and asks a
 * vision-capable model about it in one side call.
 *
 * Which model: a tool cannot put pixels into the main conversation, so the image always goes
 * through the auxiliary "vision" chain (src/ai/auxiliary.ts): `auxiliary.vision` when configured,
 * else OpenRouter / Nous when their keys are set, else the main provider and model from
 * config.yaml. The catalog does not record which models take images, so none is skipped for that;
 * a model that refuses images fails with an error that says to set `auxiliary.vision.model`.
 */
import { readFile, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { Type } from "@sinclair/typebox";
import {
  AuxiliaryError,
  type AuxiliaryRuntime,
  auxiliaryComplete,
  resolveAuxiliaryChain,
} from "../../ai/auxiliary.js";
import { type ResolvedRuntime, resolveRuntime } from "../../ai/resolve.js";
import type { Message } from "../../ai/types.js";
import type { HermesConfig } from "../../config/defaults.js";
import { resolvePath } from "../../util/abs-path.js";
import { defineTool, type ToolContext } from "../types.js";
import { allowPrivateUrls, guardedFetch, WebFetchError } from "../web/url-guard.js";
import { describeContent, IMAGE_MIME, imageSize, sniffImage } from "./image-info.js";
import { exceedsLimits, formatBytes, type ShrinkLimits, shrinkImage } from "./image-shrink.js";
import { type Env, findBinary, section, toolEnv } from "./shared.js";
import description from "./vision.md";

/** Largest image read or downloaded, before any shrinking. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
/** Anthropic (and Bedrock) refuse images over 5 MB of base64, i.e. 3.75 MB of bytes. */
const STRICT_MAX_BYTES = Math.floor((5 * 1024 * 1024 * 3) / 4);
/** Everyone else: 20 MB of base64 is the most any provider takes in one request. */
const DEFAULT_MAX_BYTES = Math.floor((20 * 1024 * 1024 * 3) / 4);
/** Anthropic refuses a side over 8000 px; nobody reads finer detail than that anyway. */
const MAX_SIDE = 8000;
const DOWNLOAD_TIMEOUT_MS = 30_000;

const parameters = Type.Object({
  image_url: Type.String({
    minLength: 1,
    description: "Local path or URL of the image.",
  }),
  question: Type.String({ description: "What you want to know about the image." }),
});

export const visionAnalyzeTool = defineTool({
  name: "vision_analyze",
  toolset: "vision",
  description,
  parameters,
  parallelSafe: true,
  sideEffectFree: true,
  emoji: "👁️",
  check(ctx) {
    return visionChain(ctx.config as unknown as HermesConfig, ctx.env, ctx.home).length > 0;
  },
  async handler(args, ctx) {
    const env = toolEnv(ctx);
    const config = ctx.config as unknown as HermesConfig;
    const chain = visionChain(config, env, ctx.home);
    if (chain.length === 0) {
      throw new Error(
        "No model is configured to look at images: set auxiliary.vision.provider and auxiliary.vision.model in config.yaml, or configure a main model.",
      );
    }
    ctx.progress("loading image");
    const loaded = await loadImage(args.image_url, ctx);
    const type = sniffImage(loaded);
    if (!type) {
      throw new Error(
        `${sourceLabel(args.image_url)} is ${describeContent(loaded)}, not an image this tool reads (PNG, JPEG, GIF or WebP).`,
      );
    }
    let data = loaded;
    let mime = IMAGE_MIME[type];
    let note: string | undefined;
    const size = imageSize(data, type);
    const limits = limitsFor(chain);
    if (exceedsLimits(data.length, size, limits)) {
      const ffmpeg = findBinary("ffmpeg", env);
      const what = `${formatBytes(data.length)}${size ? `, ${size.width}x${size.height} px` : ""}`;
      if (!ffmpeg) {
        throw new Error(
          `The image (${what}) is over what the vision provider accepts (${formatBytes(limits.maxBytes)}, ${limits.maxSide} px a side), and ffmpeg is not installed to shrink it. Install ffmpeg or pass a smaller image.`,
        );
      }
      ctx.progress("shrinking image");
      try {
        const shrunk = await shrinkImage(data, size, limits, { ffmpeg, signal: ctx.signal });
        note = `Image downscaled from ${size ? `${size.width}x${size.height}` : what} to ${shrunk.width}x${shrunk.height} (JPEG) to fit the vision provider's limits; multiply coordinates you report by ${size ? (size.width / shrunk.width).toFixed(2) : "the scale factor"} to map them back.`;
        data = shrunk.data;
        mime = "image/jpeg";
      } catch (error) {
        throw new Error(
          `The image (${what}) is too large for the vision provider and could not be shrunk: ${(error as Error).message}`,
        );
      }
    }
    const messages: Message[] = [
      {
        role: "user",
        content: [
          { type: "text", text: visionPrompt(args.question) },
          { type: "image_url", image_url: { url: `data:${mime};base64,${data.toString("base64")}` } },
        ],
      },
    ];
    ctx.progress("asking the vision model");
    const temperature = section(config, "auxiliary", "vision")["temperature"];
    try {
      const result = await auxiliaryComplete(chain, messages, {
        signal: ctx.signal,
        temperature: typeof temperature === "number" ? temperature : 0.1,
      });
      return {
        success: true,
        analysis: note ? `[${note}] ${result.text}` : result.text,
        model: result.runtime.model,
        ...(note ? { scale_note: note } : {}),
      };
    } catch (error) {
      throw new Error(explainFailure(error, chain));
    }
  },
});

/** How to name the source in an error: never a whole data: URL. */
function sourceLabel(source: string): string {
  const trimmed = source.trim();
  if (trimmed.toLowerCase().startsWith("data:")) return "The data: URL";
  return trimmed.length > 160 ? `${trimmed.slice(0, 160)}...` : trimmed;
}

/** The question wrapped so the model describes before it answers (small models skip details otherwise). */
export function visionPrompt(question: string): string {
  const asked = question.trim() || "What does this image show?";
  return `Look carefully at this image. Describe everything it shows, including any text, then answer this question about it:\n\n${asked}`;
}

/**
 * The runtimes to try, in order (see the file comment). Empty when neither `auxiliary.vision`
 * nor the main model resolves.
 */
export function visionChain(config: HermesConfig, env: Env, home: string | undefined): AuxiliaryRuntime[] {
  let main: ResolvedRuntime | undefined;
  try {
    main = resolveRuntime({ flags: {}, config, env, home });
  } catch {
    main = undefined;
  }
  try {
    if (main) return resolveAuxiliaryChain("vision", { config, env, main, home });
    // No main runtime: only explicit or automatic auxiliary entries can serve.
    const placeholder: ResolvedRuntime = {
      provider: "",
      model: "",
      baseUrl: "",
      apiKey: undefined,
      apiMode: "chat_completions",
    };
    return resolveAuxiliaryChain("vision", { config, env, main: placeholder, home }).filter(
      (r) => r.source !== "main",
    );
  } catch {
    // A config shaped too oddly to resolve means no vision model, not a crash.
    return [];
  }
}

/** The strictest limits of any runtime in the chain, so a fallback entry never gets refused. */
function limitsFor(chain: readonly AuxiliaryRuntime[]): ShrinkLimits {
  const strict = chain.some((r) => r.apiMode === "anthropic_messages" || r.apiMode === "bedrock_converse");
  return { maxBytes: strict ? STRICT_MAX_BYTES : DEFAULT_MAX_BYTES, maxSide: MAX_SIDE };
}

/** The raw bytes of the image, at most {@link MAX_IMAGE_BYTES}. */
async function loadImage(source: string, ctx: ToolContext): Promise<Buffer> {
  const trimmed = source.trim();
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme === "data") return decodeDataUrl(trimmed);
  if (scheme === "http" || scheme === "https") return downloadImage(trimmed, ctx);
  if (scheme === "file") return readLocalImage(fileURLToPath(trimmed));
  // A Windows drive letter ("C:") looks like a scheme; anything else with one is not supported.
  if (scheme && scheme.length > 1) {
    throw new Error(
      `Unsupported image source "${trimmed.slice(0, 80)}": give a local path, an http(s) URL or a data: URL.`,
    );
  }
  return readLocalImage(resolvePath(trimmed, ctx.cwd));
}

function decodeDataUrl(url: string): Buffer {
  const comma = url.indexOf(",");
  if (comma === -1) throw new Error("The data: URL has no comma, so it holds no data.");
  const header = url.slice(5, comma);
  const payload = url.slice(comma + 1);
  const data = header.includes(";base64")
    ? Buffer.from(payload, "base64")
    : Buffer.from(decodeURIComponent(payload));
  if (data.length > MAX_IMAGE_BYTES) {
    throw new Error(
      `The data: URL holds ${formatBytes(data.length)}; the limit is ${formatBytes(MAX_IMAGE_BYTES)}.`,
    );
  }
  return data;
}

async function readLocalImage(path: string): Promise<Buffer> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT")
      throw new Error(
        `No such file: ${path}. Check the path (relative paths start at the working directory).`,
      );
    throw new Error(`Cannot read ${path}: ${code ?? String(error)}`);
  }
  if (!info.isFile()) throw new Error(`${path} is not a file.`);
  if (info.size > MAX_IMAGE_BYTES) {
    throw new Error(
      `${path} is ${formatBytes(info.size)}; images over ${formatBytes(MAX_IMAGE_BYTES)} are not read.`,
    );
  }
  return readFile(path);
}

async function downloadImage(url: string, ctx: ToolContext): Promise<Buffer> {
  try {
    const response = await guardedFetch(url, {
      allowPrivate: allowPrivateUrls(ctx.config),
      timeoutMs: DOWNLOAD_TIMEOUT_MS,
      maxBytes: MAX_IMAGE_BYTES,
      headers: { accept: "image/*,*/*;q=0.8" },
      signal: ctx.signal,
    });
    if (response.status >= 400) throw new Error(`Downloading ${url} failed: HTTP ${response.status}.`);
    if (response.truncated) {
      throw new Error(
        `${url} is larger than ${formatBytes(MAX_IMAGE_BYTES)}; images that big are not downloaded.`,
      );
    }
    return response.body;
  } catch (error) {
    // The guard's messages already say what was refused and how to allow it.
    if (error instanceof WebFetchError) throw new Error(error.message);
    throw error;
  }
}

function explainFailure(error: unknown, chain: readonly AuxiliaryRuntime[]): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/does not support|not support image|image input|multimodal|image_url|invalid image/i.test(message)) {
    const models = [...new Set(chain.map((r) => r.model))].join(", ");
    return `The vision model refused the image (${message}). ${models} may not accept images: set auxiliary.vision.provider and auxiliary.vision.model in config.yaml to a vision-capable model.`;
  }
  if (error instanceof AuxiliaryError) return `No vision model could answer: ${message}`;
  return `The vision model call failed: ${message}`;
}
