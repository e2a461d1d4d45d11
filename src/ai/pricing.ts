/**
 * Token prices and cost estimates. The catalog is data: list prices in USD per million tokens,
 * matched against whatever model id a provider or user writes (`anthropic/claude-sonnet-4.5`,
 * `claude-sonnet-4-5-20250929`, `us.anthropic.claude-sonnet-4-20250514-v1:0`, `…:free`).
 * A `pricing:` section in config.yaml overrides the catalog. A model the catalog does not know is
 * never guessed at: its cost is unknown.
 *
 * Status and source names follow Python Hermes (`agent/usage_pricing.py`), which writes the same
 * `state.db` columns: status `actual | estimated | included | unknown`, source
 * `official_docs_snapshot | user_override | none`.
 */
import type { Usage } from "./types.js";

/** USD per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Cached prompt tokens read. Default: a tenth of `input`. */
  cache_read?: number;
  /** Prompt tokens written to the cache. Default: 1.25 × `input` (Anthropic's five-minute write). */
  cache_write?: number;
  /**
   * Whole-request rates once the prompt (all input tokens, cached included) exceeds `threshold`
   * tokens: Anthropic's and Google's long-context pricing applies to the entire request, not to
   * the tokens above the line.
   */
  long_context?: {
    threshold: number;
    input: number;
    output: number;
    cache_read?: number;
    cache_write?: number;
  };
}

export type CostStatus = "actual" | "estimated" | "included" | "unknown";
export type CostSource = "official_docs_snapshot" | "user_override" | "none";

/** Identifies the catalog snapshot in `sessions.pricing_version`. Bump it when prices change. */
export const PRICING_VERSION = "hermes-ts-2025-11";

/** `pricing_version` written for prices that came from config.yaml. */
export const OVERRIDE_PRICING_VERSION = "user-override";

// List prices as the vendors published them, snapshot of November 2025 (PRICING_VERSION).
// Anthropic: anthropic.com/pricing (cache write = 5-minute write). OpenAI: openai.com/api/pricing
// (OpenAI charges no cache-write premium, so cache_write = input). Google: ai.google.dev/pricing
// (implicit caching, no write charge). DeepSeek: api-docs.deepseek.com (V3.2-Exp rates for the
// deepseek-chat/-reasoner aliases since 2025-09-29; the original V3/R1 rates for those names).
// xAI: docs.x.ai. Moonshot, Z.ai, MiniMax, Alibaba Model Studio (international, non-thinking
// mode, smallest context tier): their platform price pages. Llama: Groq's model ids and prices,
// since Meta sells no API of its own and open-weight hosts differ. Models whose price could not be
// stated with confidence are left out on purpose.
const OPENAI_CACHE = (input: number, output: number, cacheRead: number): ModelPrice => ({
  input,
  output,
  cache_read: cacheRead,
  cache_write: input,
});
const NO_CACHE_DISCOUNT = (input: number, output: number): ModelPrice => ({
  input,
  output,
  cache_read: input,
  cache_write: input,
});
const ANTHROPIC = (input: number, output: number, cacheRead: number, cacheWrite: number): ModelPrice => ({
  input,
  output,
  cache_read: cacheRead,
  cache_write: cacheWrite,
});
const SONNET_4: ModelPrice = {
  ...ANTHROPIC(3, 15, 0.3, 3.75),
  long_context: { threshold: 200_000, input: 6, output: 22.5, cache_read: 0.6, cache_write: 7.5 },
};
const OPUS_4 = ANTHROPIC(15, 75, 1.5, 18.75);

