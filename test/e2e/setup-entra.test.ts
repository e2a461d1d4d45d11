/**
 * `hermes setup model` on a terminal (tmux, the built CLI) for Azure AI Foundry with Entra ID: the
 * key-or-Entra question, the token check against a loopback Entra fake (first with nothing set up,
 * then after the user fixes it), the deployment list and the connection test sent with the bearer,
 * and config.yaml holding `auth_mode: entra_id` with no key written anywhere.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { tempHome } from "../support/cli.js";
import { type FakeEntra, startFakeEntra } from "../support/fake-entra.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { hasTmux, Terminal } from "../support/terminal.js";
import { answer } from "../support/wizard-terminal.js";

const SECRET = "tmux-entra-secret-value-4e7a";
const llm = useFakeLlm({ models: ["gpt-4.1-deploy"] });
let entra: FakeEntra;
beforeAll(async () => {
  entra = await startFakeEntra({ prefix: "wizard" });
});
afterAll(async () => {
  await entra.close();
});

describe.skipIf(!hasTmux)("hermes setup on a terminal: azure-foundry with Entra ID", () => {
  it("checks a token (a refused secret first, then a good one), lists and tests with the bearer, saves no key", async () => {
    const { home, cwd } = tempHome();
    // The authority refuses the first request: the wizard says why and offers to try again.
    entra.script("authority", {
      kind: "json",
      status: 401,
      body: { error: "invalid_client", error_description: "AADSTS7000215: Invalid client secret provided." },
    });
    llm.enqueue(reply().text("ok"));
    const term = Terminal.start({
      home,
      cwd,
      args: ["setup", "model"],
      rows: 60,
      env: {
        AZURE_TENANT_ID: "contoso",
        AZURE_CLIENT_ID: "wizard-app",
        AZURE_CLIENT_SECRET: SECRET,
        AZURE_AUTHORITY_HOST: entra.url,
        AZURE_POD_IDENTITY_AUTHORITY_HOST: entra.url,
      },
    });
    let screen: string;
    try {
      await answer(term, "Provider (number or name)", "azure");
      await answer(term, "Azure AI Foundry endpoint", llm.url);
      await answer(term, "Authentication: 1. API key  2. Entra ID", "2");
      await answer(term, "Entra ID scope (model.entra.scope)", "");
      await term.waitFor("invalid_client: AADSTS7000215: Invalid client secret provided.");
      await answer(term, "Try again (t), use an API key instead (k), or keep Entra ID anyway (e)?", "t");
      await term.waitFor("✓ Entra ID token from environment client secret");
      screen = await term.waitFor("Model (number, id or part of one)");
      expect(screen).toMatch(/1\. gpt-4\.1-deploy/);
      expect(screen).not.toContain("Paste your Azure AI Foundry API key");
      await answer(term, "Model (number, id or part of one)", "1");
      await term.waitFor("✓ gpt-4.1-deploy answered");
      screen = await term.waitFor("[exit 0]");
    } finally {
      term.kill();
    }
    expect(screen).not.toContain(SECRET);
    expect(screen).not.toMatch(/wizard-authority-\d/);
    const config = parse(readFileSync(join(home, "config.yaml"), "utf8")) as {
      model: Record<string, unknown>;
    };
    expect(config.model).toMatchObject({
      provider: "azure-foundry",
      base_url: llm.url,
      default: "gpt-4.1-deploy",
      auth_mode: "entra_id",
      entra: { scope: "https://ai.azure.com/.default" },
    });
    expect(existsSync(join(home, ".env")) ? readFileSync(join(home, ".env"), "utf8") : "").not.toContain(
      "AZURE_FOUNDRY_API_KEY",
    );
    // The listing and the connection test both carried the bearer, never an api-key.
    const models = llm.requests.filter((r) => r.path.endsWith("/models"));
    expect(models.length).toBeGreaterThan(0);
    for (const request of [...models, ...llm.chatRequests]) {
      expect(request.headers["authorization"]).toMatch(/^Bearer wizard-authority-\d+$/);
      expect(request.headers["api-key"]).toBeUndefined();
    }
    expect(entra.requests.filter((r) => r.endpoint === "authority").length).toBeGreaterThanOrEqual(2);
  });
});
