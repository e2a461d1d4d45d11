/**
 * The `openai` SDK client both OpenAI-shaped wires use (chat completions and the Responses API),
 * and how its errors read. The SDK is imported on first use, not at module load, because the
 * transports sit on the CLI's start-up path. SDK retries are off: retry policy belongs to the
 * caller, driven by `ProviderError`'s fields.
 */
import type OpenAI from "openai";
import { VERSION as SDK_VERSION } from "openai/version";
import { httpFetch } from "../../util/http-fetch.js";
import { readSdkError, type WireFailure } from "./wire-failure.js";
import { asRecord } from "./wire-values.js";

export type OpenAIModule = typeof import("openai");

export interface OpenAIClient {
  sdk: OpenAIModule;
  client: OpenAI;
}

export interface OpenAIClientOptions {
  /** Base URL including the version path, e.g. `https://openrouter.ai/api/v1`. */
  baseUrl: string;
  /** Sent as a bearer token; when absent no Authorization header is sent (local servers). */
  apiKey?: string | undefined;
  /** Send the key as it is under this header instead of as a bearer (Azure AI Foundry's `api-key`). */
  apiKeyHeader?: string | undefined;
  headers?: Record<string, string> | undefined;
  /** Time allowed until the response headers arrive. Defaults to the SDK's (10 minutes). */
  timeoutMs?: number | undefined;
  /** A fetch implementation to use instead of the global one (proxies, tests). */
  fetch?: typeof fetch | undefined;
}

let sdkPromise: Promise<OpenAIModule> | undefined;

function loadSdk(): Promise<OpenAIModule> {
  sdkPromise ??= import("openai").catch((err: unknown) => {
    sdkPromise = undefined;
    throw err;
  });
  return sdkPromise;
}

/**
 * Clients by their settings, for the default fetch only. A client holds nothing per request, and
 * making one builds every resource object of the SDK (a measurable part of each API-server
 * conversation, which opens a session and so a transport per request); a server with one provider
 * keeps one client.
 */
const clients = new Map<string, OpenAI>();
const MAX_CLIENTS = 32;

/** Loads the SDK (once per process) and gives a client for `options` (shared for equal settings). */
export async function createOpenAIClient(options: OpenAIClientOptions): Promise<OpenAIClient> {
  const sdk = await loadSdk();
  if (options.fetch) return { sdk, client: makeClient(sdk, options) };
  const key = JSON.stringify([
    options.baseUrl,
    options.apiKey ?? "",
    options.apiKeyHeader ?? "",
    options.headers ?? {},
    options.timeoutMs ?? null,
  ]);
  let client = clients.get(key);
  if (!client) {
    client = makeClient(sdk, options);
    clients.set(key, client);
    if (clients.size > MAX_CLIENTS) {
      const oldest = clients.keys().next().value;
      if (oldest !== undefined) clients.delete(oldest);
    }
  }
  return { sdk, client };
}

function makeClient(sdk: OpenAIModule, options: OpenAIClientOptions): OpenAI {
  // What the SDK sends by default, named here: it builds it from its class's name, which a
  // minified bundle does not keep.
  const headers: Record<string, string | null> = {
    "User-Agent": `OpenAI/JS ${SDK_VERSION}`,
    ...options.headers,
  };
  // The SDK insists on a key; a placeholder plus a removed header sends a keyless request.
  if (!options.apiKey) headers["Authorization"] = null;
  else if (options.apiKeyHeader) {
    // The SDK builds the headers of every request, the direct stream path's included (chat-stream.ts).
    headers[options.apiKeyHeader.toLowerCase()] = options.apiKey;
    headers["Authorization"] = null;
  }
  return new sdk.default({
    apiKey: options.apiKey || "unused",
    baseURL: options.baseUrl,
    maxRetries: 0,
    timeout: options.timeoutMs,
    defaultHeaders: headers,
    // Without these the SDK would pick up OPENAI_ORG_ID / OPENAI_PROJECT_ID / OPENAI_ADMIN_KEY from
    // the environment and send them to whatever provider this is.
    organization: null,
    project: null,
    adminAPIKey: null,
    logLevel: "off",
    // node:http unless the caller brings its own (see util/http-fetch.ts: no WebAssembly parser).
    fetch: options.fetch ?? httpFetch,
  });
}

/**
 * An error the `openai` SDK threw. An error inside a 200 stream has no status; gateways put the
 * real one in the error's `code`, as a number or (Responses API) a code `codeStatus` maps.
 */
export function readOpenAIError(
  err: unknown,
  sdk: OpenAIModule,
  baseUrl: string,
  codeStatus: (code: string | undefined) => number | undefined = () => undefined,
): WireFailure {
  return readSdkError(err, sdk, baseUrl, {
    inBandStatus: (error) => {
      const code = asRecord(error.error)?.["code"];
      return typeof code === "number" ? code : codeStatus(typeof code === "string" ? code : undefined);
    },
  });
}