/** The built-in catalog, keyed by normalised model id (see `normalizeModelId`). */
export const PRICE_CATALOG: Readonly<Record<string, ModelPrice>> = {
  // Anthropic
  "claude-opus-4-5": ANTHROPIC(5, 25, 0.5, 6.25),
  "claude-opus-4-1": OPUS_4,
  "claude-opus-4": OPUS_4,
  "claude-opus-4-0": OPUS_4,
  "claude-sonnet-4-5": SONNET_4,
  "claude-sonnet-4": SONNET_4,
  "claude-sonnet-4-0": SONNET_4,
  "claude-haiku-4-5": ANTHROPIC(1, 5, 0.1, 1.25),
  "claude-3-7-sonnet": ANTHROPIC(3, 15, 0.3, 3.75),
  "claude-3-5-sonnet": ANTHROPIC(3, 15, 0.3, 3.75),
  "claude-3-5-haiku": ANTHROPIC(0.8, 4, 0.08, 1),
  "claude-3-opus": OPUS_4,
  "claude-3-haiku": ANTHROPIC(0.25, 1.25, 0.03, 0.3),
  // OpenAI
  "gpt-5": OPENAI_CACHE(1.25, 10, 0.125),
  "gpt-5-chat": OPENAI_CACHE(1.25, 10, 0.125),
  "gpt-5-codex": OPENAI_CACHE(1.25, 10, 0.125),
  "gpt-5-mini": OPENAI_CACHE(0.25, 2, 0.025),
  "gpt-5-nano": OPENAI_CACHE(0.05, 0.4, 0.005),
  "gpt-5-pro": NO_CACHE_DISCOUNT(15, 120),
  "gpt-5.1": OPENAI_CACHE(1.25, 10, 0.125),
  "gpt-5.1-chat": OPENAI_CACHE(1.25, 10, 0.125),
  "gpt-5.1-codex": OPENAI_CACHE(1.25, 10, 0.125),
  "gpt-5.1-codex-mini": OPENAI_CACHE(0.25, 2, 0.025),
  "gpt-4.1": OPENAI_CACHE(2, 8, 0.5),
  "gpt-4.1-mini": OPENAI_CACHE(0.4, 1.6, 0.1),
  "gpt-4.1-nano": OPENAI_CACHE(0.1, 0.4, 0.025),
  "gpt-4o": OPENAI_CACHE(2.5, 10, 1.25),
  "gpt-4o-2024-05-13": NO_CACHE_DISCOUNT(5, 15),
  "gpt-4o-mini": OPENAI_CACHE(0.15, 0.6, 0.075),
  "chatgpt-4o-latest": NO_CACHE_DISCOUNT(5, 15),
  o1: OPENAI_CACHE(15, 60, 7.5),
  "o1-mini": OPENAI_CACHE(1.1, 4.4, 0.55),
  "o1-pro": NO_CACHE_DISCOUNT(150, 600),
  o3: OPENAI_CACHE(2, 8, 0.5),
  "o3-pro": NO_CACHE_DISCOUNT(20, 80),
  "o3-mini": OPENAI_CACHE(1.1, 4.4, 0.55),
  "o4-mini": OPENAI_CACHE(1.1, 4.4, 0.275),
  // Google
  "gemini-2.5-pro": {
    ...OPENAI_CACHE(1.25, 10, 0.125),
    long_context: { threshold: 200_000, input: 2.5, output: 15, cache_read: 0.25, cache_write: 2.5 },
  },
  "gemini-2.5-flash": OPENAI_CACHE(0.3, 2.5, 0.03),
  "gemini-2.5-flash-lite": OPENAI_CACHE(0.1, 0.4, 0.01),
  "gemini-2.0-flash": OPENAI_CACHE(0.1, 0.4, 0.025),
  "gemini-2.0-flash-lite": NO_CACHE_DISCOUNT(0.075, 0.3),
  // DeepSeek
  "deepseek-chat": OPENAI_CACHE(0.28, 0.42, 0.028),
  "deepseek-reasoner": OPENAI_CACHE(0.28, 0.42, 0.028),
  "deepseek-v3": OPENAI_CACHE(0.27, 1.1, 0.07),
  "deepseek-r1": OPENAI_CACHE(0.55, 2.19, 0.14),
  // xAI
  "grok-4": OPENAI_CACHE(3, 15, 0.75),
  "grok-4-fast": OPENAI_CACHE(0.2, 0.5, 0.05),
  "grok-code-fast-1": OPENAI_CACHE(0.2, 1.5, 0.02),
  "grok-3": { input: 3, output: 15, cache_write: 3 },
  "grok-3-mini": OPENAI_CACHE(0.3, 0.5, 0.075),
  // Alibaba Qwen
  "qwen-max": { input: 1.6, output: 6.4, cache_write: 1.6 },
  "qwen-plus": { input: 0.4, output: 1.2, cache_write: 0.4 },
  "qwen-turbo": { input: 0.05, output: 0.2, cache_write: 0.05 },
  // Moonshot Kimi
  "kimi-k2": OPENAI_CACHE(0.6, 2.5, 0.15),
  // Z.ai GLM
  "glm-4.6": OPENAI_CACHE(0.6, 2.2, 0.11),
  "glm-4.5": OPENAI_CACHE(0.6, 2.2, 0.11),
  "glm-4.5-air": OPENAI_CACHE(0.2, 1.1, 0.03),
  "glm-4.5-flash": NO_CACHE_DISCOUNT(0, 0),
  // MiniMax
  "minimax-m2": { input: 0.3, output: 1.2 },
  // Meta Llama on Groq
  "llama-3.3-70b-versatile": NO_CACHE_DISCOUNT(0.59, 0.79),
  "llama-3.1-8b-instant": NO_CACHE_DISCOUNT(0.05, 0.08),
};

