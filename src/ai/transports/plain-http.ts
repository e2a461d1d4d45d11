/**
 * One HTTP/1.1 request over a kept-alive plain TCP connection, for the streamed chat-completions
 * call to a local server (llama.cpp, vLLM, Ollama, LM Studio: `http://` URLs). Node's `http`
 * client costs about 0.14 ms of CPU per request here (a `ClientRequest`, the agent's socket
 * bookkeeping, per-header validation, a parser taken from its pool), against 0.04 ms for writing the
 * request and reading the answer straight off the socket; in an agent loop that talks to a model
 * on the same machine, the difference is a tenth of a step's budget. `https://` keeps Node's client
 * (certificates, ALPN, proxies' future): only plain connections come here.
 *
 * What it speaks: the request line, the caller's headers (checked as Node checks them: a name must
 * be a token, a value holds no control character but tab) with `Host`, `Content-Length` and
 * `Connection: keep-alive` added; an answer framed by `Transfer-Encoding: chunked` (extensions
 * and trailers skipped), by `Content-Length`, or by the connection closing; `1xx` interim answers
 * skipped. A connection goes back to the pool only after a complete answer that did not say
 * `Connection: close`; an idle one does not keep the process alive, and is dropped a second before
 * the server's `Keep-Alive: timeout=` hint (as Node's agent does). A kept connection that turns out
 * to have been closed by the server before answering anything is retried once on a new one (the
 * body is bytes, so it can be sent again), as `util/http-fetch.ts` retries. Failures read as
 * fetch words them: `TypeError("fetch failed")` with the cause before the answer's head, the
 * signal's reason on abort; after the head the body stream errors (`complete` stays false).
 */
import { connect, type Socket } from "node:net";
import { Readable } from "node:stream";

/**
 * Takes an answer's body bytes straight from the connection (`PlainResponse.attach`), without the
 * stream's buffering and its `data` events: a streamed model answer arrives in many small pieces,
 * and each piece through a `Readable` costs a push, an event and a scheduled tick or two.
 */
export interface BodySink {
  data(chunk: Buffer): void;
  /** The whole body arrived. */
  end(): void;
  /** The body will not be complete: the connection broke, or the answer was destroyed first. */
  error(error: Error): void;
}

/** What an answer destroyed before its end reports, as Node's streams word it. */
function prematureClose(): Error {
  return Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" });
}

/**
 * The answer: its head, and its body as a stream (`complete` once the whole body arrived), or
 * handed to one sink (`attach`).
 */
export class PlainResponse extends Readable {
  statusCode = 0;
  statusMessage = "";
  /** Lower-cased names; repeated headers joined with ", ". */
  readonly headers: Record<string, string> = {};
  /** Names and values as received, alternating. */
  readonly rawHeaders: string[] = [];
  complete = false;
  /** Set by the reader: resumes the paused socket when the consumer wants more. */
  onRead: (() => void) | undefined;
  /** Set by the reader: pauses the socket (a sink that is behind). */
  onPause: (() => void) | undefined;
  /** Set by the reader: the body was abandoned, so the connection cannot be reused. */
  onDestroy: (() => void) | undefined;
  private sink: BodySink | undefined;

  override _read(): void {
    this.onRead?.();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.complete) {
      this.onDestroy?.();
      this.sink?.error(error ?? prematureClose());
    }
    // As Node's IncomingMessage: the error is emitted only to a listener; a reader that starts
    // later still gets it (`errored`), from its first read.
    callback(this.listenerCount("error") > 0 ? error : null);
  }

  /**
   * From now on the body's bytes go to `sink` as they arrive, not through the stream (one sink,
   * for good). What arrived before is handed over at once, and the end or failure if it came.
   */
  attach(sink: BodySink): void {
    if (this.destroyed) {
      // Destroyed before anyone read it: whatever had arrived is gone.
      sink.error(this.errored ?? prematureClose());
      return;
    }
    this.sink = sink;
    for (let chunk = this.read() as Buffer | null; chunk !== null; chunk = this.read() as Buffer | null)
      sink.data(chunk);
    if (this.complete) sink.end();
    else this.onRead?.();
  }

  /** Stops the connection's bytes until `resumeBody` (a sink that is behind). */
  pauseBody(): void {
    this.onPause?.();
  }

  resumeBody(): void {
    this.onRead?.();
  }

  /** Body bytes from the reader; false when the consumer is behind (pause the connection). */
  deliver(chunk: Buffer): boolean {
    if (this.destroyed) return false;
    if (!this.sink) return this.push(chunk);
    this.sink.data(chunk);
    return true;
  }

  /** The whole body arrived. */
  close(): void {
    this.complete = true;
    if (this.sink) this.sink.end();
    else this.push(null);
  }

  /** The connection failed before the body's end. */
  fail(error: Error): void {
    if (!this.sink) {
      this.destroy(error);
      return;
    }
    const sink = this.sink;
    this.sink = undefined;
    sink.error(error);
    this.destroy();
  }
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What Node refuses in a header value: control characters but tab, and anything past Latin-1. */
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** Headers this client writes itself. */
const OWN = new Set(["host", "content-length", "connection", "transfer-encoding", "keep-alive"]);
/** A head larger than this is not an answer worth reading (Node's default limit is 16 KiB). */
const MAX_HEAD = 64 * 1024;

