/**
 * What a one-shot remembers between starts so the next one does less: an endpoint's answer about a
 * model's context window (`<home>/cache/context_length_checks.json`), asked once and not again
 * while it is recent. A window remembered wrongly still gives way to the overflow recovery.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { httpError, reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();
const listings = () => llm.requests.filter((r) => r.method === "GET" && r.path === "/v1/models").length;

describe("one-shot context window lookup", () => {
  it("asks the endpoint's model listing on the first start only", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(reply().text("first"));
    const first = await runHermes(["-z", "hello"], { home, cwd });
    expect(first.stdout).toBe("first\n");
    expect(listings()).toBe(1);
    const checks = JSON.parse(readFileSync(join(home, "cache", "context_length_checks.json"), "utf8"));
    expect(checks.checks[`fake-model@${llm.url}`]).toMatchObject({ context_length: null });

    llm.requests.length = 0;
    llm.enqueue(reply().toolCall("terminal", { command: "echo again" }), reply().text("second"));
    const second = await runHermes(["-z", "run it"], { home, cwd });
    expect(second.code).toBe(0);
    expect(second.stdout).toBe("second\n");
    expect(llm.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /v1/chat/completions",
      "POST /v1/chat/completions",
    ]);
  });

  it("asks again once the remembered answer is an hour old", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    mkdirSync(join(home, "cache"));
    const old = Math.floor(Date.now() / 1000) - 3601;
    const file = join(home, "cache", "context_length_checks.json");
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        checks: { [`fake-model@${llm.url}`]: { context_length: null, checked_at: old } },
      }),
    );
    llm.enqueue(reply().text("fine"));
    const result = await runHermes(["-z", "hello"], { home, cwd });
    expect(result.stdout).toBe("fine\n");
    expect(listings()).toBe(1);
    const after = JSON.parse(readFileSync(file, "utf8")).checks[`fake-model@${llm.url}`];
    expect(after.checked_at).toBeGreaterThan(old);
  });

  it("a remembered window the model does not have gives way to the window the overflow error states", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    mkdirSync(join(home, "cache"));
    const now = Math.floor(Date.now() / 1000);
    writeFileSync(
      join(home, "cache", "context_length_checks.json"),
      JSON.stringify({
        version: 1,
        checks: { [`fake-model@${llm.url}`]: { context_length: 1_000_000, checked_at: now } },
      }),
    );
    llm.enqueue(
      httpError(400, {
        error: {
          message: "This model's maximum context length is 16384 tokens.",
          code: "context_length_exceeded",
        },
      }),
    );
    // A one-shot has nothing to compress: the turn ends with the usual advice, and the limit is learnt.
    const failed = await runHermes(["-z", "hello"], { home, cwd });
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toMatch(/too long for the model's context window/);
    expect(listings()).toBe(0);
    expect(readFileSync(join(home, "context_length_cache.yaml"), "utf8")).toContain(
      `fake-model@${llm.url}: 16384`,
    );
    llm.enqueue(reply().text("fine"));
    const next = await runHermes(["-z", "hello"], { home, cwd });
    expect(next.stdout).toBe("fine\n");
    expect(listings()).toBe(0);
  });
});
