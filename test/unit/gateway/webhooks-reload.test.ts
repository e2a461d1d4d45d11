/**
 * Reloads across instances on a real PostgreSQL, each instance its own state backend (its own pool
 * and coordinator, as two `hermes gateway run` processes have): a subscription added or removed by
 * a third process (`hermes webhook subscribe` on any machine) is served, or refused, by both
 * webhook servers at once, told by `reload.webhooks`. Their own re-read is pushed out to ten
 * minutes here, so only the announcement can make them see the change. Memory needs no topic: an
 * entry written on one instance is in the other's next session prompt block with nothing announced.
 */
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";
import { ReloadBus } from "../../../src/gateway/coordination/reloads.js";
import { startWebhookServer, type WebhookServer } from "../../../src/gateway/webhooks/server.js";
import { openStateBackend } from "../../../src/knowledge/state-backend.js";
import type { StateBackend } from "../../../src/knowledge/state-backend-types.js";
import { knowledgeStores } from "../../../src/knowledge/stores.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../support/postgres.js";

const SECRET = "reload-webhook-secret-0123456789";
const WAIT = { timeout: 10_000, interval: 50 };

describe.skipIf(postgresSkipReason)("reloads across instances (PostgreSQL)", () => {
  let pg: PostgresFixture;
  const dirs: string[] = [];
  const closers: Array<() => Promise<unknown> | unknown> = [];
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await pg?.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const home = () => {
    const d = mkdtempSync(join(tmpdir(), "hermes-reload-"));
    dirs.push(d);
    return d;
  };
  const config = (): HermesConfig => {
    const c = defaultConfig();
    c.state = { ...c.state, backend: "postgres" } as HermesConfig["state"];
    c["platforms"] = { webhook: { enabled: true, extra: { routes: {} } } };
    return c;
  };

  async function backendAt(url: string, h = home()): Promise<{ home: string; backend: StateBackend }> {
    const backend = await openStateBackend(h, config(), { env: { HERMES_DATABASE_URL: url } });
    closers.push(() => backend.close());
    return { home: h, backend };
  }

  /** One gateway instance's webhook surface, wired as the runner wires it. */
  async function instance(url: string): Promise<{ server: WebhookServer; runs: string[] }> {
    const { home: h, backend } = await backendAt(url);
    const runs: string[] = [];
    const server = await startWebhookServer({
      home: h,
      config: config(),
      env: {},
      host: "127.0.0.1",
      port: 0,
      ...backend.sharedWebhooks,
      sharedRoutesMs: 600_000,
      runAgent: async (run) => {
        runs.push(run.route);
        return "ok";
      },
      deliver: async () => {},
    });
    const bus = new ReloadBus(backend.coordinator);
    bus.on("webhooks", () => void server.routes());
    closers.push(async () => {
      bus.close();
      await server.close();
    });
    return { server, runs };
  }

  let deliveries = 0;
  const post = async (server: WebhookServer, name: string): Promise<number> => {
    const body = JSON.stringify({ action: "opened" });
    const res = await fetch(`${server.url}/webhooks/${name}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`,
        "x-github-event": "pull_request",
        "x-github-delivery": `d-${++deliveries}`,
      },
      body,
    });
    await res.arrayBuffer();
    return res.status;
  };

  it("a subscription added or removed elsewhere is served or refused by every instance at once", async () => {
    const url = await pg.createDatabase();
    const a = await instance(url);
    const b = await instance(url);
    // Both have just read the (empty) subscriptions: without an announcement they would keep them.
    expect(await post(a.server, "deploys")).toBe(404);
    expect(await post(b.server, "deploys")).toBe(404);

    // `hermes webhook subscribe deploys` from a third process with its own backend.
    const cli = await backendAt(url);
    await cli.backend.webhookSubscriptions.save("deploys", {
      prompt: "Deploy: {action}",
      secret: SECRET,
      deliver: "log",
    });
    await vi.waitFor(async () => expect(await post(a.server, "deploys")).toBe(202), WAIT);
    await vi.waitFor(async () => expect(await post(b.server, "deploys")).toBe(202), WAIT);

    // A route a confused caller names after the removed one is refused everywhere once removed.
    expect(await cli.backend.webhookSubscriptions.remove("deploys")).toBe(true);
    await vi.waitFor(async () => expect(await post(a.server, "deploys")).toBe(404), WAIT);
    await vi.waitFor(async () => expect(await post(b.server, "deploys")).toBe(404), WAIT);
    // Removing what is not there announces nothing and changes nothing.
    expect(await cli.backend.webhookSubscriptions.remove("deploys")).toBe(false);
    await a.server.settled();
    await b.server.settled();
    expect([...a.runs, ...b.runs].every((r) => r === "deploys")).toBe(true);
    expect(a.runs.length).toBeGreaterThanOrEqual(1);
    expect(b.runs.length).toBeGreaterThanOrEqual(1);
  }, 40_000);

  it("a memory entry written on one instance is in the other's next session prompt, nothing announced", async () => {
    const url = await pg.createDatabase();
    const a = await backendAt(url);
    const b = await backendAt(url);
    const before = await knowledgeStores(b.home).memory({}).promptBlock("memory");
    expect(before.block ?? "").not.toContain("staging is on port 8443");
    await knowledgeStores(a.home).memory({}).add("memory", "staging is on port 8443");
    const after = await knowledgeStores(b.home).memory({}).promptBlock("memory");
    expect(after.block).toContain("staging is on port 8443");
  }, 40_000);
});
