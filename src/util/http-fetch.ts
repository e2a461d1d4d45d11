/**
 * A `fetch` over `node:http`/`node:https` for the model SDKs (openai, Anthropic).
 *
 * Why not the global fetch: Node's fetch (undici) compiles its WebAssembly HTTP parser (llhttp) on
 * the first request, which costs a one-shot `hermes -z` about 30 MiB of peak RSS and a few hundred
 * milliseconds of CPU; `node:http` parses in C++ and is already loaded. The answer behaves as a
 * standard `Response` (the SDKs read `headers`, `status` and a web `ReadableStream` body), so the
 * SDKs cannot tell the difference.
 *
 * Behaves like fetch where the SDKs rely on it: redirects followed (at most 20; 303, and 301/302 of
 * a POST, become a GET without a body; the Authorization header is dropped when the redirect leaves
 * the origin), gzip/deflate/br bodies decoded, the signal aborts the request and the body with an
 * `AbortError`, connection failures reject with `TypeError("fetch failed")` carrying the cause, and
 * a body cut short errors with `TypeError("terminated")`, undici's wordings. Bodies it cannot send
 * itself (FormData, Blob: file uploads) go to the global fetch. The answer's `Response` and
 * `Headers` are `fetch-classes.ts`'s, so a model call never loads undici. Sockets are kept alive between
 * calls (an idle one does not hold the process open).
 */

import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";
import * as http from "node:http";
import type * as Https from "node:https";
import { createRequire } from "node:module";
import { Readable } from "node:stream";
import type * as Zlib from "node:zlib";
import { FetchHeaders, FetchResponse } from "./fetch-classes.js";

// node:https (and TLS and crypto behind it) and node:zlib load at first use: a one-shot against a
// local http server needs neither, and loading them is a measurable part of a start.
const builtin = createRequire(import.meta.url);
let httpsLib: typeof Https | undefined;
let zlibLib: typeof Zlib | undefined;
function httpsModule(): typeof Https {
  httpsLib ??= builtin("node:https") as typeof Https;
  return httpsLib;
}
function zlibModule(): typeof Zlib {
  zlibLib ??= builtin("node:zlib") as typeof Zlib;
  return zlibLib;
}

type FetchInput = string | URL | Request;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** The body kinds sent directly; others go to the global fetch. */
type SendableBody = string | Uint8Array | ReadableStream<Uint8Array> | null;

let httpAgent: http.Agent | undefined;
let httpsAgent: Https.Agent | undefined;

/** The keep-alive agent for `secure` or plain connections, made at first use. */
function keepAliveAgent(secure: boolean): http.Agent {
  if (secure) {
    httpsAgent ??= new (httpsModule().Agent)({ keepAlive: true });
    return httpsAgent;
  }
  httpAgent ??= new http.Agent({ keepAlive: true });
  return httpAgent;
}

function abortError(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  return new DOMException("This operation was aborted", "AbortError");
}

function sendable(body: RequestInit["body"]): SendableBody | undefined {
  if (body === null || body === undefined) return null;
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof URLSearchParams) return body.toString();
  if (typeof (body as ReadableStream).getReader === "function") return body as ReadableStream<Uint8Array>;
  return undefined;
}

