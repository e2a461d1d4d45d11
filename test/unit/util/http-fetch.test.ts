import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FetchHeaders, FetchResponse } from "../../../src/util/fetch-classes.js";
import { httpFetch } from "../../../src/util/http-fetch.js";

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

let server: Server;
let base = "";
const routes = new Map<string, Handler>();

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const handler = routes.get(req.url ?? "");
      if (handler) handler(req, body, res);
      else res.writeHead(404).end("no route");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe("httpFetch", () => {
  it("sends method, headers and body and returns a Response-shaped answer (no undici)", async () => {
    routes.set("/echo", (req, body, res) => {
      res.writeHead(201, { "content-type": "application/json", "x-seen": String(req.headers["x-test"]) });
      res.end(JSON.stringify({ method: req.method, body }));
    });
    const response = await httpFetch(`${base}/echo`, {
      method: "POST",
      headers: new Headers({ "X-Test": "yes" }),
      body: JSON.stringify({ hello: "wörld" }),
    });
    expect(response).toBeInstanceOf(FetchResponse);
    expect(Object.prototype.toString.call(response)).toBe("[object Response]");
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.headers.get("x-seen")).toBe("yes");
    expect(response.url).toBe(`${base}/echo`);
    expect(await response.json()).toEqual({ method: "POST", body: '{"hello":"wörld"}' });
  });

  it("streams the body chunk by chunk as it arrives (server-sent events)", async () => {
    let release: () => void = () => {};
    routes.set("/sse", (_req, _body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: one\n\n");
      release = () => res.end("data: two\n\n");
    });
    const response = await httpFetch(`${base}/sse`);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: one\n\n");
    release();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toBe("data: two\n\n");
  });

  it("iterates the body with for await, and an early stop cancels it and closes the connection", async () => {
    routes.set("/chunks", (_req, _body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: a\n\n");
      setTimeout(() => res.end("data: b\n\n"), 20);
    });
    const whole = await httpFetch(`${base}/chunks`);
    let text = "";
    for await (const chunk of whole.body as unknown as AsyncIterable<Uint8Array>)
      text += new TextDecoder().decode(chunk);
    expect(text).toBe("data: a\n\ndata: b\n\n");
    expect(whole.bodyUsed).toBe(true);

    let closed: () => void = () => {};
    const serverSawClose = new Promise<void>((resolve) => (closed = resolve));
    routes.set("/endless", (_req, _body, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: first\n\n");
      res.on("close", () => closed());
    });
    const endless = await httpFetch(`${base}/endless`);
    const seen: string[] = [];
    for await (const chunk of endless.body as unknown as AsyncIterable<Uint8Array>) {
      seen.push(new TextDecoder().decode(chunk));
      break;
    }
    expect(seen).toEqual(["data: first\n\n"]);
    await serverSawClose;
  });

  it("fails the for-await loop with 'terminated' when the server cuts the body", async () => {
    routes.set("/cut-iter", (_req, _body, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("only part");
      setImmediate(() => res.socket?.destroy());
    });
    const response = await httpFetch(`${base}/cut-iter`);
    const read = async () => {
      for await (const _chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        // keep reading
      }
    };
    await expect(read()).rejects.toMatchObject({ name: "TypeError", message: "terminated" });
  });

  it("decodes a gzip body", async () => {
    routes.set("/gz", (_req, _body, res) => {
      res.writeHead(200, { "content-encoding": "gzip" });
      res.end(gzipSync("compressed text"));
    });
    expect(await (await httpFetch(`${base}/gz`)).text()).toBe("compressed text");
  });

  it("follows redirects, turning a 303 after a POST into a GET", async () => {
    routes.set("/old", (_req, _body, res) => res.writeHead(303, { location: "/new" }).end());
    routes.set("/new", (req, body, res) => res.end(`${req.method} ${body.length}`));
    const response = await httpFetch(`${base}/old`, { method: "POST", body: "payload" });
    expect(await response.text()).toBe("GET 0");
    expect(response.redirected).toBe(true);
  });

  it("does not carry the Authorization header to another origin on a redirect", async () => {
    const other = createServer((req, res) => res.end(String(req.headers.authorization ?? "none")));
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const port = (other.address() as AddressInfo).port;
    routes.set("/away", (_req, _body, res) =>
      res.writeHead(302, { location: `http://localhost:${port}/` }).end(),
    );
    try {
      const response = await httpFetch(`${base}/away`, { headers: { authorization: "Bearer secret" } });
      expect(await response.text()).toBe("none");
    } finally {
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it("rejects with fetch's TypeError and the cause when nothing listens", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await httpFetch(`http://127.0.0.1:${port}/`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe("fetch failed");
    expect(String((error as { cause?: { code?: string } }).cause?.code)).toBe("ECONNREFUSED");
  });

  it("sends again on a new connection when the server closed the kept-alive one unanswered", async () => {
    // The server drops the second request on a connection without a byte of answer, as a server
    // does whose keep-alive timeout closed the socket just as the request was written to it.
    let connections = 0;
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      const socket = req.socket as typeof req.socket & { served?: number };
      socket.served = (socket.served ?? 0) + 1;
      if (socket.served > 1) socket.destroy();
      else res.end(`answer ${requests}`);
    });
    server.on("connection", () => connections++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const post = { method: "POST", body: JSON.stringify({ n: 1 }) };
      expect(await (await httpFetch(url, post)).text()).toBe("answer 1");
      expect(await (await httpFetch(url, post)).text()).toBe("answer 3");
      expect([connections, requests]).toEqual([2, 3]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("does not send again when a fresh connection is cut, or a streamed body was sent", async () => {
    let requests = 0;
    const server = createServer((req) => {
      requests++;
      const socket = req.socket as typeof req.socket & { served?: number };
      socket.served = (socket.served ?? 0) + 1;
      req.resume();
      // Every request is cut; the first on its connection too (not a stale socket: no retry).
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const error = await httpFetch(url, { method: "POST", body: "x" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as TypeError).message).toBe("fetch failed");
      expect(requests).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("aborts a request that has no answer yet with the signal's reason", async () => {
    routes.set("/hang", () => {});
    const controller = new AbortController();
    const pending = httpFetch(`${base}/hang`, { signal: controller.signal });
    controller.abort(new DOMException("stop", "AbortError"));
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });

  it("errors the body when the signal aborts mid-stream", async () => {
    routes.set("/slow", (_req, _body, res) => {
      res.writeHead(200);
      res.write("part");
    });
    const controller = new AbortController();
    const response = await httpFetch(`${base}/slow`, { signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: "AbortError" });
  });

  it("errors the body with undici's 'terminated' when the server cuts the connection", async () => {
    routes.set("/cut", (_req, _body, res) => {
      res.writeHead(200, { "content-length": "100" });
      res.write("only part");
      setImmediate(() => res.socket?.destroy());
    });
    const response = await httpFetch(`${base}/cut`);
    await expect(response.text()).rejects.toMatchObject({ name: "TypeError", message: "terminated" });
  });

  it("sends FetchHeaders, a pair list or a record alike", async () => {
    routes.set("/hdr", (req, _body, res) => res.end(`${req.headers["x-a"]}|${req.headers["x-b"]}`));
    const sent = [
      new FetchHeaders({ "X-A": "1", "x-b": "2" }),
      [
        ["x-a", "1"],
        ["X-B", "2"],
      ] as [string, string][],
      { "x-a": "1", "X-B": "2" },
    ];
    for (const headers of sent) {
      expect(
        await (await httpFetch(`${base}/hdr`, { headers: headers as RequestInit["headers"] })).text(),
      ).toBe("1|2");
    }
  });

  it("gives a 204 a null body", async () => {
    routes.set("/empty", (_req, _body, res) => res.writeHead(204).end());
    const response = await httpFetch(`${base}/empty`);
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });
});
