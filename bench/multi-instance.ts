/**
 * API-server chats per second across topologies (issue 27), in one run with one fake LLM and the
 * same N: one `hermes gateway run` on SQLite (its home's state.db), one on PostgreSQL, and two on
 * the same PostgreSQL with the conversations spread round-robin over both API servers (the
 * client plays the load balancer). Each batch sends N one-turn conversations at once with the
 * official openai client, each answered with its own token (a crossed or lost answer fails the
 * bench); the figure is N / the batch's wall time, median of `runs` batches after a warm-up batch.
 * Every instance runs with `max_concurrent_runs: N`, so nothing waits in a deliberate queue.
 *
 * The gateways are real processes over a real PostgreSQL server (test/support/postgres.ts); the
 * fake LLM and the client run in this process. On a small machine all of them share the same
 * cores, so two instances measure the cost of coordination and a shared database more than the
 * gain of a second machine: the rows say what each one measures.
 */
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import OpenAI from "openai";
import { reply, startFakeLlm } from "../test/support/fake-llm.js";
import { CLUSTER_API_KEY, type ClusterSetup, startCluster } from "../test/support/gateway-cluster.js";
import { postgresSkipReason, startPostgres } from "../test/support/postgres.js";
import type { BenchRow } from "./session-store.js";

const CONVERSATIONS = 200;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** N conversations at once, round-robin over `clients`; conversations per second of wall time. */
async function batch(clients: OpenAI[]): Promise<number> {
  const tokens = Array.from({ length: CONVERSATIONS }, () => randomBytes(6).toString("hex"));
  const started = performance.now();
  await Promise.all(
    tokens.map(async (token, i) => {
      const done = await clients[i % clients.length]!.chat.completions.create({
        model: "hermes-agent",
        messages: [{ role: "user", content: `token ${token}` }],
      });
      const text = done.choices[0]?.message.content ?? "";
      if (text !== `answer ${token}`)
        throw new Error(`crossed or lost reply: wanted ${token}, got "${text}"`);
    }),
  );
  return CONVERSATIONS / ((performance.now() - started) / 1000);
}

/** Starts `count` instances of `setup`, runs a warm-up and `runs` batches, stops them; median conv/s. */
async function measure(setup: ClusterSetup, count: number, runs: number, label: string): Promise<number> {
  const cluster = await startCluster(setup, count);
  try {
    const clients = cluster.instances.map(
      (i) => new OpenAI({ baseURL: `${i.apiUrl}/v1`, apiKey: CLUSTER_API_KEY, maxRetries: 0 }),
    );
    await batch(clients);
    const rates: number[] = [];
    for (let run = 0; run < runs; run++) {
      process.stderr.write(`multi-instance: ${label}, batch ${run + 1}/${runs} of ${CONVERSATIONS}…\n`);
      rates.push(await batch(clients));
    }
    return median(rates);
  } finally {
    await cluster.close();
  }
}

export async function multiInstanceBench(runs = 5): Promise<BenchRow[]> {
  if (postgresSkipReason) {
    process.stderr.write(`multi-instance: skipped (${postgresSkipReason})\n`);
    return [];
  }
  const llm = await startFakeLlm();
  llm.respondWith((request) => {
    const messages = (request.body as { messages?: { content: unknown }[] }).messages ?? [];
    const last = messages.at(-1)?.content;
    const token = /token (\w+)/.exec(typeof last === "string" ? last : "")?.[1] ?? "none";
    return reply().text(`answer ${token}`).usage({ prompt: 10, completion: 3 });
  });
  const pg = await startPostgres();
  try {
    const config = `gateway:\n  api_server:\n    max_concurrent_runs: ${CONVERSATIONS}\n`;
    const sqlite = await measure(
      { backend: "sqlite", llmUrl: llm.url, config },
      1,
      runs,
      "one SQLite instance",
    );
    const onePg = await measure(
      { databaseUrl: await pg.createDatabase(), llmUrl: llm.url, config },
      1,
      runs,
      "one PostgreSQL instance",
    );
    const twoPg = await measure(
      { databaseUrl: await pg.createDatabase(), llmUrl: llm.url, config },
      2,
      runs,
      "two PostgreSQL instances",
    );
    const what = `${CONVERSATIONS} concurrent one-turn API-server conversations (conv/s, median of ${runs} batches; gateway, fake LLM, client and PostgreSQL on this machine)`;
    return [
      {
        name: `multi-instance: ${what}, one gateway instance on SQLite`,
        value: sqlite,
        unit: "conv/s",
        baseline: "the same instance's rate (SQLite is the reference topology)",
        baselineValue: sqlite,
        baselineUnit: "conv/s",
        target: "(for reference)",
        met: true,
      },
      {
        name: `multi-instance: ${what}, one gateway instance on PostgreSQL`,
        value: onePg,
        unit: "conv/s",
        baseline: "one instance on SQLite",
        baselineValue: sqlite,
        baselineUnit: "conv/s",
        target: "(for reference: the cost of the shared database)",
        met: true,
      },
      {
        name: `multi-instance: ${what}, two gateway instances on one PostgreSQL, conversations round-robin over both`,
        value: twoPg,
        unit: "conv/s",
        baseline: "one instance on PostgreSQL",
        baselineValue: onePg,
        baselineUnit: "conv/s",
        target: "(for reference: both instances share this machine's cores)",
        met: true,
      },
    ];
  } finally {
    await pg.dispose();
    await llm.close();
  }
}
