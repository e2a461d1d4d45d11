/**
 * The Qwen CLI's own login (`~/.qwen/oauth_creds.json`) as the `qwen-oauth` credential: read when
 * Hermes has no Qwen login of its own, renewed against the (fake) Qwen OAuth server, and written
 * back to the Qwen CLI's file in its own shape.
 */
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { qwenCliCredsPath, readQwenCliState } from "../../../src/ai/oauth/qwen-cli.js";
import { loginKey } from "../../../src/ai/oauth/runtime-login.js";
import { oauthSource } from "../../../src/ai/oauth/source.js";
import { type OAuthDeps, OAuthError } from "../../../src/ai/oauth/types.js";
import { setProviderState, updateAuthStore } from "../../../src/config/auth-store.js";
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

const NOW = 1_900_000_000_000;
const refreshes = () => fake.requests.filter((r) => r.body["grant_type"] === "refresh_token");

/** A user home with a Hermes home inside and the Qwen CLI's file holding `creds`. */
function userWithQwenCli(creds: Record<string, unknown> | string): { user: string; home: string } {
  const user = mkdtempSync(join(tmpdir(), "hermes-qwen-cli-"));
  const home = join(user, ".hermes");
  mkdirSync(home);
  mkdirSync(join(user, ".qwen"));
  writeFileSync(
    join(user, ".qwen", "oauth_creds.json"),
    typeof creds === "string" ? creds : JSON.stringify(creds),
    { mode: 0o600 },
  );
  return { user, home };
}

function deps(user: string, now = NOW): OAuthDeps {
  return {
    fetch: globalThis.fetch,
    now: () => now,
    sleep: async () => {},
    env: { ...fakeOAuthEnv(fake), HOME: user },
  };
}

const cliCreds = (expiry: number) => ({
  access_token: "cli-access-old",
  refresh_token: "cli-refresh-1",
  token_type: "Bearer",
  resource_url: "portal.qwen.ai",
  expiry_date: expiry,
  // A field Hermes does not know: the Qwen CLI's, kept when the file is written back.
  id_token: "keep-me",
});

describe("the Qwen CLI's login as qwen-oauth", () => {
  it("is the key when Hermes has no Qwen login of its own", () => {
    const { user, home } = userWithQwenCli(cliCreds(NOW + 3_600_000));
    const key = loginKey("qwen-oauth", {
      home,
      env: { HOME: user },
      baseUrl: "https://portal.qwen.ai/v1",
      explicitBaseUrl: false,
    });
    expect(key).toEqual({
      apiKey: "cli-access-old",
      login: { provider: "qwen-oauth", home, followBaseUrl: false },
    });
  });

  it("is used as it is while valid, and renewed before it expires, written back in the Qwen CLI's shape", async () => {
    const { user, home } = userWithQwenCli(cliCreds(NOW + 3_600_000));
    expect((await oauthSource("qwen-oauth", home, deps(user)).current()).accessToken).toBe("cli-access-old");
    expect(refreshes()).toHaveLength(0);

    // A minute before expiry (inside the two-minute margin) it is renewed.
    fake.grantRefreshToken("cli-refresh-1");
    const soon = NOW + 3_600_000 - 60_000;
    const renewed = await oauthSource("qwen-oauth", home, deps(user, soon)).current();
    expect(renewed.accessToken).toMatch(/^qwen-access-\d+$/);
    expect(refreshes()[0]?.body).toMatchObject({
      grant_type: "refresh_token",
      refresh_token: "cli-refresh-1",
      client_id: "f0304373b74a44d2b584a3fb70ca9e56",
    });
    const path = qwenCliCredsPath({ HOME: user });
    const text = readFileSync(path, "utf8");
    const written = JSON.parse(text) as Record<string, unknown>;
    expect(written).toMatchObject({
      access_token: renewed.accessToken,
      refresh_token: expect.stringMatching(/^qwen-refresh-\d+$/),
      token_type: "Bearer",
      resource_url: "portal.qwen.ai",
      id_token: "keep-me",
    });
    expect(written["expiry_date"]).toBe(soon + 3600 * 1000);
    expect(Object.keys(written)).toEqual([...Object.keys(written)].sort());
    expect(statSync(path).mode & 0o777).toBe(0o600);
    // Nothing of it lands in auth.json.
    expect(() => readFileSync(join(home, "auth.json"), "utf8")).toThrow();
  });

  it("after a 401 renews the token that failed, once, even when it looks valid", async () => {
    const { user, home } = userWithQwenCli(cliCreds(NOW + 3_600_000));
    fake.grantRefreshToken("cli-refresh-1");
    const source = oauthSource("qwen-oauth", home, deps(user));
    const after401 = await source.current({ force: true, stale: "cli-access-old" });
    expect(after401.accessToken).not.toBe("cli-access-old");
    // A stale bearer someone else already replaced is not renewed again.
    const again = await source.current({ force: true, stale: "cli-access-old" });
    expect(again.accessToken).toBe(after401.accessToken);
    expect(refreshes()).toHaveLength(1);
  });

  it("Hermes's own Qwen login in auth.json comes first", async () => {
    const { user, home } = userWithQwenCli(cliCreds(NOW + 3_600_000));
    await updateAuthStore(home, (data) =>
      setProviderState(data, "qwen-oauth", {
        access_token: "hermes-own",
        refresh_token: "r",
        expiry_date: NOW + 3_600_000,
      }),
    );
    expect((await oauthSource("qwen-oauth", home, deps(user)).current()).accessToken).toBe("hermes-own");
    const key = loginKey("qwen-oauth", { home, env: { HOME: user }, baseUrl: "x", explicitBaseUrl: false });
    expect(key?.apiKey).toBe("hermes-own");
  });

  it("a refused renewal says how to log in again and leaves the file as it was", async () => {
    const { user, home } = userWithQwenCli(cliCreds(NOW - 1000));
    const before = readFileSync(qwenCliCredsPath({ HOME: user }), "utf8");
    const failure = await oauthSource("qwen-oauth", home, deps(user))
      .current()
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(OAuthError);
    expect((failure as OAuthError).relogin).toBe(true);
    expect((failure as Error).message).toContain("hermes auth add qwen-oauth --type oauth");
    expect(readFileSync(qwenCliCredsPath({ HOME: user }), "utf8")).toBe(before);
  });

  it("a broken or missing file is no key; a broken one is named when read", () => {
    const broken = userWithQwenCli("{not json");
    expect(() => readQwenCliState({ HOME: broken.user })).toThrow(/oauth_creds\.json is not a JSON object/);
    expect(
      loginKey("qwen-oauth", {
        home: broken.home,
        env: { HOME: broken.user },
        baseUrl: "x",
        explicitBaseUrl: false,
      }),
    ).toBeUndefined();
    const none = mkdtempSync(join(tmpdir(), "hermes-qwen-none-"));
    expect(readQwenCliState({ HOME: none })).toBeUndefined();
    expect(
      loginKey("qwen-oauth", {
        home: join(none, ".hermes"),
        env: { HOME: none },
        baseUrl: "x",
        explicitBaseUrl: false,
      }),
    ).toBeUndefined();
  });
});
