import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { HermesConfig } from "../../../../src/config/defaults.js";
import { loadConfig } from "../../../../src/config/load.js";
import { DEFAULT_SAMPLING } from "../../../../src/tools/mcp/config-options.js";
import { type McpManager, type StartMcpOptions, startMcpServers } from "../../../../src/tools/mcp/manager.js";
import {
  type McpSampler,
  McpSamplingRefused,
  pickModel,
  RateWindow,
  samplingHandler,
  toMessages,
} from "../../../../src/tools/mcp/sampling.js";
import { modelSampler } from "../../../../src/tools/mcp/sampling-model.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import { reply } from "../../../support/fake-llm.js";
import { useFakeLlm } from "../../../support/fake-llm-per-file.js";
import { testServerEntry } from "../../../support/mcp-servers.js";
import { makeToolContext } from "../../../support/tool-context.js";

const llm = useFakeLlm({ models: ["fake-model", "cheap-model"] });

const managers: McpManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.close()));
});

function fakeConfig(): { config: HermesConfig; home: string } {
  const home = mkdtempSync(join(tmpdir(), "hermes-sampling-"));
  const config = loadConfig({ home, env: { HOME: home } }).config;
  config.model.provider = "custom";
  config.model.base_url = llm.url;
  config.model.default = "fake-model";
  return { config, home };
}

async function startWith(entry: Record<string, unknown>, extra: Partial<StartMcpOptions> = {}) {
  const registry = new ToolRegistry();
  const warnings: string[] = [];
  const manager = startMcpServers({
    config: { t: testServerEntry(entry) },
    registry,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    onWarning: (m) => warnings.push(m),
    ...extra,
  });
  managers.push(manager);
  await manager.ready;
  expect(warnings).toEqual([]);
  const call = async (tool: string, args: Record<string, unknown> = {}) =>
    (await registry.execute(`mcp_t_${tool}`, args, makeToolContext())).content;
  return { manager, call };
}

describe("MCP sampling answered by the agent's model", () => {
  it("answers a server's sampling request through the session's model, capped", async () => {
    const { config, home } = fakeConfig();
    llm.enqueue(reply().text("Paris is the capital."));
    const { call } = await startWith({}, { sampler: modelSampler({ config, env: {}, home }) });
    expect(await call("ask_model", { prompt: "Capital of France?", max_tokens: 100000 })).toBe(
      "model fake-model said: Paris is the capital.",
    );
    const body = llm.chatRequests[0]?.body as {
      messages: Array<{ role: string; content: unknown }>;
      max_tokens?: number;
      max_completion_tokens?: number;
      model: string;
    };
    expect(body.model).toBe("fake-model");
    // The server asked for 100000; the default cap (4096) wins.
    expect(body.max_tokens ?? body.max_completion_tokens).toBe(4096);
    // Only what the server sent: its system prompt and its message, nothing of Hermes's.
    expect(body.messages).toEqual([
      { role: "system", content: "You answer for an MCP server." },
      { role: "user", content: "Capital of France?" },
    ]);
  });

  it("uses sampling.model, or a hint only when allowed_models lists it", async () => {
    const { config, home } = fakeConfig();
    const sampler = modelSampler({ config, env: {}, home });
    llm.enqueue(reply().text("from the allowed hint"), reply().text("from the session model"));
    const { call } = await startWith({ sampling: { allowed_models: ["cheap-model"] } }, { sampler });
    expect(await call("ask_model", { prompt: "a", model_hint: "cheap-model" })).toBe(
      "model cheap-model said: from the allowed hint",
    );
    // A hint outside the allowlist never picks the model (a server cannot choose an expensive one).
    expect(await call("ask_model", { prompt: "b", model_hint: "gpt-expensive" })).toBe(
      "model fake-model said: from the session model",
    );
    expect(llm.chatRequests.map((r) => (r.body as { model: string }).model)).toEqual([
      "cheap-model",
      "fake-model",
    ]);
  });

  it("refuses when the server's sampling is off: no model call", async () => {
    const { config, home } = fakeConfig();
    const { call } = await startWith(
      { sampling: { enabled: false } },
      { sampler: modelSampler({ config, env: {}, home }) },
    );
    const answer = await call("ask_model", { prompt: "spend my tokens" });
    expect(answer).toMatch(
      /^sampling failed: .*sampling is turned off for MCP server "t" \(mcp_servers\.t\.sampling\.enabled\)/,
    );
    expect(llm.chatRequests).toHaveLength(0);
  });

  it("refuses past max_rpm within the minute, without calling the model", async () => {
    const { config, home } = fakeConfig();
    llm.enqueue(reply().text("one"), reply().text("two"));
    const { call } = await startWith(
      { sampling: { max_rpm: 2 } },
      { sampler: modelSampler({ config, env: {}, home }) },
    );
    expect(await call("ask_model", { prompt: "1" })).toBe("model fake-model said: one");
    expect(await call("ask_model", { prompt: "2" })).toBe("model fake-model said: two");
    expect(await call("ask_model", { prompt: "3" })).toMatch(
      /sampling failed: .*rate limit reached for MCP server "t": at most 2 requests a minute \(mcp_servers\.t\.sampling\.max_rpm\)/,
    );
    expect(llm.chatRequests).toHaveLength(2);
  });

  it("offers the session's working directory as the server's root", async () => {
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "hermes-roots-")));
    const { call } = await startWith({}, { cwd });
    const roots = JSON.parse(await call("roots")) as Array<{ uri: string }>;
    expect(roots).toEqual([{ uri: pathToFileURL(cwd).href, name: expect.any(String) }]);
  });

  it("offers no roots when no working directory is given", async () => {
    const { call } = await startWith({});
    expect(await call("roots")).toMatch(/^roots failed:/);
  });
});

