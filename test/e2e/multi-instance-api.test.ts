/**
 * Two real `hermes gateway run` processes over one real PostgreSQL (issue 27): each has its own
 * home, both point at the same database through `state.backend: postgres` and
 * `HERMES_DATABASE_URL`. A Responses conversation started through one instance's API server is
 * continued through the other's (by name and by `previous_response_id`) with its history; each
 * instance answers its health endpoint and `hermes gateway status` lists both from the database.
 */
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { runHermes } from "../support/cli.js";
import { type FakeLlm, type RecordedRequest, reply, startFakeLlm } from "../support/fake-llm.js";
import { CLUSTER_API_KEY, type GatewayCluster, startCluster } from "../support/gateway-cluster.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";

let pg: PostgresFixture;
let llm: FakeLlm;
let cluster: GatewayCluster;

beforeAll(async () => {
  if (postgresSkipReason) return;
  pg = await startPostgres();
  llm = await startFakeLlm();
  cluster = await startCluster({ databaseUrl: await pg.createDatabase(), llmUrl: llm.url }, 2);
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await llm?.close();
  await pg?.dispose();
}, 60_000);

const client = (apiUrl: string) =>
  new OpenAI({ baseURL: `${apiUrl}/v1`, apiKey: CLUSTER_API_KEY, maxRetries: 0 });

/** Every message text the model was sent in one request. */
const sentText = (request: RecordedRequest | undefined) => JSON.stringify(request?.body ?? "");

