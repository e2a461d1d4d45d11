/**
 * OAuth logins as credential-pool entries (`auth_type: oauth` in auth.json's `credential_pool`):
 * they rotate like keys, a 401 renews the entry's bearer once (under the auth lock, written back),
 * and an entry whose renewal is refused is benched and the next one used.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProviderRecovery } from "../../../src/agent/recovery.js";
import { openCredentialPool } from "../../../src/ai/credential-pool.js";
import { classifyApiError } from "../../../src/ai/error-classifier.js";
import { nousDeviceLogin } from "../../../src/ai/oauth/nous.js";
import { refreshPoolEntry } from "../../../src/ai/oauth/pool-refresh.js";
import type { OAuthDeps } from "../../../src/ai/oauth/types.js";
import type { ResolvedRuntime } from "../../../src/ai/resolve.js";
import { ProviderError } from "../../../src/ai/types.js";
import {
  AUTH_TYPE_OAUTH,
  poolRecords,
  readAuthStore,
  updateAuthStore,
} from "../../../src/config/auth-store.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { type FakeOAuth, fakeOAuthEnv, startFakeOAuth } from "../../support/fake-oauth.js";
import { ScriptedTransport } from "../../support/scripted-transport.js";

let fake: FakeOAuth;
beforeAll(async () => {
  fake = await startFakeOAuth();
});
afterAll(async () => {
  await fake.close();
});

const deps = (): OAuthDeps => ({
  fetch: globalThis.fetch,
  now: Date.now,
  sleep: async () => {},
  env: fakeOAuthEnv(fake),
});

/** A home whose nous pool holds two OAuth logins (two device-code logins against the fake). */
async function twoLogins(): Promise<{ home: string; tokens: [string, string] }> {
  const home = mkdtempSync(join(tmpdir(), "hermes-oauth-pool-"));
  const a = await nousDeviceLogin(deps(), () => {});
  const b = await nousDeviceLogin(deps(), () => {});
  const entry = (id: string, label: string, priority: number, state: Record<string, unknown>) => ({
    id,
    label,
    auth_type: AUTH_TYPE_OAUTH,
    priority,
    source: "manual:device_code",
    access_token: state["access_token"],
    refresh_token: state["refresh_token"],
    expires_at: state["expires_at"],
    request_count: 0,
  });
  await updateAuthStore(home, (data) => {
    data.credential_pool = { nous: [entry("aaaaaa", "work", 0, a), entry("bbbbbb", "home", 1, b)] };
  });
  return { home, tokens: [String(a["access_token"]), String(b["access_token"])] };
}

const unauthorized = () =>
  classifyApiError(
    new ProviderError("invalid access token", { status: 401, body: '{"error":"unauthorized"}' }),
  );

function recovery(home: string, apiKey: string): ProviderRecovery {
  const runtime: ResolvedRuntime = {
    provider: "nous",
    model: "Hermes-4-70B",
    baseUrl: "http://127.0.0.1:9/v1",
    apiKey,
    apiMode: "chat_completions",
  };
  return new ProviderRecovery({
    home,
    config: defaultConfig(),
    env: fakeOAuthEnv(fake),
    transportOptions: {},
    runtime,
    transport: new ScriptedTransport([]),
    model: runtime.model,
    usePool: true,
  });
}

describe("OAuth entries of a credential pool", () => {
  it("are usable entries that rotate like keys", async () => {
    const { home, tokens } = await twoLogins();
    const pool = openCredentialPool({ home, provider: "nous", env: {} });
    const entries = pool.entries();
    expect(entries.map((e) => [e.label, e.authType, e.usable])).toEqual([
      ["work", "oauth", true],
      ["home", "oauth", true],
    ]);
    expect(pool.select()?.apiKey).toBe(tokens[0]);
    // The bearer never shows in a printed entry.
    expect(JSON.stringify(entries)).not.toContain(tokens[0]);
  });

  it("a 401 renews the entry once and writes the new pair; a second 401 benches it and rotates", async () => {
    const { home, tokens } = await twoLogins();
    const r = recovery(home, tokens[0]);
    const before = fake.to("/api/oauth/token").length;
    expect(await r.rotateCredential(unauthorized())).toBeDefined();
    expect(fake.to("/api/oauth/token").length).toBe(before + 1);
    const stored = poolRecords(readAuthStore(home).data, "nous");
    const renewed = String(stored[0]?.access_token);
    expect(renewed).not.toBe(tokens[0]);
    expect(stored[0]?.refresh_token).toBeTruthy();
    expect(stored[0]?.last_status).toBeNull();

    // The renewed token is refused too: no second refresh, the entry is benched, "home" takes over.
    expect(await r.rotateCredential(unauthorized())).toBeDefined();
    expect(fake.to("/api/oauth/token").length).toBe(before + 1);
    const after = poolRecords(readAuthStore(home).data, "nous");
    expect(after[0]).toMatchObject({ last_status: "exhausted", last_error_code: 401 });
    const pool = openCredentialPool({ home, provider: "nous", env: {} });
    expect(pool.select()?.apiKey).toBe(tokens[1]);
  });

  it("an entry whose refresh token is refused is benched and the next entry used", async () => {
    const { home, tokens } = await twoLogins();
    // Spend "work"'s refresh token elsewhere, so the Portal refuses it here.
    const first = poolRecords(readAuthStore(home).data, "nous")[0];
    await refreshPoolEntry({ home, provider: "nous", entryId: "aaaaaa", stale: tokens[0], deps: deps() });
    await updateAuthStore(home, (data) => {
      const list = data.credential_pool?.["nous"] as Record<string, unknown>[];
      Object.assign(list[0] ?? {}, { access_token: tokens[0], refresh_token: first?.refresh_token });
    });
    const r = recovery(home, tokens[0]);
    const warnings: string[] = [];
    r.warn = (m) => warnings.push(m);
    expect(await r.rotateCredential(unauthorized())).toBeDefined();
    expect(warnings.join("\n")).toMatch(/Could not renew the nous login "work"/);
    const pool = openCredentialPool({ home, provider: "nous", env: {} });
    expect(pool.entries()[0]).toMatchObject({ status: "exhausted", errorCode: 401 });
    expect(pool.select()?.apiKey).toBe(tokens[1]);
  });

  it("two processes renewing one entry at once spend its refresh token once", async () => {
    const { home, tokens } = await twoLogins();
    const before = fake.to("/api/oauth/token").length;
    const [x, y] = await Promise.all([
      refreshPoolEntry({ home, provider: "nous", entryId: "aaaaaa", stale: tokens[0], deps: deps() }),
      refreshPoolEntry({ home, provider: "nous", entryId: "aaaaaa", stale: tokens[0], deps: deps() }),
    ]);
    expect(x).toBe(y);
    expect(x).not.toBe(tokens[0]);
    expect(fake.to("/api/oauth/token").length).toBe(before + 1);
    await expect(
      refreshPoolEntry({ home, provider: "nous", entryId: "zzzzzz", stale: "t", deps: deps() }),
    ).rejects.toThrow(/pool entry zzzzzz was removed/);
    await expect(
      refreshPoolEntry({ home, provider: "openrouter", entryId: "aaaaaa", stale: "t", deps: deps() }),
    ).rejects.toThrow(/cannot renew/);
  });
});
