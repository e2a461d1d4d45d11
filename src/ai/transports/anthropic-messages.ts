/**
 * Transport for the Anthropic Messages API (`api_mode: anthropic_messages`): Anthropic itself and
 * Anthropic-compatible endpoints (MiniMax, proxies), over the official `@anthropic-ai/sdk`. The SDK
 * is imported on first use, not at module load, because this module sits on the CLI's start-up
 * path. SDK retries are off: retry policy belongs to the caller, driven by `ProviderError`'s fields.
 *
 * Request conversion lives in `anthropic-convert.ts`, response assembly in `anthropic-assembler.ts`.
 */
import { createRequire } from "node:module";
import type Anthropic from "@anthropic-ai/sdk";
import type { Middleware } from "@anthropic-ai/sdk";
import { type ChatRequest, ProviderError, type StreamEvent, type Transport } from "../types.js";
import { AnthropicAssembler } from "./anthropic-assembler.js";
import { buildAnthropicBody, type CacheTtl } from "./anthropic-convert.js";
import { abortError, parseRetryAfter } from "./chat-completions.js";
import { DEFAULT_STALL_MS } from "./stall.js";

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

interface Ctx {
  getClient: () => Promise<{ sdk: AnthropicModule; client: Anthropic }>;
  options: AnthropicTransportOptions;
  baseUrl: string;
}

/** A transport speaking the Anthropic Messages API. Creating it loads nothing; the SDK loads on first stream. */
export function createAnthropicTransport(options: AnthropicTransportOptions): Transport {
  const baseUrl = apiRoot(options.baseUrl);
  let clientPromise: Promise<{ sdk: AnthropicModule; client: Anthropic }> | undefined;
  const ctx: Ctx = {
    options,
    baseUrl,
    getClient: () => {
      clientPromise ??= loadSdk().then((sdk) => ({ sdk, client: makeClient(sdk, options, baseUrl) }));
      return clientPromise;
    },
  };
  return { apiMode: "anthropic_messages", stream: (request, signal) => runRequest(ctx, request, signal) };
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
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

async function* runRequest(
  ctx: Ctx,
  request: ChatRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<StreamEvent> {
  if (signal?.aborted) throw abortError(signal);
  const { sdk, client } = await ctx.getClient();
  const { options, baseUrl } = ctx;
  const streaming = options.stream ?? true;
  const body = buildAnthropicBody(request, {
    promptCaching: options.promptCaching ?? true,
    cacheTtl: options.cacheTtl ?? "5m",
    stream: streaming,
  });
  const assembler = new AnthropicAssembler();
  // One controller per request: the caller's signal and the stall watchdog both abort it.
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  const stallMs = options.stallTimeoutMs ?? DEFAULT_STALL_MS;
  const watchdog = streaming && stallMs > 0 ? new Watchdog(stallMs, () => controller.abort()) : undefined;
  const requestOptions = {
    signal: controller.signal,
    ...(watchdog ? { middleware: [watchBody(watchdog)] } : {}),
  };
  try {
    // `post` rather than `messages.create`: the body is already in wire shape, and `create` writes
    // model-deprecation warnings to the console on every request, across the user's output.
    if (streaming) {
      watchdog?.start();
      const stream = await client.post<AsyncIterable<unknown>>(MESSAGES_PATH, {
        body,
        stream: true,
        ...requestOptions,
      });
      for await (const event of stream) {
        const events = assembler.addEvent(event);
        // A slow consumer is not a stalled server.
        watchdog?.pause();
        yield* events;
        watchdog?.resume();
      }
    } else {
      const message = await client.post<unknown>(MESSAGES_PATH, { body, ...requestOptions });
      checkFullMessage(message, baseUrl);
      yield* assembler.addMessage(message);
    }
  } catch (err) {
    const error = toProviderError(
      err,
      sdk,
      baseUrl,
      signal,
      watchdog?.fired ?? false,
      stallMs,
      assembler.hasContent,
    );
    // The classifier reads `baseUrl` to tell providers apart.
    throw error instanceof ProviderError ? Object.assign(error, { baseUrl }) : error;
  } finally {
    watchdog?.stop();
    signal?.removeEventListener("abort", onAbort);
  }
  // The SDK ends a stream quietly when it is aborted, so the signal has to be checked here.
  if (signal?.aborted) throw abortError(signal);
  if (watchdog?.fired) throw Object.assign(stallError(baseUrl, stallMs, assembler.hasContent), { baseUrl });
  if (!assembler.finished) {
    throw Object.assign(
      new ProviderError(
        `The stream from ${baseUrl} ended before the model finished its answer (no stop_reason); the connection probably dropped.`,
        { transport: true, partial: assembler.hasContent },
      ),
      { baseUrl },
    );
  }
  yield* assembler.finishEvents();
}

/**
 * Fires `onStall` when `touch` has not been called for `ms`, except while paused. Bytes, not
 * events, reset it, so the server's `ping` events keep a slow answer alive.
 */
class Watchdog {
  fired = false;
  private timer: NodeJS.Timeout | undefined;
  private paused = false;

  constructor(
    private readonly ms: number,
    private readonly onStall: () => void,
  ) {}

  start(): void {
    this.touch();
  }

  touch(): void {
    clearTimeout(this.timer);
    if (this.paused || this.fired) return;
    this.timer = setTimeout(() => {
      this.fired = true;
      this.onStall();
    }, this.ms);
  }

  pause(): void {
    this.paused = true;
    clearTimeout(this.timer);
  }

  resume(): void {
    this.paused = false;
    this.touch();
  }

  stop(): void {
    this.paused = true;
    clearTimeout(this.timer);
  }
}

/** Middleware that touches the watchdog for the response headers and every chunk of the body. */
function watchBody(watchdog: Watchdog): Middleware {
  return async (request, next) => {
    const response = await next(request);
    watchdog.touch();
    if (!response.ok || !response.body) return response;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, out) {
          watchdog.touch();
          out.enqueue(chunk);
        },
      }),
    );
    return new Response(body, response);
  };
}

