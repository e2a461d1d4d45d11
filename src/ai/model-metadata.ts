/**
 * The context window a provider states for a model in its OpenAI-style model listing
 * (`GET <base>/models`): OpenRouter's `context_length`, vLLM's `max_model_len`, llama.cpp's
 * `meta.n_ctx_train`, others' `context_window`. Used when neither config.yaml, the learnt cache nor
 * the catalog knows the model (local servers above all); the answer is cached by the caller.
 */

import { httpFetch } from "../util/http-fetch.js";
import { keyHeaders } from "./providers.js";

/** Keys providers use for a model's context window, in the order they are trusted. */
const WINDOW_KEYS = ["context_length", "max_model_len", "context_window", "max_context_length"] as const;

function windowOf(entry: Record<string, unknown>): number | undefined {
  const candidates: unknown[] = WINDOW_KEYS.map((k) => entry[k]);
  const top = entry["top_provider"];
  if (top && typeof top === "object") candidates.push((top as Record<string, unknown>)["context_length"]);
  const meta = entry["meta"];
  if (meta && typeof meta === "object") candidates.push((meta as Record<string, unknown>)["n_ctx_train"]);
  for (const value of candidates) {
    if (typeof value === "number" && Number.isFinite(value) && value >= 1024) return Math.floor(value);
  }
  return undefined;
}

/**
 * The window stated for `model` in a model listing body (`{data: [...]}`), matching the id
 * exactly, else without a vendor prefix; undefined when the listing does not say.
 */
export function contextLengthFromListing(listing: unknown, model: string): number | undefined {
  const data = (listing as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return undefined;
  const entries = data.filter((e): e is Record<string, unknown> => typeof e === "object" && e !== null);
  const bare = (id: string) => id.toLowerCase().replace(/^.*\//, "");
  const exact = entries.find((e) => e["id"] === model);
  const loose = exact ?? entries.find((e) => typeof e["id"] === "string" && bare(e["id"]) === bare(model));
  return loose ? windowOf(loose) : undefined;
}

/**
 * What an endpoint's model listing said about a model: `answered` when the endpoint gave an HTTP
 * answer at all (an error status or a listing without the model included, which is "not stated"),
 * false when it could not be asked (refused, timed out): only an answer is worth remembering.
 */
export interface StatedWindow {
  answered: boolean;
  tokens?: number | undefined;
}

/** Asks the endpoint's model listing for `model`'s window; never throws. */
export async function fetchStatedWindow(input: {
  baseUrl: string;
  apiKey?: string | undefined;
  apiKeyHeader?: string | undefined;
  model: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}): Promise<StatedWindow> {
  // node:http, like the model calls it precedes (util/http-fetch.ts: no WebAssembly parser).
  const doFetch = input.fetch ?? httpFetch;
  let response: Response;
  try {
    response = await doFetch(`${input.baseUrl.replace(/\/+$/, "")}/models`, {
      headers: keyHeaders(input.apiKey, input.apiKeyHeader),
      signal: AbortSignal.timeout(input.timeoutMs ?? 3000),
    });
  } catch {
    return { answered: false };
  }
  if (!response.ok) return { answered: true };
  try {
    return { answered: true, tokens: contextLengthFromListing(await response.json(), input.model) };
  } catch {
    // A body cut short or not JSON: the endpoint answered but said nothing usable.
    return { answered: true };
  }
}

/**
 * Asks the endpoint's model listing for `model`'s window. Undefined on any failure (no listing,
 * an error status, a timeout of `timeoutMs`, a body that does not say): the caller falls back.
 */
export async function fetchContextLength(
  input: Parameters<typeof fetchStatedWindow>[0],
): Promise<number | undefined> {
  return (await fetchStatedWindow(input)).tokens;
}

/** How long an endpoint's stated window is remembered in this process (model-cache.ts keeps lists an hour too). */
export const STATED_CONTEXT_TTL_MS = 60 * 60 * 1000;

/**
 * `fetchStatedWindow` asked once per endpoint and model, then answered from memory for `ttlMs`
 * (the answer "not stated" included), with concurrent askers sharing one request. A server that
 * opens a session per conversation (the API server, the gateway) would otherwise send the
 * endpoint a `GET /models` for every conversation.
 */
export class StatedContextLengths {
  private readonly known = new Map<string, { at: number; tokens: Promise<StatedWindow> }>();

  constructor(
    private readonly ask: typeof fetchStatedWindow = fetchStatedWindow,
    private readonly clock: () => number = Date.now,
    private readonly ttlMs = STATED_CONTEXT_TTL_MS,
  ) {}

  get(input: Parameters<typeof fetchStatedWindow>[0]): Promise<StatedWindow> {
    // The key is not part of it: one endpoint states the same window whoever asks.
    const key = `${input.baseUrl.replace(/\/+$/, "")}\u0000${input.model}`;
    const now = this.clock();
    const hit = this.known.get(key);
    if (hit && now - hit.at < this.ttlMs) return hit.tokens;
    const tokens = this.ask(input);
    this.known.set(key, { at: now, tokens });
    return tokens;
  }
}

/** The process's own memory of stated windows (see `StatedContextLengths`). */
export const statedContextLengths = new StatedContextLengths();