/**
 * Words that, after a known id, name a different product at a different price (`o3-pro`,
 * `gpt-4o-audio-preview`, `kimi-k2-turbo`). A prefix match across one of them is refused, so the
 * model is unknown rather than priced as its sibling.
 */
const PRICE_TIER_WORDS = new Set([
  "pro",
  "mini",
  "nano",
  "lite",
  "flash",
  "fast",
  "turbo",
  "max",
  "plus",
  "ultra",
  "large",
  "medium",
  "small",
  "micro",
  "tiny",
  "haiku",
  "sonnet",
  "opus",
  "air",
  "deep",
  "research",
  "realtime",
  "audio",
  "image",
  "tts",
  "live",
  "search",
  "embedding",
  "transcribe",
  "vision",
]);

/** OpenRouter suffixes that route differently but bill the same tokens at the same rates. */
const SAME_PRICE_VARIANTS = /:(thinking|beta|nitro|floor|exacto)$/;

export interface NormalizedModelId {
  /** Lower case, no provider path, Bedrock/Vertex decoration or `:variant`; dates kept. */
  id: string;
  /** `id` without a trailing release date (`-20250514`, `-2024-08-06`). */
  undated: string;
  /** The id ended in `:free` (OpenRouter's zero-priced variant). */
  free: boolean;
}

/**
 * Reduces a model id as providers and users write it to the catalog's form: lower case; `:free`
 * noted and dropped; provider paths (`openrouter/anthropic/…`, `models/…`) dropped; Bedrock region
 * and vendor prefixes (`us.anthropic.`) and revision suffixes (`-v1:0`) dropped; Vertex `@date`
 * dropped; Claude's dotted versions (`claude-sonnet-4.5`, `claude-3.5-sonnet`) dashed.
 */
export function normalizeModelId(model: string): NormalizedModelId {
  let id = model.trim().toLowerCase();
  const free = id.endsWith(":free");
  if (free) id = id.slice(0, -":free".length);
  id = id.replace(SAME_PRICE_VARIANTS, "");
  id = id.slice(id.lastIndexOf("/") + 1);
  id = id.replace(/^(?:us|eu|apac|ap|global|jp|au|ca)\./, "");
  id = id.replace(/^(?:anthropic|meta|amazon|mistral|cohere|deepseek|qwen|moonshotai|openai|xai)\./, "");
  id = id.replace(/-v\d+:\d+$/, "").replace(/:\d+$/, "");
  id = id.replace(/@.*$/, "");
  if (id.startsWith("claude")) id = id.replace(/(\d)\.(\d)/g, "$1-$2");
  const undated = id.replace(/-(?:\d{8}|\d{4}-\d{2}-\d{2})$/, "");
  return { id, undated, free };
}

/**
 * True when `rest` (what follows a known id) only qualifies the same model: a date or revision
 * (`-0528`), a stage (`-latest`, `-preview-05-06`), a mode (`-thinking`). A new minor version
 * (`-5`, `.1`), a `v3`-style version, or a tier word is a different model.
 */
function sameModelSuffix(rest: string): boolean {
  if (!/^[-_.]/.test(rest)) return false;
  const tokens = rest.split(/[-_.]/).filter((t) => t !== "");
  const first = tokens[0];
  if (first === undefined) return false;
  if (/^\d{1,2}$/.test(first) || /^v\d/.test(first)) return false;
  return !tokens.some((t) => PRICE_TIER_WORDS.has(t));
}

/** Exact match on the dated then undated id, then the longest catalog id the model extends. */
function matchTable<T>(
  table: ReadonlyMap<string, T>,
  name: NormalizedModelId,
): { key: string; value: T } | undefined {
  for (const key of [name.id, name.undated]) {
    const value = table.get(key);
    if (value !== undefined) return { key, value };
  }
  let best: { key: string; value: T } | undefined;
  for (const [key, value] of table) {
    if (key.length >= name.undated.length || !name.undated.startsWith(key)) continue;
    if (!sameModelSuffix(name.undated.slice(key.length))) continue;
    if (!best || key.length > best.key.length) best = { key, value };
  }
  return best;
}

