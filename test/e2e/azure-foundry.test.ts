/**
 * Azure AI Foundry through the built CLI: its OpenAI-compatible endpoint takes the key in an
 * `api-key` header, never as `Authorization: Bearer`. The fake here refuses any request without
 * the right `api-key` or with an Authorization header, the model listing included, so a one-shot
 * and `hermes doctor` pass only when every request is keyed the Azure way.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const KEY = "3f9c2a7be1d04c58a6b2e0f7c9d1a4b6";
const llm = useFakeLlm({ models: ["gpt-4.1-deploy"], requireKey: { header: "api-key", value: KEY } });

const CONFIG = "model:\n  provider: azure-foundry\n  default: gpt-4.1-deploy\nagent:\n  api_max_retries: 0\n";

/** A home on azure-foundry whose `.env` holds `key` and the fake's address. */
function azureHome(key: string): { home: string; cwd: string } {
  const dirs = tempHome(CONFIG);
  writeFileSync(
    join(dirs.home, ".env"),
    `AZURE_FOUNDRY_API_KEY=${key}\nAZURE_FOUNDRY_BASE_URL=${llm.url}\n`,
    { mode: 0o600 },
  );
  return dirs;
}

function lineOf(stdout: string, name: string): string {
  return stdout.split("\n").find((l) => l.includes(` ${name}:`)) ?? `(no line for ${name})`;
}

describe("azure-foundry provider", () => {
  it("hermes -z answers with the key sent as api-key and no bearer", async () => {
    const { home, cwd } = azureHome(KEY);
    llm.enqueue(reply().text("hello from the deployment"));
    const result = await runHermes(["-z", "hi"], { home, cwd });
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe("hello from the deployment");
    expect(result.code).toBe(0);
    expect(llm.chatRequests).toHaveLength(1);
    const sent = llm.chatRequests[0];
    expect(sent?.headers["api-key"]).toBe(KEY);
    expect(sent?.headers["authorization"]).toBeUndefined();
    expect(sent?.body).toMatchObject({ model: "gpt-4.1-deploy" });
  });

  it("a wrong key is refused with the endpoint's 401, and the key never reaches the output", async () => {
    const wrong = "0000aaaa1111bbbb2222cccc3333dddd";
    const { home, cwd } = azureHome(wrong);
    const result = await runHermes(["-z", "hi"], { home, cwd });
    expect(result.code).not.toBe(0);
    expect(`${result.stdout}${result.stderr}`).toMatch(/401|Access denied/);
    expect(`${result.stdout}${result.stderr}`).not.toContain(wrong);
    expect(llm.pending).toBe(0);
  });

  it("the fake is honest: the same key as a bearer (a custom endpoint) is refused", async () => {
    const { home, cwd } = tempHome(
      `model:\n  provider: custom\n  base_url: ${llm.url}\n  api_key: ${KEY}\n  default: gpt-4.1-deploy\nagent:\n  api_max_retries: 0\n`,
    );
    const result = await runHermes(["-z", "hi"], { home, cwd });
    expect(result.code).not.toBe(0);
    expect(llm.requests.some((r) => r.headers["authorization"] === `Bearer ${KEY}`)).toBe(true);
  });

  it("hermes doctor probes the endpoint with api-key: accepted, then refused with the fix naming the variable", async () => {
    const good = azureHome(KEY);
    const ok = await runHermes(["doctor"], { ...good, timeoutMs: 60_000 });
    expect(lineOf(ok.stdout, "primary: azure-foundry")).toMatch(
      /✓ .*reachable, key accepted, model gpt-4\.1-deploy/,
    );
    const probe = llm.requests.find((r) => r.path === "/v1/models");
    expect(probe?.headers["api-key"]).toBe(KEY);
    expect(probe?.headers["authorization"]).toBeUndefined();
    expect(llm.chatRequests).toHaveLength(0);

    const bad = azureHome("0000aaaa1111bbbb2222cccc3333dddd");
    const refused = await runHermes(["doctor"], { ...bad, timeoutMs: 60_000 });
    expect(refused.code).toBe(1);
    expect(lineOf(refused.stdout, "primary: azure-foundry")).toContain("✗");
    expect(refused.stdout).toContain("set AZURE_FOUNDRY_API_KEY in .env");
  });

  it("without its endpoint variable the error says which variable to set", async () => {
    const { home, cwd } = tempHome(CONFIG);
    writeFileSync(join(home, ".env"), `AZURE_FOUNDRY_API_KEY=${KEY}\n`, { mode: 0o600 });
    const result = await runHermes(["-z", "hi"], { home, cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Provider "azure-foundry" needs a base URL');
    expect(result.stderr).toContain("set AZURE_FOUNDRY_BASE_URL in ~/.hermes/.env");
    expect(result.stderr).not.toContain("--base-url");
  });
});
