/**
 * `hermes gateway` through the built CLI: one gateway per home hosting the API server and the
 * cron ticker; a due job runs on its own and its output lands on disk; a second gateway on the
 * same home is refused; `status` and `stop` work on the running one, which drains and exits.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { startGatewayProcess } from "../support/gateway-process.js";
import { FILESYSTEM_BIN } from "../support/mcp-servers.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

const KEY = "gateway-test-key";

async function waitFor<T>(check: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A process that exists and is not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

describe("hermes gateway", () => {
  it("hosts the API server and the cron ticker, refuses a second gateway, and stops cleanly", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    const env = {
      API_SERVER_ENABLED: "true",
      API_SERVER_KEY: KEY,
      API_SERVER_PORT: "0",
      HERMES_CRON_TICK_SECONDS: "0.2",
    };
    const at = new Date(Date.now() + 1500).toISOString();
    const created = await runHermes(["cron", "create", at, "say", "hello", "--name", "soon"], { ...h, env });
    expect(created.code, created.stderr).toBe(0);
    const id = /Created ([0-9a-f]{12})/.exec(created.stdout)?.[1] ?? "";

    llm.enqueue(reply().text("Hello from the gateway's cron"));
    const proc = await startGatewayProcess(h, env);
    const gateway = proc.child;
    try {
      const line = proc.line;
      expect(line).toContain("cron (every 0.2 s)");
      const url = /api_server (http:\/\/[^\s,]+)/.exec(line)?.[1] ?? "";
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

      // The due job runs on its own.
      const dir = join(h.home, "cron", "output", id);
      const file = await waitFor(
        () => (existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith(".md")) : undefined),
        "the cron job's output",
      );
      expect(readFileSync(join(dir, file), "utf8")).toContain("Hello from the gateway's cron");

      // The API server answers the official client.
      llm.enqueue(reply().text("Hello over the API"));
      const client = new OpenAI({ apiKey: KEY, baseURL: `${url}/v1`, maxRetries: 0 });
      const completion = await client.chat.completions.create({
        model: "hermes-agent",
        messages: [{ role: "user", content: "hi" }],
      });
      expect(completion.choices[0]?.message.content).toBe("Hello over the API");

      const status = await runHermes(["gateway", "status"], { ...h, env });
      expect(status.code).toBe(0);
      expect(status.stdout).toContain(`running (pid ${gateway.pid}`);

      // One gateway per home.
      const second = await runHermes(["gateway", "run"], { ...h, env });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain("already running");

      const exited = new Promise<number | null>((resolve) => gateway.on("exit", resolve));
      const stopped = await runHermes(["gateway", "stop"], { ...h, env, timeoutMs: 30_000 });
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.stdout).toContain(`Gateway stopped (pid ${gateway.pid})`);
      expect(await exited).toBe(0);
      expect(existsSync(join(h.home, "gateway.pid"))).toBe(false);
      const after = await runHermes(["gateway", "status"], { ...h, env });
      expect(after.code).toBe(1);
      expect(after.stdout).toContain("not running");
    } finally {
      gateway.kill("SIGKILL");
    }
  }, 60_000);

  it("start runs it in the background and stop ends it", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    const started = await runHermes(["gateway", "start"], { ...h, timeoutMs: 30_000 });
    expect(started.code, started.stderr).toBe(0);
    const pid = Number(/pid (\d+)/.exec(started.stdout)?.[1]);
    expect(pid).toBeGreaterThan(0);
    // Its own events go to the rotating gateway.log; raw output (the start line) to gateway-output.log.
    const read = (name: string) => {
      const path = join(h.home, "logs", name);
      return existsSync(path) ? readFileSync(path, "utf8") : "";
    };
    await waitFor(
      () => (read("gateway-output.log").includes("Gateway running") ? true : undefined),
      "start line",
    );
    expect(read("gateway.log")).toMatch(new RegExp(` INFO - gateway: started pid=${pid} `));
    const again = await runHermes(["gateway", "start"], h);
    expect(again.stdout).toContain(`already running (pid ${pid})`);
    const stopped = await runHermes(["gateway", "stop"], { ...h, timeoutMs: 30_000 });
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(alive(pid)).toBe(false);
  }, 60_000);

  it("gives API turns the configured MCP servers' tools", async () => {
    const h = tempHome();
    const dir = realpathSync(h.cwd);
    writeFileSync(join(dir, "fruit.txt"), "The secret fruit is a pineapple.\n");
    writeFileSync(
      join(h.home, "config.yaml"),
      fakeProviderConfig(
        llm.url,
        `mcp_servers:\n  filesystem:\n    command: ${JSON.stringify(FILESYSTEM_BIN)}\n    args: [${JSON.stringify(dir)}]\n`,
      ),
    );
    const env = { API_SERVER_ENABLED: "true", API_SERVER_KEY: KEY, API_SERVER_PORT: "0" };
    const proc = await startGatewayProcess(h, env);
    const gateway = proc.child;
    try {
      const line = proc.line;
      const url = /api_server (http:\/\/[^\s,]+)/.exec(line)?.[1] ?? "";
      const before = llm.chatRequests.length;
      llm.enqueue(
        reply().toolCall("mcp_filesystem_read_text_file", { path: join(dir, "fruit.txt") }),
        reply().text("It is a pineapple."),
      );
      const client = new OpenAI({ apiKey: KEY, baseURL: `${url}/v1`, maxRetries: 0 });
      const completion = await client.chat.completions.create({
        model: "hermes-agent",
        messages: [{ role: "user", content: "what is the secret fruit?" }],
      });
      expect(completion.choices[0]?.message.content).toBe("It is a pineapple.");
      const second = llm.chatRequests[before + 1]?.body as {
        messages: Array<{ role: string; content: string }>;
      };
      expect(second.messages.find((m) => m.role === "tool")?.content).toBe(
        "The secret fruit is a pineapple.\n",
      );
    } finally {
      gateway.kill("SIGTERM");
    }
  }, 60_000);
});
