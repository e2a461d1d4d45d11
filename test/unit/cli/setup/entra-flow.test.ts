/**
 * The model section's conversation for azure-foundry with Entra ID: the key-or-Entra question,
 * the token check against a loopback Entra fake, what happens when no credential is found, and
 * what `applyModelPlan` writes.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { applyModelPlan, askModelPlan } from "../../../../src/cli/setup/model-flow.js";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { type FakeEntra, startFakeEntra } from "../../../support/fake-entra.js";
import { scriptedPrompter } from "../../../support/scripted-prompter.js";

type Seen = { url: string; headers: Record<string, string> };

/** A Foundry `/models` that lists one deployment for `Bearer <prefix>…` and refuses anything else. */
function foundryFetch(prefix: string, seen: Seen[]): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const headers = Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>));
    seen.push({ url: String(input), headers });
    if (!headers["authorization"]?.startsWith(`Bearer ${prefix}`) || headers["api-key"]) {
      return new Response(JSON.stringify({ error: { code: "PermissionDenied" } }), { status: 401 });
    }
    return new Response(JSON.stringify({ data: [{ id: "gpt-5-deploy" }] }), { status: 200 });
  }) as typeof fetch;
}

let entra: FakeEntra;
let clientNo = 0;
beforeEach(async () => {
  entra = await startFakeEntra({ prefix: "flow" });
});
afterEach(async () => {
  await entra.close();
});

/** A service principal pointed at the fake authority; each test its own client id (own token cache). */
function spEnv(extra: Record<string, string> = {}): Record<string, string> {
  clientNo += 1;
  return {
    PATH: "/nonexistent",
    AZURE_TENANT_ID: "tenant-flow",
    AZURE_CLIENT_ID: `client-flow-${clientNo}`,
    AZURE_CLIENT_SECRET: "flow-secret-value-77",
    AZURE_AUTHORITY_HOST: entra.url,
    AZURE_POD_IDENTITY_AUTHORITY_HOST: entra.url,
    ...extra,
  };
}

