import { describe, expect, it } from "vitest";
import { ENTRA_DEFAULT_SCOPE, entraSettings, requestAuth } from "../../../src/ai/oauth/entra-config.js";
import { checkKey, checkValue } from "../../../src/config/validate.js";
import { scrubEnv, terminalEnv } from "../../../src/util/env-scrub.js";
import { startFakeEntra } from "../../support/fake-entra.js";

describe("model.auth_mode and model.entra in config.yaml", () => {
  it("entra_id (any case) turns Entra on; other words and a missing mode leave the key in use", () => {
    expect(entraSettings({ auth_mode: "entra_id" })).toEqual({ scope: ENTRA_DEFAULT_SCOPE });
    expect(entraSettings({ auth_mode: " ENTRA_ID ", entra: { scope: " api://x/.default " } })).toEqual({
      scope: "api://x/.default",
    });
    expect(entraSettings({ auth_mode: "entra_id", entra: null })).toEqual({ scope: ENTRA_DEFAULT_SCOPE });
    expect(entraSettings({ auth_mode: "entra_id", entra: { scope: 42 } })).toEqual({
      scope: ENTRA_DEFAULT_SCOPE,
    });
    expect(entraSettings({ auth_mode: "api_key" })).toBeUndefined();
    expect(entraSettings({})).toBeUndefined();
    expect(entraSettings(undefined)).toBeUndefined();
  });

  it("the keys are valid for doctor and config set; a typo and a wrong word are not", () => {
    expect(checkKey("model.auth_mode")).toBeUndefined();
    expect(checkKey("model.entra.scope")).toBeUndefined();
    // Upstream writes this one too; a home shared with Python Hermes stays valid.
    expect(checkKey("model.entra.exclude_interactive_browser")).toBeUndefined();
    expect(checkKey("model.entra.scop")?.suggestion).toBe("model.entra.scope");
    expect(checkKey("model.auth_mod")?.suggestion).toBe("model.auth_mode");
    expect(checkValue("model.auth_mode", "entra_id")).toBeUndefined();
    expect(checkValue("model.auth_mode", "api_key")).toBeUndefined();
    expect(checkValue("model.auth_mode", "entra")?.message).toContain("entra_id");
  });
});

describe("the client secret never reaches helper processes or the terminal", () => {
  const env = {
    PATH: "/bin",
    AZURE_CLIENT_SECRET: "abc-secret-value",
    AZURE_CLIENT_ID: "client-id",
    AZURE_TENANT_ID: "tenant",
    IDENTITY_HEADER: "msi-header-value",
  };

  it("helper processes (scrubEnv) lose the secret and the identity header, keep the ids", () => {
    const out = scrubEnv(env);
    expect(out["AZURE_CLIENT_SECRET"]).toBeUndefined();
    expect(out["IDENTITY_HEADER"]).toBeUndefined();
    expect(out["AZURE_CLIENT_ID"]).toBe("client-id");
  });

  it("the terminal loses them even when the user's shell exported them, unless env_passthrough names one", () => {
    const out = terminalEnv(env, { withheld: [] });
    expect(out["AZURE_CLIENT_SECRET"]).toBeUndefined();
    expect(out["IDENTITY_HEADER"]).toBeUndefined();
    expect(out["PATH"]).toBe("/bin");
    expect(terminalEnv(env, { passthrough: ["AZURE_CLIENT_SECRET"] })["AZURE_CLIENT_SECRET"]).toBe(
      "abc-secret-value",
    );
  });
});

describe("requestAuth: what a /models listing sends", () => {
  it("a keyed runtime's own key and header; with Entra ID the bearer, or nothing when no token comes", async () => {
    expect(await requestAuth({ apiKey: "k", apiKeyHeader: "api-key" })).toEqual({
      apiKey: "k",
      apiKeyHeader: "api-key",
    });
    const entra = await startFakeEntra({ prefix: "listing" });
    try {
      const env = {
        AZURE_TENANT_ID: "t",
        AZURE_CLIENT_ID: "listing-client",
        AZURE_CLIENT_SECRET: "listing-secret-1",
        AZURE_AUTHORITY_HOST: entra.url,
      };
      const auth = await requestAuth({ entra: { scope: "api://listing/.default" } }, env);
      expect(auth).toEqual({ apiKey: "listing-authority-1", apiKeyHeader: undefined });
      entra.script("authority", { kind: "json", status: 401, body: { error: "invalid_client" } });
      const refused = await requestAuth(
        { entra: { scope: "api://listing-refused/.default" } },
        { ...env, AZURE_CLIENT_ID: "other-client" },
      );
      expect(refused).toEqual({ apiKey: undefined, apiKeyHeader: undefined });
    } finally {
      await entra.close();
    }
  });
});
