/**
 * Webhooks are served by every instance behind a load balancer (issue 27): with two real
 * `hermes gateway run` processes over one PostgreSQL, a route added with `hermes webhook
 * subscribe` from another home on that database after both started is served by both within a
 * few seconds (each re-reads the shared routes every 2 s; the CLI is not an instance and sends no
 * reload); a delivery a sender retries at the other instance (same delivery id) runs the agent
 * once; a new delivery runs it again; a forged signature is refused at either instance.
 */
import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHermes } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { clusterHome, type GatewayCluster, startCluster, waitUntil } from "../support/gateway-cluster.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";

const SECRET = "cluster-webhook-secret";

let pg: PostgresFixture;
let llm: FakeLlm;
let cluster: GatewayCluster;
let databaseUrl: string;
const urls: string[] = [];

beforeAll(async () => {
  if (postgresSkipReason) return;
  pg = await startPostgres();
  llm = await startFakeLlm();
  llm.respondWith(() => reply().text("Summarised.").usage({ prompt: 10, completion: 2 }));
  databaseUrl = await pg.createDatabase();
  cluster = await startCluster(
    {
      databaseUrl,
      llmUrl: llm.url,
      apiServer: false,
      env: { WEBHOOK_ENABLED: "true" },
      perInstance: () => ({ WEBHOOK_PORT: "0" }),
    },
    2,
  );
  for (const instance of cluster.instances)
    urls.push(/webhook (http:\/\/[^\s,]+)/.exec(instance.process.line)?.[1]?.replace(/\/$/, "") ?? "");
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await llm?.close();
  await pg?.dispose();
}, 60_000);

const runsOf = (marker: string) =>
  llm.chatRequests.filter((r) => JSON.stringify(r.body).includes(marker)).length;

function post(url: string, body: string, delivery: string, secret = SECRET) {
  return fetch(`${url}/webhooks/deploys`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-delivery": delivery,
      "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
    },
    body,
  });
}

describe.skipIf(postgresSkipReason)("webhooks across two instances", () => {
  it("serves a route added after start at both instances and runs a retried delivery once", async () => {
    expect(urls.every((u) => u.startsWith("http://"))).toBe(true);
    const added = await runHermes(
      [
        "webhook",
        "subscribe",
        "deploys",
        "--prompt",
        "Deploy {service} finished: {state}.",
        "--secret",
        SECRET,
      ],
      clusterHome({ databaseUrl, llmUrl: llm.url, apiServer: false }),
    );
    expect(added.code, added.stderr).toBe(0);

    // Each instance re-reads the shared routes every 2 s: within that, both know the route (a
    // forged delivery to a known route is refused with 401, to an unknown one with 404).
    const probe = JSON.stringify({ service: "probe", state: "none" });
    const addedAt = Date.now();
    for (const url of urls)
      await waitUntil(
        async () => (await post(url, probe, "probe-0000", "wrong-secret")).status === 401,
        `${url} serving the new route`,
        10_000,
      );
    expect(Date.now() - addedAt).toBeLessThan(5_000);

    const body = JSON.stringify({ service: "billing-7781", state: "green" });
    expect((await post(urls[0]!, body, "delivery-0001")).status).toBeLessThan(300);
    // The sender retries the same delivery at the other instance: accepted, not run again.
    expect((await post(urls[1]!, body, "delivery-0001")).status).toBeLessThan(300);
    await waitUntil(() => runsOf("billing-7781") >= 1, "the delivery's run", 20_000);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(runsOf("billing-7781")).toBe(1);

    // A new delivery at B runs; a forged one is refused at both.
    const next = JSON.stringify({ service: "search-4410", state: "red" });
    expect((await post(urls[1]!, next, "delivery-0002")).status).toBeLessThan(300);
    await waitUntil(() => runsOf("search-4410") >= 1, "the second delivery's run", 20_000);
    for (const url of urls) expect((await post(url, next, "delivery-0003", "wrong-secret")).status).toBe(401);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(runsOf("search-4410")).toBe(1);
  }, 90_000);
});
