import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { NoProviderError } from "../../../src/ai/resolve.js";
import { askableEndpoint, askEndpointInRepl } from "../../../src/commands/model-args.js";
import { fakeContext, fakeSession, plainPaint, registry } from "../../support/command-context.js";

/** A REPL-like context answering `ask` from a script (null: Ctrl+C), recording what was shown. */
function context(answers: (string | null)[]) {
  const shown: string[] = [];
  const prompts: string[] = [];
  return {
    shown,
    prompts,
    paint: plainPaint,
    reply: (...lines: string[]) => shown.push(...lines),
    ask: async (lines: string[], prompt: string) => {
      shown.push(...lines);
      prompts.push(prompt);
      const answer = answers.shift();
      return answer === undefined ? null : answer;
    },
  };
}

describe("/model azure-foundry:X in the REPL with no endpoint", () => {
  it("only azure-foundry's missing endpoint is asked for; a custom server and other errors are not", () => {
    const missing = (provider: string) =>
      new NoProviderError("needs a base URL", { missing: "base_url", provider });
    expect(askableEndpoint(missing("azure-foundry"))).toBe("azure-foundry");
    expect(askableEndpoint(missing("custom"))).toBeUndefined();
    expect(askableEndpoint(new NoProviderError("no key"))).toBeUndefined();
    expect(askableEndpoint(new Error("boom"))).toBeUndefined();
  });

  it("asks again after a refused address, normalises a pasted request URL, and keeps it in .env (0600)", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-repl-endpoint-"));
    const ctx = context([
      "my resource",
      "http://10.0.0.8/openai/v1",
      "https://res.openai.azure.com/openai/deployments/gpt-5/chat/completions?api-version=2024-10-21",
    ]);
    const url = await askEndpointInRepl(ctx, "azure-foundry", home);
    expect(url).toBe("https://res.openai.azure.com/openai/v1");
    expect(ctx.prompts).toEqual([
      "Azure AI Foundry endpoint: ",
      "Azure AI Foundry endpoint: ",
      "Azure AI Foundry endpoint: ",
    ]);
    const said = ctx.shown.join("\n");
    expect(said).toContain("has no endpoint configured yet");
    expect(said).toContain("has spaces in it");
    expect(said).toContain("unencrypted");
    expect(said).toContain(`Saved AZURE_FOUNDRY_BASE_URL in ${join(home, ".env")}`);
    expect(readFileSync(join(home, ".env"), "utf8")).toContain(
      "AZURE_FOUNDRY_BASE_URL=https://res.openai.azure.com/openai/v1",
    );
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
  });

  it("Ctrl+C or an empty answer cancels and writes nothing", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-repl-endpoint-"));
    expect(await askEndpointInRepl(context([null]), "azure-foundry", home)).toBeNull();
    expect(await askEndpointInRepl(context(["  "]), "azure-foundry", home)).toBeNull();
    expect(() => statSync(join(home, ".env"))).toThrow();
  });

  it("an endpoint saved in .env earlier in the session is used without asking", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-repl-endpoint-"));
    writeFileSync(join(home, ".env"), "AZURE_FOUNDRY_BASE_URL=https://saved.openai.azure.com/openai/v1\n");
    const ctx = context([]);
    expect(await askEndpointInRepl(ctx, "azure-foundry", home)).toBe(
      "https://saved.openai.azure.com/openai/v1",
    );
    expect(ctx.prompts).toEqual([]);
  });
});

describe("the /model handler on each surface", () => {
  /** A session whose first switch has no endpoint; with one given it switches. */
  function endpointlessSession(home: string) {
    const switches: Array<{ model: string; baseUrl?: string }> = [];
    const session = fakeSession({
      setModel: async (model: string, options: { baseUrl?: string } = {}) => {
        if (!options.baseUrl) {
          throw new NoProviderError('Provider "azure" needs a base URL.', {
            missing: "base_url",
            provider: "azure-foundry",
          });
        }
        switches.push({ model, baseUrl: options.baseUrl });
      },
    });
    (session.agent as { home: string }).home = home;
    return { session, switches };
  }

  async function run(text: string, c: ReturnType<typeof fakeContext>) {
    const parsed = registry.parse(text);
    if (parsed.kind !== "command") throw new Error(`not a command: ${text}`);
    await parsed.command.run(parsed.args, c.ctx);
  }

  it("the REPL asks, then switches with the endpoint", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-repl-endpoint-"));
    const { session, switches } = endpointlessSession(home);
    const c = fakeContext({ session, answers: ["https://res.openai.azure.com"] });
    await run("/model azure:gpt-5-deploy", c);
    expect(switches).toEqual([
      { model: "azure:gpt-5-deploy", baseUrl: "https://res.openai.azure.com/openai/v1" },
    ]);
    expect(c.printed.join("\n")).toContain("Azure AI Foundry endpoint: ");
  });

  it("a gateway chat is not asked: it keeps the advice, and nothing is written", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-chat-endpoint-"));
    const { session, switches } = endpointlessSession(home);
    const c = fakeContext({
      session,
      answers: ["https://res.openai.azure.com"],
      surface: { kind: "chat", platform: "telegram" },
    });
    await run("/model azure:gpt-5-deploy", c);
    expect(switches).toEqual([]);
    const said = c.printed.join("\n");
    expect(said).toContain("needs its endpoint, and none is configured; the model was not changed.");
    expect(said).not.toContain("Azure AI Foundry endpoint: ");
    expect(() => statSync(join(home, ".env"))).toThrow();
  });
});
