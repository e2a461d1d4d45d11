import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type AzureIdentityDeps,
  chainToken,
  defaultAzureDeps,
  EntraError,
} from "../../../src/ai/oauth/azure-identity.js";
import { ENTRA_DEFAULT_SCOPE } from "../../../src/ai/oauth/entra-config.js";
import { type FakeEntra, fakeAzScript, startFakeEntra } from "../../support/fake-entra.js";

const SECRET = "s3cr3t-client-value-Q8~xYz";
const SCOPE = ENTRA_DEFAULT_SCOPE;

let fake: FakeEntra;
let dir: string;
let bin: string;

beforeEach(async () => {
  fake = await startFakeEntra();
  dir = mkdtempSync(join(tmpdir(), "entra-"));
  bin = join(dir, "bin");
  mkdirSync(bin);
});

afterEach(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

/** An `az` on PATH; the rest of PATH keeps /bin for `sh`, `cat` and `sleep`. */
function installAz(script: string): void {
  const path = join(bin, "az");
  writeFileSync(path, script);
  chmodSync(path, 0o755);
}

/** Deps whose environment has only `vars`, PATH = the fake bin then /bin (no real az), IMDS at the fake. */
function deps(vars: Record<string, string>, extra: Partial<AzureIdentityDeps> = {}): AzureIdentityDeps {
  const env = {
    PATH: `${bin}:/bin:/usr/bin`,
    AZURE_AUTHORITY_HOST: fake.url,
    AZURE_POD_IDENTITY_AUTHORITY_HOST: fake.url,
    ...vars,
  };
  return { ...defaultAzureDeps(env), timeoutMs: 1500, imdsTimeoutMs: 400, cliTimeoutMs: 3000, ...extra };
}

const SP = { AZURE_TENANT_ID: "contoso.onmicrosoft.com", AZURE_CLIENT_ID: "app-1234" };
const AZ_OK = JSON.stringify({ accessToken: "az-cli-token-1", expires_on: 4102444800, tokenType: "Bearer" });

describe("each credential source against loopback fakes", () => {
  it("environment client secret: a client-credentials POST to <authority>/<tenant>/oauth2/v2.0/token", async () => {
    const token = await chainToken(SCOPE, deps({ ...SP, AZURE_CLIENT_SECRET: SECRET }));
    expect(token.token).toBe("entra-token-authority-1");
    expect(token.source).toBe("environment client secret");
    expect(token.expiresAt).toBeGreaterThan(Date.now() / 1000 + 3500);
    const [req] = fake.requests;
    expect(req?.path).toBe("/contoso.onmicrosoft.com/oauth2/v2.0/token");
    expect(req?.form).toEqual({
      grant_type: "client_credentials",
      client_id: "app-1234",
      client_secret: SECRET,
      scope: SCOPE,
    });
  });

  it("workload identity: the federated token file as a client assertion, read again each time", async () => {
    const file = join(dir, "federated-token");
    writeFileSync(file, "eyJ.first.assertion\n");
    const d = deps({ ...SP, AZURE_FEDERATED_TOKEN_FILE: file });
    const first = await chainToken(SCOPE, d);
    writeFileSync(file, "eyJ.rotated.assertion");
    await chainToken(SCOPE, d);
    expect(first.source).toBe("workload identity");
    expect(fake.requests.map((r) => r.form["client_assertion"])).toEqual([
      "eyJ.first.assertion",
      "eyJ.rotated.assertion",
    ]);
    expect(fake.requests[0]?.form["client_assertion_type"]).toBe(
      "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
    );
    expect(fake.requests[0]?.form["client_secret"]).toBeUndefined();
  });

  it("managed identity through IDENTITY_ENDPOINT + IDENTITY_HEADER: resource, api-version, header", async () => {
    const token = await chainToken(
      SCOPE,
      deps({ IDENTITY_ENDPOINT: fake.identityEndpoint, IDENTITY_HEADER: "hdr-value-123" }),
    );
    expect(token.source).toBe("managed identity (IDENTITY_ENDPOINT)");
    const [req] = fake.requests;
    expect(req?.endpoint).toBe("identity");
    expect(req?.headers["x-identity-header"]).toBe("hdr-value-123");
    expect(req?.query).toMatchObject({ "api-version": "2019-08-01", resource: "https://ai.azure.com" });
  });

  it("managed identity through IMDS: Metadata header, a user-assigned identity named by AZURE_CLIENT_ID", async () => {
    const token = await chainToken(SCOPE, deps({ AZURE_CLIENT_ID: "uami-1" }));
    expect(token.source).toBe("managed identity (IMDS)");
    const [req] = fake.requests;
    expect(req?.headers["metadata"]).toBe("true");
    expect(req?.query).toMatchObject({ resource: "https://ai.azure.com", client_id: "uami-1" });
  });

  it("Azure CLI: az account get-access-token --resource … -o json, expires_on read", async () => {
    const record = join(dir, "az-calls");
    installAz(fakeAzScript({ stdout: AZ_OK, recordTo: record }));
    fake.script("imds", {
      kind: "json",
      status: 400,
      body: { error: "invalid_request", error_description: "Identity not found" },
    });
    const token = await chainToken(SCOPE, deps({}));
    expect(token).toEqual({ token: "az-cli-token-1", expiresAt: 4102444800, source: "Azure CLI" });
    expect(readFileSync(record, "utf8")).toContain(
      "account get-access-token --output json --resource https://ai.azure.com",
    );
  });

  it("another cloud's metadata service at the IMDS address (a text 403 or 401) is not Azure's: the CLI is asked next", async () => {
    installAz(fakeAzScript({ stdout: AZ_OK }));
    for (const status of [403, 401, 404]) {
      fake.script("imds", { kind: "raw", status, text: "Missing required header: Metadata-Flavor\n" });
      const token = await chainToken(SCOPE, deps({}));
      expect(token.source).toBe("Azure CLI");
    }
  });

  it("Azure CLI: an older CLI's local-time expiresOn is read too", async () => {
    installAz(
      fakeAzScript({
        stdout: JSON.stringify({ accessToken: "az-old", expiresOn: "2099-01-02 03:04:05.000000" }),
      }),
    );
    fake.script("imds", { kind: "json", status: 400, body: { error: "invalid_request" } });
    const token = await chainToken(SCOPE, deps({}));
    expect(token.expiresAt).toBe(Math.floor(new Date("2099-01-02T03:04:05").getTime() / 1000));
  });
});

describe("the chain's order (DefaultAzureCredential's)", () => {
  it("with every source set up, each one answers only when those before it are absent", async () => {
    const file = join(dir, "fed");
    writeFileSync(file, "eyJ.assert");
    installAz(fakeAzScript({ stdout: AZ_OK }));
    const all = {
      ...SP,
      AZURE_CLIENT_SECRET: SECRET,
      AZURE_FEDERATED_TOKEN_FILE: file,
      IDENTITY_ENDPOINT: fake.identityEndpoint,
      IDENTITY_HEADER: "h",
    };
    const { AZURE_CLIENT_SECRET: _s, ...noSecret } = all;
    const { AZURE_FEDERATED_TOKEN_FILE: _f, ...noFed } = noSecret;
    const { IDENTITY_ENDPOINT: _e, IDENTITY_HEADER: _h, ...imdsOnly } = noFed;
    expect((await chainToken(SCOPE, deps(all))).source).toBe("environment client secret");
    expect((await chainToken(SCOPE, deps(noSecret))).source).toBe("workload identity");
    expect((await chainToken(SCOPE, deps(noFed))).source).toBe("managed identity (IDENTITY_ENDPOINT)");
    expect((await chainToken(SCOPE, deps(imdsOnly))).source).toMatch(/^managed identity \(IMDS/);
    fake.script("imds", { kind: "json", status: 400, body: { error: "invalid_request" } });
    expect((await chainToken(SCOPE, deps(imdsOnly))).source).toBe("Azure CLI");
  });

  it("nothing found: one message naming every source tried and how to fix it", async () => {
    fake.script("imds", { kind: "hang" });
    const error = await chainToken(SCOPE, deps({})).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EntraError);
    const message = (error as Error).message;
    expect(message).toContain("Entra ID found no credential. Tried ");
    // The whole list fits the 300 characters a model-call failure line shows.
    expect(message.length).toBeLessThan(300);
    expect(message).toContain(
      "environment client secret: AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET not set",
    );
    expect(message).toContain("workload identity: AZURE_FEDERATED_TOKEN_FILE not set");
    expect(message).toMatch(/managed identity \(IMDS\): http:\/\/127\.0\.0\.1:\d+ no answer within 0\.4 s/);
    expect(message).toContain("Azure CLI: az not found on PATH");
    const hint = (error as EntraError).hint ?? "";
    expect(hint).toContain("az login");
    expect(hint).toContain("AZURE_CLIENT_SECRET");
    expect(hint).toContain("hermes setup model");
  });

  it("a source that is set up and refused stops the chain (the CLI is not asked)", async () => {
    const record = join(dir, "az-calls");
    installAz(fakeAzScript({ stdout: AZ_OK, recordTo: record }));
    fake.script("authority", {
      kind: "json",
      status: 401,
      body: {
        error: "invalid_client",
        error_description: "AADSTS7000215: Invalid client secret provided.\nTrace ID: x",
      },
    });
    const error = (await chainToken(SCOPE, deps({ ...SP, AZURE_CLIENT_SECRET: SECRET })).catch(
      (e: unknown) => e,
    )) as EntraError;
    expect(error.kind).toBe("failed");
    expect(error.transient).toBe(false);
    expect(error.message).toContain("invalid_client: AADSTS7000215: Invalid client secret provided.");
    expect(error.message).not.toContain("Trace ID");
    expect(error.message).not.toContain(SECRET);
    expect(() => readFileSync(record)).toThrow();
  });
});

describe("attacks and broken answers", () => {
  it("a token endpoint that hangs is cut at the request timeout, transient, the secret not in the message", async () => {
    fake.script("authority", { kind: "hang" });
    const started = Date.now();
    const error = (await chainToken(
      SCOPE,
      deps({ ...SP, AZURE_CLIENT_SECRET: SECRET }, { timeoutMs: 300 }),
    ).catch((e: unknown) => e)) as EntraError;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(error.kind).toBe("failed");
    expect(error.transient).toBe(true);
    expect(error.message).toContain("no answer within 0.3 s");
    expect(error.message).not.toContain(SECRET);
  });

  it("a malformed token answer: HTML, JSON without access_token, a token with spaces", async () => {
    const d = deps({ ...SP, AZURE_CLIENT_SECRET: SECRET });
    fake.script("authority", { kind: "raw", status: 200, text: "<html>proxy login</html>" });
    await expect(chainToken(SCOPE, d)).rejects.toThrow(/not a JSON object/);
    fake.script("authority", { kind: "json", status: 200, body: { token_type: "Bearer", expires_in: 3600 } });
    await expect(chainToken(SCOPE, d)).rejects.toThrow(
      /no usable access_token and expiry \(fields: token_type, expires_in\)/,
    );
    fake.script("authority", { kind: "json", status: 200, body: { access_token: "a b", expires_in: 3600 } });
    await expect(chainToken(SCOPE, d)).rejects.toThrow(/no usable access_token/);
    fake.script("authority", {
      kind: "json",
      status: 200,
      body: { access_token: "ok-token", expires_in: "soon" },
    });
    await expect(chainToken(SCOPE, d)).rejects.toThrow(/no usable access_token and expiry/);
  });

  it("a token with characters a header cannot carry is refused, not sent", async () => {
    const d = deps({ ...SP, AZURE_CLIENT_SECRET: SECRET });
    fake.script("authority", {
      kind: "json",
      status: 200,
      body: { access_token: "ok\r\nX-Evil: 1", expires_in: 3600 },
    });
    await expect(chainToken(SCOPE, d)).rejects.toThrow(/no usable access_token/);
    fake.script("authority", {
      kind: "json",
      status: 200,
      body: { access_token: "tökén", expires_in: 3600 },
    });
    await expect(chainToken(SCOPE, d)).rejects.toThrow(/no usable access_token/);
  });

  it("an authority that echoes the posted secret back does not put it in the message", async () => {
    fake.script("authority", {
      kind: "json",
      status: 400,
      body: { error: "invalid_request", error_description: `bad form: client_secret=${SECRET}&scope=x` },
    });
    const error = (await chainToken(SCOPE, deps({ ...SP, AZURE_CLIENT_SECRET: SECRET })).catch(
      (e: unknown) => e,
    )) as Error;
    expect(error.message).toContain("client_secret=[redacted]");
    expect(error.message).not.toContain(SECRET);
  });

  it("an az that prints garbage fails without echoing it; one that is not logged in is only unavailable", async () => {
    fake.script("imds", { kind: "json", status: 400, body: { error: "invalid_request" } });
    installAz(fakeAzScript({ stdout: "WARNING: leaked-looking-text-123 not json" }));
    const garbage = (await chainToken(SCOPE, deps({})).catch((e: unknown) => e)) as EntraError;
    expect(garbage.kind).toBe("failed");
    expect(garbage.message).toMatch(/printed something that is not a token answer \(\d+ characters/);
    expect(garbage.message).not.toContain("leaked-looking-text-123");

    fake.script("imds", { kind: "json", status: 400, body: { error: "invalid_request" } });
    installAz(fakeAzScript({ stderr: "ERROR: Please run 'az login' to setup account.", code: 1 }));
    const loggedOut = (await chainToken(SCOPE, deps({})).catch((e: unknown) => e)) as EntraError;
    expect(loggedOut.kind).toBe("unavailable");
    expect(loggedOut.message).toContain("Azure CLI: not logged in (run az login)");
  });

  it("an az that hangs is stopped at its limit, with what it started", async () => {
    fake.script("imds", { kind: "json", status: 400, body: { error: "invalid_request" } });
    const pidFile = join(dir, "child-pid");
    installAz(`#!/bin/sh\nsleep 30 &\necho $! > '${pidFile}'\nwait\n`);
    const started = Date.now();
    const error = (await chainToken(SCOPE, deps({}, { cliTimeoutMs: 500 })).catch(
      (e: unknown) => e,
    )) as EntraError;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(error.message).toContain("did not finish in time");
    const child = Number(readFileSync(pidFile, "utf8").trim());
    await expect.poll(() => isRunning(child), { timeout: 5000 }).toBe(false);
  });

  it("az never sees the client secret in its environment", async () => {
    const record = join(dir, "az-env");
    installAz(fakeAzScript({ stdout: AZ_OK, recordTo: record }));
    fake.script("imds", { kind: "json", status: 400, body: { error: "invalid_request" } });
    // A secret without tenant/client: the environment source is unavailable, the CLI answers.
    const token = await chainToken(SCOPE, deps({ AZURE_CLIENT_SECRET: SECRET }));
    expect(token.source).toBe("Azure CLI");
    expect(readFileSync(record, "utf8")).toContain("secret=-");
    expect(readFileSync(record, "utf8")).not.toContain(SECRET);
  });

  it("the secret never goes to a plain-http authority off loopback, nor to a made-up tenant path", async () => {
    const remote = { ...SP, AZURE_CLIENT_SECRET: SECRET, AZURE_AUTHORITY_HOST: "http://login.example.com" };
    await expect(chainToken(SCOPE, deps(remote))).rejects.toThrow(/must be https/);
    const sneaky = { ...SP, AZURE_TENANT_ID: "../../evil?x=", AZURE_CLIENT_SECRET: SECRET };
    await expect(chainToken(SCOPE, deps(sneaky))).rejects.toThrow(/not a tenant id/);
    expect(fake.requests).toHaveLength(0);
  });
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
