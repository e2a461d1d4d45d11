/**
 * Context window sizes: a small catalog by model family, the user's `model.context_length`
 * override, and limits learnt from overflow errors (probed down a tier at a time, or read from the
 * error's own numbers) and cached per `model@base_url` in `<home>/context_length_cache.yaml`, the
 * file and shape Python Hermes uses (`context_lengths: {"model@base_url": tokens}`).
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { parse, stringify } from "yaml";
import { atomicWriteFile } from "../util/atomic-write.js";
import { StampedFileCache } from "../util/stamped-cache.js";

export const DEFAULT_CONTEXT_LENGTH = 128_000;
/** Probing never goes below this. */
export const MINIMUM_CONTEXT_LENGTH = 8_000;
/** Tiers an unknown limit is probed down through, largest first. */
export const PROBE_TIERS: readonly number[] = [
  2_000_000, 1_000_000, 512_000, 400_000, 256_000, 200_000, 128_000, 64_000, 32_000, 16_000, 8_000,
];

/** Family patterns, most specific first; matched against the lower-cased model id without vendor prefix. */
const CATALOG: readonly { pattern: RegExp; tokens: number }[] = [
  { pattern: /claude/, tokens: 200_000 },
  { pattern: /gpt-5/, tokens: 400_000 },
  { pattern: /gpt-4\.1/, tokens: 1_000_000 },
  { pattern: /gpt-4o|o1|o3|o4-mini/, tokens: 128_000 },
  { pattern: /gpt-oss/, tokens: 128_000 },
  { pattern: /gemini-(2\.5|3)/, tokens: 1_000_000 },
  { pattern: /gemini/, tokens: 1_000_000 },
  { pattern: /deepseek/, tokens: 128_000 },
  { pattern: /qwen3-coder/, tokens: 256_000 },
  { pattern: /qwen/, tokens: 128_000 },
  { pattern: /kimi-k2|moonshot/, tokens: 256_000 },
  { pattern: /glm/, tokens: 128_000 },
  { pattern: /llama-?3/, tokens: 128_000 },
  { pattern: /llama-?4/, tokens: 1_000_000 },
  { pattern: /grok-4/, tokens: 256_000 },
  { pattern: /minimax/, tokens: 200_000 },
  { pattern: /hermes-4/, tokens: 128_000 },
];

/** Where learnt limits are kept. `key` is `model@base_url`. */
export interface ContextLengthStore {
  get(key: string): number | undefined;
  set(key: string, tokens: number): void | Promise<void>;
}

export function contextCacheKey(model: string, baseUrl = ""): string {
  return `${model}@${baseUrl.replace(/\/+$/, "")}`;
}

/** Catalog answers by model id: a server asks for the same few models with every session. */
const catalogMemo = new Map<string, number | undefined>();
const CATALOG_MEMO_MAX = 256;

/** The catalog's window for a model id, or undefined when the family is unknown. */
export function catalogContextLength(model: string): number | undefined {
  if (catalogMemo.has(model)) return catalogMemo.get(model);
  const id = model.toLowerCase();
  const tokens = CATALOG.find((entry) => entry.pattern.test(id))?.tokens;
  if (catalogMemo.size >= CATALOG_MEMO_MAX) catalogMemo.clear();
  catalogMemo.set(model, tokens);
  return tokens;
}

export interface ContextLengthOptions {
  baseUrl?: string | undefined;
  /** What the provider's model listing says, when the caller fetched it. */
  providerMetadata?: number | undefined;
  store?: ContextLengthStore | undefined;
}

/**
 * The context window to plan against. Precedence: `model.context_length` from config.yaml, a limit
 * learnt from an overflow error (cache), provider metadata, the catalog, then 128k.
 */
export function contextLengthFor(
  model: string,
  config: { model: { context_length?: number | null | undefined } },
  options: ContextLengthOptions = {},
): number {
  const configured = config.model.context_length;
  if (typeof configured === "number" && configured > 0) return configured;
  const cached = options.store?.get(contextCacheKey(model, options.baseUrl));
  if (cached && cached > 0) return cached;
  if (options.providerMetadata && options.providerMetadata > 0) return options.providerMetadata;
  return catalogContextLength(model) ?? DEFAULT_CONTEXT_LENGTH;
}

/** The next tier strictly below `current`, floored at the minimum. */
export function nextProbeTier(current: number): number {
  return PROBE_TIERS.find((tier) => tier < current) ?? MINIMUM_CONTEXT_LENGTH;
}

