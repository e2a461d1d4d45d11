import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { hang, reply, stallMidStream } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

type ChatBody = { messages: Array<{ role: string; content: string | null }> };
const toolResults = (request: number): string[] =>
  (llm.chatRequests[request]!.body as ChatBody).messages
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));

/** A config whose streams are cut after `seconds` without data, with `retries` model-call retries. */
const stallConfig = (seconds: number, retries = 0) =>
  fakeProviderConfig(llm.url)
    .replace("api_max_retries: 0", `api_max_retries: ${retries}`)
    .replace("agent:\n", `agent:\n  stream_stall_timeout: ${seconds}\n`);

describe("cut-off and stalled model output through the CLI", () => {
  it("a write_file cut off by finish_reason length is not executed and the model is told", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(
      reply().toolCall("write_file", '{"path": "a.txt", "content": "abc').finish("length"),
      reply().text("I will write it in parts."),
    );
    const result = await runHermes(["-z", "write a.txt"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("I will write it in parts.\n");
    expect(existsSync(join(cwd, "a.txt"))).toBe(false);
    const told = toolResults(1);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/Not run: your response hit the output token limit/);
    expect(told[0]).toMatch(/write a large file in parts/);
  });

  it("headers that never come: cut within the stall timeout, a clear error, non-zero exit", async () => {
    const { home, cwd } = tempHome(stallConfig(0.5));
    llm.enqueue(hang());
    const started = Date.now();
    const result = await runHermes(["-z", "hi"], { home, cwd, timeoutMs: 15_000 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/sent no response headers within 0.5 s/);
    expect(result.stderr).toMatch(/agent.stream_stall_timeout/);
  });

  it("-z with a stream that stalls mid-answer: non-zero exit, nothing on stdout", async () => {
    const { home, cwd } = tempHome(stallConfig(0.5));
    llm.enqueue(stallMidStream(3, reply().text("The first part of a long answer, and then more.")));
    const result = await runHermes(["-z", "explain"], { home, cwd, timeoutMs: 15_000 });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/stalled/);
  });

  it("chat -q: a stalled stream retried leaves only the complete answer on stdout", async () => {
    const { home, cwd } = tempHome(stallConfig(0.5, 1));
    llm.enqueue(
      stallMidStream(3, reply().text("FRAGMENT of a long answer that never ends")),
      reply().text("The whole answer."),
    );
    // The retry waits the policy's backoff (seconds) before the second attempt.
    const result = await runHermes(["chat", "-q", "explain"], { home, cwd, timeoutMs: 40_000 });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("The whole answer.\n");
    expect(llm.chatRequests).toHaveLength(2);
  }, 45_000);
});
