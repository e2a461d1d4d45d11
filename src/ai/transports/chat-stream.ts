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
import { FetchHeaders } from "../../util/fetch-classes.js";
import { decodedBody, sendRequest } from "../../util/http-fetch.js";
import type { OpenAIClient } from "./openai-client.js";
import { plainRequest } from "./plain-http.js";

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
): Promise<AsyncIterable<unknown> | undefined> {
  if (signal.aborted) throw new sdk.APIUserAbortError();
  // The SDK's own timeout runs until the headers arrive, then stops.
  const controller = new AbortController();
  const abort = () => controller.abort(signal.reason);
  signal.addEventListener("abort", abort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, target.timeoutMs);
  let res: Answer;
  try {
    // A plain-http server (a model on this machine or network) gets the lean client.
    res =
      target.url.protocol === "http:"
        ? await plainRequest(target.url, "POST", target.headers, bodyBytes(body), controller.signal)
        : await sendRequest(target.url, "POST", target.headers, oneBody(body), controller.signal);
  } catch (error) {
    signal.removeEventListener("abort", abort);
    if (signal.aborted) throw new sdk.APIUserAbortError();
    if (timedOut || isTimeout(error)) throw new sdk.APIConnectionTimeoutError();
    throw new sdk.APIConnectionError({ cause: error instanceof Error ? error : new Error(String(error)) });
  } finally {
    clearTimeout(timer);
  }
  const status = res.statusCode ?? 0;
  if (REDIRECTS.has(status)) {
    signal.removeEventListener("abort", abort);
    res.resume();
    return undefined;
  }
  // From here the caller's signal cuts the body; the stream's own end or failure releases it.
  signal.removeEventListener("abort", abort);
  const source = decodedBody(res);
  const onAbort = () => {
    res.destroy();
    source.destroy();
  };
  signal.addEventListener("abort", onAbort, { once: true });
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
      signal.removeEventListener("abort", onAbort);
    }
  }
  return {
    [Symbol.asyncIterator]: () =>
      events(sdk, res, source, () => signal.removeEventListener("abort", onAbort)),
  };
}

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

/** Parses the event stream (see the file comment); `release` runs once it is done either way. */
async function* events(
  sdk: OpenAIClient["sdk"],
  res: Answer,
  source: Readable,
  release: () => void,
): AsyncGenerator<unknown> {
  source.setEncoding("utf8");
  let pending = "";
  let data: string[] = [];
  let event: string | null = null;
  let done = false;
  // One event's payload, or nothing (a comment, an incomplete event, anything after [DONE]).
  const line = (text: string): unknown => {
    if (text === "") {
      if (event === null && data.length === 0) return undefined;
      const payload = data.join("\n");
      const name = event;
      event = null;
      data = [];
      if (done) return undefined;
      if (payload.startsWith("[DONE]")) {
        done = true;
        return undefined;
      }
      const parsed = JSON.parse(payload) as { error?: unknown } | null;
      // Assistants-API events (`thread.*`) come with their name; nothing else checks for errors.
      if (name?.startsWith("thread.")) return { event: name, data: parsed };
      if (parsed?.error) {
        throw new sdk.APIError(
          undefined,
          parsed.error as object,
          undefined,
          headersOf(res) as unknown as Headers,
        );
      }
      return parsed;
    }
    if (text.startsWith(":")) return undefined;
    const colon = text.indexOf(":");
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") event = value;
    else if (field === "data") data.push(value);
    return undefined;
  };
  try {
    for await (const piece of source) {
      pending += piece as string;
      let start = 0;
      for (;;) {
        const lf = pending.indexOf("\n", start);
        const cr = pending.indexOf("\r", start);
        const end = cr >= 0 && (lf < 0 || cr < lf) ? cr : lf;
        if (end < 0) break;
        // A CR at the end of what has arrived may be the first half of a CRLF: wait for more.
        if (end === cr && cr === pending.length - 1) break;
        const next = end === cr && pending.charCodeAt(cr + 1) === 10 ? cr + 2 : end + 1;
        const payload = line(pending.slice(start, end));
        start = next;
        if (payload !== undefined) yield payload;
      }
      pending = start > 0 ? pending.slice(start) : pending;
    }
  } catch (error) {
    if (error instanceof sdk.APIError || error instanceof SyntaxError) throw error;
    throw terminated(error);
  } finally {
    release();
  }
  if (!res.complete) throw terminated(new Error("other side closed"));
  // What is left is one last line, ended by a lone CR or not at all: a blank one completes the
  // event before it; any other cannot complete its event any more.
  if (pending !== "") {
    const payload = line(pending.endsWith("\r") ? pending.slice(0, -1) : pending);
    if (payload !== undefined) yield payload;
  }
}