/**
 * Reads the real limit from an overflow error's text ("maximum context length is 32768 tokens",
 * "prompt is too long: 250000 tokens > 200000 maximum", "context window of 65536 tokens").
 */
export function parseContextLimitFromError(text: string): number | undefined {
  const lower = text.toLowerCase().replace(/(\d),(\d{3})/g, "$1$2");
  const patterns = [
    /tokens?\s*>\s*(\d{4,})\s*maximum/,
    /maximum context length (?:is|of)\s*(\d{4,})/,
    /context (?:length|window|size|limit) (?:is|of)\s*(\d{4,})/,
    /max(?:imum)?_model_len\D{0,20}(\d{4,})/,
    /limit (?:is|of)\s*(\d{4,})\s*tokens/,
  ];
  for (const pattern of patterns) {
    const m = pattern.exec(lower);
    if (m?.[1]) {
      const n = Number(m[1]);
      if (Number.isFinite(n) && n >= 1024) return n;
    }
  }
  return undefined;
}

/**
 * After an overflow error: the limit to use from now on, and it is stored. A limit stated in the
 * error wins (when below `current`); otherwise the next tier below `current`.
 */
export async function probeDownContextLength(input: {
  model: string;
  baseUrl?: string | undefined;
  current: number;
  errorText?: string | undefined;
  store?: ContextLengthStore | undefined;
}): Promise<number> {
  const stated = input.errorText ? parseContextLimitFromError(input.errorText) : undefined;
  const next =
    stated !== undefined && stated < input.current
      ? Math.max(stated, MINIMUM_CONTEXT_LENGTH)
      : nextProbeTier(input.current);
  await input.store?.set(contextCacheKey(input.model, input.baseUrl), next);
  return next;
}

/** An in-memory store (tests, and sessions without a home). */
export function memoryContextLengthStore(initial: Record<string, number> = {}): ContextLengthStore {
  const map = new Map(Object.entries(initial));
  return {
    get: (key) => map.get(key),
    set: (key, tokens) => {
      map.set(key, tokens);
    },
  };
}

/** The limits a cache file holds; `unreadable` when it is not YAML of the expected shape. */
interface LengthsFile {
  lengths: Readonly<Record<string, number>>;
  unreadable: boolean;
}

/**
 * Cache files as parsed, kept while unchanged (`util/stamped-cache.ts`): every session of a
 * server reads the file, and a missing one (the usual case) costs a stat, not a thrown ENOENT.
 */
const lengthFiles = new StampedFileCache<LengthsFile>((bytes) => {
  const lengths: Record<string, number> = {};
  try {
    const data: unknown = parse(bytes.toString("utf8"));
    const found =
      data && typeof data === "object" ? (data as Record<string, unknown>)["context_lengths"] : undefined;
    if (found && typeof found === "object") {
      for (const [key, value] of Object.entries(found as Record<string, unknown>)) {
        if (typeof value === "number" && value > 0) lengths[key] = value;
      }
    }
  } catch {
    return { lengths, unreadable: true };
  }
  return { lengths, unreadable: false };
});

/** The file's limits as they are on disk now (a copy the caller may change). */
function readLengthsFile(path: string): { lengths: Record<string, number>; unreadable: boolean } {
  let read: LengthsFile | undefined;
  try {
    read = lengthFiles.read(path);
  } catch {
    // Unreadable (a directory, no permission): nothing known, and nothing written over it.
    return { lengths: {}, unreadable: true };
  }
  return read
    ? { lengths: { ...read.lengths }, unreadable: read.unreadable }
    : { lengths: {}, unreadable: false };
}

/**
 * The store in `<home>/context_length_cache.yaml`. Loaded once per store; a file that fails to
 * parse is treated as empty and never overwritten with less than it held.
 */
export function fileContextLengthStore(home: string): ContextLengthStore {
  const path = join(home, "context_length_cache.yaml");
  let cache: Record<string, number> | undefined;
  let unreadable = false;
  const load = (): Record<string, number> => {
    if (cache) return cache;
    const read = readLengthsFile(path);
    cache = read.lengths;
    unreadable = read.unreadable;
    return cache;
  };
  return {
    get: (key) => load()[key],
    async set(key, tokens) {
      const data = load();
      if (tokens <= 0 || data[key] === tokens) return;
      data[key] = tokens;
      if (unreadable) return;
      await mkdir(home, { recursive: true });
      await atomicWriteFile(path, stringify({ context_lengths: data }));
    },
  };
}
