import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AIAgent } from "../../../src/agent/agent.js";
import { ChatSession } from "../../../src/agent/chat-session.js";
import { cleanTitle, uniqueTitle } from "../../../src/agent/title.js";
import { NoProviderError, resolveRuntime } from "../../../src/ai/resolve.js";
import { readClaudeCodeToken } from "../../../src/config/claude-code.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { openSessionStore } from "../../../src/state/sqlite-store.js";
import { type FakeLlm, httpError, reply, startFakeLlm } from "../../support/fake-llm.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => {
  llm.requests.length = 0;
  llm.chatRequests.length = 0;
});

function userHome(token: string, expiresAt = Date.now() + 3_600_000): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-userhome-"));
  writeLogin(dir, token, expiresAt);
  return dir;
}

function writeLogin(dir: string, token: string, expiresAt = Date.now() + 3_600_000): void {
  mkdirSync(join(dir, ".claude"), { recursive: true });
  writeFileSync(
    join(dir, ".claude", ".credentials.json"),
    JSON.stringify({ claudeAiOauth: { accessToken: token, refreshToken: "r", expiresAt, scopes: [] } }),
  );
}

describe("Claude Code's login for the anthropic provider", () => {
  const anthropic = () => {
    const config = defaultConfig();
    config.model.provider = "anthropic";
    return config;
  };

  it("uses the access token from ~/.claude/.credentials.json when no key is set", () => {
    const home = userHome("sk-ant-oat01-from-claude-code");
    const runtime = resolveRuntime({ flags: {}, config: anthropic(), env: { HOME: home }, home: undefined });
    expect(runtime.apiKey).toBe("sk-ant-oat01-from-claude-code");
    expect(runtime.apiMode).toBe("anthropic_messages");
  });

  it("prefers a key from the environment, ignores an expired login, and never sends it elsewhere", () => {
    const home = userHome("sk-ant-oat01-from-claude-code");
    const env = { HOME: home, ANTHROPIC_API_KEY: "sk-ant-api-key" };
    expect(resolveRuntime({ flags: {}, config: anthropic(), env, home: undefined }).apiKey).toBe(
      "sk-ant-api-key",
    );

    const expired = userHome("sk-ant-oat01-old", Date.now() - 1000);
    expect(readClaudeCodeToken(expired)).toBeUndefined();
    expect(() =>
      resolveRuntime({ flags: {}, config: anthropic(), env: { HOME: expired }, home: undefined }),
    ).toThrow(NoProviderError);

    const proxy = anthropic();
    proxy.model.base_url = "https://proxy.example.com/anthropic";
    expect(() => resolveRuntime({ flags: {}, config: proxy, env: { HOME: home }, home: undefined })).toThrow(
      NoProviderError,
    );
  });

  it("after a 401, picks up the token Claude Code renewed in the file and retries", async () => {
    const home = userHome("sk-ant-oat01-first");
    const dir = mkdtempSync(join(tmpdir(), "hermes-login-"));
    const config = defaultConfig();
    config.agent.api_max_retries = 0;
    llm.enqueue(
      httpError(401, { type: "error", error: { type: "authentication_error", message: "expired" } }),
    );
    llm.enqueue(reply().text("welcome back"));
    const agent = new AIAgent({
      config,
      home: dir,
      cwd: dir,
      env: { HOME: home },
      toolsets: [],
      systemPrompt: "t",
      resolved: {
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        baseUrl: llm.url.replace(/\/v1$/, ""),
        apiKey: "sk-ant-oat01-first",
        apiMode: "anthropic_messages",
      },
    });
    // Claude Code renews the token while the request is in flight.
    llm.respondWith((request) => {
      if (request.headers["authorization"] === "Bearer sk-ant-oat01-first")
        writeLogin(home, "sk-ant-oat01-second");
      return undefined;
    });
    try {
      expect(await agent.chat("hi")).toBe("welcome back");
      const auth = llm.requests.map((r) => r.headers["authorization"]);
      expect(auth).toEqual(["Bearer sk-ant-oat01-first", "Bearer sk-ant-oat01-second"]);
    } finally {
      llm.respondWith(undefined);
      await agent.close();
    }
  });
});

describe("session titles", () => {
  it("cleans what the title model says", async () => {
    expect(cleanTitle('Title: "Fixing the flaky CI build."\n')).toBe("Fixing the flaky CI build");
    expect(cleanTitle("**Rust lifetimes explained**")).toBe("Rust lifetimes explained");
    expect(cleanTitle("\n\n  ")).toBeUndefined();
    expect(cleanTitle("x".repeat(300))?.length).toBe(100);
    const taken = new Set(["Topic", "Topic #2"]);
    expect(await uniqueTitle("Topic", async (t) => taken.has(t))).toBe("Topic #3");
  });

  it("titles a new session after its first exchange with the auxiliary model, in the background", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hermes-title-"));
    const store = openSessionStore(join(dir, "state.db"));
    const config = defaultConfig();
    config.model = { ...config.model, provider: "custom", base_url: llm.url, default: "main-model" };
    config["auxiliary"] = { title_generation: { provider: "main", model: "cheap-model" } };
    llm.enqueue(
      reply().text("Use a bisect to find it."),
      reply().text('"Hunting a regression with git bisect."'),
    );
    const session = await ChatSession.open({
      config,
      home: dir,
      cwd: dir,
      env: {},
      toolsets: [],
      store,
      autoTitle: true,
      resolved: {
        provider: "custom",
        model: "main-model",
        baseUrl: llm.url,
        apiKey: undefined,
        apiMode: "chat_completions",
      },
    });
    await session.run("How do I find which commit broke the build?").result;
    await session.titleSettled();
    expect(await session.currentTitle()).toBe("Hunting a regression with git bisect");
    const titleRequest = llm.chatRequests[1]?.body as { model: string; messages: { content: string }[] };
    expect(titleRequest.model).toBe("cheap-model");
    expect(titleRequest.messages[0]?.content).toContain("How do I find which commit broke the build?");
    // One title per session: the next exchange asks for nothing more.
    llm.enqueue(reply().text("You're welcome."));
    await session.run("thanks").result;
    await session.titleSettled();
    expect(llm.chatRequests).toHaveLength(3);
    await session.close();
    store.close();
  });
});
