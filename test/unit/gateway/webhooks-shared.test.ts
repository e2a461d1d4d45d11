/**
 * Two webhook servers (two gateway instances behind a load balancer) over the shared PostgreSQL
 * stores: a subscription made anywhere is served by both, and a sender's retry of a delivery that
 * reached one instance is a duplicate on the other (one agent run, not two).
 */
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../src/config/defaults.js";
import {
  startWebhookServer,
  type WebhookRun,
  type WebhookServer,
} from "../../../src/gateway/webhooks/server.js";
import { openPgDatabase, type PgDatabase } from "../../../src/state/postgres/database.js";
import { pgWebhookDeliveries, pgWebhookSubscriptions } from "../../../src/state/postgres/gateway-webhooks.js";
import { migrate } from "../../../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../../../src/state/postgres/migrations/index.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../../support/postgres.js";

const SECRET = "shared-webhook-secret-0123456789";

describe.skipIf(postgresSkipReason)("webhooks across instances (PostgreSQL)", () => {
  let pg: PostgresFixture;
  const dirs: string[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await pg?.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function instance(db: PgDatabase): Promise<{ server: WebhookServer; runs: WebhookRun[] }> {
    const home = mkdtempSync(join(tmpdir(), "hermes-wh-shared-"));
    dirs.push(home);
    const config = defaultConfig();
    config["platforms"] = { webhook: { enabled: true, extra: { routes: {} } } };
    const runs: WebhookRun[] = [];
    const server = await startWebhookServer({
      home,
      config,
      env: {},
      host: "127.0.0.1",
      port: 0,
      subscriptions: pgWebhookSubscriptions(db),
      deliveries: pgWebhookDeliveries(db),
      runAgent: async (run) => {
        runs.push(run);
        return "ok";
      },
      deliver: async () => {},
    });
    return { server, runs };
  }

  const post = async (server: WebhookServer, name: string, delivery: string) => {
    const body = JSON.stringify({ action: "opened", repository: { full_name: "acme/widgets" } });
    const res = await fetch(`${server.url}/webhooks/${name}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`,
        "x-github-event": "pull_request",
        "x-github-delivery": delivery,
      },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it("serves a subscription made elsewhere on every instance, and runs a retried delivery once", async () => {
    const db = await openPgDatabase(await pg.createDatabase());
    await migrate(db, MIGRATIONS);
    const a = await instance(db);
    const b = await instance(db);
    try {
      // Saved through the store (as `hermes webhook subscribe` on any machine does).
      await pgWebhookSubscriptions(db).save("ci", { prompt: "CI: {action}", secret: SECRET, deliver: "log" });
      // Told of the change (reload.webhooks: `routes()` reads the store again), or within a few
      // seconds on the next request.
      expect(a.server.routes()).toEqual([]);
      b.server.routes();
      await new Promise((r) => setTimeout(r, 100));
      expect(a.server.routes()).toContain("ci");
      expect(b.server.routes()).toContain("ci");

      const first = await post(a.server, "ci", "delivery-1");
      expect(first.status).toBe(202);
      // The sender retries; the load balancer sends the retry to the other instance.
      const retry = await post(b.server, "ci", "delivery-1");
      expect(retry).toEqual({ status: 200, body: { status: "duplicate", delivery_id: "delivery-1" } });
      await a.server.settled();
      await b.server.settled();
      expect(a.runs.length + b.runs.length).toBe(1);
    } finally {
      await a.server.close();
      await b.server.close();
      await db.close();
    }
  });
});