describe("askModelPlan for azure-foundry with Entra ID", () => {
  it("Entra ID: checks a token, lists with the bearer, asks no key, and saves auth_mode and scope", async () => {
    const seen: Seen[] = [];
    const home = mkdtempSync(join(tmpdir(), "hermes-entra-flow-"));
    const ctx = { home, env: spEnv(), config: defaultConfig(), fetch: foundryFetch("flow-authority", seen) };
    const p = scriptedPrompter(["azure", "https://res.openai.azure.com", "2", "", "1"]);
    const plan = await askModelPlan(ctx, p);
    expect(p.asked).not.toContainEqual(expect.stringMatching(/^Paste/));
    expect(p.said.join("\n")).toMatch(
      /✓ Entra ID token from environment client secret \(valid for \d+ more minutes\)/,
    );
    expect(plan).toMatchObject({
      provider: "azure-foundry",
      model: "gpt-5-deploy",
      envWrites: [],
      auth: { mode: "entra_id", scope: "https://ai.azure.com/.default" },
    });
    expect(plan.runtime.entra).toEqual({ scope: "https://ai.azure.com/.default" });
    expect(seen.at(-1)?.headers["authorization"]).toMatch(/^Bearer flow-authority-\d+$/);
    expect(entra.requests[0]?.form["scope"]).toBe("https://ai.azure.com/.default");
    // Nothing the user could read holds the token or the secret.
    expect(p.said.join("\n")).not.toMatch(/flow-authority-\d|flow-secret-value/);

    applyModelPlan(home, ctx.config, plan);
    const saved = parse(readFileSync(join(home, "config.yaml"), "utf8")) as {
      model: Record<string, unknown>;
    };
    expect(saved.model).toMatchObject({
      provider: "azure-foundry",
      auth_mode: "entra_id",
      entra: { scope: "https://ai.azure.com/.default" },
    });
  });

  it("a custom scope is asked for the token and kept", async () => {
    const ctx = {
      home: mkdtempSync(join(tmpdir(), "hermes-entra-flow-")),
      env: spEnv(),
      config: defaultConfig(),
      fetch: foundryFetch("flow-authority", []),
    };
    const plan = await askModelPlan(
      ctx,
      scriptedPrompter(["azure", "https://res.openai.azure.com", "2", "api://foundry-proxy/.default", "1"]),
    );
    expect(plan.auth).toEqual({ mode: "entra_id", scope: "api://foundry-proxy/.default" });
    expect(entra.requests[0]?.form["scope"]).toBe("api://foundry-proxy/.default");
  });

  it("no credential anywhere: says which sources were tried and how to fix it; k falls back to a key", async () => {
    const env = { PATH: "/nonexistent", AZURE_POD_IDENTITY_AUTHORITY_HOST: entra.url };
    entra.script("imds", {
      kind: "json",
      status: 400,
      body: { error: "invalid_request", error_description: "Identity not found" },
    });
    const p = scriptedPrompter([
      "azure",
      "https://res.openai.azure.com",
      "2",
      "",
      "k",
      "a-real-api-key-123",
      "1",
    ]);
    const home = mkdtempSync(join(tmpdir(), "hermes-entra-flow-"));
    const keyFetch = (async () =>
      new Response(JSON.stringify({ data: [{ id: "d1" }] }), { status: 200 })) as typeof fetch;
    const plan = await askModelPlan({ home, env, config: defaultConfig(), fetch: keyFetch }, p);
    const said = p.said.join("\n");
    expect(said).toContain("Entra ID found no credential");
    expect(said).toContain(
      "environment client secret: AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET not set",
    );
    expect(said).toContain("Azure CLI: az not found on PATH");
    expect(said).toContain("az login");
    expect(plan.auth).toEqual({ mode: "api_key" });
    expect(plan.envWrites).toEqual([{ name: "AZURE_FOUNDRY_API_KEY", value: "a-real-api-key-123" }]);
  });

  it("keep Entra ID anyway: no list without a token, the deployment typed, auth kept", async () => {
    entra.script("imds", { kind: "json", status: 400, body: { error: "invalid_request" } });
    entra.script("imds", { kind: "json", status: 400, body: { error: "invalid_request" } });
    const env = { PATH: "/nonexistent", AZURE_POD_IDENTITY_AUTHORITY_HOST: entra.url };
    const home = mkdtempSync(join(tmpdir(), "hermes-entra-flow-"));
    const p = scriptedPrompter(["azure", "https://res.openai.azure.com", "2", "", "e", "prod-deploy"]);
    const plan = await askModelPlan(
      { home, env, config: defaultConfig(), fetch: foundryFetch("never", []) },
      p,
    );
    expect(p.said.join("\n")).toContain("No Entra ID token yet, so no deployment list");
    expect(plan.model).toBe("prod-deploy");
    expect(plan.auth).toEqual({ mode: "entra_id", scope: "https://ai.azure.com/.default" });
  });

  it("a token the endpoint refuses points at the identity's role, not at a key", async () => {
    const p = scriptedPrompter(["azure", "https://res.openai.azure.com", "2", "", "prod-deploy"]);
    const plan = await askModelPlan(
      {
        home: mkdtempSync(join(tmpdir(), "hermes-entra-flow-")),
        env: spEnv(),
        config: defaultConfig(),
        fetch: foundryFetch("never", []),
      },
      p,
    );
    expect(p.said.join("\n")).toContain("needs a role on the resource");
    expect(p.asked).not.toContainEqual(expect.stringMatching(/^Paste/));
    expect(plan.model).toBe("prod-deploy");
  });

  it("switching back to a key writes auth_mode: api_key over a saved entra_id", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-entra-flow-"));
    const config = defaultConfig();
    config.model = { ...config.model, provider: "azure-foundry", auth_mode: "entra_id" };
    const keyFetch = (async () =>
      new Response(JSON.stringify({ data: [{ id: "d1" }] }), { status: 200 })) as typeof fetch;
    const p = scriptedPrompter(["azure", "https://res.openai.azure.com", "1", "key-abcdef-123", "1"]);
    const plan = await askModelPlan({ home, env: { PATH: "/nonexistent" }, config, fetch: keyFetch }, p);
    expect(p.asked).toContain("Authentication: 1. API key  2. Entra ID");
    applyModelPlan(home, config, plan);
    const saved = parse(readFileSync(join(home, "config.yaml"), "utf8")) as {
      model: Record<string, unknown>;
    };
    expect(saved.model["auth_mode"]).toBe("api_key");
  });
});