interface Idle {
  socket: Socket;
  /** When the server's keep-alive hint says it closes the connection (ms since the epoch), if it said. */
  expires: number;
}

const pool = new Map<string, Idle[]>();

function abortError(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  return new DOMException("This operation was aborted", "AbortError");
}

/** The request's head as bytes; throws a TypeError for a header Node would refuse. */
export function requestHead(
  url: URL,
  method: string,
  headers: Record<string, string>,
  length: number,
): string {
  return `${method} ${url.pathname || "/"}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n${headerLines(headers)}content-length: ${length}\r\nconnection: keep-alive\r\n\r\n`;
}

/**
 * The last headers written, as names and values alternating, and their lines. A client sends the
 * same headers object with every request: checked against what it holds now (a few comparisons),
 * its lines are not checked and written again.
 */
let lastHeaders: { headers: Record<string, string>; entries: string[]; lines: string } | undefined;

/** The caller's header lines (checked as Node checks them), without the ones this client writes. */
function headerLines(headers: Record<string, string>): string {
  const names = Object.keys(headers);
  const last = lastHeaders;
  if (last?.headers === headers && last.entries.length === names.length * 2) {
    let same = true;
    for (let i = 0; same && i < names.length; i++) {
      const name = names[i] as string;
      same = last.entries[2 * i] === name && last.entries[2 * i + 1] === headers[name];
    }
    if (same) return last.lines;
  }
  const entries: string[] = [];
  let lines = "";
  for (const name of names) {
    const value = headers[name] as string;
    if (!TOKEN.test(name)) throw new TypeError(`Invalid header name: "${name}"`);
    if (BAD_VALUE.test(value)) throw new TypeError(`Invalid value for header "${name}"`);
    entries.push(name, value);
    if (OWN.has(name.toLowerCase())) continue;
    lines += `${name}: ${value}\r\n`;
  }
  lastHeaders = { headers, entries, lines };
  return lines;
}

/** A kept connection to `origin` still worth trying, or undefined. */
function takeIdle(origin: string): Socket | undefined {
  const list = pool.get(origin);
  while (list && list.length > 0) {
    const idle = list.pop() as Idle;
    idle.socket.removeListener("error", dropIdle);
    idle.socket.removeListener("close", dropIdle);
    if (!idle.socket.destroyed && idle.socket.readyState === "open" && Date.now() < idle.expires) {
      idle.socket.ref();
      return idle.socket;
    }
    idle.socket.destroy();
  }
  return undefined;
}

/** An idle connection the server closed (or that failed): out of the pool. */
function dropIdle(this: Socket): void {
  for (const [origin, list] of pool) {
    const at = list.findIndex((idle) => idle.socket === this);
    if (at >= 0) {
      list.splice(at, 1);
      if (list.length === 0) pool.delete(origin);
    }
  }
  this.destroy();
}

function keep(origin: string, socket: Socket, expires: number): void {
  socket.unref();
  socket.on("error", dropIdle);
  socket.on("close", dropIdle);
  const list = pool.get(origin) ?? [];
  list.push({ socket, expires });
  pool.set(origin, list);
}

/** No answer's head within the time the caller allowed (`plainRequest`'s `headTimeoutMs`). */
export class HeadTimeoutError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = "TimeoutError";
  }
}

/** A kept connection the server had closed before answering: worth one more try on a new one. */
class StaleConnection extends Error {
  constructor(readonly failure: TypeError) {
    super(failure.message);
  }
}

/**
 * Sends `body` (bytes, or pieces of it sent one after the other) to `url` (an `http:` URL) and
 * resolves once the answer's head is in; see the file comment. The caller reads the body from the
 * result (or destroys it, which closes the connection). `signal` aborts the request until the body
 * ended; `headTimeoutMs` bounds the wait for the head (rejecting with a `HeadTimeoutError`).
 */
