/**
 * image_generate: text to image through FAL (fal.run, FAL_KEY) or an OpenAI-style
 * `/images/generations` endpoint, saved under `<home>/cache/images/` and returned as a path.
 *
 * The backend follows Python Hermes's config: `image_gen.provider` unset or `fal` means FAL with
 * `image_gen.model` (default FLUX 2 Klein); `openai` means OpenAI's gpt-image-2 at the
 * `image_gen.openai.model` quality tier with OPENAI_API_KEY (and OPENAI_BASE_URL when set);
 * `openai-compatible` means `image_gen.openai_compatible.base_url` / `api_key` / `model`. An
 * OpenAI key alone never turns image generation on: it has to be chosen.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { defineTool, type ToolContext } from "../types.js";
import { allowPrivateUrls, guardedFetch } from "../web/url-guard.js";
import description from "./image-generate.md";
import { sniffImage } from "./image-info.js";
import {
  apiErrorMessage,
  type Env,
  envValue,
  fetchWithTimeout,
  homeDir,
  section,
  str,
  timestampedName,
  toolEnv,
} from "./shared.js";

const ASPECTS = ["landscape", "square", "portrait"] as const;
type Aspect = (typeof ASPECTS)[number];
/** As upstream: wide unless asked otherwise. */
const DEFAULT_ASPECT: Aspect = "landscape";

type Sizes = Readonly<Record<Aspect, string>>;
const PRESETS: Sizes = { landscape: "landscape_16_9", square: "square_hd", portrait: "portrait_16_9" };
const PRESETS_4_3: Sizes = { landscape: "landscape_4_3", square: "square_hd", portrait: "portrait_4_3" };
const RATIOS: Sizes = { landscape: "16:9", square: "1:1", portrait: "9:16" };
const PIXELS: Sizes = { landscape: "1536x1024", square: "1024x1024", portrait: "1024x1536" };

interface FalModel {
  /** Which request key carries the size. */
  key: "image_size" | "aspect_ratio";
  sizes: Sizes;
  defaults: Readonly<Record<string, unknown>>;
}

const png = { num_images: 1, output_format: "png" };
/** FAL models Python Hermes offers, with the payload each expects. */
const FAL_MODELS: Readonly<Record<string, FalModel>> = {
  "fal-ai/flux-2/klein/9b": {
    key: "image_size",
    sizes: PRESETS,
    defaults: { num_inference_steps: 4, output_format: "png", enable_safety_checker: false },
  },
  "fal-ai/flux-2-pro": {
    key: "image_size",
    sizes: PRESETS,
    defaults: {
      ...png,
      num_inference_steps: 50,
      guidance_scale: 4.5,
      safety_tolerance: "5",
      sync_mode: true,
    },
  },
  "fal-ai/flux/schnell": {
    key: "image_size",
    sizes: PRESETS,
    defaults: { num_inference_steps: 4, num_images: 1 },
  },
  "fal-ai/z-image/turbo": {
    key: "image_size",
    sizes: PRESETS,
    defaults: {
      ...png,
      num_inference_steps: 8,
      enable_safety_checker: false,
      enable_prompt_expansion: false,
    },
  },
  "fal-ai/nano-banana-pro": {
    key: "aspect_ratio",
    sizes: RATIOS,
    defaults: { ...png, safety_tolerance: "5", resolution: "1K" },
  },
  "fal-ai/gpt-image-1.5": { key: "image_size", sizes: PIXELS, defaults: { ...png, quality: "medium" } },
  "fal-ai/gpt-image-2": { key: "image_size", sizes: PRESETS_4_3, defaults: { ...png, quality: "medium" } },
  "fal-ai/ideogram/v3": {
    key: "image_size",
    sizes: PRESETS,
    defaults: { rendering_speed: "BALANCED", expand_prompt: true, style: "AUTO" },
  },
  "fal-ai/recraft/v4/pro/text-to-image": {
    key: "image_size",
    sizes: PRESETS,
    defaults: { enable_safety_checker: false },
  },
  "fal-ai/qwen-image": {
    key: "image_size",
    sizes: PRESETS,
    defaults: { ...png, num_inference_steps: 30, guidance_scale: 2.5, acceleration: "regular" },
  },
  "fal-ai/krea/v2/medium/text-to-image": {
    key: "aspect_ratio",
    sizes: RATIOS,
    defaults: { creativity: "medium" },
  },
  "fal-ai/krea/v2/large/text-to-image": {
    key: "aspect_ratio",
    sizes: RATIOS,
    defaults: { creativity: "medium" },
  },
};
export const DEFAULT_FAL_MODEL = "fal-ai/flux-2/klein/9b";
const FAL_BASE_URL = "https://fal.run";

/** gpt-image-2 quality tiers as Python Hermes names them. */
const OPENAI_TIERS: Readonly<Record<string, string>> = {
  "gpt-image-2-low": "low",
  "gpt-image-2-medium": "medium",
  "gpt-image-2-high": "high",
};
const OPENAI_DEFAULT_TIER = "gpt-image-2-medium";
const OPENAI_COMPATIBLE_DEFAULT_MODEL = "gpt-image-1";

