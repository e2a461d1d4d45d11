/**
 * Cron exactly once across three real `hermes gateway run` processes sharing one PostgreSQL
 * (issue 27): every instance ticks every 0.3 s and sees the same jobs (created through one
 * instance's API server, stored in the database). A job due in a few seconds runs once, not three
 * times; a slow job's runner is killed with SIGKILL in the middle of the run, and after its slot's
 * lease lapses exactly one surviving instance runs it again to completion, and nobody runs it a
 * third time. Runs are counted where they cannot hide: the fake model's request log (each run of
 * a job is one model call carrying the job's prompt).
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHermes } from "../support/cli.js";
import { type FakeLlm, type RecordedRequest, reply, startFakeLlm } from "../support/fake-llm.js";
import {
  CLUSTER_API_KEY,
  type ClusterInstance,
  type ClusterSetup,
  clusterHome,
  type GatewayCluster,
  startCluster,
  waitUntil,
} from "../support/gateway-cluster.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";

/** How long the model takes to answer the slow job: long enough to kill its runner mid-run. */
const SLOW_MS = 4_000;

let pg: PostgresFixture;
let llm: FakeLlm;
let cluster: GatewayCluster;
let setup: ClusterSetup;

beforeAll(async () => {
  if (postgresSkipReason) return;
  pg = await startPostgres();
  llm = await startFakeLlm();
  llm.respondWith((request) => {
    const text = JSON.stringify(request.body);
    const slow = text.includes("slow-job-marker");
    return reply()
      .text(slow ? "slow job done" : "job done")
      .usage({ prompt: 10, completion: 2 })
      .delay(slow ? SLOW_MS : 0);
  });
  setup = {
    databaseUrl: await pg.createDatabase(),
    llmUrl: llm.url,
    env: { HERMES_CRON_TICK_SECONDS: "0.3" },
  };
  cluster = await startCluster(setup, 3);
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await llm?.close();
  await pg?.dispose();
}, 60_000);

const api = (instance: ClusterInstance) =>
  new OpenAI({ baseURL: instance.apiUrl, apiKey: CLUSTER_API_KEY, maxRetries: 0 });

/** A one-shot job due `inMs` from now, created through `instance`'s API server; its id. */
async function createJob(instance: ClusterInstance, name: string, prompt: string, inMs: number) {
  const at = `${new Date(Date.now() + inMs).toISOString().slice(0, 19)}+00:00`;
  const made = await api(instance).post<{ job: { id: string } }>("/api/jobs", {
    body: { name, schedule: at, prompt },
  });
  return made.job.id;
}

async function jobOf(instance: ClusterInstance, id: string): Promise<Record<string, unknown>> {
  return (await api(instance).get<{ job: Record<string, unknown> }>(`/api/jobs/${id}`)).job;
}

const runsOf = (marker: string) =>
  llm.chatRequests.filter((r: RecordedRequest) => JSON.stringify(r.body).includes(marker)).length;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(postgresSkipReason)("cron across three instances", () => {
  it("runs a due job exactly once with three instances up", async () => {
    const [a, b, c] = cluster.instances;
    const id = await createJob(a!, "once", "Say hello. once-job-marker", 2_500);
    // Every instance sees the job (it is in the database, not in A's home).
    for (const instance of [b!, c!]) expect((await jobOf(instance, id))["name"]).toBe("once");
    await waitUntil(() => runsOf("once-job-marker") >= 1, "the job's run", 20_000);
    await waitUntil(async () => (await jobOf(c!, id))["last_status"] === "ok", "the run recorded", 10_000);
    // Thirty more ticks on each instance: still one run.
    await sleep(3_000);
    expect(runsOf("once-job-marker")).toBe(1);
    // `hermes cron status` on another machine with the same config sees who ticks: the instances.
    const status = await runHermes(["cron", "status"], clusterHome(setup));
    expect(status.stdout).toMatch(
      /^Ticker: 3 gateway instances on postgres:\/\/\S+ \(each due slot runs on one of them\)\./m,
    );
    const json = JSON.parse((await runHermes(["cron", "status", "--json"], clusterHome(setup))).stdout);
    expect(json).toMatchObject({ ticker_running: true, instances: 3 });
  }, 60_000);

  it("runs it exactly once more after the lease holder is killed -9 mid-run", async () => {
    const [a] = cluster.instances;
    const id = await createJob(a!, "slow", "Take your time. slow-job-marker", 2_500);
    await waitUntil(() => runsOf("slow-job-marker") >= 1, "the slow job's first run", 20_000);
    // The instance holding the job's slot (what `hermes gateway status` reports) dies mid-run.
    const holder = await waitUntil(() => cluster.holderOf(`cron:${id}`), "the slot's holder", 5_000);
    expect(runsOf("slow-job-marker")).toBe(1);
    await holder.kill9();
    const killedAt = Date.now();
    expect(holder.alive()).toBe(false);

    // One survivor takes the slot over once its lease has lapsed, and finishes it.
    const survivors = cluster.instances.filter((i) => i.alive());
    expect(survivors).toHaveLength(2);
    await waitUntil(() => runsOf("slow-job-marker") >= 2, "the run taken over", 60_000);
    const tookOverMs = Date.now() - killedAt;
    await waitUntil(
      async () => (await jobOf(survivors[0]!, id))["last_status"] === "ok",
      "the taken-over run recorded",
      SLOW_MS + 10_000,
    );
    // The dead runner's attempt plus one take-over, never a third run.
    await sleep(3_000);
    expect(runsOf("slow-job-marker")).toBe(2);
    expect(tookOverMs).toBeLessThan(45_000);
    const status = await cluster.status();
    expect(status.instances.map((i) => i.pid).sort()).toEqual(survivors.map((i) => i.pid).sort());
  }, 120_000);

  it("catches up a slot that fell due while every instance was down, once", async () => {
    const [live] = cluster.instances.filter((i) => i.alive());
    const id = await createJob(live!, "catch-up", "Catch up. catch-up-marker", 3_000);
    await Promise.all(cluster.instances.filter((i) => i.alive()).map((i) => i.stop()));
    expect(cluster.instances.some((i) => i.alive())).toBe(false);
    await sleep(4_000);
    expect(runsOf("catch-up-marker")).toBe(0);
    const idle = await runHermes(["cron", "status"], clusterHome(setup));
    expect(idle.stdout).toMatch(/^Ticker: no gateway instance is running on postgres:/m);
    // Two instances come up at the same moment and both find the job overdue.
    const [x, y] = await Promise.all([cluster.add(), cluster.add()]);
    await waitUntil(() => runsOf("catch-up-marker") >= 1, "the caught-up run", 20_000);
    await waitUntil(async () => (await jobOf(x!, id))["last_status"] === "ok", "the run recorded", 10_000);
    await sleep(3_000);
    expect(runsOf("catch-up-marker")).toBe(1);
    expect(y!.alive()).toBe(true);
  }, 90_000);
});
