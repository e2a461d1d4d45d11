/**
 * Azure AI Foundry with Microsoft Entra ID (`model.auth_mode: entra_id`) through the built CLI: a
 * loopback fake of the Entra token endpoint and of the instance metadata service, a fake `az` on
 * PATH, and the fake LLM as the Foundry endpoint. Every model call carries `Authorization: Bearer`
 * with the chain's token (never `api-key`), a 401 renews the token once, the client secret never
 * reaches the output, the logs, state.db or a terminal command, and a chain that finds nothing
 * says what it tried and how to fix it.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runHermes, tempHome } from "../support/cli.js";
import { type FakeEntra, fakeAzScript, startFakeEntra } from "../support/fake-entra.js";
import { httpError, reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const SECRET = "Zq8~entra-client-secret-5c1f0e9a";
const llm = useFakeLlm({ models: ["gpt-4.1-deploy"] });
let entra: FakeEntra;
beforeAll(async () => {
  entra = await startFakeEntra({ prefix: "e2e" });
});
afterAll(async () => {
  await entra.close();
});
beforeEach(() => {
  entra.requests.length = 0;
});

const CONFIG = (baseUrl: string) =>
  `model:\n  provider: azure-foundry\n  base_url: ${baseUrl}\n  default: gpt-4.1-deploy\n  auth_mode: entra_id\n` +
  "agent:\n  api_max_retries: 0\n";

/** PATH with node and the system tools but no `az` (none is installed here), plus `extra` first. */
function pathWithout(extra?: string): string {
  return [extra, dirname(process.execPath), "/usr/local/bin", "/usr/bin", "/bin"].filter(Boolean).join(":");
}

/** A home on azure-foundry with Entra ID; `.env` holds the service principal when `sp` is set. */
function entraHome(sp: boolean): { home: string; cwd: string; env: Record<string, string> } {
  const dirs = tempHome(CONFIG(llm.url));
  if (sp) {
    writeFileSync(
      join(dirs.home, ".env"),
      `AZURE_TENANT_ID=contoso\nAZURE_CLIENT_ID=e2e-app\nAZURE_CLIENT_SECRET=${SECRET}\nAZURE_AUTHORITY_HOST=${entra.url}\n`,
      { mode: 0o600 },
    );
  }
  // The metadata service is the fake (never 169.254.169.254 from a test).
  return { ...dirs, env: { PATH: pathWithout(), AZURE_POD_IDENTITY_AUTHORITY_HOST: entra.url } };
}

