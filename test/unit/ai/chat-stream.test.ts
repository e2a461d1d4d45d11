/**
 * The streamed chat-completions call sent and read without the SDK's stream layers
 * (src/ai/transports/chat-stream.ts), against a raw HTTP server that writes the bytes each case
 * needs: the request must be the one the SDK would send, the event stream must read as the SDK
 * reads it (line endings split across packets, comments, multi-line data, [DONE], a last event
 * without its blank line), and every failure must reach the caller as the same `ProviderError`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createChatCompletionsTransport } from "../../../src/ai/transports/chat-completions.js";
import { type ChatRequest, ProviderError } from "../../../src/ai/types.js";
import { collect, failure, finishOf, textOf } from "../../support/stream-helpers.js";

const request: ChatRequest = { model: "m", messages: [{ role: "user", content: "héllo" }] };

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

let server: Server;
let base: string;
let seen: Seen[];
let handler: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void;

beforeEach(async () => {
  seen = [];
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (body += d));
    req.on("end", () => {
      const entry = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      seen.push(entry);
      handler(req, res, entry);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  JSON.stringify({
    id: "c",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

/** Writes `pieces` one per packet (each flushed before the next), then ends. */
function sse(pieces: (string | Buffer)[], status = 200, headers: Record<string, string> = {}) {
  return (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, { "content-type": "text/event-stream", ...headers });
    let i = 0;
    const next = () => {
      if (i >= pieces.length) {
        res.end();
        return;
      }
      res.write(pieces[i++] as string | Buffer, () => setImmediate(next));
    };
    next();
  };
}

const transport = (options: Record<string, unknown> = {}) =>
  createChatCompletionsTransport({ baseUrl: base, apiKey: "sk-test-key", ...options });