const CATALOG_TABLE: ReadonlyMap<string, ModelPrice> = new Map(Object.entries(PRICE_CATALOG));

/** Per-model prices from config.yaml, keyed as the user wrote them. */
export type PricingOverrides = Readonly<Record<string, ModelPrice>>;

/**
 * Reads config.yaml's `pricing:` section: `{ "<model>": {input, output, cache_read?, cache_write?} }`
 * in USD per million tokens. An entry that is not of that shape is left out and described in
 * `problems` (with the model and the bad value); a missing or empty section gives `{}`.
 */
export function parsePricingOverrides(raw: unknown): { overrides: PricingOverrides; problems: string[] } {
  const overrides: Record<string, ModelPrice> = {};
  const problems: string[] = [];
  if (raw === undefined || raw === null) return { overrides, problems };
  if (typeof raw !== "object" || Array.isArray(raw)) {
    problems.push(
      `config.yaml pricing: expected a mapping of model names to prices, got ${JSON.stringify(raw)}.`,
    );
    return { overrides, problems };
  }
  for (const [model, entry] of Object.entries(raw as Record<string, unknown>)) {
    const where = `config.yaml pricing.${model}`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      problems.push(
        `${where}: expected {input, output} in USD per million tokens, got ${JSON.stringify(entry)}.`,
      );
      continue;
    }
    const fields = entry as Record<string, unknown>;
    const read = (field: "input" | "output" | "cache_read" | "cache_write"): number | null | undefined => {
      const value = fields[field];
      if (value === undefined && (field === "cache_read" || field === "cache_write")) return undefined;
      const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
      if (typeof n === "number" && Number.isFinite(n) && n >= 0) return n;
      problems.push(
        `${where}.${field}: expected a number of USD per million tokens (0 or more), got ${JSON.stringify(value) ?? "nothing"}.`,
      );
      return null;
    };
    const input = read("input");
    const output = read("output");
    const cacheRead = read("cache_read");
    const cacheWrite = read("cache_write");
    if (input == null || output == null || cacheRead === null || cacheWrite === null) continue;
    overrides[model] = {
      input,
      output,
      ...(cacheRead !== undefined ? { cache_read: cacheRead } : {}),
      ...(cacheWrite !== undefined ? { cache_write: cacheWrite } : {}),
    };
  }
  return { overrides, problems };
}

function overrideTable(overrides: PricingOverrides): Map<string, ModelPrice> {
  const table = new Map<string, ModelPrice>();
  // Normalised forms first so an entry written exactly as the model id wins over them.
  for (const [key, price] of Object.entries(overrides)) {
    const name = normalizeModelId(key);
    if (!name.free) table.set(name.undated, price);
  }
  for (const [key, price] of Object.entries(overrides)) table.set(key.trim().toLowerCase(), price);
  return table;
}

export interface PriceLookup {
  price: ModelPrice;
  source: "official_docs_snapshot" | "user_override";
  /** The catalog or config key that matched. */
  key: string;
}

/**
 * The price of `model`: a config.yaml override (matched on the id as written, then normalised)
 * before the catalog; `:free` variants cost nothing. Undefined for a model neither knows.
 */
export function lookupPrice(model: string, overrides: PricingOverrides = {}): PriceLookup | undefined {
  if (model.trim() === "") return undefined;
  const name = normalizeModelId(model);
  const table = overrideTable(overrides);
  const raw = model.trim().toLowerCase();
  const exact = table.get(raw);
  if (exact) return { price: exact, source: "user_override", key: raw };
  // A `:free` id is only overridden by an entry naming it exactly, never by the paid model's price.
  const overridden = name.free ? undefined : matchTable(table, name);
  if (overridden) return { price: overridden.value, source: "user_override", key: overridden.key };
  if (name.free) {
    return {
      price: { input: 0, output: 0, cache_read: 0, cache_write: 0 },
      source: "official_docs_snapshot",
      key: `${name.id}:free`,
    };
  }
  const listed = matchTable(CATALOG_TABLE, name);
  return listed ? { price: listed.value, source: "official_docs_snapshot", key: listed.key } : undefined;
}

/**
 * The price for `model` (config overrides from `config.pricing` first), or undefined when unknown.
 * `provider` is accepted for call sites that have one; prices do not depend on it today.
 */