describe("azure-foundry with Entra ID through the built CLI", () => {
  it("hermes -z sends the Entra token as a bearer, never an api-key, even with a key set", async () => {
    const { home, cwd, env } = entraHome(true);
    llm.enqueue(reply().text("hello via entra"));
    const result = await runHermes(["-z", "hi"], {
      home,
      cwd,
      env: { ...env, AZURE_FOUNDRY_API_KEY: "an-api-key-that-stays-home" },
    });
    expect(result.stdout.trim()).toBe("hello via entra");
    expect(result.code).toBe(0);
    const sent = llm.chatRequests.at(-1);
    expect(sent?.headers["authorization"]).toMatch(/^Bearer e2e-authority-\d+$/);
    expect(sent?.headers["api-key"]).toBeUndefined();
    expect(entra.requests).toHaveLength(1);
    expect(entra.requests[0]).toMatchObject({
      path: "/contoso/oauth2/v2.0/token",
      form: {
        grant_type: "client_credentials",
        client_id: "e2e-app",
        scope: "https://ai.azure.com/.default",
      },
    });
  });

  it("a 401 from the endpoint renews the token once and the call goes through", async () => {
    const { home, cwd, env } = entraHome(true);
    llm.enqueue(httpError(401, { error: { code: "401", message: "Token expired" } }));
    llm.enqueue(reply().text("after renewal"));
    const result = await runHermes(["-z", "hi"], { home, cwd, env });
    expect(result.stdout.trim()).toBe("after renewal");
    const bearers = llm.chatRequests.map((r) => r.headers["authorization"]);
    expect(bearers).toHaveLength(2);
    expect(bearers[0]).not.toBe(bearers[1]);
    expect(bearers.every((b) => /^Bearer e2e-authority-\d+$/.test(String(b)))).toBe(true);
    expect(entra.requests).toHaveLength(2);
  });

  it("the client secret reaches no terminal command, no log, no state.db; the token is redacted too", async () => {
    const { home, cwd, env } = entraHome(true);
    llm.enqueue(reply().toolCall("terminal", { command: "env; echo TOKEN-IN-ENV=$AZURE_CLIENT_SECRET" }));
    llm.enqueue(reply().text("looked"));
    const result = await runHermes(["-z", "show me the environment"], {
      home,
      cwd,
      // Exported in the user's shell too, not only in .env: still withheld from the terminal.
      env: { ...env, AZURE_CLIENT_SECRET: SECRET },
    });
    expect(result.stdout.trim()).toBe("looked");
    const toolResult = JSON.stringify(llm.chatRequests.at(-1)?.body);
    expect(toolResult).toContain("TOKEN-IN-ENV=");
    expect(toolResult).not.toContain(SECRET);
    expect(toolResult).not.toContain("AZURE_CLIENT_SECRET=");
    const token = String(llm.chatRequests[0]?.headers["authorization"]).replace("Bearer ", "");
    for (const file of filesUnder(home)) {
      const bytes = readFileSync(file);
      expect(bytes.includes(SECRET), `${file} holds the client secret`).toBe(false);
      expect(bytes.includes(token), `${file} holds the Entra token`).toBe(false);
    }
    expect(`${result.stdout}${result.stderr}`).not.toContain(SECRET);
  });

  it("with nothing set up, the chain says what it tried and how to fix it, and no model call is made", async () => {
    const { home, cwd, env } = entraHome(false);
    entra.script("imds", {
      kind: "json",
      status: 400,
      body: { error: "invalid_request", error_description: "Identity not found" },
    });
    const result = await runHermes(["-z", "hi"], { home, cwd, env });
    expect(result.code).not.toBe(0);
    const said = result.stderr;
    expect(said).toContain("Entra ID found no credential");
    expect(said).toContain(
      "environment client secret: AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET not set",
    );
    expect(said).toContain("workload identity: AZURE_FEDERATED_TOKEN_FILE not set");
    expect(said).toContain("managed identity (IMDS): none on this host (HTTP 400)");
    expect(said).not.toContain("API key was rejected");
    expect(said).toContain("Azure CLI: az not found on PATH");
    expect(said).toContain("az login");
    expect(llm.chatRequests).toHaveLength(0);
  });

  it("az login's token is used when it is the only source; doctor and status say where it came from", async () => {
    const { home, cwd, env } = entraHome(false);
    const bin = join(home, "fake-bin");
    mkdirSync(bin);
    writeFileSync(
      join(bin, "az"),
      fakeAzScript({ stdout: JSON.stringify({ accessToken: "az-cli-e2e-token", expires_on: 4102444800 }) }),
    );
    chmodSync(join(bin, "az"), 0o755);
    const withAz = { ...env, PATH: pathWithout(bin) };
    entra.script("imds", { kind: "json", status: 400, body: { error: "invalid_request" } });
    llm.enqueue(reply().text("hello from az"));
    const chat = await runHermes(["-z", "hi"], { home, cwd, env: withAz });
    expect(chat.stdout.trim()).toBe("hello from az");
    expect(llm.chatRequests.at(-1)?.headers["authorization"]).toBe("Bearer az-cli-e2e-token");

    entra.script("imds", { kind: "json", status: 400, body: { error: "invalid_request" } });
    const doctor = await runHermes(["doctor"], { home, cwd, env: withAz, timeoutMs: 60_000 });
    expect(doctor.stdout).toMatch(
      /✓ .*primary: azure-foundry.*Entra ID token \(Azure CLI\) accepted, model gpt-4\.1-deploy/,
    );
    expect(
      llm.requests.some(
        (r) => r.path.endsWith("/models") && r.headers["authorization"] === "Bearer az-cli-e2e-token",
      ),
    ).toBe(true);
    const status = await runHermes(["status"], { home, cwd, env: withAz });
    expect(status.stdout).toMatch(/Auth\s+Entra ID, scope https:\/\/ai\.azure\.com\/\.default/);
    expect(status.stdout).not.toContain("az-cli-e2e-token");
  });

  it("hermes model lists and switches deployments with the bearer and keeps auth_mode", async () => {
    const { home, cwd, env } = entraHome(true);
    const list = await runHermes(["model", "--list"], { home, cwd, env });
    expect(list.stdout).toContain("gpt-4.1-deploy");
    const listed = llm.requests.filter((r) => r.path.endsWith("/models"));
    expect(listed.at(-1)?.headers["authorization"]).toMatch(/^Bearer e2e-authority-\d+$/);
    expect(listed.at(-1)?.headers["api-key"]).toBeUndefined();
    const switched = await runHermes(["model", "azure:o4-mini-deploy"], { home, cwd, env });
    expect(switched.stdout.trim()).toBe("azure-foundry:o4-mini-deploy");
    const config = readFileSync(join(home, "config.yaml"), "utf8");
    expect(config).toContain("default: o4-mini-deploy");
    expect(config).toContain("auth_mode: entra_id");
    expect(`${list.stdout}${list.stderr}${switched.stdout}${switched.stderr}`).not.toMatch(
      /e2e-authority-\d/,
    );
  });

  it("setup --non-interactive --auth-mode entra_id tests with a token and saves auth_mode; bad words refused", async () => {
    const { home, cwd } = tempHome();
    const env = {
      PATH: pathWithout(),
      AZURE_POD_IDENTITY_AUTHORITY_HOST: entra.url,
      AZURE_TENANT_ID: "contoso",
      AZURE_CLIENT_ID: "setup-app",
      AZURE_CLIENT_SECRET: SECRET,
      AZURE_AUTHORITY_HOST: entra.url,
    };
    const flags = [
      "setup",
      "--non-interactive",
      "--provider",
      "azure",
      "-m",
      "gpt-4.1-deploy",
      "--base-url",
      llm.url,
    ];
    const bad = await runHermes([...flags, "--auth-mode", "entra"], { home, cwd, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--auth-mode takes api_key or entra_id");
    llm.enqueue(reply().text("ok"));
    const result = await runHermes([...flags, "--auth-mode", "entra_id"], { home, cwd, env });
    expect(result.stdout.trim()).toBe("azure-foundry:gpt-4.1-deploy");
    expect(llm.chatRequests.at(-1)?.headers["authorization"]).toMatch(/^Bearer e2e-authority-\d+$/);
    const config = readFileSync(join(home, "config.yaml"), "utf8");
    expect(config).toContain("auth_mode: entra_id");
    expect(config).toContain("scope: https://ai.azure.com/.default");
    expect(`${result.stdout}${result.stderr}`).not.toContain(SECRET);
  });

  it("doctor fails the provider line with the chain's reason and fix when no token can be got", async () => {
    const { home, cwd, env } = entraHome(false);
    entra.script("imds", { kind: "json", status: 400, body: { error: "invalid_request" } });
    const doctor = await runHermes(["doctor"], { home, cwd, env, timeoutMs: 60_000 });
    expect(doctor.stdout).toMatch(/✗ .*primary: azure-foundry.*Entra ID found no credential/);
    expect(doctor.stdout).toContain("Run `az login`");
  });
});

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else if (name !== ".env") out.push(path);
  }
  return out;
}
