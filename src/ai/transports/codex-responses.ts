/**
 * Transport for the OpenAI Responses API (`api_mode: codex_responses`: OpenAI, Codex, xAI, GitHub
 * Models and Responses-compatible relays) over the official `openai` SDK, always streaming. The SDK
 * is imported on first use, not at module load, because this module sits on the CLI's start-up
 * path. SDK retries are off: retry policy belongs to the caller, driven by `ProviderError`'s fields.
 *
 * Stateless by default (`store: false`): every request carries the whole conversation, and the
 * model's reasoning survives between turns as the encrypted reasoning items the API returns, kept
 * on the assistant message (`codex_reasoning_items`) and replayed on the next request.
 */
import type OpenAI from "openai";
import type {
  ResponseCreateParamsStreaming,
  ResponseStreamEvent,
} from "openai/resources/responses/responses";
import { type ChatRequest, ProviderError, type StreamEvent, type Transport } from "../types.js";
import { abortError, parseRetryAfter } from "./chat-completions.js";
import { ResponsesAssembler } from "./responses-assembler.js";
import { buildResponsesBody } from "./responses-input.js";
import { DEFAULT_STALL_MS, StallError, stallSeconds, withinStall } from "./stall.js";
import { asRecord } from "./wire-values.js";

type OpenAIModule = typeof import("openai");

