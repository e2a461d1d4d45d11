import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { codexDeviceLogin } from "../../../src/ai/oauth/codex.js";
import { nousDeviceLogin } from "../../../src/ai/oauth/nous.js";
import { oauthSource } from "../../../src/ai/oauth/source.js";
import { createOAuthTransport } from "../../../src/ai/oauth/transport.js";
import type { OAuthCredential, OAuthDeps } from "../../../src/ai/oauth/types.js";
import { NoProviderError, resolveRuntime } from "../../../src/ai/resolve.js";
import { type ChatRequest, ProviderError, type StreamEvent, type Transport } from "../../../src/ai/types.js";
import { writeAnthropicOAuth } from "../../../src/config/anthropic-oauth.js";
import { readAuthStore, setProviderState, updateAuthStore } from "../../../src/config/auth-store.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { type FakeOAuth, fakeOAuthEnv, startFakeOAuth } from "../../support/fake-oauth.js";

let fake: FakeOAuth;
beforeAll(async () => {
  fake = await startFakeOAuth();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.requests.length = 0;
  fake.options = {};
});

function deps(now: () => number = Date.now): OAuthDeps {
  return { fetch: globalThis.fetch, now, sleep: async () => {}, env: fakeOAuthEnv(fake) };
}

function freshHome(): string {
  return mkdtempSync(join(tmpdir(), "hermes-oauth-"));
}

async function loggedIn(provider: "nous" | "openai-codex", home: string): Promise<Record<string, unknown>> {
  const state =
    provider === "nous" ? await nousDeviceLogin(deps(), () => {}) : await codexDeviceLogin(deps(), () => {});
  await updateAuthStore(home, (data) => setProviderState(data, provider, state, { active: true }));
  return state;
}

const refreshes = () => fake.requests.filter((r) => r.body["grant_type"] === "refresh_token").length;

describe("the live credential of a stored login", () => {
  it("uses the stored token while it is valid and renews it shortly before it expires", async () => {
    const home = freshHome();
    const state = await loggedIn("nous", home);
    const source = oauthSource("nous", home, deps());
    expect((await source.current()).accessToken).toBe(state["access_token"]);
    expect(refreshes()).toBe(0);
    // A minute before expiry (inside the two-minute margin) it renews and writes the new pair.
    const expiry = Date.parse(String(state["expires_at"]));
    const later = oauthSource(
      "nous",
      home,
      deps(() => expiry - 60_000),
    );
    const renewed = await later.current();
    expect(renewed.accessToken).not.toBe(state["access_token"]);
    expect(refreshes()).toBe(1);
    const stored = readAuthStore(home).data.providers["nous"] as Record<string, unknown>;
    expect(stored["access_token"]).toBe(renewed.accessToken);
    expect(stored["refresh_token"]).not.toBe(state["refresh_token"]);
    expect(statSync(join(home, "auth.json")).mode & 0o777).toBe(0o600);
  });

  it("renews after a 401 unless another process already did (a single-use refresh token is spent once)", async () => {
    const home = freshHome();
    const state = await loggedIn("openai-codex", home);
    const stale = (state["tokens"] as Record<string, string>)["access_token"] ?? "";
    const a = oauthSource("openai-codex", home, deps());
    const b = oauthSource("openai-codex", home, deps());
    // Two sessions hit a 401 with the same token at once: one refresh, both get the new token.
    const [ra, rb] = await Promise.all([
      a.current({ force: true, stale }),
      b.current({ force: true, stale }),
    ]);
    expect(ra.accessToken).toBe(rb.accessToken);
    expect(ra.accessToken).not.toBe(stale);
    expect(refreshes()).toBe(1);
    expect(ra.headers).toEqual({ "ChatGPT-Account-ID": "acct-fake-1" });
  });

  it("says to log in again when the refresh token is refused, and when there is no login", async () => {
    const home = freshHome();
    await expect(oauthSource("nous", home, deps()).current()).rejects.toThrow(
      /not logged in to nous; log in with: hermes auth add nous --type oauth/,
    );
    await loggedIn("nous", home);
    await updateAuthStore(home, (data) => {
      (data.providers["nous"] as Record<string, unknown>)["refresh_token"] = "nous-refresh-forged";
    });
    await expect(oauthSource("nous", home, deps()).current({ force: true })).rejects.toMatchObject({
      relogin: true,
    });
  });

  it("renews the Claude login in .anthropic_oauth.json, keeping the file's other fields", async () => {
    const home = freshHome();
    const start = (await import("../../../src/ai/oauth/anthropic.js")).startAnthropicLogin(
      fakeOAuthEnv(fake),
    );
    const pasted = await (await fetch(start.url)).text();
    const { finishAnthropicLogin } = await import("../../../src/ai/oauth/anthropic.js");
    const tokens = await finishAnthropicLogin(pasted, start, deps());
    await writeAnthropicOAuth(home, { ...tokens, expiresAt: Date.now() - 1000 });
    const file = join(home, ".anthropic_oauth.json");
    writeFileSync(
      file,
      JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), scopes: ["user:inference"] }),
    );
    const renewed = await oauthSource("anthropic", home, deps()).current();
    expect(renewed.accessToken).not.toBe(tokens.accessToken);
    const stored = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    expect(stored).toMatchObject({ accessToken: renewed.accessToken, scopes: ["user:inference"] });
    expect(stored["expiresAt"]).toBeGreaterThan(Date.now());
  });

  it("re-exchanges the Copilot token when it is about to expire or after a 401", async () => {
    const githubToken = "ghu_fakegithubtokenX";
    let now = Date.now();
    const source = oauthSource(
      "copilot",
      "",
      deps(() => now),
      githubToken,
    );
    const first = await source.current();
    expect(await source.current()).toEqual(first);
    now += 3600_000;
    const second = await source.current();
    expect(second.accessToken).not.toBe(first.accessToken);
    const third = await source.current({ force: true, stale: second.accessToken });
    expect(third.accessToken).not.toBe(second.accessToken);
  });
});

