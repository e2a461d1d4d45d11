import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
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

  it("keeps Responses and named conversations across a restart; runs, sessions and jobs answer the official client", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const first = await startCli(home, cwd);
    const firstExit = new Promise((resolve) => first.child.on("exit", resolve));
    let earlier: string;
    try {
      llm.enqueue(reply().text("Noted: the boat is called Petrel."));
      const client = new OpenAI({ baseURL: `${first.url}/v1`, apiKey: KEY, maxRetries: 0 });
      const made = await client.responses.create({
        model: "hermes-agent",
        input: "My boat is called Petrel.",
        conversation: "boat",
      });
      earlier = made.id;
    } finally {
      first.child.kill("SIGTERM");
    }
    await firstExit;

    const second = await startCli(home, cwd);
    const secondExit = new Promise((resolve) => second.child.on("exit", resolve));
    try {
      const client = new OpenAI({ baseURL: `${second.url}/v1`, apiKey: KEY, maxRetries: 0 });
      expect((await client.responses.retrieve(earlier)).status).toBe("completed");
      llm.enqueue(reply().text("Petrel."));
      const answer = await client.responses.create({
        model: "hermes-agent",
        input: "What is my boat called?",
        conversation: "boat",
      });
      expect(answer.previous_response_id).toBe(earlier);
      const sent = JSON.stringify(llm.chatRequests.at(-1)?.body);
      expect(sent).toContain("My boat is called Petrel.");

      llm.enqueue(reply().text("Run finished."));
      const run = await client.post<{ run_id: string }>("/runs", { body: { input: "do it" } });
      const events: Array<Record<string, unknown>> = [];
      const stream = (await client.get(`/runs/${run.run_id}/events`, { stream: true })) as AsyncIterable<
        Record<string, unknown>
      >;
      for await (const event of stream) events.push(event);
      expect(events.at(-1)).toMatchObject({ event: "run.completed", output: "Run finished." });

      const root = new OpenAI({ baseURL: second.url, apiKey: KEY, maxRetries: 0 });
      const sessions = await root.get<{ data: Array<{ source: string }> }>("/api/sessions");
      expect(sessions.data.length).toBeGreaterThanOrEqual(2);
      expect(sessions.data.every((s) => s.source === "api_server")).toBe(true);
      const { job } = await root.post<{ job: { id: string } }>("/api/jobs", {
        body: { name: "nightly", schedule: "every 1d", prompt: "tidy up" },
      });
      expect(JSON.parse(readFileSync(join(home, "cron", "jobs.json"), "utf8")).jobs[0].id).toBe(job.id);
      const caps = await client.get<{ features: Record<string, unknown> }>("/capabilities");
      expect(caps.features["run_submission"]).toBe(true);
    } finally {
      second.child.kill("SIGTERM");
    }
    expect(await secondExit).toBe(0);
  });

  it("refuses an API_SERVER_KEY shorter than 16 characters", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const result = await runHermes(["api-server", "--port", "0"], {
      home,
      cwd,
      env: { API_SERVER_KEY: "too-short" },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("at least 16");
  });

  it("refuses to start without API_SERVER_KEY and says how to set it", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const result = await runHermes(["api-server", "--port", "0"], { home, cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("API_SERVER_KEY");
  });
});
