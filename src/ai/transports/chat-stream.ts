/**
 * The streamed chat-completions call without the SDK's request and stream layers. Through the
 * `openai` SDK, one streamed answer passes through the SDK's request builder and its debug-log
 * formatting (run even when logging is off), a WHATWG `Response` and web `ReadableStream` over
 * `util/http-fetch.ts`, and the SDK's three-stage SSE decoder (chunks, lines, events), each with
 * its own buffers and promises: about 0.3 ms of CPU per call against a local server, where the
 * HTTP exchange itself takes 0.05 ms. In an agent loop that is a third of its per-step budget,
 * and an API server pays it for every conversation.
 *
 * Here the request goes out with exactly the headers the SDK client would send (asked of the
 * client once and kept), over the same keep-alive agents and stale-socket retry as the SDK's
 * fetch, and the event stream is parsed straight from the Node stream. Everything that decides
 * what a failure means is kept as the SDK has it: an HTTP error answer becomes the SDK's own
 * `APIError` subclass (`APIError.generate`, as the SDK makes it), a failed connection its
 * `APIConnectionError` / `APIConnectionTimeoutError`, an `error` object inside the stream its
 * `APIError`, and a connection cut mid-answer `TypeError("terminated")`, as fetch words it. So
 * `readOpenAIError` and the classifier see the same errors either way.
 *
 * SSE as the SDK reads it: lines end at CRLF, LF or CR; `data:` lines of an event are joined
 * with "\n"; `event:` names it; lines starting with ":" are comments; a blank line ends the
 * event; `[DONE]` ends the stream (later events are ignored); an event left without its blank
 * line when the stream closes is dropped. A redirect is not followed here: the call goes back
 * to the SDK path, which follows it (nothing was processed by a server that redirects).
 */
import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { FetchHeaders } from "../../util/fetch-classes.js";
import { decodedBody, sendRequest } from "../../util/http-fetch.js";
import type { OpenAIClient } from "./openai-client.js";
import { type BodySink, HeadTimeoutError, PlainResponse, plainRequest } from "./plain-http.js";
import { ENDS_ON_ABORT } from "./wire.js";

/** What the stream reads of an answer, from Node's client or the plain one (plain-http.ts). */
type Answer = Readable & {
  statusCode?: number | undefined;
  headers: Record<string, string | string[] | undefined>;
  rawHeaders: string[];
  complete: boolean;
};

/** Where a client's streamed chat-completions requests go, with the headers it would send. */
export interface ChatStreamTarget {
  url: URL;
  headers: Record<string, string>;
  /** The client's time allowed until the response headers arrive (ms). */
  timeoutMs: number;
}

const targets = new WeakMap<object, Promise<ChatStreamTarget | undefined>>();

/**
 * The client's URL and headers for `POST /chat/completions`, asked of the SDK once per client.
 * Undefined when a request's headers would not be the same every time (an idempotency key).
 */
