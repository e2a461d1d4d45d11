/**
 * Under `hermes -p NAME` the active home is the profile's, and HERMES_HOME is not set to it: every
 * place that resolves a provider after start-up (a fallback, a `/model provider:model` switch, a
 * subagent's `delegation.provider`, an auxiliary model) must read that home's logins, never the
 * root home's or the one `$HOME` suggests.
 */
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveModelSwitch } from "../../../src/agent/model-switch.js";
import { ProviderRecovery } from "../../../src/agent/recovery.js";
import { childModel } from "../../../src/agent/subagents/child-model.js";
import { resolveAuxiliaryChain } from "../../../src/ai/auxiliary.js";
import type { ResolvedRuntime } from "../../../src/ai/resolve.js";
import { setProviderState, updateAuthStore } from "../../../src/config/auth-store.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { ScriptedTransport } from "../../support/scripted-transport.js";

const PROFILE_TOKEN = "nous-profile-access-token";

/** A user home whose root ~/.hermes has no login and whose profile `work` has a Nous login. */
async function homes(): Promise<{ userHome: string; profile: string; env: Record<string, string> }> {
  const userHome = mkdtempSync(join(tmpdir(), "hermes-resolver-home-"));
  mkdirSync(join(userHome, ".hermes"), { recursive: true });
  const profile = join(userHome, ".hermes", "profiles", "work");
  const expires = new Date(Date.now() + 3_600_000).toISOString();
  await updateAuthStore(profile, (data) =>
    setProviderState(data, "nous", { access_token: PROFILE_TOKEN, expires_at: expires }),
  );
  // What `hermes -p work` hands down: HOME only; HERMES_HOME is not the profile.
  return { userHome, profile, env: { HOME: userHome, NOUS_INFERENCE_BASE_URL: "http://127.0.0.1:9/v1" } };
}

const primary: ResolvedRuntime = {
  provider: "custom",
  model: "primary",
  baseUrl: "http://127.0.0.1:8/v1",
  apiKey: "k",
  apiMode: "chat_completions",
};

describe("resolver calls after start-up use the active home's logins", () => {
  it("a fallback provider on the profile's login is usable (the root home has none)", async () => {
    const { userHome, profile, env } = await homes();
    const config = defaultConfig();
    config["fallback_providers"] = [{ provider: "nous", model: "Hermes-4-70B" }];
    const recovery = new ProviderRecovery({
      home: profile,
      config,
      env,
      transportOptions: {},
      runtime: primary,
      transport: new ScriptedTransport([]),
      model: "primary",
      usePool: false,
    });
    const route = await recovery.fallback(0);
    expect(route).not.toBeInstanceOf(Error);
    expect(route).toMatchObject({
      model: "Hermes-4-70B",
      provider: "nous",
      baseUrl: "http://127.0.0.1:9/v1",
    });

    // The same fallback in the root home (no login there) is refused with the login command.
    const root = new ProviderRecovery({
      home: join(userHome, ".hermes"),
      config,
      env,
      transportOptions: {},
      runtime: primary,
      transport: new ScriptedTransport([]),
      model: "primary",
      usePool: false,
    });
    const refused = await root.fallback(0);
    expect(refused).toBeInstanceOf(Error);
    expect(String(refused)).toMatch(/not usable: Provider nous needs an API key/);
  });

  it("/model nous:NAME switches onto the profile's login", async () => {
    const { userHome, profile, env } = await homes();
    const switched = resolveModelSwitch("nous:Hermes-4-405B", {
      config: defaultConfig(),
      resolved: primary,
      env,
      home: profile,
    });
    expect(switched.model).toBe("Hermes-4-405B");
    expect(switched.resolved).toMatchObject({ provider: "nous", apiKey: PROFILE_TOKEN });
    expect(switched.resolved?.login).toMatchObject({ provider: "nous", home: profile });
    expect(() =>
      resolveModelSwitch("nous:Hermes-4-405B", {
        config: defaultConfig(),
        resolved: primary,
        env,
        home: join(userHome, ".hermes"),
      }),
    ).toThrow(/needs|log in/i);
  });

  it("a subagent's delegation.provider and an auxiliary model resolve in the profile too", async () => {
    const { userHome, profile, env } = await homes();
    const config = defaultConfig();
    config.delegation.provider = "nous";
    config.delegation.model = "Hermes-4-70B";
    const child = childModel({ config, env, parent: primary, parentModel: "primary", home: profile });
    expect(child.resolved).toMatchObject({ provider: "nous", login: { home: profile } });

    const aux = { ...defaultConfig(), auxiliary: { compression: { provider: "nous", model: "small" } } };
    const chain = resolveAuxiliaryChain("compression", { config: aux, env, main: primary, home: profile });
    expect(chain.map((r) => r.source)).toEqual(["auxiliary.compression", "main"]);
    expect(chain[0]).toMatchObject({ provider: "nous", apiKey: PROFILE_TOKEN });
    // Without the profile's home the auxiliary entry cannot resolve and only the main one is left.
    const rootChain = resolveAuxiliaryChain("compression", {
      config: aux,
      env,
      main: primary,
      home: join(userHome, ".hermes"),
    });
    expect(rootChain.map((r) => r.source)).toEqual(["main"]);
  });
});
