/**
 * `/model` in the running REPL (the built CLI in tmux): the provider's own model list with context
 * windows, aliases from `model_aliases` and `provider:model`, each switch taking effect from the
 * next message and recorded on the session, including a switch made before the first message;
 * `--global` saving it to config.yaml, words a model id cannot hold refused; and
 * the question a local server that lists several models (none configured) asks at the start; a
 * provider with no endpoint configured (azure-foundry) has it asked for in place, checked as setup
 * checks it, and kept in `.env`; cancelled, the working model is kept.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { hasTmux, Terminal } from "../support/terminal.js";

const llm = useFakeLlm({
  models: ["fake-model", "other-model"],
  modelInfo: { "other-model": { context_length: 65536 } },
});
const terminals: Terminal[] = [];
afterEach(() => {
  for (const t of terminals.splice(0)) t.kill();
});

type Body = { model: string; tools?: unknown[] };
/** The models the conversation's requests named (the session-title request offers no tools). */
const conversationModels = () =>
  llm.chatRequests
    .map((r) => r.body as Body)
    .filter((b) => (b.tools ?? []).length > 0)
    .map((b) => b.model);

describe.skipIf(!hasTmux)("/model in the running session", () => {
  it("lists the provider's models, follows aliases and provider:model, and records each switch", async () => {
    const { home, cwd } = tempHome(`${fakeProviderConfig(llm.url)}model_aliases:\n  quick: other-model\n`);
    const term = Terminal.start({ home, cwd, env: { NO_COLOR: "1" } });
    terminals.push(term);
    await term.waitFor("Ctrl+D to exit");
    llm.respondWith((request) =>
      ((request.body as Body).tools ?? []).length === 0 ? reply().text("Model session") : undefined,
    );
    llm.enqueue(reply().text("first answer"), reply().text("second answer"));

    term.type("/model");
    term.keys("Enter");
    await term.waitFor("switches from the next turn");
    expect(term.screen()).toMatch(/1\. fake-model\s+.*\(current\)/);
    expect(term.screen()).toMatch(/2\. other-model\s+6\dk ctx/);

    // Before the first message the session has no row yet: no warning, and the first turn records it.
    term.type("/model quick");
    term.keys("Enter");
    await term.waitFor("Model set to other-model");
    expect(term.screen()).not.toContain("was not recorded");
    term.type("hello one");
    term.keys("Enter");
    await term.waitFor("first answer");

    term.type("/model custom:fake-model");
    term.keys("Enter");
    await term.waitFor("Model set to fake-model");
    term.type("hello two");
    term.keys("Enter");
    await term.waitFor("second answer");
    expect(conversationModels()).toEqual(["other-model", "fake-model"]);

    // Words a model id cannot hold are refused, and nothing changes.
    term.type("/model other model");
    term.keys("Enter");
    await term.waitFor('A model id is one word; got "other model"');
    term.type("/model other-model --globl");
    term.keys("Enter");
    await term.waitFor("Unknown option --globl");
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toContain("default: fake-model");

    // --global also saves the choice for new sessions; the aliases stay.
    term.type("/model custom:other-model --global");
    term.keys("Enter");
    await term.waitFor(/Model set to fake-model[\s\S]*Model set to other-model/);
    await term.waitFor("Saved for new sessions in");
    const saved = readFileSync(join(home, "config.yaml"), "utf8");
    expect(saved).toContain("default: other-model");
    expect(saved).toContain("quick: other-model");
    term.keys("C-d");
    await term.waitFor("[exit 0]");
    expect(term.screen()).not.toContain("was not recorded");

    const list = await runHermes(["sessions", "list"], { home, cwd });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/cli\s+other-model\s/);
  });

  it("/model azure:DEPLOYMENT with no endpoint asks for it in place, checks it as setup does, then switches", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const term = Terminal.start({ home, cwd, env: { NO_COLOR: "1", AZURE_FOUNDRY_API_KEY: "az-test-key" } });
    terminals.push(term);
    await term.waitFor("Ctrl+D to exit");
    llm.respondWith((request) =>
      ((request.body as Body).tools ?? []).length === 0 ? reply().text("Kept session") : undefined,
    );
    llm.enqueue(reply().text("still answered"), reply().text("answered by the deployment"));
    const before = readFileSync(join(home, "config.yaml"), "utf8");

    // Cancelled: nothing changes, the working model is kept.
    term.type("/model azure:my-deploy");
    term.keys("Enter");
    await term.waitFor("Azure AI Foundry endpoint:", 10_000);
    expect(term.screen()).toContain("Azure AI Foundry has no endpoint configured yet.");
    term.keys("C-c");
    await term.waitFor("No endpoint given; the model was not changed.");
    term.type("hello");
    term.keys("Enter");
    await term.waitFor("still answered");
    expect(conversationModels()).toEqual(["fake-model"]);

    // Asked again: plain http to another machine is refused as the wizard refuses it, then a
    // pasted request URL on loopback is trimmed to its base, saved in .env, and used.
    term.type("/model azure:my-deploy");
    term.keys("Enter");
    await term.waitFor(
      /still answered[\s\S]*has no endpoint configured yet[\s\S]*Azure AI Foundry endpoint:/,
      10_000,
    );
    term.type("http://10.0.0.8/openai/v1");
    term.keys("Enter");
    await term.waitFor("unencrypted");
    term.type(`${llm.url}/chat/completions`);
    term.keys("Enter");
    await term.waitFor("Model set to my-deploy", 10_000);
    const screen = term.screen().replace(/\s+/g, " ");
    expect(screen).toContain("/chat/completions dropped");
    expect(screen).toContain("Saved AZURE_FOUNDRY_BASE_URL in");
    term.type("hello again");
    term.keys("Enter");
    await term.waitFor("answered by the deployment");
    expect(conversationModels()).toEqual(["fake-model", "my-deploy"]);
    const last = llm.chatRequests.at(-1);
    expect(last?.headers["api-key"]).toBe("az-test-key");
    expect(last?.headers.authorization).toBeUndefined();
    expect(readFileSync(join(home, ".env"), "utf8")).toContain(`AZURE_FOUNDRY_BASE_URL=${llm.url}`);
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(before);
  });

  it("asks which model when a local server with none configured lists several, and uses the answer", async () => {
    const { home, cwd } = tempHome(`model:\n  provider: custom\n  base_url: ${llm.url}\n`);
    const term = Terminal.start({ home, cwd, env: { NO_COLOR: "1" } });
    terminals.push(term);
    await term.waitFor("Model for this session (number or id) [1]:");
    expect(term.screen()).toMatch(/1\. fake-model\s+2\. other-model/);
    term.type("2");
    term.keys("Enter");
    await term.waitFor("Ctrl+D to exit");
    expect(term.screen()).toContain("To keep it: hermes model custom:other-model");
    llm.respondWith((request) =>
      ((request.body as Body).tools ?? []).length === 0 ? reply().text("Picked session") : undefined,
    );
    llm.enqueue(reply().text("picked answer"));
    term.type("hello");
    term.keys("Enter");
    await term.waitFor("picked answer");
    expect(conversationModels()).toEqual(["other-model"]);
  });
});