describe("the transport over a login", () => {
  const request: ChatRequest = { model: "m", messages: [{ role: "user", content: "hi" }] };
  const finish: StreamEvent = {
    type: "finish",
    reason: "stop",
    message: { role: "assistant", content: "ok" },
  };

  function scripted(tokens: string[], behaviour: (token: string) => "ok" | "401" | "401-after-text") {
    const builds: string[] = [];
    let n = 0;
    const source = {
      provider: "nous" as const,
      current: async (options: { force?: boolean } = {}): Promise<OAuthCredential> => {
        if (options.force) n++;
        return { accessToken: tokens[Math.min(n, tokens.length - 1)] ?? "" };
      },
    };
    const transport = createOAuthTransport({
      apiMode: "chat_completions",
      baseUrl: "http://x",
      source,
      build: async (credential) => {
        builds.push(credential.accessToken);
        const wire: Transport = {
          apiMode: "chat_completions",
          async *stream() {
            const mode = behaviour(credential.accessToken);
            if (mode === "401-after-text") {
              yield { type: "text_delta", text: "par" } as StreamEvent;
              throw new ProviderError("unauthorized", { status: 401, partial: true });
            }
            if (mode === "401") throw new ProviderError("unauthorized", { status: 401 });
            yield finish;
          },
        };
        return wire;
      },
    });
    return { transport, builds };
  }

  const collect = async (t: Transport) => {
    const events: StreamEvent[] = [];
    for await (const e of t.stream(request)) events.push(e);
    return events;
  };

  it("renews the login once after a 401 and repeats the call", async () => {
    const { transport, builds } = scripted(["old", "new"], (token) => (token === "old" ? "401" : "ok"));
    expect(await collect(transport)).toEqual([finish]);
    expect(builds).toEqual(["old", "new"]);
    // The next call reuses the client built for the new token.
    await collect(transport);
    expect(builds).toEqual(["old", "new"]);
  });

  it("gives the 401 back when the renewed token is refused too (no loop)", async () => {
    const { transport, builds } = scripted(["old", "new", "newer"], () => "401");
    await expect(collect(transport)).rejects.toMatchObject({ status: 401 });
    expect(builds).toEqual(["old", "new"]);
  });

  it("never repeats a call whose answer had started streaming", async () => {
    const { transport, builds } = scripted(["old", "new"], () => "401-after-text");
    await expect(collect(transport)).rejects.toMatchObject({ status: 401 });
    expect(builds).toEqual(["old"]);
  });

  it("turns a login that cannot be renewed into a 401 naming the login command", async () => {
    const home = freshHome();
    const transport = createOAuthTransport({
      apiMode: "chat_completions",
      baseUrl: "http://x",
      source: oauthSource("openai-codex", home, deps()),
      build: async () => {
        throw new Error("not reached");
      },
    });
    const error = await collect(transport).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 401 });
    expect((error as Error).message).toContain("hermes auth add openai-codex --type oauth");
  });
});

