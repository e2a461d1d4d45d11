/**
 * The health endpoint of a gateway instance on a shared PostgreSQL database: a load balancer must
 * stop sending requests to an instance that cannot reach the database (every request it took
 * would fail), and send them again once the database answers. Real server, real gateway.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { startHealthEndpoint } from "../../../src/gateway/health-endpoint.js";
import { startGateway } from "../../../src/gateway/runner.js";
import { fakeProviderConfig } from "../../support/cli.js";
import { reply, startFakeLlm } from "../../support/fake-llm.js";
import { postgresSkipReason } from "../../support/postgres.js";
import { postgresForSuite } from "../../support/postgres-suite.js";

async function probe(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  } catch {
    return { status: 0, body: {} };
  }
}

async function waitFor(url: string, status: number, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await probe(url);
    if (answer.status === status || Date.now() > deadline) return answer;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("the health endpoint's dependency probe", () => {
  it("answers 503 unavailable while the probe fails or hangs, asks it at most once a second, 200 once it answers", async () => {
    const health = await startHealthEndpoint({ host: "127.0.0.1", port: 0, instance: "web-2" });
    try {
      health.setPhase("serving");
      let calls = 0;
      let mode: "ok" | "fail" | "hang" = "fail";
      health.setProbe(async () => {
        calls++;
        if (mode === "fail") throw new Error("connect ECONNREFUSED 127.0.0.1:5432 postgres://u:secret@db");
        if (mode === "hang") await new Promise(() => undefined);
      });
      const down = await probe(health.url);
      expect(down).toEqual({
        status: 503,
        body: {
          status: "unavailable",
          reason: "the database does not answer",
          instance: "web-2",
          pid: process.pid,
        },
      });
      // Nothing of the error (addresses, URLs) is shown to whoever asks.
      expect(JSON.stringify(down.body)).not.toMatch(/secret|ECONNREFUSED/);
      // Load balancers probing often do not hammer the database: one probe a second.
      await Promise.all([probe(health.url), probe(health.url), probe(health.url)]);
      expect(calls).toBe(1);
      mode = "ok";
      await new Promise((r) => setTimeout(r, 1_100));
      expect((await probe(health.url)).status).toBe(200);
      expect(calls).toBe(2);
      // A probe that never answers (a network black hole) counts as down after 2 s.
      mode = "hang";
      await new Promise((r) => setTimeout(r, 1_100));
      const started = Date.now();
      expect((await probe(health.url)).status).toBe(503);
      expect(Date.now() - started).toBeLessThan(4_000);
      // Draining says so whatever the probe would answer.
      health.setPhase("draining");
      expect((await probe(health.url)).body["status"]).toBe("draining");
    } finally {
      await health.close();
    }
  }, 20_000);
});

describe.skipIf(postgresSkipReason)("a gateway instance on PostgreSQL", () => {
  const pg = postgresForSuite();

  it("answers 503 while the database is down and 200 again once it is back; so does the API server", async () => {
    const llm = await startFakeLlm();
    const home = mkdtempSync(join(tmpdir(), "hermes-health-pg-"));
    writeFileSync(join(home, "config.yaml"), fakeProviderConfig(llm.url, "state:\n  backend: postgres\n"));
    const env = {
      HERMES_DATABASE_URL: (await pg().createDatabase()).replace(
        "postgres://postgres@",
        "postgres://postgres:pw-hunter2@",
      ),
      HERMES_HEALTH_PORT: "0",
      HERMES_HEALTH_HOST: "127.0.0.1",
      HERMES_CRON_TICK_SECONDS: "3600",
      API_SERVER_ENABLED: "true",
      API_SERVER_HOST: "127.0.0.1",
      API_SERVER_PORT: "0",
      API_SERVER_KEY: "health-test-key-0123456789",
    };
    const { config } = loadConfig({ home, env });
    const gateway = await startGateway({ home, config, env, argv: ["gateway", "run"] });
    const apiUrl = /^api_server (\S+)/.exec(
      gateway.services.find((s) => s.startsWith("api_server ")) ?? "",
    )?.[1];
    const chat = async (text: string) => {
      const res = await fetch(`${apiUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${env.API_SERVER_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "hermes", messages: [{ role: "user", content: text }] }),
      });
      return { status: res.status, retryAfter: res.headers.get("retry-after"), text: await res.text() };
    };
    try {
      const url = gateway.services.find((s) => s.startsWith("health "))!.slice("health ".length);
      expect((await probe(url)).status).toBe(200);
      await pg().kill();
      const down = await waitFor(url, 503);
      expect(down.status).toBe(503);
      expect(down.body["status"]).toBe("unavailable");
      // A request the instance took anyway: 503 to try again, nothing of the database's address.
      const refused = await chat("while the database is down");
      expect(refused.status).toBe(503);
      expect(refused.retryAfter).toBe("5");
      expect(JSON.parse(refused.text).error).toMatchObject({
        code: "state_unavailable",
        type: "server_error",
      });
      expect(refused.text).not.toMatch(/postgres|127\.0\.0\.1|hunter2/);
      await pg().start();
      const up = await waitFor(url, 200);
      expect(up.status).toBe(200);
      expect(up.body["status"]).toBe("ok");
      llm.enqueue(reply().text("back again"));
      const answered = await chat("and now?");
      expect(answered.status).toBe(200);
      expect(answered.text).toContain("back again");
    } finally {
      await gateway.stop();
      await llm.close();
    }
  }, 90_000);
});
