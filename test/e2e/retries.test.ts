/**
 * Errors and retries through the built CLI, with the real retry defaults (no api_max_retries
 * override): a dead local server fails at once with the fix, a single 500 costs one short wait
 * that the user sees on stderr, a rate limit inside a 200 stream is retried after the provider's
 * Retry-After, a Retry-After longer than the retry budget is not waited for, a 413 compresses and
 * continues, and a billing error moves to the fallback provider. Real waits stay at a few seconds.
 */
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runHermes, tempHome } from "../support/cli.js";
import {
  type FakeLlm,
  httpError,
  rateLimited,
  reply,
  startFakeLlm,
  streamError,
} from "../support/fake-llm.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm({ models: ["fake-model", "backup-model"] });
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => {
  llm.requests.length = 0;
  llm.chatRequests.length = 0;
});

/** config.yaml for a custom endpoint with the default retry policy. */
function config(baseUrl: string, extra = ""): string {
  return `model:\n  provider: custom\n  base_url: ${baseUrl}\n  default: fake-model\n${extra}`;
}

/** A loopback port with nothing listening: bound, noted, closed. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

type ChatBody = { model?: string; messages: Array<{ role: string; content: unknown }> };
const body = (i: number) => llm.chatRequests[i]?.body as ChatBody;

describe("hermes when the model call fails", () => {
  it("a dead local server: exits 1 within 10 s with how to start it, nothing on stdout", async () => {
    const port = await deadPort();
    const url = `http://127.0.0.1:${port}/v1`;
    const { home, cwd } = tempHome(config(url));
    const started = Date.now();
    const result = await runHermes(["-q", "hello"], { home, cwd, timeoutMs: 15_000 });
    const elapsed = Date.now() - started;
    expect(result.code).toBe(1);
    expect(elapsed).toBeLessThan(10_000);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`nothing is listening at ${url} (connection refused)`);
    expect(result.stderr).toContain("is the server running?");
    expect(result.stderr).toContain(`--port ${port}`);
    expect(result.stderr).toContain("model.base_url in config.yaml");
    expect(result.stderr).not.toMatch(/retrying in/);
  });

  it("a 500 once: one short wait shown on stderr, then the answer alone on stdout (-z)", async () => {
    const { home, cwd } = tempHome(config(llm.url));
    llm.enqueue(httpError(500, { error: { message: "upstream hiccup" } }), reply().text("Recovered."));
    const started = Date.now();
    const result = await runHermes(["-z", "hi"], { home, cwd });
    const elapsed = Date.now() - started;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("Recovered.\n");
    const line = /hermes: (.* had a server error \(500\).*; retrying in ([\d.]+) s \(attempt 2 of 2\))/.exec(
      result.stderr,
    );
    expect(line, result.stderr).not.toBeNull();
    const waited = Number(line?.[2]);
    expect(waited).toBeGreaterThanOrEqual(1);
    expect(waited).toBeLessThanOrEqual(2);
    expect(line?.[1]).toContain(`127.0.0.1:${new URL(llm.url).port}`);
    expect(elapsed).toBeGreaterThanOrEqual(waited * 1000);
    expect(llm.chatRequests).toHaveLength(2);
  });

  it("a rate limit inside a 200 stream is retried after its Retry-After; the wait is shown", async () => {
    const { home, cwd } = tempHome(config(llm.url));
    llm.enqueue(
      streamError(
        { error: { code: 429, message: "Rate limit exceeded: free-models-per-min" } },
        { headers: { "retry-after": "0.3" } },
      ),
      reply().text("Answer after the limit."),
    );
    const result = await runHermes(["-q", "hi"], { home, cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("Answer after the limit.");
    expect(result.stdout).not.toMatch(/rate limit/i);
    expect(result.stderr).toMatch(
      /rate limited by 127\.0\.0\.1:\d+ \(429\): Rate limit exceeded: free-models-per-min; retrying in 0\.3 s \(attempt 2 of 4\)/,
    );
    expect(llm.chatRequests).toHaveLength(2);
  });

  it("a Retry-After longer than the retry budget is not waited for", async () => {
    const { home, cwd } = tempHome(config(llm.url));
    llm.enqueue(rateLimited(600, "Rate limit reached for requests"));
    const started = Date.now();
    const result = await runHermes(["-q", "hi"], { home, cwd });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/it asks to wait 10 min, more than the 60 s left for retrying this call/);
    expect(result.stderr).toMatch(/add fallback_providers to config\.yaml/);
    expect(llm.chatRequests).toHaveLength(1);
  });

  it("a 413 compresses the conversation and the turn goes on", async () => {
    const { home, cwd } = tempHome(config(llm.url).replace("model:\n", "model:\n  context_length: 4000\n"));
    for (let i = 1; i <= 4; i++)
      writeFileSync(join(cwd, `part${i}.txt`), `part ${i}: ${"data ".repeat(480)}\n`);
    llm.enqueue(
      ...[1, 2, 3, 4].map((i) => reply().toolCall("read_file", { path: `part${i}.txt` })),
      httpError(413, "<html><body><h1>413 Request Entity Too Large</h1></body></html>"),
      reply().text("## Goal\nRead four parts.\n## Done\nRead parts 1-4."),
      reply().text("All four parts read."),
    );
    const result = await runHermes(["-q", "read the four parts"], { home, cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("All four parts read.");
    expect(result.stderr).toMatch(/Context compressed/);
    expect(llm.chatRequests).toHaveLength(7);
    // The request after compression is smaller than the one the server refused.
    expect(JSON.stringify(body(6)).length).toBeLessThan(JSON.stringify(body(4)).length);
    expect(JSON.stringify(body(6))).toContain("Read parts 1-4.");
  });

  it("a billing error moves the turn to the fallback provider, which answers", async () => {
    const { home, cwd } = tempHome(
      config(
        llm.url,
        `fallback_providers:\n  - provider: custom\n    model: backup-model\n    base_url: ${llm.url}\n`,
      ),
    );
    llm.enqueue(
      httpError(429, {
        type: "error",
        error: {
          type: "rate_limit_error",
          message: "You're out of extra usage. Add more at claude.ai/settings/usage.",
        },
      }),
      reply().text("Answer from the fallback."),
    );
    const result = await runHermes(["-z", "hi"], { home, cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("Answer from the fallback.\n");
    expect(llm.chatRequests.map((r) => (r.body as ChatBody).model)).toEqual(["fake-model", "backup-model"]);
  });
});
