import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AIAgent } from "../../../src/agent/agent.js";
import { contextLengthFromListing } from "../../../src/ai/model-metadata.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { type FakeLlm, reply, startFakeLlm } from "../../support/fake-llm.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm({
    models: ["local-model", "anthropic/claude-sonnet-4"],
    modelInfo: { "local-model": { max_model_len: 16_384 } },
  });
});
afterAll(async () => {
  await llm.close();
});

describe("context window from the provider's model listing", () => {
  it.each([
    [{ data: [{ id: "m", context_length: 200_000 }] }, "m", 200_000],
    [{ data: [{ id: "m", max_model_len: 32_768 }] }, "m", 32_768],
    [{ data: [{ id: "m", meta: { n_ctx_train: 131_072 } }] }, "m", 131_072],
    [{ data: [{ id: "m", top_provider: { context_length: 65_536 } }] }, "m", 65_536],
    [{ data: [{ id: "qwen/qwen3-32b", context_window: 40_960 }] }, "qwen3-32b", 40_960],
    [{ data: [{ id: "m" }] }, "m", undefined],
    [{ data: [{ id: "other", context_length: 1000_000 }] }, "m", undefined],
    [{ error: "nope" }, "m", undefined],
    [null, "m", undefined],
  ])("%j for %s → %s", (listing, model, expected) => {
    expect(contextLengthFromListing(listing, model)).toBe(expected);
  });

  it("asks an OpenAI-compatible endpoint once for a model nothing else knows, and caches the answer", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hermes-window-"));
    const config = defaultConfig();
    config.model = { ...config.model, provider: "custom", base_url: llm.url, default: "local-model" };
    const listings = () => llm.requests.filter((r) => r.method === "GET" && r.path === "/v1/models").length;
    const cache = join(dir, "context_length_cache.yaml");
    for (let i = 0; i < 2; i++) {
      llm.enqueue(reply().text("ok"));
      const agent = new AIAgent({ config, home: dir, cwd: dir, env: {}, toolsets: [], systemPrompt: "t" });
      await agent.chat("hi");
      await agent.close();
      // The listing is read in the background; wait until its answer is cached.
      while (!existsSync(cache)) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(listings()).toBe(1);
    expect(readFileSync(cache, "utf8")).toContain(`local-model@${llm.url}: 16384`);

    // A model the catalog knows is not looked up.
    const before = listings();
    config.model.default = "anthropic/claude-sonnet-4";
    llm.enqueue(reply().text("ok"));
    const known = new AIAgent({ config, home: dir, cwd: dir, env: {}, toolsets: [], systemPrompt: "t" });
    await known.chat("hi");
    await known.close();
    expect(listings()).toBe(before);
  });
});
