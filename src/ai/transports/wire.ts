/**
 * One transport skeleton for every wire protocol. A `WireProtocol` states what differs between
 * api modes: the SDK client, how a request is sent (streamed or in one call), how events and
 * whole responses read (a `WireReader` around the protocol's assembler) and how an SDK failure
 * reads. `createWireTransport` owns what must not differ: the lazy client, abort wiring, the one
 * stall watchdog, "the stream ended before the answer finished", Retry-After, and `baseUrl`,
 * status and headers on every `ProviderError`.
 */
import { parseResetHeaders } from "../error-timing.js";
import { type ApiMode, type ChatRequest, ProviderError, type StreamEvent, type Transport } from "../types.js";
import { StallError, StallWatchdog, stallSeconds } from "./stall.js";
import { abortError, type WireFailure } from "./wire-failure.js";

/**
 * Set (true) on an event stream whose pending `next()` rejects as soon as the call's signal
 * aborts. The stall watchdog aborts that signal when it fires, so a wait on such a stream ends
 * without racing every event against the watchdog (a promise and a reaction per event); other
 * streams (an SDK's) are raced, in case one does not end on abort.
 */
export const ENDS_ON_ABORT: unique symbol = Symbol("endsOnAbort");

/** What a protocol's send functions get for one request. */
export interface WireCall {
  /** Aborted by the caller's signal and by the stall watchdog: hand it to the SDK. */
  readonly signal: AbortSignal;
  /**
   * Tells the stall watchdog that bytes arrived. Only for SDKs that swallow keep-alive events
   * (Anthropic's `ping`), so a slow answer kept alive by them is not cut; others need not call it.
   */
  readonly progress: () => void;
}

/**
 * Reads one response. A fresh reader per request. `event` and `response` return either the
 * events to yield or the failure the provider reported inside a 200 (an error chunk, an
 * `error` event, an error body); they never throw on odd input.
 */
export interface WireReader {
  /** True once anything the user could have seen (text, reasoning, a tool call) arrived. */
  readonly hasContent: boolean;
  /** True once the event that proves the answer ended on purpose arrived. */
  readonly finished: boolean;
  event(raw: unknown): StreamEvent[] | WireFailure;
  response(raw: unknown): StreamEvent[] | WireFailure;
  /** A finished answer that is a failure all the same (`finish_reason: "error"`); else undefined. */
  finishFailure(): WireFailure | undefined;
  /** The closing events: complete tool calls, usage, and the one `finish`. */
  finishEvents(): StreamEvent[];
}

/** One wire protocol, as `createWireTransport` needs it. */
export interface WireProtocol<Client> {
  readonly apiMode: ApiMode;
  /** Where requests go: named in every message and set as `baseUrl` on every `ProviderError`. */
  readonly baseUrl: string;
  /** Stream (and watch for stalls) or make one call; `fullCall` is required when false. */
  readonly streaming: boolean;
  /** The stall window in ms (`agent.stream_stall_timeout`); 0 never cuts. Streaming only. */
  readonly stallMs: number;
  /** What proves a stream finished, for the "ended before" message: "no finish_reason". */
  readonly finishMarker: string;
  /**
   * Nothing may follow the finishing event: reading stops there and the stream is closed rather
   * than waiting for the server to close it (the Responses API). Otherwise reading goes on to the
   * end of the stream, where usage often comes after the finish.
   */
  readonly stopAtFinish?: boolean;
  /** The SDK client. Called on the first request; the promise is kept, or dropped if it failed. */
  createClient(): Promise<Client>;
  reader(): WireReader;
  /** Sends a streamed request; resolves once the response headers are in. */
  openStream(client: Client, request: ChatRequest, call: WireCall): Promise<AsyncIterable<unknown>>;
  /** Sends a request for one whole response (when not `streaming`). */
  fullCall?(client: Client, request: ChatRequest, call: WireCall): Promise<unknown>;
  /** What an error the SDK threw means (never an abort or a stall: the skeleton handles those). */
  readError(err: unknown, client: Client): WireFailure;
}

type Stage = "headers" | "first event" | "events";

/** A `Transport` speaking `protocol`. Creating it loads nothing; the SDK loads on the first request. */
export function createWireTransport<Client>(protocol: WireProtocol<Client>): Transport {
  let client: Promise<Client> | undefined;
  const getClient = (): Promise<Client> => {
    client ??= protocol.createClient().catch((err: unknown) => {
      client = undefined;
      throw err;
    });
    return client;
  };
  return {
    apiMode: protocol.apiMode,
    stream: (request, signal) => runRequest(protocol, getClient, request, signal),
  };
}