const GENERATE_TIMEOUT_MS = 300_000;
const DOWNLOAD_TIMEOUT_MS = 60_000;
const MAX_IMAGE_BYTES = 25 * 1024 * 1024;

type Backend =
  | { kind: "fal"; provider: "fal"; key: string; baseUrl: string; model: string }
  | {
      kind: "openai";
      provider: "openai" | "openai-compatible";
      key: string;
      baseUrl: string;
      model: string;
      body: Record<string, unknown>;
      label: string;
    };

/** The configured backend, or a message saying what to set. */
export function resolveImageBackend(config: unknown, env: Env): Backend | { error: string } {
  const cfg = section(config, "image_gen");
  const provider = str(cfg["provider"])?.toLowerCase();
  const configuredModel = str(cfg["model"]);
  if (provider === undefined || provider === "fal") {
    const key = envValue(env, "FAL_KEY");
    if (!key) {
      return {
        error:
          "Image generation needs FAL_KEY (get a key at https://fal.ai), or set image_gen.provider to openai or openai-compatible.",
      };
    }
    const wanted = envValue(env, "FAL_IMAGE_MODEL") ?? configuredModel;
    const model = wanted && FAL_MODELS[wanted] ? wanted : DEFAULT_FAL_MODEL;
    return {
      kind: "fal",
      provider: "fal",
      key,
      baseUrl: envValue(env, "FAL_API_URL") ?? FAL_BASE_URL,
      model,
    };
  }
  if (provider === "openai") {
    const key = envValue(env, "OPENAI_API_KEY");
    if (!key) return { error: "image_gen.provider is openai but OPENAI_API_KEY is not set." };
    const candidates = [
      envValue(env, "OPENAI_IMAGE_MODEL"),
      str(section(cfg, "openai")["model"]),
      configuredModel,
    ];
    const tier =
      candidates.find((m): m is string => m !== undefined && OPENAI_TIERS[m] !== undefined) ??
      OPENAI_DEFAULT_TIER;
    return {
      kind: "openai",
      provider: "openai",
      key,
      baseUrl: envValue(env, "OPENAI_BASE_URL") ?? "https://api.openai.com/v1",
      model: tier,
      body: { model: "gpt-image-2", quality: OPENAI_TIERS[tier] },
      label: "OpenAI",
    };
  }
  if (provider === "openai-compatible" || provider === "openai_compatible") {
    const compat = section(cfg, "openai_compatible");
    const baseUrl = envValue(env, "OPENAI_COMPATIBLE_IMAGE_BASE_URL") ?? str(compat["base_url"]);
    if (!baseUrl)
      return {
        error: "image_gen.provider is openai-compatible but image_gen.openai_compatible.base_url is not set.",
      };
    const model =
      envValue(env, "OPENAI_COMPATIBLE_IMAGE_MODEL") ??
      str(compat["model"]) ??
      configuredModel ??
      OPENAI_COMPATIBLE_DEFAULT_MODEL;
    const key = envValue(env, "OPENAI_COMPATIBLE_IMAGE_API_KEY") ?? str(compat["api_key"]) ?? "";
    return {
      kind: "openai",
      provider: "openai-compatible",
      key,
      baseUrl,
      model,
      body: { model },
      label: "the image endpoint",
    };
  }
  return {
    error: `image_gen.provider "${provider}" is not supported by Hermes-TS: use fal, openai or openai-compatible.`,
  };
}

const parameters = Type.Object({
  prompt: Type.String({ minLength: 1, description: "A detailed description of the image." }),
  aspect_ratio: Type.Optional(
    Type.Union(
      ASPECTS.map((a) => Type.Literal(a)),
      { description: "landscape (16:9, default), square (1:1) or portrait (9:16)." },
    ),
  ),
});

export const imageGenerateTool = defineTool({
  name: "image_generate",
  toolset: "image_gen",
  description,
  parameters,
  parallelSafe: true,
  emoji: "🎨",
  check(ctx) {
    return !("error" in resolveImageBackend(ctx.config, ctx.env));
  },
  async handler(args, ctx) {
    const prompt = args.prompt.trim();
    if (!prompt) throw new Error("The prompt is empty: describe the image to generate.");
    const aspect: Aspect = args.aspect_ratio ?? DEFAULT_ASPECT;
    const backend = resolveImageBackend(ctx.config, toolEnv(ctx));
    if ("error" in backend) throw new Error(backend.error);
    ctx.progress(`generating with ${backend.model}`);
    const generated =
      backend.kind === "fal"
        ? await falGenerate(backend, prompt, aspect, ctx)
        : await openAiGenerate(backend, prompt, aspect, ctx);
    const prefix = `${backend.provider}_${backend.model.split("/").filter(Boolean).slice(-2).join("-")}`;
    const saved = await saveImage(generated, prefix, ctx);
    const remote = generated.url && !generated.url.startsWith("data:") ? generated.url : undefined;
    const image = saved.path ?? remote;
    if (!image) throw new Error(saved.warning ?? "The provider returned no usable image.");
    return {
      success: true,
      image,
      path: saved.path ?? null,
      url: remote ?? null,
      provider: backend.provider,
      model: backend.model,
      aspect_ratio: aspect,
      ...(generated.revisedPrompt ? { revised_prompt: generated.revisedPrompt } : {}),
      ...(saved.warning ? { warning: saved.warning } : {}),
    };
  },
});

