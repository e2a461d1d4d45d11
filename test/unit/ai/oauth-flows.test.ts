import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  finishAnthropicLogin,
  parsePastedCode,
  refreshAnthropic,
  startAnthropicLogin,
} from "../../../src/ai/oauth/anthropic.js";
import { codexCredential, codexDeviceLogin, refreshCodex } from "../../../src/ai/oauth/codex.js";
import {
  copilotApiUrl,
  copilotDeviceLogin,
  copilotGithubToken,
  copilotTokenProblem,
  exchangeCopilotToken,
} from "../../../src/ai/oauth/copilot.js";
import { pollDeviceCode } from "../../../src/ai/oauth/device-flow.js";
import {
  nousCredential,
  nousDeviceLogin,
  nousInferenceUrl,
  refreshNous,
} from "../../../src/ai/oauth/nous.js";
import { type DeviceCodePrompt, type OAuthDeps, OAuthError } from "../../../src/ai/oauth/types.js";
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

function deps(extra: Record<string, string> = {}): OAuthDeps & { slept: number[] } {
  const slept: number[] = [];
  return {
    fetch: globalThis.fetch,
    now: Date.now,
    sleep: async (ms) => {
      slept.push(ms);
    },
    env: { ...fakeOAuthEnv(fake), ...extra },
    slept,
  };
}

function shown(): { prompts: DeviceCodePrompt[]; show: (p: DeviceCodePrompt) => void } {
  const prompts: DeviceCodePrompt[] = [];
  return { prompts, show: (p) => prompts.push(p) };
}

