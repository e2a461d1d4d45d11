import { afterEach, describe, expect, it } from "vitest";
import { classifyApiError } from "../../../src/ai/error-classifier.js";
import {
  type AzureIdentityDeps,
  type AzureSource,
  EntraError,
} from "../../../src/ai/oauth/azure-identity.js";
import {
  AzureTokenProvider,
  entraCredentialSource,
  entraProviderError,
  sharedAzureTokenProvider,
} from "../../../src/ai/oauth/azure-token.js";
import { createTransport, resolveRuntime } from "../../../src/ai/resolve.js";
import { failureAdvice } from "../../../src/ai/retry.js";
import { ProviderError } from "../../../src/ai/types.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { processRedactor } from "../../../src/util/redact.js";
import { type FakeEntra, startFakeEntra } from "../../support/fake-entra.js";
import { type FakeLlm, httpError, reply, startFakeLlm } from "../../support/fake-llm.js";

/** A source that counts its calls and hands out `<label>-<n>` tokens living `lifetime` seconds. */
function countingSource(label: string, clock: { now: number }, lifetime = 3600) {
  const source = {
    label,
    calls: 0,
    unavailable: false,
    async getToken() {
      source.calls += 1;
      if (source.unavailable) throw new EntraError(`${label}: not set up`, "unavailable");
      return {
        token: `${label}-${source.calls}`,
        expiresAt: Math.floor(clock.now / 1000) + lifetime,
        source: label,
      };
    },
  };
  return source;
}

function depsAt(clock: { now: number }): AzureIdentityDeps {
  return {
    env: {},
    fetch: (() => Promise.reject(new Error("no network in this test"))) as unknown as typeof fetch,
    now: () => clock.now,
    readFile: () => Promise.reject(new Error("no files")),
    run: () => Promise.resolve({ code: null, stdout: "", stderr: "", error: "not_found" }),
  };
}

describe("AzureTokenProvider: kept in memory, renewed before expiry and on 401", () => {
  it("asks the chain once while the token is fresh, again five minutes before it expires", async () => {
    const clock = { now: 1_700_000_000_000 };
    const source = countingSource("src", clock);
    const provider = new AzureTokenProvider("scope", depsAt(clock), [source as AzureSource]);
    expect((await provider.token()).token).toBe("src-1");
    clock.now += 3000 * 1000;
    expect((await provider.token()).token).toBe("src-1");
    clock.now += 301 * 1000; // 3301 s: inside the last five minutes
    expect((await provider.token()).token).toBe("src-2");
    expect(source.calls).toBe(2);
  });

  it("a short-lived token is renewed at half its lifetime, not only in its last five minutes", async () => {
    const clock = { now: 1_700_000_000_000 };
    const source = countingSource("short", clock, 120);
    const provider = new AzureTokenProvider("scope", depsAt(clock), [source as AzureSource]);
    await provider.token();
    clock.now += 30_000;
    expect((await provider.token()).token).toBe("short-1");
    clock.now += 31_000;
    expect((await provider.token()).token).toBe("short-2");
  });

  it("concurrent callers share one request; force renews unless someone already replaced the stale token", async () => {
    const clock = { now: 1_700_000_000_000 };
    const source = countingSource("c", clock);
    const provider = new AzureTokenProvider("scope", depsAt(clock), [source as AzureSource]);
    const [a, b, c] = await Promise.all([provider.token(), provider.token(), provider.token()]);
    expect([a.token, b.token, c.token]).toEqual(["c-1", "c-1", "c-1"]);
    expect(source.calls).toBe(1);
    expect((await provider.token({ force: true, stale: "c-1" })).token).toBe("c-2");
    // A second 401 on the old bearer, after the renewal: no third request.
    expect((await provider.token({ force: true, stale: "c-1" })).token).toBe("c-2");
    expect(source.calls).toBe(2);
  });

  it("the source that answered is asked first next time (the chain is not walked again)", async () => {
    const clock = { now: 1_700_000_000_000 };
    const first = countingSource("first", clock);
    const second = countingSource("second", clock);
    first.unavailable = true;
    const provider = new AzureTokenProvider("scope", depsAt(clock), [first, second] as AzureSource[]);
    await provider.token();
    await provider.token({ force: true });
    expect(first.calls).toBe(1);
    expect(second.calls).toBe(2);
  });

  it("every token is registered with the redactor", async () => {
    const clock = { now: 1_700_000_000_000 };
    const provider = new AzureTokenProvider("scope", depsAt(clock), [
      countingSource("redact-me-token", clock),
    ] as AzureSource[]);
    const { token } = await provider.token();
    expect(processRedactor().redact(`Authorization: Bearer ${token}`)).not.toContain(token);
  });

  it("a chain failure reaches the transport as a 401 ProviderError, a timeout as a transport error", async () => {
    const clock = { now: 0 };
    const failing: AzureSource = {
      label: "x",
      getToken: () => Promise.reject(new EntraError("x: refused", "failed")),
    };
    const slow: AzureSource = {
      label: "y",
      getToken: () => Promise.reject(new EntraError("y: no answer within 15 s", "failed", true)),
    };
    const refused = await entraCredentialSource(
      new AzureTokenProvider("s", depsAt(clock), [failing]),
      "http://h/v1",
    )
      .current()
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProviderError);
    expect((refused as ProviderError).status).toBe(401);
    const timedOut = (await entraCredentialSource(
      new AzureTokenProvider("s", depsAt(clock), [slow]),
      "http://h/v1",
    )
      .current()
      .catch((e: unknown) => e)) as ProviderError;
    expect(timedOut.transport).toBe(true);
    expect(timedOut.status).toBeUndefined();
  });
});