describe("sampling handler rules", () => {
  const answer: McpSampler = async (request) => ({
    text: `ok ${request.maxTokens}`,
    model: request.model ?? "main",
  });
  const params = {
    messages: [{ role: "user" as const, content: { type: "text", text: "hi" } }],
    maxTokens: 50,
  };

  it("counts a rolling minute", () => {
    let t = 0;
    const window = new RateWindow(2, () => t);
    expect([window.take(), window.take(), window.take()]).toEqual([true, true, false]);
    t = 59_999;
    expect(window.take()).toBe(false);
    t = 60_000;
    expect(window.take()).toBe(true);
  });

  it("refuses tools, non-user-only conversations and unknown content", async () => {
    const handle = samplingHandler("s", { ...DEFAULT_SAMPLING, allowedModels: [] }, answer);
    await expect(handle({ ...params, tools: [{ name: "x" }] })).rejects.toThrow(/does not offer tools/);
    await expect(
      handle({ ...params, messages: [{ role: "assistant", content: { type: "text", text: "x" } }] }),
    ).rejects.toThrow(/no user message/);
    await expect(
      handle({ ...params, messages: [{ role: "user", content: { type: "audio", data: "x" } }] }),
    ).rejects.toThrow(McpSamplingRefused);
    expect(await handle(params)).toEqual({
      role: "assistant",
      content: { type: "text", text: "ok 50" },
      model: "main",
      stopReason: "endTurn",
    });
  });

  it("times out a slow model with the key to change", async () => {
    const slow: McpSampler = (request) =>
      new Promise((_resolve, reject) =>
        request.signal.addEventListener("abort", () => reject(new Error("aborted"))),
      );
    const handle = samplingHandler("s", { ...DEFAULT_SAMPLING, allowedModels: [], timeoutMs: 20 }, slow);
    await expect(handle(params)).rejects.toThrow(/within 0.02 s \(mcp_servers\.s\.sampling\.timeout\)/);
  });

  it("turns images into image parts and keeps a sampling.model over any hint", () => {
    expect(
      toMessages({
        messages: [{ role: "user", content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] }],
      }),
    ).toEqual([
      { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
    ]);
    const settings = { ...DEFAULT_SAMPLING, model: "fixed", allowedModels: ["hinted"] };
    expect(pickModel(settings, { modelPreferences: { hints: [{ name: "hinted" }] } })).toBe("fixed");
  });
});