function headerRecord(headers: RequestInit["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  // Any Headers (the platform's, FetchHeaders) or pair list iterates; a record does not.
  const entries: Iterable<[string, string]> =
    Symbol.iterator in headers
      ? (headers as Iterable<[string, string]>)
      : Object.entries(headers as Record<string, string>);
  for (const [name, value] of entries) {
    const key = name.toLowerCase();
    out[key] = out[key] !== undefined ? `${out[key]}, ${value}` : String(value);
  }
  return out;
}

/** A fetch-compatible function that uses node:http; see the file comment. */
export function httpFetch(input: FetchInput, init: RequestInit = {}): Promise<Response> {
  return fetchVia(keepAliveAgent, input, init);
}

/**
 * A fetch like {@link httpFetch} whose https requests go through `httpsAgent` (client certificates,
 * a private CA: mTLS to an MCP server). It never hands a request to the global fetch, which would
 * drop the agent's certificates: a body it cannot send itself is an error.
 */
export function httpFetchWithAgent(httpsAgent: Https.Agent): typeof httpFetch {
  const agentFor = (secure: boolean): http.Agent => (secure ? httpsAgent : keepAliveAgent(false));
  return (input, init = {}) => fetchVia(agentFor, input, init, true);
}

async function fetchVia(
  agentFor: (secure: boolean) => http.Agent,
  input: FetchInput,
  init: RequestInit,
  strict = false,
): Promise<Response> {
  // Checked by tag: touching the global `Request` would load undici (see fetch-classes.ts).
  const isRequest =
    typeof input === "object" &&
    (input as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag] === "Request";
  const body = isRequest ? undefined : sendable(init.body);
  if (body === undefined) {
    if (strict)
      throw new TypeError("fetch failed", { cause: new Error("request kind not supported over this agent") });
    // The SDKs pass a URL string; a Request carries everything itself, so fetch takes it whole.
    return fetch(input, init);
  }
  const signal = init.signal ?? undefined;
  if (signal?.aborted) throw abortError(signal);
  let url = new URL(String(input as string | URL));
  let method = (init.method ?? "GET").toUpperCase();
  let headers = headerRecord(init.headers);
  headers["accept-encoding"] ??= "gzip, deflate, br";
  let currentBody: SendableBody = body;
  for (let hop = 0; ; hop++) {
    const response = await request(agentFor, url, method, headers, currentBody, signal);
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (!REDIRECTS.has(status) || !location || init.redirect === "manual") {
      return toResponse(response, url, hop > 0, signal);
    }
    response.resume();
    if (init.redirect === "error")
      throw new TypeError("fetch failed", { cause: new Error("unexpected redirect") });
    if (hop >= MAX_REDIRECTS)
      throw new TypeError("fetch failed", { cause: new Error("redirect count exceeded") });
    const next = new URL(location, url);
    if (status === 303 || ((status === 301 || status === 302) && method === "POST")) {
      method = method === "HEAD" ? "HEAD" : "GET";
      currentBody = null;
      headers = Object.fromEntries(
        Object.entries(headers).filter(([k]) => !k.startsWith("content-") && k !== "transfer-encoding"),
      );
    } else if (
      currentBody !== null &&
      typeof currentBody !== "string" &&
      !(currentBody instanceof Uint8Array)
    ) {
      // A stream was consumed by the first request and cannot be sent again; fetch fails the same way.
      throw new TypeError("fetch failed", {
        cause: new Error("cannot follow a redirect with a streamed body"),
      });
    }
    if (next.origin !== url.origin) {
      delete headers["authorization"];
      delete headers["cookie"];
      delete headers["proxy-authorization"];
    }
    url = next;
  }
}

/**
 * One request over the shared keep-alive agents, with the stale-socket retry below; no redirects
 * followed and the body not decoded (`decodedBody`). For a caller that reads the answer as a Node
 * stream itself (the streamed chat-completions call) instead of through a `Response`. Rejects
 * like fetch: `TypeError("fetch failed")` with the cause, or the signal's reason.
 */
export function sendRequest(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | null,
  signal: AbortSignal | undefined,
): Promise<IncomingMessage> {
  return request(keepAliveAgent, url, method, headers, body, signal);
}

/** The answer's body with its `content-encoding` (gzip, deflate, br) undone; `res` itself when plain. */
export function decodedBody(
  res: Readable & { headers: Record<string, string | string[] | undefined> },
): Readable {
  return decoded(res);
}

/**
 * Sends the request; once more on a fresh connection when a kept-alive one turns out to have been
 * closed by the server before it answered anything. A server closes an idle connection after its
 * keep-alive timeout, and the agent's own expiry (the server's hint minus a second) runs on timers
 * that a busy event loop (a server running many turns) fires late, so a request can be written to
 * a socket the server has just closed: "socket hang up" / ECONNRESET with no byte of an answer.
 * Node's documentation gives this retry (`request.reusedSocket`); a streamed body cannot be sent
 * twice and is not retried.
 */
async function request(
  agentFor: (secure: boolean) => http.Agent,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: SendableBody,
  signal: AbortSignal | undefined,
): Promise<IncomingMessage> {
  try {
    return await requestOnce(agentFor, url, method, headers, body, signal);
  } catch (error) {
    const stale = error instanceof StaleSocketError;
    if (!stale) throw error;
    if (typeof body !== "string" && !(body instanceof Uint8Array) && body !== null) throw error.failure;
    // On a connection of its own: the pool's other idle sockets may be just as stale.
    return requestOnce(agentFor, url, method, headers, body, signal, true).catch((again: unknown) => {
      throw again instanceof StaleSocketError ? again.failure : again;
    });
  }
}

/** A reused keep-alive socket the server had already closed; `failure` is what fetch would throw. */
class StaleSocketError extends Error {
  constructor(readonly failure: TypeError) {
    super(failure.message);
  }
}

function requestOnce(
  agentFor: (secure: boolean) => http.Agent,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: SendableBody,
  signal: AbortSignal | undefined,
  fresh = false,
): Promise<IncomingMessage> {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError("fetch failed", { cause: new Error(`unsupported protocol ${url.protocol}`) });
  }
  const secure = url.protocol === "https:";
  const mod = secure ? httpsModule() : http;
  const outgoing: OutgoingHttpHeaders = { ...headers };
  // A text body (a model request: tens of KB) is encoded once, here, and its length read off the
  // bytes: not measured in one pass and encoded again in another by the socket write.
  if (typeof body === "string") body = Buffer.from(body, "utf8");
  if (body instanceof Uint8Array) outgoing["content-length"] = body.byteLength;
  return new Promise<IncomingMessage>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const req = mod.request(url, {
      method,
      headers: outgoing,
      // A fresh connection of its own; with a caller's agent (its TLS options), a fresh socket of it.
      agent: fresh ? (agentFor === keepAliveAgent ? false : agentFor(secure)) : agentFor(secure),
    });
    const onAbort = () => {
      const reason = abortError(signal as AbortSignal);
      req.destroy(reason instanceof Error ? reason : new Error(String(reason)));
      reject(reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    req.once("response", (res) => {
      // From here the body stream (toResponse) owns the abort.
      signal?.removeEventListener("abort", onAbort);
      resolve(res);
    });
    req.once("error", (error: NodeJS.ErrnoException) => {
      signal?.removeEventListener("abort", onAbort);
      if (signal?.aborted) {
        reject(abortError(signal));
        return;
      }
      const failure = new TypeError("fetch failed", { cause: error });
      const closedIdle = error.code === "ECONNRESET" || error.code === "EPIPE";
      reject(req.reusedSocket && closedIdle ? new StaleSocketError(failure) : failure);
    });
    if (body === null) req.end();
    else if (typeof body === "string" || body instanceof Uint8Array) req.end(body);
    else {
      Readable.fromWeb(body as import("node:stream/web").ReadableStream<Uint8Array>)
        .on("error", (error) => req.destroy(error))
        .pipe(req);
    }
  });
}

