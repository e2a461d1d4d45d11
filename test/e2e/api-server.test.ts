import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, HERMES_BIN, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";

const KEY = "e2e-api-server-key-abcdef";
let llm: FakeLlm;

beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

/** Starts `hermes api-server --port 0` and resolves with its URL once it says it listens. */
function startCli(
  home: string,
  cwd: string,
): Promise<{ child: ChildProcessWithoutNullStreams; url: string }> {
  const child = spawn(process.execPath, [HERMES_BIN, "api-server", "--port", "0"], {
    cwd,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      HERMES_HOME: home,
      NO_COLOR: "1",
      API_SERVER_KEY: KEY,
    },
    stdio: "pipe",
  });
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString("utf8");
      const url = /Listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (url) resolve({ child, url });
    });
    child.on("exit", (code) =>
      reject(new Error(`hermes api-server exited with ${code}\n${stdout}\n${stderr}`)),
    );
  });
}

describe("hermes api-server (built CLI)", () => {
  it("answers the official openai client, then drains and exits 0 on SIGTERM", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const { child, url } = await startCli(home, cwd);
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      llm.enqueue(reply().text("Hello from the CLI server."));
      const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: KEY, maxRetries: 0 });
      const answer = await client.chat.completions.create({
        model: "hermes-agent",
        messages: [{ role: "user", content: "hello" }],
      });
      expect(answer.choices[0]?.message.content).toBe("Hello from the CLI server.");
      const wrong = new OpenAI({ baseURL: `${url}/v1`, apiKey: "wrong", maxRetries: 0 });
      await expect(wrong.models.list()).rejects.toMatchObject({ status: 401 });
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
  });

  it("refuses to start without API_SERVER_KEY and says how to set it", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const result = await runHermes(["api-server", "--port", "0"], { home, cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("API_SERVER_KEY");
  });
});