async function* runRequest<Client>(
  protocol: WireProtocol<Client>,
  getClient: () => Promise<Client>,
  request: ChatRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<StreamEvent> {
  if (signal?.aborted) throw abortError(signal);
  const client = await getClient();
  const reader = protocol.reader();
  // One controller per request: the caller's signal and the stall watchdog both abort it.
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  const watchdog = new StallWatchdog(protocol.streaming ? protocol.stallMs : 0, (stall) =>
    controller.abort(stall),
  );
  const call: WireCall = { signal: controller.signal, progress: () => watchdog.touch() };
  const fail = (failure: WireFailure) => toProviderError(protocol, failure, reader.hasContent);
  let stage: Stage = "headers";
  let settled = false;
  try {
    if (protocol.streaming) {
      watchdog.start();
      // Headers that never come are a stall like any other: without this bound a hung server
      // would hold the turn for the SDK's own timeout (10 minutes).
      const stream = await watchdog.race(protocol.openStream(client, request, call));
      watchdog.touch();
      stage = "first event";
      const iterator = stream[Symbol.asyncIterator]();
      const endsOnAbort = (stream as { [ENDS_ON_ABORT]?: boolean })[ENDS_ON_ABORT] === true;
      while (!signal?.aborted) {
        const next = await (endsOnAbort ? iterator.next() : watchdog.race(iterator.next()));
        if (next.done) break;
        stage = "events";
        const events = reader.event(next.value);
        if (!Array.isArray(events)) throw fail(events);
        if (events.length > 0) {
          // A slow consumer is not a stalled server.
          watchdog.pause();
          // One by one rather than `yield*`, which wraps an array in an async iterator per chunk.
          for (const event of events) yield event;
          watchdog.start();
        }
        if (protocol.stopAtFinish && reader.finished) {
          await iterator.return?.();
          break;
        }
      }
    } else {
      if (!protocol.fullCall) throw new Error(`${protocol.apiMode} has no non-streaming call`);
      const events = reader.response(await protocol.fullCall(client, request, call));
      if (!Array.isArray(events)) throw fail(events);
      yield* events;
    }
    settled = true;
  } catch (err) {
    if (signal?.aborted) throw abortError(signal);
    if (watchdog.fired || err instanceof StallError) throw stallError(protocol, stage, reader, err);
    if (err instanceof ProviderError) throw err;
    throw fail(protocol.readError(err, client));
  } finally {
    watchdog.stop();
    signal?.removeEventListener("abort", onAbort);
    // Stops the HTTP request when the consumer stopped early or anything failed.
    if (!settled) controller.abort();
  }
  // SDKs end a stream quietly when it is aborted, so the signal has to be checked here.
  if (signal?.aborted) throw abortError(signal);
  if (watchdog.fired) throw stallError(protocol, stage, reader, undefined);
  if (!reader.finished) {
    throw fail({
      message: `The stream from ${protocol.baseUrl} ended before the model finished its answer (${protocol.finishMarker}); the connection probably dropped.`,
      transport: true,
    });
  }
  const failed = reader.finishFailure();
  if (failed) throw fail(failed);
  for (const event of reader.finishEvents()) yield event;
}

function toProviderError(
  protocol: WireProtocol<unknown>,
  failure: WireFailure,
  hasContent: boolean,
): ProviderError {
  const { message, ...fields } = failure;
  const retryAfterMs = fields.retryAfterMs ?? parseResetHeaders(fields.headers).retryAfterMs;
  return new ProviderError(message, {
    ...fields,
    partial: fields.partial ?? hasContent,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    baseUrl: protocol.baseUrl,
  });
}

function stallError(
  protocol: WireProtocol<unknown>,
  stage: Stage,
  reader: WireReader,
  cause: unknown,
): ProviderError {
  const { baseUrl, stallMs } = protocol;
  const seconds = stallSeconds(stallMs);
  const what =
    stage === "events"
      ? `The stream from ${baseUrl} stalled: no data for ${seconds} mid-answer, so the request timed out and was cut`
      : `${baseUrl} sent no ${stage === "headers" ? "response headers" : "data after its headers"} within ${seconds}: the request stalled, timed out and was cut`;
  return new ProviderError(
    `${what} (agent.stream_stall_timeout; raise it for a local server that reads long prompts slowly).`,
    {
      transport: true,
      partial: reader.hasContent,
      stalled: true,
      baseUrl,
      cause: cause instanceof StallError ? cause : new StallError(stallMs),
    },
  );
}
