import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listModels, modelsFromListing } from "../../../src/ai/model-listing.js";

let server: Server;
let base = "";
const seen: Array<Record<string, string | string[] | undefined>> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers);
    const key = req.headers.authorization ?? req.headers["x-api-key"] ?? req.headers["api-key"];
    if (req.url === "/bad/models") {
      res.writeHead(500).end("boom");
      return;
    }
    if (key !== "Bearer good" && key !== "good") {
      res.writeHead(401).end('{"error":"bad key"}');
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ data: [{ id: "m-1", context_length: 32768 }, { id: "m-2" }, { nope: 1 }] }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("listModels", () => {
  it("lists ids and stated windows with a bearer key", async () => {
    const out = await listModels({ baseUrl: `${base}/v1/`, apiKey: "good", apiMode: "chat_completions" });
    expect(out).toEqual({ ok: true, models: [{ id: "m-1", contextLength: 32768 }, { id: "m-2" }] });
  });
  it("sends Anthropic's key header for anthropic_messages", async () => {
    const out = await listModels({ baseUrl: base, apiKey: "good", apiMode: "anthropic_messages" });
    expect(out.ok).toBe(true);
    expect(seen.at(-1)?.["anthropic-version"]).toBe("2023-06-01");
  });
  it("sends the key under the provider's own header, without a bearer, when it names one", async () => {
    const out = await listModels({
      baseUrl: base,
      apiKey: "good",
      apiKeyHeader: "api-key",
      apiMode: "chat_completions",
    });
    expect(out.ok).toBe(true);
    expect(seen.at(-1)?.["api-key"]).toBe("good");
    expect(seen.at(-1)?.["authorization"]).toBeUndefined();
  });
  it("says the key was refused on 401", async () => {
    const out = await listModels({ baseUrl: base, apiKey: "wrong", apiMode: "chat_completions" });
    expect(out).toMatchObject({ ok: false, kind: "auth", status: 401 });
  });
  it("reports other statuses with the body's start", async () => {
    const out = await listModels({ baseUrl: `${base}/bad`, apiKey: "good", apiMode: "chat_completions" });
    expect(out).toMatchObject({ ok: false, kind: "http", status: 500 });
    if (!out.ok) expect(out.message).toContain("boom");
  });
  it("reports an endpoint that does not answer", async () => {
    const out = await listModels({
      baseUrl: "http://127.0.0.1:9/v1",
      apiMode: "chat_completions",
      timeoutMs: 2000,
    });
    expect(out).toMatchObject({ ok: false, kind: "unreachable" });
  });
  it("reads Ollama's {models:[{name}]} shape", () => {
    expect(modelsFromListing({ models: [{ name: "llama3:8b" }] })).toEqual([{ id: "llama3:8b" }]);
    expect(modelsFromListing({ error: "x" })).toBeUndefined();
  });
});