describe.skipIf(postgresSkipReason)("two gateway instances over one PostgreSQL", () => {
  it("continues a named conversation started on one instance through the other, history kept", async () => {
    const [a, b] = cluster.instances;
    llm.enqueue(reply().text("Noted: the ferry leaves from pier 39."));
    const first = await client(a!.apiUrl).responses.create({
      model: "hermes-agent",
      input: "Remember: the ferry leaves from pier 39.",
      conversation: "ferry",
    });
    expect(first.output_text).toBe("Noted: the ferry leaves from pier 39.");

    llm.enqueue(reply().text("Pier 39."));
    const second = await client(b!.apiUrl).responses.create({
      model: "hermes-agent",
      input: "Which pier does the ferry leave from?",
      conversation: "ferry",
    });
    expect(second.output_text).toBe("Pier 39.");
    expect(second.previous_response_id).toBe(first.id);
    // Instance B's model request carries the turn instance A ran.
    const seen = sentText(llm.chatRequests.at(-1));
    expect(seen).toContain("Remember: the ferry leaves from pier 39.");
    expect(seen).toContain("Noted: the ferry leaves from pier 39.");
    expect(seen).toContain("Which pier does the ferry leave from?");
    // B can read the response A stored.
    expect((await client(b!.apiUrl).responses.retrieve(first.id)).status).toBe("completed");
  }, 60_000);

  it("continues by previous_response_id across instances, back and forth", async () => {
    const [a, b] = cluster.instances;
    llm.enqueue(reply().text("Got it: code word is heron."));
    const one = await client(b!.apiUrl).responses.create({
      model: "hermes-agent",
      input: "The code word is heron.",
    });
    llm.enqueue(reply().text("Also noted: the colour is teal."));
    const two = await client(a!.apiUrl).responses.create({
      model: "hermes-agent",
      input: "The colour is teal.",
      previous_response_id: one.id,
    });
    llm.enqueue(reply().text("heron and teal"));
    const three = await client(b!.apiUrl).responses.create({
      model: "hermes-agent",
      input: "What were the code word and the colour?",
      previous_response_id: two.id,
    });
    expect(three.output_text).toBe("heron and teal");
    const seen = sentText(llm.chatRequests.at(-1));
    for (const earlier of ["The code word is heron.", "Got it: code word is heron.", "The colour is teal."])
      expect(seen).toContain(earlier);
  }, 60_000);

  it("runs a session continued at both instances at once one turn after the other", async () => {
    const [a, b] = cluster.instances;
    const SLOW = 800;
    const arrivals: Array<{ at: number; body: string }> = [];
    llm.respondWith((request) => {
      const body = JSON.stringify(request.body);
      if (!body.includes("relay-check")) return undefined;
      const last = [...body.matchAll(/relay-check (\w+)/g)].at(-1)?.[1] ?? "";
      if (last === "start") return reply().text("started");
      arrivals.push({ at: Date.now(), body });
      return reply().text(`done ${last}`).delay(SLOW);
    });
    try {
      const started = await client(a!.apiUrl)
        .chat.completions.create({
          model: "hermes-agent",
          messages: [{ role: "user", content: "relay-check start" }],
        })
        .withResponse();
      const sid = started.response.headers.get("x-hermes-session-id") ?? "";
      expect(sid).not.toBe("");
      const continueAt = (url: string, word: string) =>
        client(url).chat.completions.create(
          { model: "hermes-agent", messages: [{ role: "user", content: `relay-check ${word}` }] },
          { headers: { "X-Hermes-Session-Id": sid } },
        );
      const [one, two] = await Promise.all([continueAt(a!.apiUrl, "one"), continueAt(b!.apiUrl, "two")]);
      expect(one.choices[0]?.message.content).toBe("done one");
      expect(two.choices[0]?.message.content).toBe("done two");
      // Never two turns of the session in flight: the second model call came after the first's
      // answer, and it carries the first turn (the same session, continued in order).
      expect(arrivals).toHaveLength(2);
      const [first, second] = arrivals.sort((x, y) => x.at - y.at);
      expect(second!.at - first!.at).toBeGreaterThanOrEqual(SLOW - 5);
      const firstWord = /relay-check (one|two)/.exec(first!.body)?.[1];
      expect(second!.body).toContain(`relay-check ${firstWord}`);
      expect(second!.body).toContain(`done ${firstWord}`);
    } finally {
      llm.respondWith(undefined);
    }
  }, 60_000);

  it("keeps the session in the shared database: both instances list it with its messages", async () => {
    const [a, b] = cluster.instances;
    const root = (url: string) => new OpenAI({ baseURL: url, apiKey: CLUSTER_API_KEY, maxRetries: 0 });
    const fromA = await root(a!.apiUrl).get<{ data: Array<{ id: string }> }>("/api/sessions");
    const fromB = await root(b!.apiUrl).get<{ data: Array<{ id: string }> }>("/api/sessions");
    expect(fromA.data.length).toBeGreaterThanOrEqual(2);
    expect(fromB.data.map((s) => s.id).sort()).toEqual(fromA.data.map((s) => s.id).sort());
  }, 30_000);

  it("answers each instance's health endpoint and lists both in `hermes gateway status`", async () => {
    for (const instance of cluster.instances) {
      const health = await instance.health();
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: "ok", pid: instance.pid });
    }
    const status = await cluster.status();
    expect(status.code, status.raw).toBe(0);
    expect(status.instances.map((i) => i.pid).sort()).toEqual(cluster.instances.map((i) => i.pid).sort());
    expect(status.instances.every((i) => !i.draining)).toBe(true);
  }, 30_000);

  it("shows a running API-server turn in `hermes gateway status` on the instance running it, gone once it ends", async () => {
    const [a, b] = cluster.instances;
    llm.enqueue(reply().text("The tide turns at six.").delay(8_000));
    const pending = client(a!.apiUrl).responses.create({
      model: "hermes-agent",
      input: "When does the tide turn?",
    });
    const turnsOf = async (pid: number) =>
      (await cluster.status()).instances.find((i) => i.pid === pid)?.turns ?? 0;
    await vi.waitFor(async () => expect(await turnsOf(a!.pid)).toBe(1), { timeout: 7_000, interval: 300 });
    expect(await turnsOf(b!.pid)).toBe(0);
    const text = await runHermes(["gateway", "status"], { home: b!.home, cwd: b!.cwd });
    expect(text.stdout).toContain("api/webhook turns: 1");
    expect((await pending).output_text).toBe("The tide turns at six.");
    await vi.waitFor(async () => expect(await turnsOf(a!.pid)).toBe(0), { timeout: 10_000, interval: 300 });
  }, 60_000);
});