export async function plainRequest(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Uint8Array | readonly Uint8Array[],
  signal: AbortSignal | undefined,
  headTimeoutMs?: number,
): Promise<PlainResponse> {
  if (url.protocol !== "http:") throw new TypeError(`plainRequest speaks http: only, not ${url.protocol}`);
  const chunks = body instanceof Uint8Array ? [body] : body;
  let length = 0;
  for (const chunk of chunks) length += chunk.byteLength;
  const head = requestHead(url, method, headers, length);
  const origin = `${url.hostname}:${url.port || "80"}`;
  const limit =
    headTimeoutMs === undefined ? undefined : { ms: headTimeoutMs, at: performance.now() + headTimeoutMs };
  try {
    return await exchange(url, origin, head, chunks, signal, takeIdle(origin), limit);
  } catch (error) {
    if (!(error instanceof StaleConnection)) throw error;
    return exchange(url, origin, head, chunks, signal, undefined, limit).catch((again: unknown) => {
      throw again instanceof StaleConnection ? again.failure : again;
    });
  }
}

type Framing = { kind: "length"; left: number } | { kind: "chunked" } | { kind: "close" };

function exchange(
  url: URL,
  origin: string,
  head: string,
  body: readonly Uint8Array[],
  signal: AbortSignal | undefined,
  reused: Socket | undefined,
  limit: { ms: number; at: number } | undefined,
): Promise<PlainResponse> {
  return new Promise<PlainResponse>((resolve, reject) => {
    if (signal?.aborted) {
      reused?.destroy();
      reject(abortError(signal));
      return;
    }
    const socket =
      reused ?? connect({ host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || 80) });
    if (!reused) socket.setNoDelay(true);
    let response: PlainResponse | undefined;
    let received = 0;
    let pending: Buffer | undefined;
    let framing: Framing = { kind: "close" };
    // Chunked state: bytes left of the current chunk, or -1 while reading a size line, -2 for the
    // CRLF after a chunk's data, -3 in the trailers.
    let chunkLeft = -1;
    let reusable = true;
    let settled = false;
    let headTimer: NodeJS.Timeout | undefined;

    const detach = () => {
      clearTimeout(headTimer);
      socket.removeListener("data", onData);
      socket.removeListener("error", onError);
      socket.removeListener("close", onClose);
      signal?.removeEventListener("abort", onAbort);
    };
    const fail = (error: Error) => {
      detach();
      socket.destroy();
      if (!response) {
        if (settled) return;
        settled = true;
        const failure = new TypeError("fetch failed", { cause: error });
        reject(reused && received === 0 ? new StaleConnection(failure) : failure);
        return;
      }
      if (!response.complete) response.fail(error);
    };
    const onAbort = () => {
      detach();
      socket.destroy();
      if (!response) {
        settled = true;
        reject(abortError(signal as AbortSignal));
      } else if (!response.complete) {
        // The caller stopped reading (the turn was interrupted): the body ends here.
        response.destroy();
      }
    };
    const onHeadTimeout = () => {
      if (settled) return;
      detach();
      socket.destroy();
      settled = true;
      reject(new HeadTimeoutError((limit as { ms: number }).ms));
    };
    const onError = (error: Error) => fail(error);
    const onClose = () => {
      if (response && framing.kind === "close" && !response.complete) {
        detach();
        response.close();
        return;
      }
      fail(new Error(response ? "other side closed" : "socket hang up"));
    };
    const finish = (server: PlainResponse, expires: number) => {
      detach();
      if (reusable && pending === undefined) keep(origin, socket, expires);
      else socket.destroy();
      server.close();
    };
    let expires = Number.POSITIVE_INFINITY;

    /** Parses a head from `pending`; false while it is incomplete. */
    const readHead = (): boolean => {
      const buffer = pending as Buffer;
      const end = buffer.indexOf("\r\n\r\n");
      if (end < 0) {
        if (buffer.length > MAX_HEAD) fail(new Error("the answer's head is too large"));
        return false;
      }
      const lines = buffer.toString("latin1", 0, end).split("\r\n");
      pending = end + 4 < buffer.length ? buffer.subarray(end + 4) : undefined;
      const status = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(lines[0] as string);
      if (!status) {
        fail(new Error(`not an HTTP/1.x answer: ${JSON.stringify((lines[0] as string).slice(0, 80))}`));
        return false;
      }
      const code = Number(status[2]);
      if (code >= 100 && code < 200) return true; // an interim answer: the real one follows
      const res = new PlainResponse();
      res.statusCode = code;
      res.statusMessage = status[3] ?? "";
      if (status[1] === "0") reusable = false;
      for (let i = 1; i < lines.length; i++) {
        const line = lines[i] as string;
        const colon = line.indexOf(":");
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        res.rawHeaders.push(name, value);
        const key = name.toLowerCase();
        res.headers[key] = res.headers[key] === undefined ? value : `${res.headers[key]}, ${value}`;
      }
      const te = (res.headers["transfer-encoding"] ?? "").toLowerCase();
      const length = res.headers["content-length"];
      if (/\bclose\b/i.test(res.headers["connection"] ?? "")) reusable = false;
      const hint = /\btimeout=(\d+)/i.exec(res.headers["keep-alive"] ?? "");
      if (hint) expires = Date.now() + Number(hint[1]) * 1000 - 1000;
      if (te.endsWith("chunked")) framing = { kind: "chunked" };
      else if (length !== undefined && /^\d+$/.test(length))
        framing = { kind: "length", left: Number(length) };
      else if (code === 204 || code === 304) framing = { kind: "length", left: 0 };
      else {
        framing = { kind: "close" };
        reusable = false;
      }
      res.onRead = () => socket.resume();
      res.onPause = () => socket.pause();
      res.onDestroy = () => {
        detach();
        socket.destroy();
      };
      clearTimeout(headTimer);
      response = res;
      settled = true;
      resolve(res);
      return true;
    };

    /** Feeds body bytes from `pending` to the response; ends it when the framing says so. */
    const readBody = (res: PlainResponse) => {
      while (pending !== undefined && !res.complete) {
        let buffer: Buffer = pending;
        pending = undefined;
        if (framing.kind === "close") {
          if (!res.deliver(buffer)) socket.pause();
          return;
        }
        if (framing.kind === "length") {
          const take = Math.min(framing.left, buffer.length);
          framing.left -= take;
          if (take > 0 && !res.deliver(buffer.subarray(0, take))) socket.pause();
          if (take < buffer.length) reusable = false; // bytes after the answer: not a clean connection
          if (framing.left === 0) finish(res, expires);
          return;
        }
        if (chunkLeft > 0) {
          const take = Math.min(chunkLeft, buffer.length);
          chunkLeft -= take;
          if (!res.deliver(buffer.subarray(0, take))) socket.pause();
          if (chunkLeft === 0) chunkLeft = -2;
          if (take < buffer.length) pending = buffer.subarray(take);
          continue;
        }
        const eol = buffer.indexOf("\r\n");
        if (eol < 0) {
          if (buffer.length > MAX_HEAD) return fail(new Error("a chunk's size line is too long"));
          pending = buffer;
          return;
        }
        const line = buffer.toString("latin1", 0, eol);
        buffer = buffer.subarray(eol + 2);
        pending = buffer.length > 0 ? buffer : undefined;
        if (chunkLeft === -2) {
          if (line !== "") return fail(new Error("a chunk does not end with CRLF"));
          chunkLeft = -1;
        } else if (chunkLeft === -3) {
          if (line === "") return finish(res, expires);
        } else {
          const size = Number.parseInt(line.split(";")[0]?.trim() ?? "", 16);
          if (!Number.isFinite(size) || size < 0)
            return fail(new Error(`bad chunk size ${JSON.stringify(line)}`));
          chunkLeft = size === 0 ? -3 : size;
        }
      }
      // A zero-length body (Content-Length: 0) ends at once.
      if (framing.kind === "length" && framing.left === 0 && !res.complete) finish(res, expires);
    };

    const onData = (data: Buffer) => {
      received += data.length;
      pending = pending === undefined ? data : Buffer.concat([pending, data]);
      while (!response && pending !== undefined && !settled) if (!readHead()) return;
      if (response) readBody(response);
    };

    socket.on("data", onData);
    socket.on("error", onError);
    socket.on("close", onClose);
    signal?.addEventListener("abort", onAbort, { once: true });
    if (limit) headTimer = setTimeout(onHeadTimeout, Math.max(0, limit.at - performance.now()));
    // A kept connection may have been paused by the last answer's reader.
    socket.resume();
    socket.cork();
    socket.write(head, "latin1");
    for (const chunk of body) socket.write(chunk);
    socket.uncork();
  });
}
