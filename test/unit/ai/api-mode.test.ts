import { describe, expect, it } from "vitest";
import { type ApiModeInput, detectApiMode } from "../../../src/ai/api-mode.js";
import type { ApiMode } from "../../../src/ai/types.js";

describe("detectApiMode", () => {
  it.each<[string, ApiModeInput, ApiMode]>([
    ["nothing known", {}, "chat_completions"],
    [
      "explicit wins over provider",
      { explicit: "chat_completions", provider: "anthropic" },
      "chat_completions",
    ],
    [
      "explicit wins over URL",
      { explicit: "anthropic_messages", baseUrl: "http://127.0.0.1:8080/v1" },
      "anthropic_messages",
    ],
    ["explicit is case-insensitive", { explicit: " Codex_Responses " }, "codex_responses"],
    ["explicit auto means detect", { explicit: "auto", provider: "xai" }, "codex_responses"],
    ["empty explicit means detect", { explicit: "", provider: "anthropic" }, "anthropic_messages"],
    ["anthropic profile", { provider: "anthropic" }, "anthropic_messages"],
    ["minimax profile", { provider: "minimax" }, "anthropic_messages"],
    ["xai profile via alias", { provider: "grok" }, "codex_responses"],
    ["bedrock profile", { provider: "bedrock" }, "bedrock_converse"],
    [
      "openrouter profile",
      { provider: "openrouter", baseUrl: "https://openrouter.ai/api/v1" },
      "chat_completions",
    ],
    ["openrouter with a gpt-5 model", { provider: "openrouter", model: "openai/gpt-5" }, "chat_completions"],
    ["api.anthropic.com", { provider: "custom", baseUrl: "https://api.anthropic.com" }, "anthropic_messages"],
    ["path ending in /anthropic", { baseUrl: "https://api.z.ai/api/anthropic/" }, "anthropic_messages"],
    [
      "bedrock-runtime host",
      { baseUrl: "https://bedrock-runtime.eu-west-1.amazonaws.com" },
      "bedrock_converse",
    ],
    ["codex backend", { baseUrl: "https://chatgpt.com/backend-api/codex" }, "codex_responses"],
    ["api.x.ai", { baseUrl: "https://api.x.ai/v1" }, "codex_responses"],
    [
      "gpt-5 on api.openai.com",
      { provider: "openai-api", baseUrl: "https://api.openai.com/v1", model: "gpt-5" },
      "codex_responses",
    ],
    [
      "gpt-5-mini on api.openai.com",
      { baseUrl: "https://api.openai.com/v1", model: "gpt-5-mini" },
      "codex_responses",
    ],
    [
      "gpt-4.1 on api.openai.com",
      { baseUrl: "https://api.openai.com/v1", model: "gpt-4.1" },
      "chat_completions",
    ],
    ["gpt-5 on a local server", { baseUrl: "http://127.0.0.1:8000/v1", model: "gpt-5" }, "chat_completions"],
    [
      "anthropic in a query is not a path",
      { baseUrl: "http://proxy.local/v1?x=/anthropic" },
      "chat_completions",
    ],
    ["unparseable URL", { baseUrl: "not a url" }, "chat_completions"],
    [
      "unknown provider falls back to URL",
      { provider: "nope", baseUrl: "https://api.anthropic.com" },
      "anthropic_messages",
    ],
  ])("%s", (_label, input, expected) => {
    expect(detectApiMode(input)).toBe(expected);
  });

  it("rejects an unknown explicit api_mode, naming the accepted ones", () => {
    expect(() => detectApiMode({ explicit: "chat" })).toThrow(
      /"chat" is not a known api_mode\.\nUse one of: chat_completions/,
    );
  });
});
