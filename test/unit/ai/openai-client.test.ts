import { describe, expect, it } from "vitest";
import { createOpenAIClient } from "../../../src/ai/transports/openai-client.js";

describe("createOpenAIClient", () => {
  it("gives one client for equal settings and its own client for any other setting", async () => {
    const base = { baseUrl: "http://127.0.0.1:9/v1", apiKey: "sk-one", headers: { "x-a": "1" } };
    const first = await createOpenAIClient(base);
    const again = await createOpenAIClient({ ...base, headers: { "x-a": "1" } });
    expect(again.client).toBe(first.client);
    const others = [
      { ...base, apiKey: "sk-two" },
      { ...base, apiKey: undefined },
      { ...base, baseUrl: "http://127.0.0.1:10/v1" },
      { ...base, headers: { "x-a": "2" } },
      { ...base, timeoutMs: 5000 },
      { ...base, apiKeyHeader: "api-key" },
    ];
    for (const options of others) {
      const other = await createOpenAIClient(options);
      expect(other.client).not.toBe(first.client);
      expect(other.client.baseURL).toBe(options.baseUrl);
      expect(other.client.apiKey).toBe(options.apiKey || "unused");
    }
  });

  it("never shares a client made with a caller's own fetch", async () => {
    const fetch = (() => Promise.reject(new Error("unused"))) as unknown as typeof globalThis.fetch;
    const options = { baseUrl: "http://127.0.0.1:9/v1", apiKey: "sk-one", fetch };
    const a = await createOpenAIClient(options);
    const b = await createOpenAIClient(options);
    expect(a.client).not.toBe(b.client);
  });
});