describe("device-code polling", () => {
  const clock = () => {
    let t = 0;
    return {
      now: () => t,
      sleep: async (ms: number) => {
        t += ms;
      },
    };
  };

  it("waits while pending, slows down when told, and returns the approval", async () => {
    const c = clock();
    const answers = [{ type: "pending" }, { type: "slow_down" }, { type: "done", value: "token" }] as const;
    let n = 0;
    const intervals: number[] = [];
    let last = 0;
    const value = await pollDeviceCode({
      provider: "nous",
      interval: 1,
      expiresIn: 60,
      deps: { ...deps(), now: c.now, sleep: c.sleep },
      poll: async () => {
        intervals.push(c.now() - last);
        last = c.now();
        return answers[n++] ?? { type: "pending" };
      },
    });
    expect(value).toBe("token");
    // RFC 8628: slow_down adds five seconds to the interval.
    expect(intervals).toEqual([1000, 1000, 6000]);
  });

  it("gives up when the code expires, with a message that says to start again", async () => {
    const c = clock();
    const error = await pollDeviceCode({
      provider: "copilot",
      interval: 5,
      expiresIn: 12,
      deps: { ...deps(), now: c.now, sleep: c.sleep },
      poll: async () => ({ type: "pending" }),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAuthError);
    expect((error as OAuthError).code).toBe("expired_token");
    expect((error as Error).message).toMatch(/expired.*run the login again/);
  });

  it("treats a dropped connection as 'not yet' and keeps polling", async () => {
    const c = clock();
    let n = 0;
    const value = await pollDeviceCode({
      provider: "nous",
      interval: 1,
      expiresIn: 60,
      deps: { ...deps(), now: c.now, sleep: c.sleep },
      poll: async () => {
        if (n++ === 0) throw new OAuthError("nous", "could not reach", { code: "network" });
        return { type: "done", value: 7 };
      },
    });
    expect(value).toBe(7);
  });
});

describe("Nous Portal", () => {
  it("logs in with a device code and stores the state Python Hermes keeps", async () => {
    const { prompts, show } = shown();
    const state = await nousDeviceLogin(deps(), show);
    expect(prompts[0]).toMatchObject({ userCode: "NOUS-CODE" });
    expect(prompts[0]?.verificationUriComplete).toContain("user_code=NOUS-CODE");
    expect(state).toMatchObject({
      portal_base_url: fake.url,
      client_id: "hermes-cli",
      scope: "inference:invoke",
      token_type: "Bearer",
      refresh_token: expect.stringMatching(/^nous-refresh-/),
      agent_key_id: null,
    });
    expect(state["agent_key"]).toBe(state["access_token"]);
    expect(Date.parse(String(state["expires_at"]))).toBeGreaterThan(Date.now());
    const polls = fake.to("/api/oauth/token");
    expect(polls).toHaveLength(2);
    expect(polls[0]?.body).toMatchObject({ client_id: "hermes-cli", device_code: "nous-device-1" });
  });

  it("fails with the user's refusal when the login is denied", async () => {
    fake.options = { deny: true };
    await expect(nousDeviceLogin(deps(), () => {})).rejects.toThrow(/refused in the browser/);
  });

  it("renews with the refresh token, which is single use", async () => {
    const state = await nousDeviceLogin(deps(), () => {});
    const renewed = await refreshNous(state, deps());
    expect(renewed["access_token"]).not.toBe(state["access_token"]);
    expect(renewed["refresh_token"]).not.toBe(state["refresh_token"]);
    // Spending the old refresh token again is refused and asks for a new login.
    const again = await refreshNous(state, deps()).catch((e: unknown) => e);
    expect(again).toMatchObject({ relogin: true });
    expect((again as Error).message).toContain("hermes auth add nous --type oauth");
  });

  it("sends the bearer only to trusted inference hosts", () => {
    const env = {};
    expect(nousInferenceUrl(env, { inference_base_url: "https://inference-api.nousresearch.com/v1/" })).toBe(
      "https://inference-api.nousresearch.com/v1",
    );
    // A Portal answer (or an edited auth.json) naming another host, or plain http, is not trusted.
    for (const url of [
      "https://evil.example.com/v1",
      "http://inference-api.nousresearch.com/v1",
      "https://inference-api.nousresearch.com.evil.example/v1",
      "not a url",
    ]) {
      expect(nousInferenceUrl(env, { inference_base_url: url })).toBe(
        "https://inference-api.nousresearch.com/v1",
      );
    }
    // The user's own override wins.
    expect(nousInferenceUrl({ NOUS_INFERENCE_BASE_URL: "http://127.0.0.1:9/v1" }, {})).toBe(
      "http://127.0.0.1:9/v1",
    );
    expect(nousCredential({}, env)).toBeUndefined();
  });
});

describe("ChatGPT (Codex)", () => {
  it("logs in with a device code, exchanges the grant with its verifier, and stores tokens", async () => {
    const { prompts, show } = shown();
    const state = await codexDeviceLogin(deps(), show);
    expect(prompts[0]).toMatchObject({ userCode: "CODEX-CODE", verificationUri: `${fake.url}/codex/device` });
    expect(state).toMatchObject({ auth_mode: "chatgpt", tokens: { refresh_token: "codex-refresh-1" } });
    const exchange = fake.to("/oauth/token")[0];
    expect(exchange?.body).toMatchObject({
      grant_type: "authorization_code",
      code: "codex-auth-code",
      code_verifier: "codex-verifier",
      redirect_uri: `${fake.url}/deviceauth/callback`,
    });
    const credential = codexCredential(state, {});
    expect(credential?.headers).toEqual({ "ChatGPT-Account-ID": "acct-fake-1" });
    expect(credential?.expiresAt).toBeGreaterThan(Date.now() / 1000);
  });

  it("renews, keeping fields the answer leaves out, and asks for a login when refused", async () => {
    const state = await codexDeviceLogin(deps(), () => {});
    const renewed = await refreshCodex(state, deps());
    const tokens = renewed["tokens"] as Record<string, string>;
    expect(tokens["access_token"]).not.toBe((state["tokens"] as Record<string, string>)["access_token"]);
    fake.revokeAll();
    try {
      await expect(refreshCodex(renewed, deps())).rejects.toMatchObject({ relogin: true });
    } finally {
      await fake.close();
      fake = await startFakeOAuth();
    }
  });
});

describe("Claude Pro/Max (PKCE)", () => {
  it("exchanges the pasted code#state with the PKCE verifier", async () => {
    const env = fakeOAuthEnv(fake);
    const start = startAnthropicLogin(env);
    const url = new URL(start.url);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("state")).toBe(start.state);
    const pasted = await (await fetch(start.url)).text();
    const tokens = await finishAnthropicLogin(pasted, start, deps());
    expect(tokens.accessToken).toMatch(/^sk-ant-oat01-/);
    expect(tokens.expiresAt).toBeGreaterThan(Date.now());
    const renewed = await refreshAnthropic(tokens.refreshToken, deps());
    expect(renewed.accessToken).not.toBe(tokens.accessToken);
  });

  it("refuses a code from another login (state mismatch) without contacting Anthropic", async () => {
    const env = fakeOAuthEnv(fake);
    const mine = startAnthropicLogin(env);
    const theirs = startAnthropicLogin(env);
    const pasted = await (await fetch(theirs.url)).text();
    await expect(finishAnthropicLogin(pasted, mine, deps())).rejects.toMatchObject({
      code: "state_mismatch",
    });
    await expect(finishAnthropicLogin(pasted.split("#")[0] ?? "", mine, deps())).rejects.toMatchObject({
      code: "state_mismatch",
    });
    await expect(finishAnthropicLogin("   ", mine, deps())).rejects.toThrow(/no authorization code/);
    expect(fake.to("/v1/oauth/token")).toHaveLength(0);
  });

  it("refuses a code whose PKCE verifier does not match", async () => {
    const env = fakeOAuthEnv(fake);
    const start = startAnthropicLogin(env);
    const pasted = await (await fetch(start.url)).text();
    await expect(finishAnthropicLogin(pasted, { ...start, verifier: "forged" }, deps())).rejects.toThrow(
      /refused the code/,
    );
  });

  it.each([
    ["abc#xyz", { code: "abc", state: "xyz" }],
    ["  abc#xyz \n", { code: "abc", state: "xyz" }],
    ["https://console.anthropic.com/oauth/code/callback?code=abc&state=xyz", { code: "abc", state: "xyz" }],
    ["https://console.anthropic.com/oauth/code/callback#code=abc&state=xyz", { code: "abc", state: "xyz" }],
    ["abc", { code: "abc", state: "" }],
  ])("reads the pasted %j", (pasted, expected) => {
    expect(parsePastedCode(pasted)).toEqual(expected);
  });
});

