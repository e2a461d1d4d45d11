/**
 * The plain-http client of the streamed chat call (src/ai/transports/plain-http.ts), against raw
 * TCP servers that write exactly the bytes each case needs: answers framed by chunks (with
 * extensions and trailers), by length or by the connection closing, interim 1xx answers, kept
 * connections reused and dropped, a kept connection the server closed retried once, and every
 * failure reported as fetch reports it. Headers that would smuggle a line are refused.
 */
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  type BodySink,
  HeadTimeoutError,
  type PlainResponse,
  plainRequest,
  requestHead,
} from "../../../src/ai/transports/plain-http.js";

interface Received {
  head: string;
  body: string;
  socket: Socket;
}

let server: Server | undefined;
const sockets = new Set<Socket>();

/** A server that calls `answer` once per complete request (head + Content-Length body) on each connection. */
async function rawServer(
  answer: (request: Received, index: number) => void,
): Promise<{ url: URL; connections: () => number }> {
  let connections = 0;
  let index = 0;
  server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    let buffer = Buffer.alloc(0);
    socket.on("data", (data: Buffer) => {
      buffer = Buffer.concat([buffer, data]);
      for (;;) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buffer.toString("latin1", 0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < end + 4 + length) return;
        const body = buffer.toString("utf8", end + 4, end + 4 + length);
        buffer = buffer.subarray(end + 4 + length);
        answer({ head, body, socket }, index++);
      }
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return { url: new URL(`http://127.0.0.1:${port}/v1/chat/completions`), connections: () => connections };
}

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

async function text(res: PlainResponse): Promise<string> {
  res.setEncoding("utf8");
  let out = "";
  for await (const piece of res) out += piece as string;
  return out;
}

/** A sink that records what it is handed, and settles when the body ended or failed. */
function recordingSink(): BodySink & { text: () => string; done: Promise<"end" | Error> } {
  const pieces: Buffer[] = [];
  let settle: (outcome: "end" | Error) => void = () => undefined;
  const done = new Promise<"end" | Error>((resolve) => {
    settle = resolve;
  });
  return {
    data: (chunk) => pieces.push(Buffer.from(chunk)),
    end: () => settle("end"),
    error: (error) => settle(error),
    text: () => Buffer.concat(pieces).toString("utf8"),
    done,
  };
}

const send = (url: URL, body = "{}", headers: Record<string, string> = {}, signal?: AbortSignal) =>
  plainRequest(url, "POST", { "content-type": "application/json", ...headers }, Buffer.from(body), signal);

describe("plain-http client", () => {
  it("sends the request line, the caller's headers, Host and the body's length", async () => {
    let seen: Received | undefined;
    const { url } = await rawServer((r) => {
      seen = r;
      r.socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
    });
    const res = await send(new URL(`${url.href}?x=1`), '{"a":"é"}', { authorization: "Bearer k" });
    expect(res.statusCode).toBe(200);
    expect(await text(res)).toBe("ok");
    expect(res.complete).toBe(true);
    expect(seen?.head.split("\r\n")[0]).toBe("POST /v1/chat/completions?x=1 HTTP/1.1");
    expect(seen?.head).toContain(`host: ${url.host}`);
    expect(seen?.head).toContain("authorization: Bearer k");
    expect(seen?.head).toContain(`content-length: ${Buffer.byteLength('{"a":"é"}')}`);
    expect(seen?.body).toBe('{"a":"é"}');
  });

  it("sends a body given in pieces one after the other, with their total length, and again on a new connection", async () => {
    const bodies: string[] = [];
    const { url } = await rawServer((r, index) => {
      bodies.push(r.body);
      // The first answer keeps the connection; the second request finds it closed and is resent.
      if (index === 0) r.socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
      else r.socket.write("HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nyes");
    });
    const pieces = [Buffer.from('{"m":["é'), Buffer.from(""), Buffer.from('🚀"]'), Buffer.from("}")];
    const first = await plainRequest(url, "POST", {}, pieces, undefined);
    expect(await text(first)).toBe("ok");
    for (const socket of sockets) socket.end();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await plainRequest(url, "POST", {}, pieces, undefined);
    expect(await text(second)).toBe("yes");
    expect(bodies.at(-1)).toBe('{"m":["é🚀"]}');
    expect(bodies[0]).toBe('{"m":["é🚀"]}');
  });

  it("reads a chunked answer split anywhere, with chunk extensions and trailers, and reuses the connection", async () => {
    const { url, connections } = await rawServer((r) => {
      const bytes =
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nx-trailer: t\r\n\r\n";
      // One byte per packet: every state of the parser meets a cut.
      let i = 0;
      const next = () => {
        if (i < bytes.length) r.socket.write(bytes[i++] as string, () => setImmediate(next));
      };
      next();
    });
    expect(await text(await send(url))).toBe("hello world");
    expect(await text(await send(url))).toBe("hello world");
    expect(connections()).toBe(1);
  });

  it("skips an interim 1xx answer and keeps repeated headers, joined", async () => {
    const { url } = await rawServer((r) =>
      r.socket.write(
        "HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 429 Too Many Requests\r\nretry-after: 7\r\nx-a: 1\r\nX-A: 2\r\ncontent-length: 4\r\n\r\nslow",
      ),
    );
    const res = await send(url);
    expect(res.statusCode).toBe(429);
    expect(res.statusMessage).toBe("Too Many Requests");
    expect(res.headers["retry-after"]).toBe("7");
    expect(res.headers["x-a"]).toBe("1, 2");
    expect(res.rawHeaders).toContain("X-A");
    expect(await text(res)).toBe("slow");
  });

  it("reads an answer framed by the connection closing, and opens a new connection next time", async () => {
    const { url, connections } = await rawServer((r) => {
      r.socket.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: 1\n\n");
      setImmediate(() => r.socket.end("data: 2\n\n"));
    });
    const first = await send(url);
    expect(await text(first)).toBe("data: 1\n\ndata: 2\n\n");
    expect(first.complete).toBe(true);
    await text(await send(url));
    expect(connections()).toBe(2);
  });

  it("does not reuse a connection the server said it closes", async () => {
    const { url, connections } = await rawServer((r) =>
      r.socket.write("HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 1\r\n\r\na"),
    );
    await text(await send(url));
    await text(await send(url));
    expect(connections()).toBe(2);
  });

  it("retries once on a new connection when the kept one was closed by the server before answering", async () => {
    const { url, connections } = await rawServer((r, index) => {
      if (index === 1) {
        // The server dropped the idle connection just as the request went out.
        r.socket.destroy();
        return;
      }
      r.socket.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
    });
    await text(await send(url));
    const again = await send(url);
    expect(await text(again)).toBe("ok");
    expect(connections()).toBe(2);
  });

  it("reports a refused connection as fetch does: TypeError('fetch failed') with the socket's error", async () => {
    const { url } = await rawServer(() => {});
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
    const error = await send(url).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe("fetch failed");
    expect(((error as TypeError).cause as NodeJS.ErrnoException).code).toBe("ECONNREFUSED");
  });

  it("errors the body, never completing it, when the connection is cut mid-chunk", async () => {
    const { url } = await rawServer((r) => {
      r.socket.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\na\r\npart", () =>
        r.socket.destroy(),
      );
    });
    const res = await send(url);
    const error = await text(res).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(String(error)).toContain("other side closed");
    expect(res.complete).toBe(false);
  });

  it("refuses a malformed chunk size and an answer that is not HTTP", async () => {
    const bad = await rawServer((r) =>
      r.socket.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"),
    );
    const res = await send(bad.url);
    expect(String(await text(res).catch((e: unknown) => e))).toContain("bad chunk size");
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server?.close(resolve));
    const notHttp = await rawServer((r) => r.socket.end("SSH-2.0-OpenSSH\r\n\r\n"));
    const error = await send(notHttp.url).catch((e: unknown) => e);
    expect((error as TypeError).message).toBe("fetch failed");
    expect(String((error as TypeError).cause)).toContain("not an HTTP/1.x answer");
  });

  it("rejects with the signal's reason when aborted before the answer, and closes the connection", async () => {
    let closed = false;
    const { url } = await rawServer((r) => r.socket.on("close", () => (closed = true)));
    const controller = new AbortController();
    const pending = send(url, "{}", {}, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort(new Error("user interrupt"));
    await expect(pending).rejects.toThrow("user interrupt");
    await expect.poll(() => closed).toBe(true);
  });

  it("refuses headers that would smuggle a line or are not tokens, before anything is sent", () => {
    const url = new URL("http://127.0.0.1:9/v1");
    expect(() => requestHead(url, "POST", { "x-a": "1\r\nx-injected: 1" }, 0)).toThrow(TypeError);
    expect(() => requestHead(url, "POST", { "x-a": "1\nGET / HTTP/1.1" }, 0)).toThrow(TypeError);
    expect(() => requestHead(url, "POST", { "x a": "1" }, 0)).toThrow(TypeError);
    expect(() => requestHead(url, "POST", { "x-a\r\n": "1" }, 0)).toThrow(TypeError);
    // The client writes Host, length and keep-alive itself; a caller's own are dropped.
    const head = requestHead(url, "POST", { host: "evil", "content-length": "99", connection: "close" }, 5);
    expect(head).not.toContain("evil");
    expect(head).toContain("content-length: 5\r\n");
    expect(head).not.toContain("content-length: 99");
    expect(head).not.toContain("connection: close");
  });

  it("the same headers object changed between requests is checked and written as it is now", () => {
    const url = new URL("http://127.0.0.1:9/v1");
    const headers: Record<string, string> = { authorization: "Bearer one", "x-a": "1" };
    expect(requestHead(url, "POST", headers, 1)).toContain("authorization: Bearer one\r\nx-a: 1\r\n");
    expect(requestHead(url, "POST", headers, 2)).toContain("content-length: 2\r\n");
    headers["authorization"] = "Bearer two";
    expect(requestHead(url, "POST", headers, 3)).toContain("authorization: Bearer two\r\n");
    expect(requestHead(url, "POST", headers, 3)).not.toContain("Bearer one");
    headers["x-a"] = "1\r\nx-injected: 1";
    expect(() => requestHead(url, "POST", headers, 4)).toThrow(TypeError);
    delete headers["x-a"];
    headers["connection"] = "close";
    headers["x-b"] = "2";
    const head = requestHead(url, "POST", headers, 5);
    expect(head).not.toContain("x-a");
    expect(head).not.toContain("connection: close");
    expect(head).toContain("x-b: 2\r\n");
  });

  it("speaks http: only", async () => {
    await expect(send(new URL("https://127.0.0.1:9/v1"))).rejects.toThrow(/http: only/);
  });

  it("hands the body to an attached sink: what came with the head at once, the rest as it arrives, then the end", async () => {
    let socket: Socket | undefined;
    const { url } = await rawServer((r) => {
      socket = r.socket;
      r.socket.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n");
    });
    const res = await send(url);
    // Let the first chunk reach the answer's own buffer before anyone takes it.
    await new Promise((resolve) => setTimeout(resolve, 30));
    const sink = recordingSink();
    res.attach(sink);
    expect(sink.text()).toBe("first");
    socket?.write("7\r\n second\r\n0\r\n\r\n");
    expect(await sink.done).toBe("end");
    expect(sink.text()).toBe("first second");
    expect(res.complete).toBe(true);
  });

  it("a sink attached after the whole body arrived gets it and the end at once; one attached to a destroyed answer gets the failure", async () => {
    const { url } = await rawServer((r) =>
      r.socket.write("HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nwhole"),
    );
    const res = await send(url);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const sink = recordingSink();
    res.attach(sink);
    expect(await sink.done).toBe("end");
    expect(sink.text()).toBe("whol");

    const again = await send(url);
    again.destroy();
    const late = recordingSink();
    again.attach(late);
    // Destroyed before anyone read it: what had arrived is gone, and the sink is told so.
    expect(await late.done).toBeInstanceOf(Error);
    expect(late.text()).toBe("");
  });

  it("ends an attached sink with an error, never its end, when the signal aborts mid-body, and closes the connection", async () => {
    let closed = false;
    const { url } = await rawServer((r) => {
      r.socket.on("close", () => (closed = true));
      r.socket.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n");
    });
    const controller = new AbortController();
    const res = await send(url, "{}", {}, controller.signal);
    const sink = recordingSink();
    res.attach(sink);
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    const outcome = await sink.done;
    expect(outcome).toBeInstanceOf(Error);
    expect(res.complete).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(true);
  });

  it("a sink that pauses the body stops the connection's bytes until it resumes", async () => {
    let socket: Socket | undefined;
    const { url } = await rawServer((r) => {
      socket = r.socket;
      r.socket.write("HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nabc");
    });
    const res = await send(url);
    const sink = recordingSink();
    res.attach(sink);
    await new Promise((resolve) => setTimeout(resolve, 20));
    res.pauseBody();
    socket?.write("def");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sink.text()).toBe("abc");
    res.resumeBody();
    expect(await sink.done).toBe("end");
    expect(sink.text()).toBe("abcdef");
  });

  it("gives up waiting for the head after headTimeoutMs with a HeadTimeoutError, without trying a second connection", async () => {
    const { url, connections } = await rawServer(() => undefined);
    const started = Date.now();
    const error = await plainRequest(url, "POST", {}, Buffer.from("{}"), undefined, 150).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HeadTimeoutError);
    expect((error as Error).name).toBe("TimeoutError");
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(connections()).toBe(1);
  });

  it("the head timeout stops once the head is in: a slow body is the stall watchdog's business", async () => {
    let socket: Socket | undefined;
    const { url } = await rawServer((r) => {
      socket = r.socket;
      r.socket.write("HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nab");
    });
    const res = await plainRequest(url, "POST", {}, Buffer.from("{}"), undefined, 100);
    const sink = recordingSink();
    res.attach(sink);
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket?.write("cd");
    expect(await sink.done).toBe("end");
    expect(sink.text()).toBe("abcd");
  });
});