function decoded(res: Readable & { headers: Record<string, string | string[] | undefined> }): Readable {
  const encoding = String(res.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  if (encoding !== "gzip" && encoding !== "x-gzip" && encoding !== "deflate" && encoding !== "br") return res;
  // Lenient like fetch: a gzip stream cut at a flush boundary still yields what arrived.
  const zlib = zlibModule();
  const flush = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  const decoder =
    encoding === "br"
      ? zlib.createBrotliDecompress({
          flush: zlib.constants.BROTLI_OPERATION_FLUSH,
          finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
        })
      : encoding === "deflate"
        ? zlib.createInflate(flush)
        : zlib.createGunzip(flush);
  res.on("error", (error) => decoder.destroy(error));
  return res.pipe(decoder);
}

async function toResponse(
  res: IncomingMessage,
  url: URL,
  redirected: boolean,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const status = res.statusCode ?? 0;
  const headers = new FetchHeaders();
  for (let i = 0; i < res.rawHeaders.length; i += 2) {
    headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
  }
  let stream: ReadableStream<Uint8Array> | null = null;
  if (NULL_BODY.has(status)) res.resume();
  else stream = bodyStream(res, decoded(res), signal);
  // Typed as the platform's Response: the SDKs touch only what FetchResponse implements.
  return new FetchResponse(stream, {
    status,
    statusText: res.statusMessage ?? "",
    headers,
    url: url.href,
    redirected,
  }) as unknown as Response;
}

/**
 * The body as a web stream: pulled on demand (backpressure through the socket), errored with
 * `TypeError("terminated")` when the connection ends before the body does, with the signal's
 * reason on abort; cancelling it closes the connection.
 */
function bodyStream(
  res: IncomingMessage,
  source: Readable,
  signal: AbortSignal | undefined,
): ReadableStream<Uint8Array> {
  let done = false;
  const finish = () => {
    done = true;
    signal?.removeEventListener("abort", onAbort);
  };
  let fail: (error: unknown) => void = () => {};
  const onAbort = () => fail(abortError(signal as AbortSignal));
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      fail = (error) => {
        if (done) return;
        finish();
        controller.error(error);
        res.destroy();
        source.destroy();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      source.on("data", (chunk: Buffer) => {
        if (done) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) source.pause();
      });
      source.once("end", () => {
        if (done) return;
        // A body shorter than its Content-Length ends the same way as a reset connection.
        if (!res.complete) {
          fail(
            new TypeError("terminated", { cause: new Error("the connection closed before the body ended") }),
          );
          return;
        }
        finish();
        controller.close();
      });
      source.once("error", (error) => fail(new TypeError("terminated", { cause: error })));
      res.once("aborted", () => fail(new TypeError("terminated", { cause: new Error("other side closed") })));
      res.once("close", () => {
        if (!done && !res.complete)
          fail(new TypeError("terminated", { cause: new Error("other side closed") }));
      });
    },
    pull() {
      source.resume();
    },
    cancel() {
      finish();
      res.destroy();
      source.destroy();
    },
  });
  // The SDKs read a streamed answer with `for await` over the body. Node's own iterator releases
  // its reader at the end, and releasing the reader of a finished stream builds an error whose
  // first use creates a whole new V8 context (a few ms and half a MiB at every start): this one
  // reads through a reader it never releases, and cancels the body when the loop stops early.
  Object.defineProperty(stream, Symbol.asyncIterator, { value: () => iterate(stream), configurable: true });
  return stream;
}

function iterate(stream: ReadableStream<Uint8Array>): AsyncIterableIterator<Uint8Array> {
  const reader = stream.getReader();
  let finished = false;
  return {
    async next(): Promise<IteratorResult<Uint8Array>> {
      if (finished) return { done: true, value: undefined };
      try {
        const result = await reader.read();
        if (result.done) finished = true;
        return result;
      } catch (error) {
        finished = true;
        throw error;
      }
    },
    async return(value?: unknown): Promise<IteratorResult<Uint8Array>> {
      if (!finished) {
        finished = true;
        await reader.cancel();
      }
      return { done: true, value };
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
