/**
 * OAuth logins end to end through the built CLI, against a loopback fake of each provider's OAuth
 * endpoints (test/support/fake-oauth.ts) and the fake LLM standing in for their inference APIs.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runHermes, spawnHermes, tempHome } from "../support/cli.js";
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

const bearer = (r: { headers: Record<string, unknown> }) => String(r.headers["authorization"] ?? "");
type Json = Record<string, unknown>;
interface AuthFile {
  active_provider?: string | null;
  providers: Record<string, Json & { tokens?: Json }>;
}
const authJson = (home: string) => JSON.parse(readFileSync(join(home, "auth.json"), "utf8")) as AuthFile;
const provider = (home: string, id: string): Json & { tokens?: Json } => authJson(home).providers[id] ?? {};
const mode = (path: string) => statSync(path).mode & 0o777;

describe("Nous Portal login", () => {
  it("logs in with a device code, then chats on the login, renewing before expiry and after a 401", async () => {
    const { home, cwd } = tempHome("agent:\n  api_max_retries: 0\n");
    const env = { ...fakeOAuthEnv(oauth), NOUS_INFERENCE_BASE_URL: llm.url };
    // Tokens from the login expire in 60 s: inside the two-minute margin, so the first call renews.
    oauth.options = { expiresIn: 60 };
    const login = await runHermes(["login"], { home, cwd, env });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain("NOUS-CODE");
    expect(login.stdout).toContain("Logged in to Nous Portal");
    const stored = authJson(home);
    expect(stored.active_provider).toBe("nous");
    expect(stored.providers["nous"]).toMatchObject({
      client_id: "hermes-cli",
      refresh_token: "nous-refresh-1",
    });
    expect(mode(join(home, "auth.json"))).toBe(0o600);
    const loginToken = String(provider(home, "nous")["access_token"]);

    // Nothing in config.yaml names a provider: the active login is used. The renewed token is
    // refused once (the server revoked it), so Hermes renews again and repeats the call.
    oauth.options = { expiresIn: 3600 };
    let refusedOnce = false;
    llm.respondWith((request) => {
      if (!refusedOnce && bearer(request) !== `Bearer ${loginToken}`) {
        refusedOnce = true;
        return httpError(401, { error: { message: "token revoked" } });
      }
      return undefined;
    });
    llm.enqueue(reply().text("hello from nous"));
    const chat = await runHermes(["-z", "hi"], { home, cwd, env });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout.trim()).toBe("hello from nous");
    const sent = llm.chatRequests.map(bearer);
    expect(sent).toHaveLength(2);
    expect(sent[0]).not.toBe(`Bearer ${loginToken}`);
    expect(sent[1]).not.toBe(sent[0]);
    const after = String(provider(home, "nous")["access_token"]);
    expect(`Bearer ${after}`).toBe(sent[1]);
    // The tokens themselves never reach the output.
    expect(chat.stdout + chat.stderr).not.toContain(after);

    const status = await runHermes(["auth", "status"], { home, cwd, env });
    expect(status.stdout).toMatch(/nous: logged in \(auth\.json, token valid .* more\) \(renews itself\)/);

    const logout = await runHermes(["logout"], { home, cwd, env });
    expect(logout.code, logout.stderr).toBe(0);
    expect(authJson(home).providers["nous"]).toBeUndefined();
    expect(authJson(home).active_provider).toBeNull();
  });

  it("reports a refused login and a provider without a login, storing nothing", async () => {
    const { home, cwd } = tempHome();
    oauth.options = { deny: true };
    const denied = await runHermes(["auth", "add", "nous", "--type", "oauth"], {
      home,
      cwd,
      env: fakeOAuthEnv(oauth),
    });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain("login to Nous Portal failed: the login was refused in the browser.");
    const wrong = await runHermes(["login", "openrouter"], { home, cwd, env: fakeOAuthEnv(oauth) });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('"openrouter" has no OAuth login');
    expect(wrong.stderr).toContain("for a key use: hermes auth add openrouter --type api-key");
    // A name that is no provider gets no command to copy.
    const typo = await runHermes(["login", "opnerouter"], { home, cwd, env: fakeOAuthEnv(oauth) });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('"opnerouter" is not a provider Hermes knows');
    expect(typo.stderr).not.toContain("hermes auth add opnerouter");
    expect(() => statSync(join(home, "auth.json"))).toThrow();
  });
});

describe("ChatGPT (Codex) login", () => {
  it("logs in (oauth is the only type for openai-codex) and sends the token and account over Responses", async () => {
    const { home, cwd } = tempHome("agent:\n  api_max_retries: 0\n");
    const env = { ...fakeOAuthEnv(oauth), HERMES_CODEX_BASE_URL: llm.url };
    const login = await runHermes(["auth", "add", "openai-codex"], { home, cwd, env });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain("CODEX-CODE");
    expect(login.stderr).toContain("To use it: hermes config set model.provider openai-codex");
    const state = provider(home, "openai-codex");
    expect(state).toMatchObject({ auth_mode: "chatgpt", tokens: { refresh_token: expect.any(String) } });
    llm.enqueue(reply().text("hello from codex"));
    const chat = await runHermes(["--provider", "openai-codex", "-z", "hi"], { home, cwd, env });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout.trim()).toBe("hello from codex");
    const request = llm.chatRequests[0];
    expect(request?.path).toBe("/v1/responses");
    expect(bearer(request ?? { headers: {} })).toBe(`Bearer ${String(state.tokens?.["access_token"])}`);
    expect(request?.headers["chatgpt-account-id"]).toBe("acct-fake-1");
  });
});

describe("Claude Pro/Max login", () => {
  it("opens the PKCE link, takes the pasted code#state, and chats on the login", async () => {
    const { home, cwd } = tempHome("agent:\n  api_max_retries: 0\n");
    const env = { ...fakeOAuthEnv(oauth), ANTHROPIC_BASE_URL: llm.url };
    const running = spawnHermes(["auth", "add", "anthropic", "--type", "oauth"], {
      home,
      cwd,
      env,
      tty: true,
    });
    const link = await waitFor(
      () => /https?:\/\/\S+\/oauth\/authorize\?\S+/.exec(running.output().stdout)?.[0],
    );
    // What Anthropic's callback page shows after approval, typed back at the prompt.
    const pasted = await (await fetch(link)).text();
    await waitFor(() => running.output().stdout.includes("Code:") || undefined);
    running.child.stdin.write(`${pasted}\r`);
    const done = await running.exited;
    expect(done.code, done.stdout).toBe(0);
    expect(done.stdout).toContain("Logged in to Claude Pro/Max");
    const file = join(home, ".anthropic_oauth.json");
    expect(mode(file)).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    expect(stored["accessToken"]).toMatch(/^sk-ant-oat01-/);

    llm.enqueue(reply().text("hello from claude"));
    const chat = await runHermes(["--provider", "anthropic", "-m", "claude-sonnet-4-5", "-z", "hi"], {
      home,
      cwd,
      env,
    });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout.trim()).toBe("hello from claude");
    expect(llm.chatRequests[0]?.path).toBe("/v1/messages");
    expect(bearer(llm.chatRequests[0] ?? { headers: {} })).toBe(`Bearer ${stored["accessToken"]}`);
  });
});

describe("GitHub Copilot login", () => {
  it("saves the GitHub token in .env and chats with the exchanged Copilot token", async () => {
    const { home, cwd } = tempHome("agent:\n  api_max_retries: 0\n");
    const env = { ...fakeOAuthEnv(oauth), COPILOT_API_BASE_URL: llm.url };
    const login = await runHermes(["login", "copilot"], { home, cwd, env });
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain("GH-CODE");
    const dotenv = readFileSync(join(home, ".env"), "utf8");
    expect(dotenv).toMatch(/^COPILOT_GITHUB_TOKEN=ghu_/m);
    expect(mode(join(home, ".env"))).toBe(0o600);

    llm.enqueue(reply().text("hello from copilot"));
    const chat = await runHermes(["--provider", "copilot", "-z", "hi"], { home, cwd, env });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout.trim()).toBe("hello from copilot");
    const request = llm.chatRequests[0];
    expect(bearer(request ?? { headers: {} })).toMatch(/^Bearer copilot-token-\d+$/);
    expect(request?.headers["copilot-integration-id"]).toBe("vscode-chat");

    const logout = await runHermes(["logout", "copilot"], { home, cwd, env });
    expect(logout.code).toBe(0);
    expect(readFileSync(join(home, ".env"), "utf8")).not.toContain("COPILOT_GITHUB_TOKEN");
  });
});

/** Polls `probe` on each event-loop turn until it gives a value (the caller's test timeout bounds it). */
async function waitFor<T>(probe: () => T | undefined): Promise<T> {
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
