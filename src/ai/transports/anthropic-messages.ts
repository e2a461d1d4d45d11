/**
 * Transport for the Anthropic Messages API (`api_mode: anthropic_messages`): Anthropic itself and
 * Anthropic-compatible endpoints (MiniMax, proxies), over the official `@anthropic-ai/sdk`. The SDK
 * is imported on first use, not at module load, because this module sits on the CLI's start-up
 * path. SDK retries are off: retry policy belongs to the caller, driven by `ProviderError`'s fields.
 *
 * Request conversion lives in `anthropic-convert.ts`, response assembly in `anthropic-assembler.ts`;
 * this module is the `WireProtocol` the one transport skeleton (`wire.ts`) runs.
 */
import { createRequire } from "node:module";
import type Anthropic from "@anthropic-ai/sdk";
import type { Middleware } from "@anthropic-ai/sdk";
import { httpFetch } from "../../util/http-fetch.js";
import type { StreamEvent, Transport } from "../types.js";
import { AnthropicAssembler } from "./anthropic-assembler.js";
import { buildAnthropicBody, type CacheTtl } from "./anthropic-convert.js";
import { DEFAULT_STALL_MS } from "./stall.js";
import { createWireTransport, type WireCall, type WireReader } from "./wire.js";
import { clip, readSdkError, type WireFailure } from "./wire-failure.js";
import { asRecord } from "./wire-values.js";

type AnthropicModule = typeof import("@anthropic-ai/sdk");

export interface AnthropicTransportOptions {
  /**
   * The API root, e.g. `https://api.anthropic.com` or `https://api.minimax.io/anthropic`. The SDK
   * appends `/v1/messages`, so a trailing `/v1` is dropped.
   */
  baseUrl: string;
  /**
   * Sent as `x-api-key` (the Messages API's key header, which compatible proxies accept too). A
   * Claude OAuth token (`sk-ant-oat…`) given here is treated as `authToken`.
   */
  apiKey?: string | undefined;
  /**
   * Sent as `Authorization: Bearer`: OAuth access tokens (Claude Code's credentials) and endpoints
   * that want a bearer key (MiniMax). Used only when `apiKey` is absent. A Claude OAuth token also
   * gets the `anthropic-beta: oauth-2025-04-20` header the API requires for it.
   */
  authToken?: string | undefined;
  /** Extra headers (e.g. `anthropic-beta`, `anthropic-version`); they win over the defaults. */
  headers?: Record<string, string> | undefined;
  /** Prompt-cache TTL: "5m" (default, no `ttl` field sent) or "1h". */
  cacheTtl?: CacheTtl | undefined;
  /** Place prompt-cache breakpoints (system + last 3 messages). Default true. */
  promptCaching?: boolean | undefined;
  /** Abort a stream that sends no bytes for this long (default 60 s, 0 turns it off). */
  stallTimeoutMs?: number | undefined;
  /** Time allowed until the response headers arrive (default 10 minutes). */
  timeoutMs?: number | undefined;
  /** Stream with SSE (default) or ask for one JSON body and synthesise the same events from it. */
  stream?: boolean | undefined;
  fetch?: typeof fetch | undefined;
}

const MESSAGES_PATH = "/v1/messages";
const DEFAULT_TIMEOUT_MS = 10 * 60_000;
/** Anthropic's OAuth tokens (Claude Pro/Max, Claude Code) start with this. */
const OAUTH_PREFIX = "sk-ant-oat";
const OAUTH_BETA = "oauth-2025-04-20";

let sdkPromise: Promise<AnthropicModule> | undefined;

/**
 * The SDK is required from node_modules (it is external to the CLI bundle, which only Anthropic
 * users should pay for); `require` rather than `import()` because the bundle runs in a vm.Script,
 * where a dynamic import has no loader.
 */
function loadSdk(): Promise<AnthropicModule> {
  sdkPromise ??= new Promise<AnthropicModule>((resolve) => {
    const require = createRequire(import.meta.url);
    resolve(require("@anthropic-ai/sdk") as AnthropicModule);
  }).catch((err: unknown) => {
    sdkPromise = undefined;
    throw err;
  });
  return sdkPromise;
}

interface AnthropicClient {
  sdk: AnthropicModule;
  client: Anthropic;
}