describe("streamed chat completions without the SDK's stream layers", () => {
  it("sends the SDK client's request: path, bearer key, content type, default headers, body as written", async () => {
    handler = sse([`data: ${chunk({ content: "ok" }, "stop")}\n\n`, "data: [DONE]\n\n"]);
    const events = await collect(
      transport({ defaultHeaders: { "HTTP-Referer": "https://example.test", "X-Title": "hermes" } }).stream(
        request,
      ),
    );
    expect(finishOf(events).message.content).toBe("ok");
    const [sent] = seen;
    expect(sent?.method).toBe("POST");
    expect(sent?.url).toBe("/v1/chat/completions");
    expect(sent?.headers["authorization"]).toBe("Bearer sk-test-key");
    expect(sent?.headers["content-type"]).toBe("application/json");
    expect(sent?.headers["accept"]).toBe("application/json");
    expect(sent?.headers["user-agent"]).toMatch(/^OpenAI\/JS /);
    expect(sent?.headers["http-referer"]).toBe("https://example.test");
    expect(sent?.headers["x-title"]).toBe("hermes");
    expect(sent?.headers["x-stainless-retry-count"]).toBe("0");
    expect(Number(sent?.headers["content-length"])).toBe(Buffer.byteLength(sent?.body ?? ""));
    expect(JSON.parse(sent?.body ?? "")).toMatchObject({
      model: "m",
      stream: true,
      messages: [{ content: "héllo" }],
    });
  });

  it("sends no Authorization header to a keyless local server", async () => {
    handler = sse([`data: ${chunk({ content: "ok" }, "stop")}\n\n`]);
    await collect(transport({ apiKey: undefined }).stream(request));
    expect(seen[0]?.headers["authorization"]).toBeUndefined();
  });

  it("sends a provider's own key header instead of the bearer, on the direct stream and on the SDK's path alike", async () => {
    handler = (req, res, entry) => {
      if (JSON.parse(entry.body).stream) {
        sse([`data: ${chunk({ content: "ok" }, "stop")}\n\n`, "data: [DONE]\n\n"])(req, res);
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "c",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
        }),
      );
    };
    const azure = { apiKeyHeader: "api-key", defaultHeaders: { "x-title": "hermes" } };
    expect(finishOf(await collect(transport(azure).stream(request))).message.content).toBe("ok");
    expect(
      finishOf(await collect(transport({ ...azure, stream: false }).stream(request))).message.content,
    ).toBe("ok");
    expect(seen).toHaveLength(2);
    const [direct, viaSdk] = seen;
    for (const sent of [direct, viaSdk]) {
      expect(sent?.headers["api-key"]).toBe("sk-test-key");
      expect(sent?.headers["authorization"]).toBeUndefined();
      expect(sent?.headers["x-title"]).toBe("hermes");
    }
    // Apart from what differs per request, the two paths send the same header names.
    const names = (h: IncomingMessage["headers"] | undefined) =>
      Object.keys(h ?? {})
        .filter((n) => !["content-length", "x-stainless-timeout", "connection"].includes(n))
        .sort();
    expect(names(direct?.headers)).toEqual(names(viaSdk?.headers));
  });

  it("reads CRLF, CR and LF endings split across packets, comments, multi-line data and UTF-8 cut mid-character", async () => {
    const snow = Buffer.from(`data: ${chunk({ content: "☃ snow" })}\r\n\r\n`);
    const cut = snow.indexOf(Buffer.from("☃")) + 1;
    handler = sse([
      ": keep-alive comment\n\n",
      `data: ${chunk({ content: "one " })}\r`,
      `\n\r\n`,
      snow.subarray(0, cut),
      snow.subarray(cut),
      // One event's data over two lines: joined with a newline, still one JSON document.
      `event: message\rdata: {"id":"c","object":"chat.completion.chunk",\rdata: "choices":[{"index":0,"delta":{"content":" two"},"finish_reason":null}]}\r\r`,
      `data: ${chunk({}, "stop")}\n\n`,
      "data: [DONE]\n\n",
      // After [DONE] nothing counts.
      `data: ${chunk({ content: " late" })}\n\n`,
    ]);
    const events = await collect(transport().stream(request));
    expect(textOf(events, "text_delta").join("")).toBe("one ☃ snow two");
    expect(finishOf(events).reason).toBe("stop");
  });

  it("drops a last event that never got its blank line, as the SDK does", async () => {
    handler = sse([`data: ${chunk({ content: "kept" })}\n\n`, `data: ${chunk({}, "stop")}`]);
    const { error, events } = await failure(transport().stream(request));
    expect(textOf(events, "text_delta").join("")).toBe("kept");
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toMatch(/ended before the model finished/);
  });

  it("decodes a gzip-encoded event stream", async () => {
    const body = gzipSync(`data: ${chunk({ content: "zipped" }, "stop")}\n\ndata: [DONE]\n\n`);
    handler = sse([body], 200, { "content-encoding": "gzip" });
    const events = await collect(transport().stream(request));
    expect(finishOf(events).message.content).toBe("zipped");
  });

  it("turns an HTTP error into the SDK's error: status, provider message, Retry-After", async () => {
    handler = (_req, res) => {
      res.writeHead(429, { "content-type": "application/json", "retry-after": "7" });
      res.end(JSON.stringify({ error: { message: "Slow down, please.", type: "rate_limit" } }));
    };
    const { error } = await failure(transport().stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    const e = error as ProviderError;
    expect(e.status).toBe(429);
    expect(e.message).toContain("HTTP 429");
    expect(e.message).toContain("Slow down, please.");
    expect(e.retryAfterMs).toBe(7000);
  });

  it("keeps a non-JSON error body's text", async () => {
    handler = (_req, res) => {
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<html>Bad gateway from the proxy</html>");
    };
    const { error } = await failure(transport().stream(request));
    expect((error as ProviderError).status).toBe(502);
    expect((error as ProviderError).message).toContain("Bad gateway from the proxy");
  });

  it("reads an error object inside a 200 stream as the provider's error, with its code as status", async () => {
    handler = sse([`data: ${JSON.stringify({ error: { message: "Upstream overloaded", code: 503 } })}\n\n`]);
    const { error } = await failure(transport().stream(request));
    expect((error as ProviderError).status).toBe(503);
    expect((error as ProviderError).message).toContain("Upstream overloaded");
  });

  it("fails clearly on a malformed event instead of skipping it", async () => {
    handler = sse([`data: ${chunk({ content: "a" })}\n\n`, "data: {not json\n\n"]);
    const { error } = await failure(transport().stream(request));
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toMatch(/JSON|Unexpected|token/i);
  });

  it("hands a redirect to the SDK path, which sends the request again and follows it", async () => {
    handler = (req, res, entry) => {
      if (entry.url === "/v1/chat/completions") {
        res.writeHead(307, { location: "/moved/chat/completions" });
        res.end();
        return;
      }
      sse([`data: ${chunk({ content: "moved" }, "stop")}\n\n`])(req, res);
    };
    const events = await collect(transport().stream(request));
    expect(finishOf(events).message.content).toBe("moved");
    expect(seen.map((s) => s.url)).toEqual([
      "/v1/chat/completions",
      "/v1/chat/completions",
      "/moved/chat/completions",
    ]);
    expect(seen[2]?.body).toBe(seen[0]?.body);
    expect(seen[2]?.headers["authorization"]).toBe("Bearer sk-test-key");
  });

  it("reports a connection cut mid-answer as a transport failure with the partial text flagged", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${chunk({ content: "half an ans" })}\n\n`, () =>
        setImmediate(() => res.socket?.destroy()),
      );
    };
    const { error, events } = await failure(transport().stream(request));
    expect(textOf(events, "text_delta").join("")).toBe("half an ans");
    expect((error as ProviderError).transport).toBe(true);
    expect((error as ProviderError).partial).toBe(true);
  });

  it("stops reading and closes the connection when the caller aborts mid-answer", async () => {
    let closed!: () => void;
    const socketClosed = new Promise<void>((resolve) => (closed = resolve));
    handler = (req, res) => {
      req.socket.once("close", () => closed());
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${chunk({ content: "first" })}\n\n`);
    };
    const controller = new AbortController();
    const texts: string[] = [];
    const run = (async () => {
      for await (const event of transport().stream(request, controller.signal)) {
        if (event.type === "text_delta") {
          texts.push(event.text);
          controller.abort();
        }
      }
    })();
    await expect(run).rejects.toMatchObject({ name: "AbortError" });
    await socketClosed;
    expect(texts).toEqual(["first"]);
  });

  it("a consumer far behind a long answer that came at once: every event, in order, the stream paused meanwhile", async () => {
    const words = Array.from({ length: 400 }, (_, i) => `w${i} `);
    const body = `${words.map((w) => `data: ${chunk({ content: w })}\n\n`).join("")}data: ${chunk({}, "stop")}\n\ndata: [DONE]\n\n`;
    handler = sse([body]);
    const texts: string[] = [];
    let finished = false;
    for await (const event of transport().stream(request)) {
      if (event.type === "text_delta") texts.push(event.text);
      if (event.type === "finish") finished = true;
      // A slow consumer: the parser gets ahead of it by far more than it holds before pausing.
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(texts).toEqual(words);
    expect(finished).toBe(true);
  });

  it("a consumer that stops early closes the connection", async () => {
    let closed!: () => void;
    const socketClosed = new Promise<void>((resolve) => (closed = resolve));
    handler = (req, res) => {
      req.socket.once("close", () => closed());
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${chunk({ content: "first" })}\n\ndata: ${chunk({ content: "second" })}\n\n`);
    };
    const texts: string[] = [];
    for await (const event of transport().stream(request)) {
      if (event.type === "text_delta") texts.push(event.text);
      break;
    }
    await socketClosed;
    expect(texts).toEqual(["first"]);
  });

  it("keeps one connection to a plain-http server across model calls, and recovers when the server drops it", async () => {
    const connections: import("node:net").Socket[] = [];
    server.on("connection", (socket) => connections.push(socket));
    handler = sse([`data: ${chunk({ content: "ok" }, "stop")}\n\n`, "data: [DONE]\n\n"]);
    const t = transport();
    for (let i = 0; i < 3; i++) expect(finishOf(await collect(t.stream(request))).message.content).toBe("ok");
    expect(connections).toHaveLength(1);
    // The server closes its idle connections (its keep-alive timeout ran out): the next call still works.
    const closed = new Promise((resolve) => connections[0]?.once("close", resolve));
    server.closeIdleConnections();
    await closed;
    expect(finishOf(await collect(t.stream(request))).message.content).toBe("ok");
    expect(connections).toHaveLength(2);
    expect(seen).toHaveLength(4);
  });

  it("refused connection: the same could-not-connect failure as before", async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    const { error } = await failure(transport().stream(request));
    expect((error as ProviderError).transport).toBe(true);
    expect((error as ProviderError).message).toMatch(/Could not connect to .*ECONNREFUSED/);
    // afterEach closes it again.
    server = createServer();
  });
});
