import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import {
  HealthConfigError,
  healthAddress,
  startHealthEndpoint,
} from "../../../src/gateway/health-endpoint.js";
import { startGateway } from "../../../src/gateway/runner.js";

async function get(url: string, method = "GET") {
  const res = await fetch(url, { method });
  return { status: res.status, body: method === "HEAD" ? "" : await res.text() };
}

describe("the per-instance health endpoint", () => {
  it("is off unless HERMES_HEALTH_PORT is set, and refuses a port that is not one", () => {
    expect(healthAddress({})).toBeUndefined();
    expect(healthAddress({ HERMES_HEALTH_PORT: "8643" })).toEqual({ host: "0.0.0.0", port: 8643 });
    expect(healthAddress({ HERMES_HEALTH_PORT: "8643", HERMES_HEALTH_HOST: "127.0.0.1" })).toEqual({
      host: "127.0.0.1",
      port: 8643,
    });
    expect(() => healthAddress({ HERMES_HEALTH_PORT: "eighty" })).toThrow(HealthConfigError);
    expect(() => healthAddress({ HERMES_HEALTH_PORT: "70000" })).toThrow(/use a port number/);
  });

  it("answers 503 while starting, 200 while serving, 503 while draining", async () => {
    const health = await startHealthEndpoint({ host: "127.0.0.1", port: 0, instance: "web-1" });
    try {
      expect(health.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/health$/);
      expect(await get(health.url)).toEqual({
        status: 503,
        body: JSON.stringify({ status: "starting", instance: "web-1", pid: process.pid }),
      });
      health.setPhase("serving");
      expect(await get(health.url)).toEqual({
        status: 200,
        body: JSON.stringify({ status: "ok", instance: "web-1", pid: process.pid }),
      });
      expect((await get(health.url, "HEAD")).status).toBe(200);
      expect((await get(`${health.url}?probe=lb`)).status).toBe(200);
      expect((await get(health.url, "POST")).status).toBe(405);
      expect((await get(health.url.replace("/health", "/v1/chat/completions"))).status).toBe(404);
      health.setInstance("web-1-123-abc");
      health.setPhase("draining");
      expect(await get(health.url)).toEqual({
        status: 503,
        body: JSON.stringify({ status: "draining", instance: "web-1-123-abc", pid: process.pid }),
      });
    } finally {
      await health.close();
    }
  });

  it("is served by a running gateway, and says draining from the moment it stops", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-health-gw-"));
    const env = {
      HERMES_HEALTH_PORT: "0",
      HERMES_HEALTH_HOST: "127.0.0.1",
      HERMES_CRON_TICK_SECONDS: "3600",
    };
    const { config } = loadConfig({ home, env });
    const gateway = await startGateway({ home, config, env, argv: ["gateway", "run"] });
    const line = gateway.services.find((s) => s.startsWith("health "));
    expect(line).toMatch(/^health http:\/\/127\.0\.0\.1:\d+\/health$/);
    const url = line!.slice("health ".length);
    expect((await get(url)).status).toBe(200);
    const stopping = gateway.stop();
    // From the call to stop() on, never 200: 503 while the rest stops, then closed.
    const during = await get(url).catch(() => ({ status: 0, body: "" }));
    expect([503, 0]).toContain(during.status);
    await stopping;
    await expect(fetch(url)).rejects.toThrow();
  });
});
