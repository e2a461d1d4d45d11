/**
 * The key of a custom server that `hermes setup` keeps in `.env` (`CUSTOM_API_KEY`, which
 * `model.api_key: ${CUSTOM_API_KEY}` refers to) and LM Studio's `LM_API_KEY` reach the model
 * request and never the environment of a command the agent runs in the terminal.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();
const CUSTOM_KEY = "custom-key-0123456789abcdef";
const LM_KEY = "lm-key-0123456789abcdef";

describe("a custom server's key in .env", () => {
  it("authorises the model request and is absent from a terminal command's environment", async () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config reference setup writes
    const reference = "default: fake-model\n  api_key: ${CUSTOM_API_KEY}\n";
    const h = tempHome(fakeProviderConfig(llm.url).replace("default: fake-model\n", reference));
    writeFileSync(join(h.home, ".env"), `CUSTOM_API_KEY=${CUSTOM_KEY}\nLM_API_KEY=${LM_KEY}\n`, {
      mode: 0o600,
    });
    llm.enqueue(
      reply().toolCall("terminal", {
        command:
          // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, run by bash
          'env | grep -c -e CUSTOM_API_KEY -e LM_API_KEY; echo "custom=${#CUSTOM_API_KEY} lm=${#LM_API_KEY}"',
      }),
      reply().text("checked"),
    );
    const run = await runHermes(["chat", "-q", "look at the environment"], h);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("checked");

    expect(llm.requests[0]?.headers.authorization).toBe(`Bearer ${CUSTOM_KEY}`);
    const second = llm.chatRequests[1]?.body as { messages: Array<{ role: string; content: unknown }> };
    const result = String(second.messages.find((m) => m.role === "tool")?.content ?? "");
    expect(result).toContain("custom=0 lm=0");
    expect(result).not.toContain(CUSTOM_KEY);
    expect(result).not.toContain(LM_KEY);
  });
});
