/** `/model` with no name: the provider's own list, cached in the home, the current model marked. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionModelList } from "../../../src/agent/model-switch.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { type FakeLlm, startFakeLlm } from "../../support/fake-llm.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm({
    models: ["small-model", "big-model"],
    modelInfo: { "big-model": { context_length: 131072 } },
  });
});
afterAll(() => llm.close());

function config() {
  const c = defaultConfig();
  c.model = { ...c.model, provider: "custom", base_url: llm.url, default: "small-model" };
  return c;
}

describe("sessionModelList", () => {
  it("lists the provider's models with windows, marks the current one, and caches the list", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-model-list-"));
    const input = { provider: "custom", model: "small-model", config: config(), home, env: {} };
    const first = await sessionModelList(input);
    expect(first.note).toBeUndefined();
    expect(first.lines.join("\n")).toMatch(/1\. small-model.*\(current\)/);
    expect(first.lines.join("\n")).toMatch(/2\. big-model\s+131k ctx/);
    const asked = llm.requests.filter((r) => r.path.endsWith("/models")).length;
    await sessionModelList(input);
    expect(llm.requests.filter((r) => r.path.endsWith("/models")).length).toBe(asked);
    await sessionModelList({ ...input, refresh: true });
    expect(llm.requests.filter((r) => r.path.endsWith("/models")).length).toBe(asked + 1);
  });

  it("says why when the endpoint cannot be asked and nothing is cached", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-model-list-"));
    const c = config();
    c.model = { ...c.model, base_url: "http://127.0.0.1:9/v1" };
    const out = await sessionModelList({ provider: "custom", model: "x", config: c, home, env: {} });
    expect(out.lines).toEqual([]);
    expect(out.note).toMatch(/model list is unavailable/);
  });
});