describe("resolving a runtime with logins", () => {
  const config = () => defaultConfig();

  it("uses the Nous login when NOUS_API_KEY is not set, and the active login when nothing is configured", async () => {
    const home = freshHome();
    await loggedIn("nous", home);
    const env = { NOUS_INFERENCE_BASE_URL: "http://127.0.0.1:9/v1" };
    const runtime = resolveRuntime({ flags: {}, config: config(), env, home });
    expect(runtime).toMatchObject({
      provider: "nous",
      baseUrl: "http://127.0.0.1:9/v1",
      login: { provider: "nous" },
    });
    // A key in the environment wins over the login for the same provider.
    const keyed = resolveRuntime({
      flags: { provider: "nous" },
      config: config(),
      env: { NOUS_API_KEY: "k-123456789" },
      home,
    });
    expect(keyed.login).toBeUndefined();
    expect(keyed.apiKey).toBe("k-123456789");
  });

  it("explains how to log in for a provider that has only a login", () => {
    const home = freshHome();
    expect(() =>
      resolveRuntime({ flags: { provider: "openai-codex" }, config: config(), env: {}, home }),
    ).toThrow(/needs a login[\s\S]*hermes auth add openai-codex --type oauth/);
    expect(() => resolveRuntime({ flags: { provider: "codex" }, config: config(), env: {}, home })).toThrow(
      NoProviderError,
    );
  });

  it("never sends the Claude login to an endpoint the user did not name for it", async () => {
    const home = freshHome();
    await writeAnthropicOAuth(home, {
      accessToken: "sk-ant-oat01-secret",
      refreshToken: "r",
      expiresAt: Date.now() + 3600_000,
    });
    const direct = resolveRuntime({ flags: { provider: "anthropic" }, config: config(), env: {}, home });
    expect(direct).toMatchObject({ apiKey: "sk-ant-oat01-secret", login: { provider: "anthropic" } });
    // --base-url to some other host: the login stays home, and the missing key is reported.
    expect(() =>
      resolveRuntime({
        flags: { provider: "anthropic", baseUrl: "https://proxy.example.com" },
        config: config(),
        env: {},
        home,
      }),
    ).toThrow(NoProviderError);
    const named = resolveRuntime({
      flags: { provider: "anthropic" },
      config: config(),
      env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:7/" },
      home,
    });
    expect(named).toMatchObject({ baseUrl: "http://127.0.0.1:7", login: { provider: "anthropic" } });
  });

  it("exchanges Copilot's GitHub token and refuses a classic PAT with what to do", () => {
    const home = freshHome();
    const runtime = resolveRuntime({
      flags: { provider: "copilot" },
      config: config(),
      env: { GH_TOKEN: "gho_abc" },
      home,
    });
    expect(runtime).toMatchObject({
      provider: "copilot",
      apiKey: "gho_abc",
      login: { provider: "copilot", followBaseUrl: true },
    });
    expect(() =>
      resolveRuntime({
        flags: { provider: "copilot" },
        config: config(),
        env: { GITHUB_TOKEN: "ghp_classic" },
        home,
      }),
    ).toThrow(/classic personal access tokens/);
  });

  it("ignores an unreadable auth.json rather than failing to start", () => {
    const home = freshHome();
    writeFileSync(join(home, "auth.json"), "{ not json");
    expect(() =>
      resolveRuntime({ flags: {}, config: config(), env: { OPENROUTER_API_KEY: "sk-or-1234567890" }, home }),
    ).not.toThrow();
  });
});