describe("GitHub Copilot", () => {
  it("logs in with GitHub's device flow and exchanges the token for a Copilot token", async () => {
    const { prompts, show } = shown();
    const token = await copilotDeviceLogin(deps(), show);
    expect(token).toMatch(/^ghu_/);
    expect(prompts[0]).toMatchObject({ userCode: "GH-CODE" });
    const credential = await exchangeCopilotToken(token, deps());
    expect(credential.accessToken).toMatch(/^copilot-token-/);
    expect(credential.baseUrl).toBe("https://api.individual.githubcopilot.com");
    expect(credential.headers?.["Copilot-Integration-Id"]).toBe("vscode-chat");
    expect(fake.to("/copilot_internal/v2/token")[0]?.headers["authorization"]).toBe(`token ${token}`);
  });

  it("refuses classic personal access tokens and skips them in the environment", () => {
    expect(copilotTokenProblem("ghp_abc")).toMatch(/classic personal access tokens/);
    expect(copilotTokenProblem("github_pat_abc")).toBeUndefined();
    expect(copilotGithubToken({ COPILOT_GITHUB_TOKEN: "ghp_x", GH_TOKEN: "gho_y" })).toEqual({
      token: "gho_y",
      source: "GH_TOKEN",
    });
    expect(copilotGithubToken({ GITHUB_TOKEN: "ghp_only" })).toBeUndefined();
  });

  it("never sends the Copilot token to a host the exchange merely names", () => {
    expect(copilotApiUrl({}, "https://api.business.githubcopilot.com/")).toBe(
      "https://api.business.githubcopilot.com",
    );
    for (const host of [
      "https://evil.example.com",
      "http://api.githubcopilot.com",
      "https://githubcopilot.com.evil.example",
      "https://evilgithubcopilot.com",
    ]) {
      expect(copilotApiUrl({}, host)).toBe("https://api.githubcopilot.com");
    }
    expect(
      copilotApiUrl({ COPILOT_API_BASE_URL: "http://127.0.0.1:1/" }, "https://x.githubcopilot.com"),
    ).toBe("http://127.0.0.1:1");
  });

  it("says to log in again when GitHub refuses the token", async () => {
    await expect(exchangeCopilotToken("gho_unknown", deps())).rejects.toMatchObject({ relogin: true });
  });
});