export function priceFor(
  model: string,
  _provider?: string,
  config?: { pricing?: unknown },
): ModelPrice | undefined {
  return lookupPrice(model, parsePricingOverrides(config?.pricing).overrides)?.price;
}

const count = (n: number | undefined): number =>
  typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0;

/**
 * USD for one usage report at `price`. `usage.inputTokens` is the whole prompt: the uncached part
 * is billed at `input`, cache reads at `cache_read`, cache writes at `cache_write`; output (which
 * includes reasoning tokens) at `output`. Negative or non-finite counts count as 0.
 */
export function estimateCost(usage: Usage, price: ModelPrice): number {
  const input = count(usage.inputTokens);
  const cacheRead = count(usage.cacheReadTokens);
  const cacheWrite = count(usage.cacheWriteTokens);
  const output = count(usage.outputTokens);
  const long = price.long_context;
  const rates = long && input > long.threshold ? { ...long } : price;
  const readRate = rates.cache_read ?? rates.input * 0.1;
  const writeRate = rates.cache_write ?? rates.input * 1.25;
  const uncached = Math.max(0, input - cacheRead - cacheWrite);
  return (
    (uncached * rates.input + cacheRead * readRate + cacheWrite * writeRate + output * rates.output) / 1e6
  );
}

/** Where a session's tokens are billed. */
export interface BillingRoute {
  model: string;
  /** Canonical provider id (`openrouter`, `anthropic`, `custom`, `lmstudio`, `openai-codex`…). */
  provider?: string | undefined;
  baseUrl?: string | undefined;
  overrides?: PricingOverrides | undefined;
}

export interface CostEstimate {
  /** USD; null when the price is unknown. */
  usd: number | null;
  status: CostStatus;
  source: CostSource;
  /** What priced it (`PRICING_VERSION`, `user-override`, `local`, `included-route`); null when unknown. */
  pricingVersion: string | null;
}

/** Providers that bill a subscription rather than tokens (as Python Hermes treats them). */
const SUBSCRIPTION_PROVIDERS = new Set(["openai-codex"]);
/** Providers that run the model on the user's own machine. */
const LOCAL_PROVIDERS = new Set([
  "lmstudio",
  "lm-studio",
  "ollama",
  "llamacpp",
  "llama.cpp",
  "vllm",
  "local",
]);

/** True for a base URL on this machine or the local network name space (`localhost`, `127.x`, `::1`, `*.local`). */
export function isLocalBaseUrl(baseUrl: string | undefined): boolean {
  if (!baseUrl) return false;
  let host: string;
  try {
    host = new URL(baseUrl).hostname.toLowerCase();
  } catch {
    return false;
  }
  host = host.replace(/^\[|\]$/g, "");
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host.endsWith(".local") ||
    host === "::1" ||
    host === "0.0.0.0" ||
    /^127\./.test(host)
  );
}

/**
 * What one usage report cost on `route`. Order: a config.yaml override; a subscription route
 * (`included`, $0); a local runtime or a localhost endpoint (`included`, $0: nothing is invoiced;
 * a local proxy in front of a paid API needs a `pricing:` entry); the catalog (`estimated`);
 * otherwise `unknown` with a null amount.
 */
export function estimateUsageCost(usage: Usage, route: BillingRoute): CostEstimate {
  const provider = (route.provider ?? "").trim().toLowerCase();
  const overrides = route.overrides ?? {};
  const overridden = Object.keys(overrides).length > 0 ? lookupPrice(route.model, overrides) : undefined;
  if (overridden?.source === "user_override") {
    return {
      usd: estimateCost(usage, overridden.price),
      status: "estimated",
      source: "user_override",
      pricingVersion: OVERRIDE_PRICING_VERSION,
    };
  }
  if (SUBSCRIPTION_PROVIDERS.has(provider)) {
    return { usd: 0, status: "included", source: "none", pricingVersion: "included-route" };
  }
  if (LOCAL_PROVIDERS.has(provider) || isLocalBaseUrl(route.baseUrl)) {
    return { usd: 0, status: "included", source: "none", pricingVersion: "local" };
  }
  const listed = lookupPrice(route.model);
  if (!listed) return { usd: null, status: "unknown", source: "none", pricingVersion: null };
  return {
    usd: estimateCost(usage, listed.price),
    status: "estimated",
    source: "official_docs_snapshot",
    pricingVersion: PRICING_VERSION,
  };
}
