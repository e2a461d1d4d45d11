/**
 * `hermes WORD` where WORD is not a command is a usage error, not a prompt: nothing reaches the
 * model. A first argument that reads like a sentence (a space, or ending in ? ! .) is a prompt.
 */
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

type ChatBody = { messages: Array<{ role: string; content: string | null }> };
const userText = (): string | null | undefined =>
  (llm.chatRequests[0]?.body as ChatBody | undefined)?.messages.find((m) => m.role === "user")?.content;

describe("unknown subcommands", () => {
  it("hermes frobnicate: exit 2, the command list, and no request to the provider", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const result = await runHermes(["frobnicate", "--verbose", "the", "files"], { home, cwd });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('hermes: "frobnicate" is not a command.');
    expect(result.stderr).toContain("Commands: ");
    expect(result.stderr).toContain("hermes -q 'frobnicate the files'");
    expect(llm.requests).toHaveLength(0);
  });

  it("hermes doctr suggests doctor only if doctor is a command; confg suggests config", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const help = await runHermes(["--help"], { home, cwd });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Prompts: The first argument is a prompt only when it contains a space");
    const hasDoctor = /^ {2}doctor\b/m.test(help.stdout);
    const doctr = await runHermes(["doctr"], { home, cwd });
    expect(doctr.code).toBe(2);
    expect(doctr.stderr.includes("Did you mean: doctor")).toBe(hasDoctor);
    const confg = await runHermes(["confg", "show"], { home, cwd });
    expect(confg.code).toBe(2);
    expect(confg.stderr).toContain("Did you mean: config?");
    expect(llm.requests).toHaveLength(0);
  });

  it('hermes "what is in this folder?" still runs the prompt', async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(reply().text("Nothing yet."));
    const result = await runHermes(["what is in this folder?"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Nothing yet.\n");
    expect(userText()).toBe("what is in this folder?");
  });

  it("hermes chat frobnicate and hermes -z frobnicate run it as a prompt", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(reply().text("Frobnicated."));
    const chat = await runHermes(["chat", "frobnicate"], { home, cwd });
    expect(chat.code).toBe(0);
    expect(chat.stdout).toBe("Frobnicated.\n");
    expect(userText()).toBe("frobnicate");
    llm.chatRequests.length = 0;
    llm.enqueue(reply().text("Again."));
    const oneshot = await runHermes(["-z", "frobnicate"], { home, cwd });
    expect(oneshot.code).toBe(0);
    expect(oneshot.stdout).toBe("Again.\n");
    expect(userText()).toBe("frobnicate");
  });
});
