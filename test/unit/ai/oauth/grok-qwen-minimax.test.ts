/**
 * The xAI, Qwen and MiniMax flows against the loopback fake, and the guards that keep their tokens
 * on their own hosts: where a refresh token may be sent, where a bearer may go, and a login answer
 * that belongs to another login.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  approvalPage,
  expiryMs,
  minimaxInferenceUrl,
  minimaxLogin,
  refreshMinimax,
} from "../../../../src/ai/oauth/minimax.js";
import { poolEntryFromLogin } from "../../../../src/ai/oauth/pool-entry.js";
import { qwenDeviceLogin, refreshQwen } from "../../../../src/ai/oauth/qwen.js";
import { type OAuthDeps, OAuthError } from "../../../../src/ai/oauth/types.js";
import {
  refreshXai,
  xaiDeviceLogin,
  xaiEndpointAllowed,
  xaiInferenceUrl,
  xaiRefreshSkew,
} from "../../../../src/ai/oauth/xai.js";
import { type FakeOAuth, fakeOAuthEnv, startFakeOAuth } from "../../../support/fake-oauth.js";

let fake: FakeOAuth;
beforeAll(async () => {
  fake = await startFakeOAuth();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.options = {};
});

const sleeps: number[] = [];
const deps = (env: Record<string, string> = fakeOAuthEnv(fake)): OAuthDeps => ({
  fetch: globalThis.fetch,
  now: Date.now,
  sleep: async (ms) => {
    sleeps.push(ms);
  },
  env,
});

describe("xAI endpoint and base URL guards", () => {
  it.each([
    ["https://auth.x.ai/oauth2/token", true],
    ["https://accounts.x.ai/token", true],
    ["https://x.ai/token", true],
    ["http://auth.x.ai/oauth2/token", false],
    ["https://auth.x.ai.evil.com/token", false],
    ["https://evilx.ai/token", false],
    ["https://x.ai@evil.com/token", false],
    ["not a url", false],
  ])("%s may receive tokens: %s", (url, allowed) => {
    expect(xaiEndpointAllowed(url, {})).toBe(allowed);
  });

  it("allows the origin of the issuer the user named, and nothing else on that host", () => {
    const env = { HERMES_XAI_OAUTH_ISSUER: "http://127.0.0.1:9999/xai" };
    expect(xaiEndpointAllowed("http://127.0.0.1:9999/other/token", env)).toBe(true);
    expect(xaiEndpointAllowed("http://127.0.0.1:9998/token", env)).toBe(false);
  });

  it.each([
    [{}, "https://api.x.ai/v1"],
    [{ XAI_BASE_URL: "https://eu.api.x.ai/v1/" }, "https://eu.api.x.ai/v1"],
    [{ HERMES_XAI_BASE_URL: "http://127.0.0.1:8080/v1" }, "http://127.0.0.1:8080/v1"],
    [{ HERMES_XAI_BASE_URL: "http://[::1]:8080/v1" }, "http://[::1]:8080/v1"],
    [{ XAI_BASE_URL: "https://api.openai.com/v1" }, "https://api.x.ai/v1"],
    [{ XAI_BASE_URL: "http://api.x.ai/v1" }, "https://api.x.ai/v1"],
    [{ XAI_BASE_URL: "https://api.x.ai.attacker.net/v1" }, "https://api.x.ai/v1"],
    [{ XAI_BASE_URL: "http://127.0.0.1.nip.io/v1" }, "https://api.x.ai/v1"],
  ])("base URL from %j is %s", (env, expected) => {
    expect(xaiInferenceUrl(env)).toBe(expected);
  });

  it("renews a short-lived token two minutes early and a long one an hour early", () => {
    const now = 1_000_000_000_000;
    expect(xaiRefreshSkew(now / 1000 + 15 * 60, now)).toBe(120);
    expect(xaiRefreshSkew(now / 1000 + 6 * 3600, now)).toBe(3600);
    expect(xaiRefreshSkew(undefined, now)).toBe(3600);
  });
});

describe("xAI login and refresh", () => {
  it("refuses a cached token endpoint off x.ai without sending the refresh token", async () => {
    const before = fake.requests.length;
    const state = {
      tokens: { access_token: "a", refresh_token: "r" },
      discovery: { token_endpoint: "https://evil.example/token" },
    };
    await expect(refreshXai(state, deps())).rejects.toMatchObject({
      relogin: true,
      code: "discovery_invalid",
    });
    expect(fake.requests.length).toBe(before);
  });

  it("logs in, then renews with the single-use refresh token; a spent one asks for a new login", async () => {
    const state = await xaiDeviceLogin(deps(), () => {});
    const renewed = await refreshXai(state, deps());
    expect(renewed["tokens"]).not.toEqual(state["tokens"]);
    await expect(refreshXai(state, deps())).rejects.toMatchObject({ relogin: true });
  });

  it("a discovery naming a foreign token endpoint stops the login before any code is shown", async () => {
    const env = { ...fakeOAuthEnv(fake), HERMES_XAI_OAUTH_ISSUER: `${fake.url}/nothing-here` };
    let shown = false;
    await expect(
      xaiDeviceLogin(deps(env), () => {
        shown = true;
      }),
    ).rejects.toBeInstanceOf(OAuthError);
    expect(shown).toBe(false);
  });
});

describe("Qwen", () => {
  it("sends the PKCE challenge with the code request and the verifier with the poll", async () => {
    const state = await qwenDeviceLogin(deps(), () => {});
    expect(state["access_token"]).toMatch(/^qwen-access-/);
    expect(state["expiry_date"]).toBeGreaterThan(Date.now());
    const code = fake.to("/api/v1/oauth2/device/code").at(-1);
    expect(code?.body["code_challenge_method"]).toBe("S256");
    expect(fake.to("/api/v1/oauth2/token").at(-1)?.body["code_verifier"]).toBeTruthy();
    const renewed = await refreshQwen(state, deps());
    expect(renewed["access_token"]).not.toBe(state["access_token"]);
    await expect(refreshQwen(state, deps())).rejects.toMatchObject({ relogin: true });
  });
});

describe("MiniMax", () => {
  it("polls no faster than every two seconds, then stores the region's endpoint", async () => {
    sleeps.length = 0;
    fake.options = { pendingPolls: 2 };
    const state = await minimaxLogin(deps(), () => {});
    expect(sleeps).toEqual([2000, 2000]);
    expect(state).toMatchObject({ region: "global", inference_base_url: "https://api.minimax.io/anthropic" });
    const renewed = await refreshMinimax(state, deps());
    expect(renewed["access_token"]).not.toBe(state["access_token"]);
    await expect(refreshMinimax(state, deps())).rejects.toMatchObject({ relogin: true });
  });

  it.each([
    [{ region: "cn" }, "https://api.minimaxi.com/anthropic"],
    [{ inference_base_url: "https://api.minimaxi.com/anthropic/" }, "https://api.minimaxi.com/anthropic"],
    [{ inference_base_url: "https://evil.example/anthropic" }, "https://api.minimax.io/anthropic"],
    [{ inference_base_url: "http://api.minimax.io/anthropic" }, "https://api.minimax.io/anthropic"],
    [
      { region: "cn", inference_base_url: "https://api.minimax.io.evil/x" },
      "https://api.minimaxi.com/anthropic",
    ],
  ])("a stored %j sends the bearer to %s", (state, expected) => {
    expect(minimaxInferenceUrl(state)).toBe(expected);
  });

  it("rewrites only the dead approval host", () => {
    expect(approvalPage("https://www.minimaxi.io/oauth-authorize?user_code=A")).toBe(
      "https://platform.minimaxi.io/oauth-authorize?user_code=A",
    );
    expect(approvalPage("https://www.minimaxi.io/other")).toBe("https://www.minimaxi.io/other");
    expect(approvalPage("https://www.minimax.io/oauth-authorize")).toBe(
      "https://www.minimax.io/oauth-authorize",
    );
    expect(approvalPage("::not a url")).toBe("::not a url");
  });

  it("reads expired_in as epoch ms or as seconds from now", () => {
    const now = 1_700_000_000_000;
    expect(expiryMs(now + 60_000, now)).toBe(now + 60_000);
    expect(expiryMs(600, now)).toBe(now + 600_000);
  });
});

describe("a login as a pool entry", () => {
  it("flattens nested tokens and keeps the token endpoint, never the discovery block", () => {
    const entry = poolEntryFromLogin(
      "xai-oauth",
      {
        tokens: { access_token: "acc", refresh_token: "ref" },
        discovery: { token_endpoint: "https://auth.x.ai/oauth2/token" },
        last_refresh: "2026-01-01T00:00:00Z",
      },
      { id: "abc123", label: "work", baseUrl: "https://api.x.ai/v1" },
    );
    expect(entry).toMatchObject({
      id: "abc123",
      auth_type: "oauth",
      access_token: "acc",
      refresh_token: "ref",
      token_endpoint: "https://auth.x.ai/oauth2/token",
      last_refresh: "2026-01-01T00:00:00Z",
      last_status: null,
    });
    expect(entry).not.toHaveProperty("tokens");
    expect(entry).not.toHaveProperty("discovery");
  });
});