describe("sharedAzureTokenProvider", () => {
  it("one provider per scope and identity; a caller with no environment shares the session's", () => {
    const env = {
      AZURE_TENANT_ID: "t-share",
      AZURE_CLIENT_ID: "c-share",
      AZURE_CLIENT_SECRET: "share-secret-1",
    };
    const main = sharedAzureTokenProvider("api://share/.default", env);
    expect(sharedAzureTokenProvider("api://share/.default", { ...env })).toBe(main);
    expect(sharedAzureTokenProvider("api://share/.default")).toBe(main);
    expect(sharedAzureTokenProvider("api://share/.default", { ...env, AZURE_CLIENT_ID: "other" })).not.toBe(
      main,
    );
    expect(processRedactor().redact("x share-secret-1 y")).not.toContain("share-secret-1");
  });
});

describe("what the user reads when the chain finds nothing", () => {
  it("not retried, and the chain's own fix instead of 'check AZURE_FOUNDRY_API_KEY'", () => {
    const error = entraProviderError(
      new EntraError("Entra ID found no credential. Tried …", "unavailable", false, "run `az login`"),
      "https://r.openai.azure.com/openai/v1",
    );
    const classified = classifyApiError(error, { provider: "azure-foundry" });
    expect(classified.retryable).toBe(false);
    expect(failureAdvice(classified, { provider: "azure-foundry" })).toBe("run `az login`");
    const keyed = classifyApiError(new ProviderError("401 Unauthorized", { status: 401 }), {
      provider: "azure-foundry",
    });
    expect(failureAdvice(keyed, { provider: "azure-foundry" })).toContain("AZURE_FOUNDRY_API_KEY");
  });
});

describe("an azure-foundry runtime with model.auth_mode: entra_id", () => {
  let llm: FakeLlm | undefined;
  let entra: FakeEntra | undefined;
  afterEach(async () => {
    await llm?.close();
    await entra?.close();
  });

  function entraConfig(baseUrl: string, scope?: string) {
    const config = defaultConfig();
    config.model = {
      ...config.model,
      provider: "azure-foundry",
      base_url: baseUrl,
      default: "gpt-4.1",
      auth_mode: "entra_id",
      entra: { scope: scope ?? "", exclude_interactive_browser: true },
    };
    return config;
  }

  it("needs no key, sends no api-key header, and resolves Foundry's default scope", () => {
    const runtime = resolveRuntime({
      flags: {},
      config: entraConfig("https://r.openai.azure.com/openai/v1"),
      env: { AZURE_FOUNDRY_API_KEY: "an-api-key-that-must-not-go" },
      home: undefined,
    });
    expect(runtime.apiKey).toBeUndefined();
    expect(runtime.apiKeyHeader).toBeUndefined();
    expect(runtime.entra).toEqual({ scope: "https://ai.azure.com/.default" });
    const custom = resolveRuntime({
      flags: {},
      config: entraConfig("https://r.openai.azure.com/openai/v1", "api://my-app/.default"),
      env: {},
      home: undefined,
    });
    expect(custom.entra?.scope).toBe("api://my-app/.default");
  });

  it("auth_mode is Azure's only: another provider keeps its key", () => {
    const config = defaultConfig();
    config.model = { ...config.model, provider: "openrouter", auth_mode: "entra_id" };
    const runtime = resolveRuntime({
      flags: {},
      config,
      env: { OPENROUTER_API_KEY: "sk-or-x" },
      home: undefined,
    });
    expect(runtime.entra).toBeUndefined();
    expect(runtime.apiKey).toBe("sk-or-x");
  });

  it("model calls carry Authorization: Bearer <entra token>; a 401 renews the token once and repeats the call", async () => {
    llm = await startFakeLlm();
    entra = await startFakeEntra({ prefix: "unit" });
    const env = {
      AZURE_TENANT_ID: "tenant-a",
      AZURE_CLIENT_ID: "client-unit-test-1",
      AZURE_CLIENT_SECRET: "unit-secret-value-999",
      AZURE_AUTHORITY_HOST: entra.url,
    };
    const runtime = resolveRuntime({ flags: {}, config: entraConfig(llm.url), env, home: undefined });
    const transport = await createTransport(runtime, { env, stream: true });
    llm.enqueue(httpError(401, '{"error":{"code":"401","message":"token expired"}}'));
    llm.enqueue(reply().text("hello from foundry"));
    let text = "";
    for await (const event of transport.stream({
      model: "gpt-4.1",
      messages: [{ role: "user", content: "hi" }],
    })) {
      if (event.type === "text_delta") text += event.text;
    }
    expect(text).toBe("hello from foundry");
    expect(llm.requests.map((r) => r.headers["authorization"])).toEqual([
      "Bearer unit-authority-1",
      "Bearer unit-authority-2",
    ]);
    expect(llm.requests.every((r) => r.headers["api-key"] === undefined)).toBe(true);
    expect(entra.requests).toHaveLength(2);
  });
});