interface Generated {
  /** Where the provider put the image (http(s) or data: URL), when it gave one. */
  url?: string | undefined;
  /** The image bytes, when the provider sent them inline. */
  data?: Buffer | undefined;
  revisedPrompt?: string | undefined;
}

async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  label: string,
  ctx: ToolContext,
) {
  const response = await fetchWithTimeout(url, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
    timeoutMs: GENERATE_TIMEOUT_MS,
    label,
    signal: ctx.signal,
  });
  const text = await response.text();
  if (response.status === 401 || response.status === 403) {
    throw new Error(`${label} rejected the API key (HTTP ${response.status}): ${apiErrorMessage(text)}`);
  }
  if (!response.ok)
    throw new Error(`${label} image generation failed (HTTP ${response.status}): ${apiErrorMessage(text)}`);
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${label} answered with something that is not JSON: ${text.slice(0, 200)}`);
  }
}

async function falGenerate(
  backend: Extract<Backend, { kind: "fal" }>,
  prompt: string,
  aspect: Aspect,
  ctx: ToolContext,
): Promise<Generated> {
  const model = FAL_MODELS[backend.model] ?? FAL_MODELS[DEFAULT_FAL_MODEL];
  const payload = { ...model?.defaults, prompt, [model?.key ?? "image_size"]: model?.sizes[aspect] };
  const base = backend.baseUrl.replace(/\/+$/, "");
  const body = await postJson(
    `${base}/${backend.model}`,
    { authorization: `Key ${backend.key}` },
    payload,
    "FAL",
    ctx,
  );
  const images = Array.isArray(body["images"]) ? body["images"] : [];
  const first = images.find((i): i is { url: string } => typeof (i as { url?: unknown })?.url === "string");
  if (!first) throw new Error("FAL returned no image (the response has no images[].url).");
  return { url: first.url };
}

async function openAiGenerate(
  backend: Extract<Backend, { kind: "openai" }>,
  prompt: string,
  aspect: Aspect,
  ctx: ToolContext,
): Promise<Generated> {
  const base = backend.baseUrl.replace(/\/+$/, "");
  const headers: Record<string, string> = backend.key ? { authorization: `Bearer ${backend.key}` } : {};
  const payload = { ...backend.body, prompt, n: 1, size: PIXELS[aspect] };
  const body = await postJson(`${base}/images/generations`, headers, payload, backend.label, ctx);
  const first = Array.isArray(body["data"])
    ? (body["data"][0] as Record<string, unknown> | undefined)
    : undefined;
  const b64 = str(first?.["b64_json"]);
  const url = str(first?.["url"]);
  const revisedPrompt = str(first?.["revised_prompt"]);
  if (b64) return { data: Buffer.from(b64, "base64"), revisedPrompt };
  if (url) return { url, revisedPrompt };
  throw new Error(`${backend.label} returned no image (data[0] has neither b64_json nor url).`);
}

const EXT = { png: "png", jpeg: "jpg", gif: "gif", webp: "webp" } as const;

/**
 * Writes the image into the home's image cache. A URL that cannot be downloaded (blocked,
 * expired, offline) is not fatal: the result keeps the URL and says why there is no file.
 */
async function saveImage(
  generated: Generated,
  prefix: string,
  ctx: ToolContext,
): Promise<{ path?: string; warning?: string }> {
  let data = generated.data;
  if (!data && generated.url?.startsWith("data:")) {
    const comma = generated.url.indexOf(",");
    data = Buffer.from(generated.url.slice(comma + 1), "base64");
  } else if (!data && generated.url) {
    try {
      const response = await guardedFetch(generated.url, {
        allowPrivate: allowPrivateUrls(ctx.config),
        timeoutMs: DOWNLOAD_TIMEOUT_MS,
        maxBytes: MAX_IMAGE_BYTES,
        onTooLarge: "error",
        signal: ctx.signal,
      });
      if (response.status >= 400) throw new Error(`HTTP ${response.status}`);
      data = response.body;
    } catch (error) {
      return {
        warning: `The image could not be downloaded (${(error as Error).message}); use the URL instead.`,
      };
    }
  }
  if (!data || data.length === 0) return { warning: "The provider sent an empty image." };
  const type = sniffImage(data);
  if (!type)
    return { warning: "The provider's download is not a PNG, JPEG, GIF or WebP image; use the URL instead." };
  const dir = homeDir(ctx.home, join("cache", "images"), "image_cache");
  await mkdir(dir, { recursive: true });
  const path = join(dir, timestampedName(prefix.replace(/[^a-zA-Z0-9._-]/g, "_"), EXT[type]));
  await writeFile(path, data);
  return { path };
}