export function chatStreamTarget({ client }: OpenAIClient): Promise<ChatStreamTarget | undefined> {
  let target = targets.get(client);
  if (!target) {
    target = client
      .buildRequest({
        method: "post",
        path: "/chat/completions",
        body: "{}",
        headers: { "content-type": "application/json" },
        stream: true,
      })
      .then(({ req, url, timeout }) => {
        const headers: Record<string, string> = {};
        (req.headers as Headers).forEach((value, name) => {
          headers[name.toLowerCase()] = value;
        });
        if (Object.keys(headers).some((name) => name.includes("idempotency"))) return undefined;
        // As the SDK's fetch (util/http-fetch.ts) asks for it.
        headers["accept-encoding"] ??= "gzip, deflate, br";
        return { url: new URL(url), headers, timeoutMs: timeout };
      })
      .catch(() => undefined);
    targets.set(client, target);
  }
  return target;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Sends `body` and resolves, once the response headers are in, to the stream's parsed event
 * payloads (what the SDK's `Stream` yields); undefined when the server redirected (the caller
 * sends it through the SDK). Rejects with the SDK's error for an HTTP error answer or a failed
 * connection; the iterable throws as the SDK's stream would.
 */
export async function openChatStream(
  { sdk }: OpenAIClient,
  target: ChatStreamTarget,
  body: string | Uint8Array | readonly Uint8Array[],
  signal: AbortSignal,
): Promise<(AsyncIterable<unknown> & { [ENDS_ON_ABORT]: true }) | undefined> {
  if (signal.aborted) throw new sdk.APIUserAbortError();
  // A plain-http server (a model on this machine or network) gets the lean client, which takes
  // the signal for the whole exchange and the SDK's timeout for the head itself; Node's client
  // (https) gets both through a controller of its own.
  const plain = target.url.protocol === "http:";
  let res: Answer;
  let abort: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  let timedOut = false;
  try {
    if (plain) {
      res = await plainRequest(target.url, "POST", target.headers, bodyBytes(body), signal, target.timeoutMs);
    } else {
      const own = new AbortController();
      abort = () => own.abort(signal.reason);
      signal.addEventListener("abort", abort, { once: true });
      // The SDK's own timeout runs until the headers arrive, then stops.
      timer = setTimeout(() => {
        timedOut = true;
        own.abort();
      }, target.timeoutMs);
      res = await sendRequest(target.url, "POST", target.headers, oneBody(body), own.signal);
    }
  } catch (error) {
    if (abort) signal.removeEventListener("abort", abort);
    if (signal.aborted) throw new sdk.APIUserAbortError();
    if (timedOut || error instanceof HeadTimeoutError || isTimeout(error))
      throw new sdk.APIConnectionTimeoutError();
    throw new sdk.APIConnectionError({ cause: error instanceof Error ? error : new Error(String(error)) });
  } finally {
    clearTimeout(timer);
  }
  // From here the caller's signal cuts the body; the stream's own end or failure releases it.
  if (abort) signal.removeEventListener("abort", abort);
  const status = res.statusCode ?? 0;
  if (REDIRECTS.has(status)) {
    res.resume();
    return undefined;
  }
  const source = decodedBody(res);
  // The plain client's exchange ends the answer itself when the signal aborts.
  let release = noRelease;
  if (!plain) {
    const onAbort = () => {
      res.destroy();
      source.destroy();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    release = () => signal.removeEventListener("abort", onAbort);
  }
  if (status < 200 || status > 299) {
    try {
      const text = await readAll(source, res);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      throw sdk.APIError.generate(
        status,
        json as object | undefined,
        json === undefined ? text : undefined,
        headersOf(res) as unknown as Headers,
      );
    } finally {
      release();
    }
  }
  return {
    [Symbol.asyncIterator]: () => new SseEvents(sdk, res, source, release),
    // An abort destroys the answer, which rejects a pending read at once.
    [ENDS_ON_ABORT]: true,
  };
}

function noRelease(): void {}

/** The body as bytes, in pieces sent one after the other (plain-http.ts writes them as they are). */
function bodyBytes(body: string | Uint8Array | readonly Uint8Array[]): Uint8Array | readonly Uint8Array[] {
  return typeof body === "string" ? Buffer.from(body, "utf8") : body;
}

/** The body as one string or buffer, for Node's client. */
function oneBody(body: string | Uint8Array | readonly Uint8Array[]): string | Uint8Array {
  return typeof body === "string" || body instanceof Uint8Array ? body : Buffer.concat(body);
}

/** The SDK's test for a connection failure that is a timeout. */
function isTimeout(error: unknown): boolean {
  const cause = error instanceof Error && error.cause !== undefined ? String(error.cause) : "";
  return /timed? ?out/i.test(String(error) + cause);
}

function headersOf(res: Answer): FetchHeaders {
  const headers = new FetchHeaders();
  for (let i = 0; i < res.rawHeaders.length; i += 2) {
    headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
  }
  return headers;
}

/** A connection that ended before its body did, in fetch's words. */
function terminated(cause: unknown): TypeError {
  return new TypeError("terminated", { cause });
}

async function readAll(source: Readable, res: Answer): Promise<string> {
  source.setEncoding("utf8");
  let text = "";
  try {
    for await (const piece of source) text += piece as string;
  } catch (error) {
    throw terminated(error);
  }
  if (!res.complete) throw terminated(new Error("the connection closed before the body ended"));
  return text;
}

/** Payloads held for a consumer that is behind before the stream is paused, and when it resumes. */
const HIGH_WATER = 64;
const LOW_WATER = 16;

/** What a stream destroyed before its end reports, as Node's own stream iterator words it. */
function prematureClose(): Error {
  return Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" });
}

/**
 * Parses the event stream (see the file comment) as its text arrives, and hands the payloads to
 * one consumer; `release` runs once it is done either way. Pushed rather than pulled through the
 * stream's own async iterator and a generator: those cost a few promises and ticks per piece and
 * per payload, a noticeable part of a model call to a server on this machine. The plain client's
 * answer hands its bytes over directly (`PlainResponse.attach`), other answers through their
 * stream's `data` events. A consumer far behind pauses the stream (HIGH_WATER). Payloads parsed
 * before a failure are handed out before it, as a generator would have.
 */
class SseEvents implements AsyncIterableIterator<unknown>, BodySink {
  private pending = "";
  private dataLines: string[] = [];
  private event: string | null = null;
  private sawDone = false;
  private readonly queue: unknown[] = [];
  private paused = false;
  /** The stream is over (ended, failed, or the consumer stopped): nothing more is parsed. */
  private over = false;
  private failed = false;
  private failure: unknown;
  private released = false;
  private waiting:
    | { resolve: (r: IteratorResult<unknown>) => void; reject: (e: unknown) => void }
    | undefined;
  /** The plain client's answer, when its bytes come straight to this parser. */
  private readonly plain: PlainResponse | undefined;
  private readonly decoder: StringDecoder | undefined;

  constructor(
    private readonly sdk: OpenAIClient["sdk"],
    private readonly res: Answer,
    private readonly source: Readable,
    private readonly release: () => void,
  ) {
    if (source === res && res instanceof PlainResponse) {
      this.plain = res;
      this.decoder = new StringDecoder("utf8");
      res.attach(this);
      return;
    }
    source.setEncoding("utf8");
    source.on("data", this.onData);
    source.on("end", this.onEnd);
    source.on("error", this.onError);
    source.on("close", this.onClose);
    // Destroyed before anyone listened (its `close` may have gone by): what arrived is lost.
    if (source.destroyed) this.fail(terminated(source.errored ?? prematureClose()));
  }

  /** Bytes of the plain client's answer (BodySink). */
  data(chunk: Buffer): void {
    this.onData((this.decoder as StringDecoder).write(chunk));
  }

  /** The plain client's answer ended (BodySink). */
  end(): void {
    if (this.over) return;
    this.pending += (this.decoder as StringDecoder).end();
    this.onEnd();
  }

  /** The plain client's answer failed or was destroyed before its end (BodySink). */
  error(error: Error): void {
    this.fail(terminated(error));
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<unknown>> {
    if (this.queue.length > 0) return Promise.resolve({ value: this.take(), done: false });
    if (this.failed) {
      this.failed = false;
      return Promise.reject(this.failure);
    }
    if (this.over) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  /** The consumer stops early: the stream is closed. */
  return(): Promise<IteratorResult<unknown>> {
    this.queue.length = 0;
    this.failed = false;
    if (!this.over) {
      this.finish();
      this.source.destroy();
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  private take(): unknown {
    const value = this.queue.shift();
    if (this.paused && this.queue.length <= LOW_WATER) {
      this.paused = false;
      if (this.plain) this.plain.resumeBody();
      else this.source.resume();
    }
    return value;
  }

  /** Hands the waiting consumer what there is now: a payload, the failure, or the end. */
  private settle(): void {
    const waiting = this.waiting;
    if (!waiting) return;
    if (this.queue.length > 0) {
      this.waiting = undefined;
      waiting.resolve({ value: this.take(), done: false });
    } else if (this.failed) {
      this.waiting = undefined;
      this.failed = false;
      waiting.reject(this.failure);
    } else if (this.over) {
      this.waiting = undefined;
      waiting.resolve({ value: undefined, done: true });
    }
  }

  private finish(): void {
    this.over = true;
    if (this.plain) {
      this.releaseOnce();
      return;
    }
    this.source.off("data", this.onData);
    this.source.off("end", this.onEnd);
    this.source.off("close", this.onClose);
    // A late error (a destroy after the end) must not go unhandled.
    this.source.off("error", this.onError);
    this.source.on("error", ignore);
    this.releaseOnce();
  }

  private releaseOnce(): void {
    if (!this.released) {
      this.released = true;
      this.release();
    }
  }

  private fail(error: unknown): void {
    if (this.over) return;
    this.failed = true;
    this.failure = error;
    this.finish();
    this.settle();
  }

  private readonly onData = (piece: string | Buffer): void => {
    if (this.over) return;
    this.pending += piece as string;
    try {
      this.parse();
    } catch (error) {
      // A malformed event or an error object: the provider's failure; reading stops here.
      this.fail(error);
      this.source.destroy();
      return;
    }
    if (this.queue.length >= HIGH_WATER && !this.paused) {
      this.paused = true;
      if (this.plain) this.plain.pauseBody();
      else this.source.pause();
    }
    this.settle();
  };

  private readonly onEnd = (): void => {
    if (this.over) return;
    if (!this.res.complete) {
      this.fail(terminated(new Error("other side closed")));
      return;
    }
    // What is left is one last line, ended by a lone CR or not at all: a blank one completes the
    // event before it; any other cannot complete its event any more.
    const { pending } = this;
    if (pending !== "") {
      try {
        const payload = this.line(pending.endsWith("\r") ? pending.slice(0, -1) : pending);
        if (payload !== undefined) this.queue.push(payload);
      } catch (error) {
        this.fail(error);
        return;
      }
    }
    this.finish();
    this.settle();
  };

  private readonly onError = (error: Error): void => {
    this.fail(terminated(error));
  };

  private readonly onClose = (): void => {
    // Destroyed before its end without an error: the caller aborted, or the connection was cut.
    this.fail(terminated(prematureClose()));
  };

  /** Queues the payloads of every complete line in `pending`. */
  private parse(): void {
    const pending = this.pending;
    let start = 0;
    for (;;) {
      const lf = pending.indexOf("\n", start);
      const cr = pending.indexOf("\r", start);
      const end = cr >= 0 && (lf < 0 || cr < lf) ? cr : lf;
      if (end < 0) break;
      // A CR at the end of what has arrived may be the first half of a CRLF: wait for more.
      if (end === cr && cr === pending.length - 1) break;
      const next = end === cr && pending.charCodeAt(cr + 1) === 10 ? cr + 2 : end + 1;
      const payload = this.line(pending.slice(start, end));
      start = next;
      if (payload !== undefined) this.queue.push(payload);
    }
    this.pending = start > 0 ? pending.slice(start) : pending;
  }

  /** One event's payload, or nothing (a comment, an incomplete event, anything after [DONE]). */
  private line(text: string): unknown {
    if (text === "") {
      if (this.event === null && this.dataLines.length === 0) return undefined;
      const payload = this.dataLines.join("\n");
      const name = this.event;
      this.event = null;
      this.dataLines = [];
      if (this.sawDone) return undefined;
      if (payload.startsWith("[DONE]")) {
        this.sawDone = true;
        return undefined;
      }
      const parsed = JSON.parse(payload) as { error?: unknown } | null;
      // Assistants-API events (`thread.*`) come with their name; nothing else checks for errors.
      if (name?.startsWith("thread.")) return { event: name, data: parsed };
      if (parsed?.error) {
        throw new this.sdk.APIError(
          undefined,
          parsed.error as object,
          undefined,
          headersOf(this.res) as unknown as Headers,
        );
      }
      return parsed;
    }
    if (text.startsWith(":")) return undefined;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.dataLines.push(value);
    return undefined;
  }
}

function ignore(): void {}