export interface ResponsesTransportOptions {
  /** Base URL including the version path, e.g. `https://api.openai.com/v1`; requests go to `/responses`. */
  baseUrl: string;
  /** Sent as a bearer token; when absent no Authorization header is sent. */
  apiKey?: string | undefined;
  /** Extra headers sent with every request. */
  headers?: Record<string, string> | undefined;
  /**
   * Longest silence allowed while waiting for the response headers and then between two stream
   * events, in milliseconds (default 60 000). Past it the request is cut and a transport
   * `ProviderError` is thrown, which the retry policy repeats.
   */
  stallTimeoutMs?: number | undefined;
  /**
   * `store: true` lets the provider keep responses; reasoning items are then replayed by id.
   * Default false (stateless): reasoning is replayed as encrypted content, nothing is kept server-side.
   */
  store?: boolean | undefined;
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

interface Context {
  getClient: () => Promise<{ sdk: OpenAIModule; client: OpenAI }>;
  baseUrl: string;
  stallMs: number;
  store: boolean;
}

/** A `Transport` with `apiMode: "codex_responses"`. Creating it loads nothing; the SDK loads on the first request. */
export function createResponsesTransport(options: ResponsesTransportOptions): Transport {
  let clientPromise: Promise<{ sdk: OpenAIModule; client: OpenAI }> | undefined;
  const ctx: Context = {
    getClient: () => {
      clientPromise ??= loadSdk().then((sdk) => ({ sdk, client: makeClient(sdk, options) }));
      return clientPromise;
    },
    baseUrl: options.baseUrl,
    stallMs: options.stallTimeoutMs ?? DEFAULT_STALL_MS,
    store: options.store ?? false,
  };
  return {
    apiMode: "codex_responses",
    stream: (request, signal) => runRequest(ctx, request, signal),
  };
}

function makeClient(sdk: OpenAIModule, options: ResponsesTransportOptions): OpenAI {
  const headers: Record<string, string | null> = { ...options.headers };
  // The SDK insists on a key; a placeholder plus a removed header sends a keyless request.
  if (!options.apiKey) headers["Authorization"] = null;
  return new sdk.default({
    apiKey: options.apiKey || "unused",
    baseURL: options.baseUrl,
    maxRetries: 0,
    defaultHeaders: headers,
    // Keep OPENAI_ORG_ID / OPENAI_PROJECT_ID / OPENAI_ADMIN_KEY from the environment off this provider.
    organization: null,
    project: null,
    adminAPIKey: null,
    logLevel: "off",
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

async function* runRequest(
  ctx: Context,
  request: ChatRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<StreamEvent> {
  if (signal?.aborted) throw abortError(signal);
  const { sdk, client } = await ctx.getClient();
  const body = buildResponsesBody(request, { store: ctx.store });
  const assembler = new ResponsesAssembler();
  // One controller for the caller's abort and the stall watchdog.
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  let settled = false;
  try {
    const stream = await withinStall(
      client.responses.create(body as unknown as ResponseCreateParamsStreaming, {
        signal: controller.signal,
      }),
      ctx.stallMs,
      controller,
    );
    const iterator: AsyncIterator<ResponseStreamEvent> = stream[Symbol.asyncIterator]();
    while (!signal?.aborted) {
      const next = await withinStall(iterator.next(), ctx.stallMs, controller);
      if (next.done) break;
      yield* assembler.addEvent(next.value);
      const failure = streamFailure(assembler, ctx.baseUrl);
      if (failure) throw failure;
      if (assembler.terminal) {
        // Nothing may follow the terminal event; close the stream rather than wait for the server to.
        await iterator.return?.();
        break;
      }
    }
    settled = true;
  } catch (err) {
    throw toProviderError(err, sdk, ctx, signal, assembler.hasContent);
  } finally {
    signal?.removeEventListener("abort", onAbort);
    // Stops the HTTP stream when the caller stopped early or anything failed.
    if (!settled) controller.abort();
  }
  // The SDK ends a stream quietly when it is aborted, so the signal has to be checked here.
  if (signal?.aborted) throw abortError(signal);
  if (!assembler.terminal) {
    throw new ProviderError(
      `The stream from ${ctx.baseUrl} ended before the response finished (no response.completed event); the connection probably dropped.`,
      { transport: true, partial: assembler.hasContent },
    );
  }
  yield* assembler.finishEvents();
}

/**
 * A failure the stream reported in-band (an `error` event or `response.failed`), which arrives
 * inside an HTTP 200 and so has no status of its own.
 */
function streamFailure(assembler: ResponsesAssembler, baseUrl: string): ProviderError | undefined {
  const terminal = assembler.terminal;
  const error = assembler.error ?? (terminal?.kind === "failed" ? (terminal.error ?? {}) : undefined);
  if (!error) return undefined;
  // Code and message sit at the top level of an `error` event and of `response.error`; some
  // relays nest them one level deeper, under `error`.
  const nested = asRecord(error["error"]);
  const source = nested ?? error;
  const code = typeof source["code"] === "string" ? source["code"] : undefined;
  const message = typeof source["message"] === "string" ? source["message"] : "no message";
  const { type: _type, sequence_number: _seq, ...rest } = error;
  const body = JSON.stringify(nested ? rest : { error: rest });
  const status = statusForCode(code);
  return new ProviderError(
    `The provider at ${baseUrl} failed the response${code ? ` (${code})` : ""}: ${clip(message, 500)}`,
    { ...(status !== undefined ? { status } : {}), body, partial: assembler.hasContent },
  );
}

/**
 * The HTTP status the same failure would have had as a plain HTTP answer, so the retry policy
 * treats an in-stream `rate_limit_exceeded` like a 429 and a `server_error` like a 500. Unknown
 * codes get none (not retried).
 */
export function statusForCode(code: string | undefined): number | undefined {
  if (!code) return undefined;
  switch (code) {
    case "rate_limit_exceeded":
    case "insufficient_quota":
      return 429;
    case "server_error":
    case "internal_error":
      return 500;
    case "server_is_overloaded":
    case "service_unavailable":
      return 503;
    case "vector_store_timeout":
      return 504;
    case "context_length_exceeded":
    case "invalid_prompt":
      return 400;
    default:
      return /^(invalid_|image_|unsupported_|empty_image|failed_to_download)/.test(code) ? 400 : undefined;
  }
}

function toProviderError(
  err: unknown,
  sdk: OpenAIModule,
  ctx: Context,
  signal: AbortSignal | undefined,
  partial: boolean,
): Error {
  const { baseUrl } = ctx;
  if (signal?.aborted) return abortError(signal);
  if (err instanceof ProviderError) return err;
  if (err instanceof StallError) {
    const seconds = stallSeconds(ctx.stallMs);
    return new ProviderError(
      partial
        ? `The stream from ${baseUrl} stalled: no data for ${seconds} after it started.`
        : `The request to ${baseUrl} timed out: no response for ${seconds}.`,
      { transport: true, partial, stalled: true, cause: err },
    );
  }
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
    const errorObject = asRecord(err.error);
    const code = errorObject?.["code"];
    // No status means the error arrived inside a 200 stream; gateways put the real status in `code`.
    const status =
      err.status ??
      (typeof code === "number" ? code : statusForCode(typeof code === "string" ? code : undefined));
    // A non-JSON error body only survives in the SDK's message, behind "<status> ".
    const body =
      err.error === undefined
        ? err.message.replace(/^\d{3} /, "")
        : (JSON.stringify(err.error) ?? String(err.error));
    const message = errorObject?.["message"];
    const detail = typeof message === "string" && message !== "" ? message : body;
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
    // Rate-limit reset headers (x-ratelimit-reset-requests, ...) for the error classifier.
    return Object.assign(error, { headers: headerRecord(err.headers) });
  }
  // Anything else escaping the SDK mid-stream is the wire failing: undici's "terminated" (the
  // server closed the socket), ECONNRESET, "socket hang up", or an event cut short.
  return new ProviderError(`The connection to ${baseUrl} failed mid-response: ${describe(err)}`, {
    transport: true,
    partial,
    cause: err,
  });
}

/** Response headers as a plain lower-cased record; empty when there were none. */
function headerRecord(headers: Headers | undefined): Record<string, string> {
  const record: Record<string, string> = {};
  headers?.forEach((value, name) => {
    record[name.toLowerCase()] = value;
  });
  return record;
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