/** A transport speaking the Anthropic Messages API. Creating it loads nothing; the SDK loads on first stream. */
export function createAnthropicTransport(options: AnthropicTransportOptions): Transport {
  const baseUrl = apiRoot(options.baseUrl);
  const streaming = options.stream ?? true;
  const body = (request: Parameters<typeof buildAnthropicBody>[0]) =>
    buildAnthropicBody(request, {
      promptCaching: options.promptCaching ?? true,
      cacheTtl: options.cacheTtl ?? "5m",
      stream: streaming,
    });
  return createWireTransport<AnthropicClient>({
    apiMode: "anthropic_messages",
    baseUrl,
    streaming,
    stallMs: options.stallTimeoutMs ?? DEFAULT_STALL_MS,
    finishMarker: "no stop_reason",
    createClient: async () => {
      const sdk = await loadSdk();
      return { sdk, client: makeClient(sdk, options, baseUrl) };
    },
    reader: () => new AnthropicReader(baseUrl),
    // `post` rather than `messages.create`: the body is already in wire shape, and `create` writes
    // model-deprecation warnings to the console on every request, across the user's output.
    openStream: ({ client }, request, call) =>
      client.post<AsyncIterable<unknown>>(MESSAGES_PATH, {
        body: body(request),
        stream: true,
        signal: call.signal,
        middleware: [watchBytes(call)],
      }),
    fullCall: ({ client }, request, { signal }) =>
      client.post<unknown>(MESSAGES_PATH, { body: body(request), signal }),
    readError: (err, { sdk }) =>
      readSdkError(err, sdk, baseUrl, {
        // No status means the error arrived as an `error` event inside a 200 stream.
        inBandStatus: (error) => (error.type ? STREAM_ERROR_STATUS[error.type] : undefined),
        detail: (error) => error.apiMessage,
      }),
  });
}

/** The base URL without trailing slashes or `/v1`, which the SDK adds itself. */
export function apiRoot(baseUrl: string): string {
  return baseUrl.trim().replace(/\/+$/, "").replace(/\/v1$/, "");
}

/**
 * The headers that carry the credential: exactly one of `x-api-key` or `Authorization`, with the
 * other removed (null) so nothing from the environment rides along.
 */
export function authHeaders(
  apiKey: string | undefined,
  authToken: string | undefined,
): Record<string, string | null> {
  const key = apiKey && !apiKey.startsWith(OAUTH_PREFIX) ? apiKey : undefined;
  const token = key ? undefined : apiKey || authToken;
  if (key) return { "x-api-key": key, authorization: null };
  if (token) {
    const headers: Record<string, string | null> = { authorization: `Bearer ${token}`, "x-api-key": null };
    if (token.startsWith(OAUTH_PREFIX)) headers["anthropic-beta"] = OAUTH_BETA;
    return headers;
  }
  return { authorization: null, "x-api-key": null };
}

function makeClient(sdk: AnthropicModule, options: AnthropicTransportOptions, baseUrl: string): Anthropic {
  const auth = authHeaders(options.apiKey, options.authToken);
  const headers: Record<string, string | null> = { ...auth };
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    const key = name.toLowerCase();
    const beta = auth["anthropic-beta"];
    // Betas add up: the OAuth beta stays when the caller asks for others.
    headers[key] = key === "anthropic-beta" && beta ? `${beta},${value}` : value;
  }
  return new sdk.default({
    // Passing a credential stops the SDK from reading ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN or
    // its credential files; the real credential travels in the headers above.
    apiKey: "unused",
    baseURL: baseUrl,
    maxRetries: 0,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    defaultHeaders: headers,
    logLevel: "off",
    openTelemetry: false,
    // node:http unless the caller brings its own (see util/http-fetch.ts: no WebAssembly parser).
    fetch: options.fetch ?? httpFetch,
  });
}

/**
 * Middleware that reports the response headers and every chunk of the body as progress: the SDK
 * swallows the server's `ping` events, which are what keeps a slow answer alive.
 */
function watchBytes(call: WireCall): Middleware {
  return async (request, next) => {
    const response = await next(request);
    call.progress();
    if (!response.ok || !response.body) return response;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, out) {
          call.progress();
          out.enqueue(chunk);
        },
      }),
    );
    return new Response(body, response);
  };
}

/** Reads one Messages API response through the assembler. */
class AnthropicReader implements WireReader {
  private readonly assembler = new AnthropicAssembler();

  constructor(private readonly baseUrl: string) {}

  get hasContent(): boolean {
    return this.assembler.hasContent;
  }

  get finished(): boolean {
    return this.assembler.finished;
  }

  event(raw: unknown): StreamEvent[] {
    return this.assembler.addEvent(raw);
  }

  response(message: unknown): StreamEvent[] | WireFailure {
    return fullMessageFailure(message, this.baseUrl) ?? this.assembler.addMessage(message);
  }

  finishFailure(): undefined {
    return undefined;
  }

  finishEvents(): StreamEvent[] {
    return this.assembler.finishEvents();
  }
}

/**
 * HTTP statuses for the error types Anthropic sends inside a 200 response (`event: error` in a
 * stream), so the retry policy sees an overloaded stream as it would see a 529.
 */
const STREAM_ERROR_STATUS: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** Some gateways answer HTTP 200 with an error object, or something that is not a message at all. */
function fullMessageFailure(message: unknown, baseUrl: string): WireFailure | undefined {
  const record = asRecord(message) ?? {};
  if (Array.isArray(record["content"])) return undefined;
  const body = (JSON.stringify(message) ?? String(message)).slice(0, 2000);
  const type = asRecord(record["error"])?.["type"];
  const status = typeof type === "string" ? STREAM_ERROR_STATUS[type] : undefined;
  return {
    message:
      record["type"] === "error"
        ? `The provider at ${baseUrl} returned an error: ${clip(body, 500)}`
        : `The response from ${baseUrl} has no content; it is not a Messages API message.`,
    body,
    ...(status !== undefined ? { status } : {}),
  };
}
