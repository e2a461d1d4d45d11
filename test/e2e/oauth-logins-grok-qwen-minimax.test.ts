/**
 * The xAI Grok, Qwen and MiniMax OAuth logins end to end through the built CLI, against the
 * loopback fakes of their authorization servers (test/support/fake-oauth.ts) with the fake LLM
 * standing in for each inference API; and a second `hermes auth add … --type oauth` becoming a
 * credential-pool entry that the pool rotates to.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runHermes, tempHome } from "../support/cli.js";
import { httpError, reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { type FakeOAuth, fakeOAuthEnv, startFakeOAuth } from "../support/fake-oauth.js";

const llm = useFakeLlm();
let oauth: FakeOAuth;
beforeAll(async () => {
  oauth = await startFakeOAuth();
});
afterAll(async () => {
  await oauth.close();
});
beforeEach(() => {
  llm.respondWith(undefined);
  oauth.options = {};
});

type Json = Record<string, unknown>;
interface AuthFile {
  active_provider?: string | null;
  providers: Record<string, Json & { tokens?: Json }>;
  credential_pool?: Record<string, Json[]>;
}
const bearer = (r: { headers: Record<string, unknown> } | undefined) =>
  String(r?.headers["authorization"] ?? "");
const authJson = (home: string) => JSON.parse(readFileSync(join(home, "auth.json"), "utf8")) as AuthFile;

describe("xAI Grok login", () => {
  it("logs in with a device code after OIDC discovery and chats over Responses on the login", async () => {
    const { home, cwd } = tempHome("agent:\n  api_max_retries: 0\n");
    const env = { ...fakeOAuthEnv(oauth), HERMES_XAI_BASE_URL: llm.url };
    // xAI's tokens live hours; one that lives an hour is renewed at once (the hour-early margin).
    oauth.options = { expiresIn: 6 * 3600 };
    const login = await runHermes(["auth", "add", "xai-oauth"], { home, cwd, env });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain("XAI-CODE");
    expect(login.stdout).toContain("Logged in to xAI Grok");
    const stored = authJson(home);
    expect(stored.active_provider).toBe("xai-oauth");
    const state = stored.providers["xai-oauth"] ?? {};
    expect(state).toMatchObject({
      auth_mode: "oauth_device_code",
      discovery: { token_endpoint: `${oauth.url}/xai/oauth2/token` },
      tokens: { refresh_token: "xai-refresh-1", token_type: "Bearer" },
    });
    expect(statSync(join(home, "auth.json")).mode & 0o777).toBe(0o600);
    // The device poll carried xAI's client id and the device grant.
    expect(oauth.to("/xai/oauth2/token")[0]?.body).toMatchObject({
      grant_type: "urn:ietf:params:oauth:grant-type:device_code",
      client_id: "b1a00492-073a-47ea-816f-4c329264a828",
      device_code: "xai-device-1",
    });

    // Nothing else names a provider: the active login is used, over the Responses API.
    llm.enqueue(reply().text("hello from grok"));
    const chat = await runHermes(["-z", "hi"], { home, cwd, env });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout.trim()).toBe("hello from grok");
    expect(llm.chatRequests[0]?.path).toBe("/v1/responses");
    expect(bearer(llm.chatRequests[0])).toBe(`Bearer ${String(state.tokens?.["access_token"])}`);
    expect(chat.stdout + chat.stderr).not.toContain(String(state.tokens?.["access_token"]));
  });
});

describe("Qwen login", () => {
  it("logs in with a PKCE device code and renews the token before it expires", async () => {
    const { home, cwd } = tempHome("model:\n  provider: qwen-oauth\nagent:\n  api_max_retries: 0\n");
    const env = { ...fakeOAuthEnv(oauth), HERMES_QWEN_BASE_URL: llm.url };
    // The login's token lives 60 s: inside the two-minute margin, so the first call renews it.
    oauth.options = { expiresIn: 60 };
    const login = await runHermes(["auth", "add", "qwen-oauth", "--type", "oauth"], { home, cwd, env });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain("QWEN-CODE");
    const state = authJson(home).providers["qwen-oauth"] ?? {};
    expect(state).toMatchObject({ token_type: "Bearer", resource_url: "portal.qwen.ai" });
    expect(typeof state["expiry_date"]).toBe("number");
    const first = String(state["access_token"]);

    oauth.options = { expiresIn: 3600 };
    llm.enqueue(reply().text("hello from qwen"));
    const chat = await runHermes(["-z", "hi"], { home, cwd, env });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout.trim()).toBe("hello from qwen");
    const renewed = String(authJson(home).providers["qwen-oauth"]?.["access_token"]);
    expect(renewed).not.toBe(first);
    expect(bearer(llm.chatRequests.at(-1))).toBe(`Bearer ${renewed}`);
    expect(llm.chatRequests.at(-1)?.path).toBe("/v1/chat/completions");
  });
});

describe("Qwen CLI login", () => {
  it("chats on the Qwen CLI's own ~/.qwen/oauth_creds.json, renewing it and writing it back there", async () => {
    const { home, cwd } = tempHome("model:\n  provider: qwen-oauth\nagent:\n  api_max_retries: 0\n");
    const env = { ...fakeOAuthEnv(oauth), HERMES_QWEN_BASE_URL: llm.url };
    // runHermes makes the temp home HOME too: the Qwen CLI's file goes under it.
    const creds = join(home, ".qwen", "oauth_creds.json");
    mkdirSync(join(home, ".qwen"));
    writeFileSync(
      creds,
      JSON.stringify({
        access_token: "qwen-cli-access",
        refresh_token: "qwen-cli-refresh",
        token_type: "Bearer",
        resource_url: "portal.qwen.ai",
        // Inside the two-minute margin: the first call renews it.
        expiry_date: Date.now() + 30_000,
      }),
      { mode: 0o600 },
    );
    oauth.grantRefreshToken("qwen-cli-refresh");
    oauth.options = { expiresIn: 3600 };
    llm.enqueue(reply().text("hello from the qwen cli login"));
    const chat = await runHermes(["-z", "hi"], { home, cwd, env });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout.trim()).toBe("hello from the qwen cli login");
    const written = JSON.parse(readFileSync(creds, "utf8")) as Json;
    expect(written["access_token"]).not.toBe("qwen-cli-access");
    expect(written["refresh_token"]).not.toBe("qwen-cli-refresh");
    expect(statSync(creds).mode & 0o777).toBe(0o600);
    expect(bearer(llm.chatRequests.at(-1))).toBe(`Bearer ${String(written["access_token"])}`);
    expect(chat.stdout + chat.stderr).not.toContain(String(written["access_token"]));

    // While it is valid it is used as it is; hermes auth status names where the login lives.
    const renewals = oauth.to("/api/v1/oauth2/token").length;
    llm.enqueue(reply().text("again"));
    const again = await runHermes(["-z", "hi again"], { home, cwd, env });
    expect(again.code, again.stderr).toBe(0);
    expect(oauth.to("/api/v1/oauth2/token")).toHaveLength(renewals);
    expect(bearer(llm.chatRequests.at(-1))).toBe(`Bearer ${String(written["access_token"])}`);
    const list = await runHermes(["auth", "status"], { home, cwd, env });
    expect(list.stdout).toContain("qwen-oauth");
    expect(list.stdout).toContain(creds);
  });
});

describe("MiniMax login", () => {
  it("logs in with the user-code grant, shows the working approval page, and chats as a bearer over Anthropic Messages", async () => {
    const config = `model:\n  provider: minimax-oauth\n  base_url: ${llm.url}\n  default: MiniMax-M2\nagent:\n  api_max_retries: 0\n`;
    const { home, cwd } = tempHome(config);
    const env = fakeOAuthEnv(oauth);
    oauth.options = { pendingPolls: 0 };
    const login = await runHermes(["auth", "add", "minimax-oauth"], { home, cwd, env });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain("https://platform.minimaxi.io/oauth-authorize?user_code=MM-CODE-1");
    const state = authJson(home).providers["minimax-oauth"] ?? {};
    expect(state).toMatchObject({
      region: "global",
      inference_base_url: "https://api.minimax.io/anthropic",
      client_id: "78257093-7e40-4613-99e0-527b14b39113",
      refresh_token: "minimax-refresh-1",
    });

    llm.enqueue(reply().text("hello from minimax"));
    const chat = await runHermes(["-z", "hi"], { home, cwd, env });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout.trim()).toBe("hello from minimax");
    const request = llm.chatRequests.at(-1);
    expect(request?.path).toBe("/v1/messages");
    expect(bearer(request)).toBe(`Bearer ${String(state["access_token"])}`);
    expect(request?.headers["x-api-key"]).toBeUndefined();
  });

  it("refuses an unknown region before anything is asked", async () => {
    const { home, cwd } = tempHome();
    const before = oauth.requests.length;
    const login = await runHermes(["auth", "add", "minimax-oauth", "--region", "mars"], {
      home,
      cwd,
      env: fakeOAuthEnv(oauth),
    });
    expect(login.code).toBe(2);
    expect(login.stderr).toContain("--region mars");
    expect(oauth.requests.length).toBe(before);
  });
});

describe("a second login of a provider", () => {
  it("joins the credential pool as an oauth entry, and the pool rotates to it when the first is rate-limited", async () => {
    const { home, cwd } = tempHome("agent:\n  api_max_retries: 0\n");
    const env = { ...fakeOAuthEnv(oauth), HERMES_XAI_BASE_URL: llm.url };
    oauth.options = { expiresIn: 6 * 3600 };
    const first = await runHermes(["auth", "add", "xai-oauth"], { home, cwd, env });
    expect(first.code, first.stderr).toBe(0);
    const second = await runHermes(["auth", "add", "xai-oauth", "--label", "work"], { home, cwd, env });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('Added xai-oauth OAuth credential #1 "work" to the pool');
    const stored = authJson(home);
    const login = String(stored.providers["xai-oauth"]?.tokens?.["access_token"]);
    const entry = stored.credential_pool?.["xai-oauth"]?.[0] ?? {};
    expect(entry).toMatchObject({
      label: "work",
      auth_type: "oauth",
      source: "manual:device_code",
      token_endpoint: `${oauth.url}/xai/oauth2/token`,
    });
    expect(entry["access_token"]).not.toBe(login);
    expect(typeof entry["refresh_token"]).toBe("string");

    const list = await runHermes(["auth", "list", "xai-oauth"], { home, cwd, env });
    expect(list.stdout).toContain("work");
    expect(list.stdout).not.toContain(String(entry["access_token"]));

    // The first login is rate-limited; the pool's entry takes the call.
    llm.respondWith((request) =>
      bearer(request) === `Bearer ${login}`
        ? httpError(429, { error: { message: "rate limited" } }, { "retry-after": "3600" })
        : undefined,
    );
    llm.enqueue(reply().text("answered by the second account"));
    const chat = await runHermes(["-z", "hi"], { home, cwd, env });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout.trim()).toBe("answered by the second account");
    expect(bearer(llm.chatRequests.at(-1))).toBe(`Bearer ${String(entry["access_token"])}`);
  });

  it("starts on the pool's OAuth entry when the main login was removed, renewing it after a 401", async () => {
    const { home, cwd } = tempHome("model:\n  provider: xai-oauth\nagent:\n  api_max_retries: 0\n");
    const env = { ...fakeOAuthEnv(oauth), HERMES_XAI_BASE_URL: llm.url };
    oauth.options = { expiresIn: 6 * 3600 };
    expect((await runHermes(["auth", "add", "xai-oauth"], { home, cwd, env })).code).toBe(0);
    const second = await runHermes(["auth", "add", "xai-oauth", "--label", "work"], { home, cwd, env });
    expect(second.code, second.stderr).toBe(0);
    const logout = await runHermes(["auth", "logout", "xai-oauth"], { home, cwd, env });
    expect(logout.code, logout.stderr).toBe(0);
    const stored = authJson(home);
    expect(stored.providers["xai-oauth"]).toBeUndefined();
    const entry = String(stored.credential_pool?.["xai-oauth"]?.[0]?.["access_token"]);

    // The entry's token has gone stale at the provider: a 401, one renewal, the call again.
    llm.respondWith((request) =>
      bearer(request) === `Bearer ${entry}`
        ? httpError(401, { error: { message: "token expired" } })
        : undefined,
    );
    llm.enqueue(reply().text("answered on the pool's login"));
    const chat = await runHermes(["-z", "hi"], { home, cwd, env });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout.trim()).toBe("answered on the pool's login");
    const renewed = String(authJson(home).credential_pool?.["xai-oauth"]?.[0]?.["access_token"]);
    expect(renewed).not.toBe(entry);
    expect(llm.chatRequests.slice(-2).map(bearer)).toEqual([`Bearer ${entry}`, `Bearer ${renewed}`]);
    expect(chat.stdout + chat.stderr).not.toContain(renewed);
  });
});
