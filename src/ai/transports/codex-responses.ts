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
import type { ResponseCreateParamsStreaming } from "openai/resources/responses/responses";
import type { StreamEvent, Transport } from "../types.js";
import { createOpenAIClient, type OpenAIClient, readOpenAIError } from "./openai-client.js";
import { ResponsesAssembler } from "./responses-assembler.js";
import { buildResponsesBody } from "./responses-input.js";
import { DEFAULT_STALL_MS } from "./stall.js";
import { createWireTransport, type WireReader } from "./wire.js";
import { clip, type WireFailure } from "./wire-failure.js";
import { asRecord } from "./wire-values.js";

export interface ResponsesTransportOptions {
  /** Base URL including the version path, e.g. `https://api.openai.com/v1`; requests go to `/responses`. */
  baseUrl: string;
  /** Sent as a bearer token; when absent no Authorization header is sent. */
  apiKey?: string | undefined;
  /** Send the key under this header instead of as a bearer (Azure AI Foundry's `api-key`). */
  apiKeyHeader?: string | undefined;
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

/** A `Transport` with `apiMode: "codex_responses"`. Creating it loads nothing; the SDK loads on the first request. */
export function createResponsesTransport(options: ResponsesTransportOptions): Transport {
  const { baseUrl } = options;
  const store = options.store ?? false;
  return createWireTransport<OpenAIClient>({
    apiMode: "codex_responses",
    baseUrl,
    streaming: true,
    stallMs: options.stallTimeoutMs ?? DEFAULT_STALL_MS,
    finishMarker: "no response.completed event",
    // Nothing may follow the terminal event; close the stream rather than wait for the server to.
    stopAtFinish: true,
    createClient: () =>
      createOpenAIClient({
        baseUrl,
        apiKey: options.apiKey,
        apiKeyHeader: options.apiKeyHeader,
        headers: options.headers,
        fetch: options.fetch,
      }),
    reader: () => new ResponsesReader(baseUrl),
    openStream: ({ client }, request, { signal }) =>
      client.responses.create(
        buildResponsesBody(request, { store }) as unknown as ResponseCreateParamsStreaming,
        { signal },
      ),
    readError: (err, { sdk }) => readOpenAIError(err, sdk, baseUrl, statusForCode),
  });
}

/** Reads one Responses API stream through the assembler. */
class ResponsesReader implements WireReader {
  private readonly assembler = new ResponsesAssembler();

  constructor(private readonly baseUrl: string) {}

  get hasContent(): boolean {
    return this.assembler.hasContent;
  }

  /** Any terminal event (completed, incomplete, failed); a failed one is reported as it comes. */
  get finished(): boolean {
    return this.assembler.terminal !== undefined;
  }

  event(raw: unknown): StreamEvent[] | WireFailure {
    const events = this.assembler.addEvent(raw);
    return streamFailure(this.assembler, this.baseUrl) ?? events;
  }

  response(): never {
    throw new Error("the Responses transport always streams");
  }

  finishFailure(): undefined {
    return undefined;
  }

  finishEvents(): StreamEvent[] {
    return this.assembler.finishEvents();
  }
}

/**
 * A failure the stream reported in-band (an `error` event or `response.failed`), which arrives
 * inside an HTTP 200 and so has no status of its own.
 */
function streamFailure(assembler: ResponsesAssembler, baseUrl: string): WireFailure | undefined {
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
  return {
    message: `The provider at ${baseUrl} failed the response${code ? ` (${code})` : ""}: ${clip(message, 500)}`,
    body,
    ...(status !== undefined ? { status } : {}),
  };
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
