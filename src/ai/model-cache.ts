/**
 * The providers' own model lists, cached in `<home>/provider_models_cache.json` (upstream's file
 * name) so `hermes model`, `/model` and `hermes setup` do not ask the endpoint every time. One
 * entry per provider and base URL; an entry older than `maxAgeSeconds` is fetched again, and a
 * stale entry is still offered (marked stale) when the endpoint cannot be reached.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFileSync } from "../util/atomic-write.js";
import { type ListedModel, type ListModelsInput, listModels, type ModelListing } from "./model-listing.js";

export const MODEL_CACHE_FILE = "provider_models_cache.json";
/** An hour, as upstream's model catalog TTL. */
export const MODEL_CACHE_MAX_AGE_SECONDS = 3600;

interface CacheEntry {
  provider: string;
  base_url: string;
  fetched_at: number;
  models: Array<{ id: string; context_length?: number }>;
}

interface CacheFile {
  version: 1;
  entries: Record<string, CacheEntry>;
}

export type CachedListing =
  | { ok: true; models: ListedModel[]; fetchedAt: number; source: "endpoint" | "cache" }
  | {
      ok: false;
      failure: Extract<ModelListing, { ok: false }>;
      /** What the cache still holds for this endpoint, however old. */
      stale?: { models: ListedModel[]; fetchedAt: number };
    };

export interface CachedListInput extends ListModelsInput {
  home: string;
  /** Canonical provider id; part of the cache key with the base URL. */
  provider: string;
  /** Epoch seconds. */
  now?: () => number;
  maxAgeSeconds?: number;
  /** Ask the endpoint even when the cache is fresh (`/model --refresh`). */
  refresh?: boolean;
}

export function modelCacheKey(provider: string, baseUrl: string): string {
  return `${provider}|${baseUrl.replace(/\/+$/, "")}`;
}

/** Reads the cache; a missing or unreadable file is an empty cache (it is only a cache). */
function readCache(home: string): CacheFile {
  try {
    const parsed = JSON.parse(readFileSync(join(home, MODEL_CACHE_FILE), "utf8")) as Partial<CacheFile>;
    if (parsed && typeof parsed.entries === "object" && parsed.entries !== null) {
      return { version: 1, entries: parsed.entries };
    }
  } catch {
    // absent or damaged: start again
  }
  return { version: 1, entries: {} };
}

function toListed(entry: CacheEntry): ListedModel[] {
  return entry.models
    .filter((m) => typeof m?.id === "string" && m.id !== "")
    .map((m) =>
      typeof m.context_length === "number" ? { id: m.id, contextLength: m.context_length } : { id: m.id },
    );
}

/** The cached list for an endpoint, however old, or undefined. */
export function cachedModels(
  home: string,
  provider: string,
  baseUrl: string,
): { models: ListedModel[]; fetchedAt: number } | undefined {
  const entry = readCache(home).entries[modelCacheKey(provider, baseUrl)];
  return entry ? { models: toListed(entry), fetchedAt: entry.fetched_at } : undefined;
}

/**
 * The endpoint's models: from the cache when fresh, else from `GET /models` (stored on success).
 * Never throws; a cache that cannot be written only means the next call asks again.
 */
export async function listModelsCached(input: CachedListInput): Promise<CachedListing> {
  const now = input.now?.() ?? Date.now() / 1000;
  const key = modelCacheKey(input.provider, input.baseUrl);
  const cache = readCache(input.home);
  const entry = cache.entries[key];
  const maxAge = input.maxAgeSeconds ?? MODEL_CACHE_MAX_AGE_SECONDS;
  if (entry && !input.refresh && now - entry.fetched_at < maxAge && now >= entry.fetched_at) {
    return { ok: true, models: toListed(entry), fetchedAt: entry.fetched_at, source: "cache" };
  }
  const {
    home: _home,
    provider: _provider,
    now: _now,
    maxAgeSeconds: _max,
    refresh: _refresh,
    ...probe
  } = input;
  const listing = await listModels(probe);
  if (!listing.ok) {
    return entry
      ? { ok: false, failure: listing, stale: { models: toListed(entry), fetchedAt: entry.fetched_at } }
      : { ok: false, failure: listing };
  }
  cache.entries[key] = {
    provider: input.provider,
    base_url: input.baseUrl.replace(/\/+$/, ""),
    fetched_at: now,
    models: listing.models.map((m) =>
      m.contextLength === undefined ? { id: m.id } : { id: m.id, context_length: m.contextLength },
    ),
  };
  try {
    atomicWriteFileSync(join(input.home, MODEL_CACHE_FILE), `${JSON.stringify(cache, null, 2)}\n`);
  } catch {
    // A read-only home still lists models; it just asks the endpoint again next time.
  }
  return { ok: true, models: listing.models, fetchedAt: now, source: "endpoint" };
}