function stallError(baseUrl: string, stallMs: number, partial: boolean): ProviderError {
  return new ProviderError(
    `The stream from ${baseUrl} stalled: no data for ${Math.round(stallMs / 1000)}s, so the request timed out and was aborted.`,
    { transport: true, partial, stalled: true },
  );
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
function checkFullMessage(message: unknown, baseUrl: string): void {
  const record = typeof message === "object" && message !== null ? (message as Record<string, unknown>) : {};
  if (Array.isArray(record["content"])) return;
  const body = (JSON.stringify(message) ?? String(message)).slice(0, 2000);
  const error = record["error"];
  const type =
    typeof error === "object" && error !== null ? (error as Record<string, unknown>)["type"] : undefined;
  const status = typeof type === "string" ? STREAM_ERROR_STATUS[type] : undefined;
  throw new ProviderError(
    record["type"] === "error"
      ? `The provider at ${baseUrl} returned an error: ${clip(body, 500)}`
      : `The response from ${baseUrl} has no content; it is not a Messages API message.`,
    { body, ...(status !== undefined ? { status } : {}) },
  );
}

/** Response headers as a plain record (lower-case names), for the classifier's rate-limit reading. */
function headerRecord(headers: Headers | undefined): Record<string, string> | undefined {
  if (!headers) return undefined;
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

function toProviderError(
  err: unknown,
  sdk: AnthropicModule,
  baseUrl: string,
  signal: AbortSignal | undefined,
  stalled: boolean,
  stallMs: number,
  partial: boolean,
): Error {
  if (signal?.aborted) return abortError(signal);
  if (stalled) return stallError(baseUrl, stallMs, partial);
  if (err instanceof ProviderError) return err;
  if (err instanceof sdk.APIConnectionError) {
    const timedOut = err instanceof sdk.APIConnectionTimeoutError;
    const cause = err.cause instanceof Error ? `: ${describe(err.cause)}` : "";
    return new ProviderError(
      timedOut
        ? `The request to ${baseUrl} timed out before the server answered.`
        : `Could not connect to ${baseUrl}${cause}. Is the server running and the base URL right?`,
      { transport: true, partial, cause: err },
    );
  }
  if (err instanceof sdk.APIError) {
    const errorType = err.type ?? undefined;
    // No status means the error arrived as an `error` event inside a 200 stream.
    const status = err.status ?? (errorType ? STREAM_ERROR_STATUS[errorType] : undefined);
    // A non-JSON error body only survives in the SDK's message, behind "<status> ".
    const body =
      err.error === undefined
        ? err.message.replace(/^\d{3} /, "")
        : (JSON.stringify(err.error) ?? String(err.error));
    const detail = err.apiMessage || body;
    const headers = headerRecord(err.headers);
    const retryAfterMs = parseRetryAfter(err.headers);
    const summary = status !== undefined ? `HTTP ${status}` : "an error";
    const error = new ProviderError(
      `The provider at ${baseUrl} answered with ${summary}: ${clip(detail, 500)}`,
      {
        ...(status !== undefined ? { status } : {}),
        body,
        partial,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        cause: err,
      },
    );
    return headers ? Object.assign(error, { headers }) : error;
  }
  // Anything else escaping the SDK mid-stream is the wire failing: undici's "terminated" (the
  // server closed the socket), ECONNRESET, "socket hang up", or a chunk cut short.
  return new ProviderError(`The connection to ${baseUrl} failed mid-response: ${describe(err)}`, {
    transport: true,
    partial,
    cause: err,
  });
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause =
    err.cause instanceof Error && err.cause.message !== err.message ? ` (${err.cause.message})` : "";
  return `${err.message}${cause}`;
}
