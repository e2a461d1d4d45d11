/**
 * Turn latency with and without a due background review, in the same run: the learning loop must
 * add nothing to what the user waits for. One in-process `ChatSession` (the REPL's path; the built
 * library in dist/lib) talks to the fake LLM on 127.0.0.1, which answers every request after a
 * fixed latency. Without review: `memory.nudge_interval: 0`. With review: `nudge_interval: 1`, so
 * a review is due after every turn; it writes a USER.md entry with the memory tool (two model
 * requests, recorded in state.db) while the next turn already runs, as when the user types on at
 * once. A turn's latency is from `run()` to its result. Blocks of turns alternate between the two
 * sessions so drift hits both; medians over every turn.
 */
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { type RecordedRequest, reply, startFakeLlm } from "../test/support/fake-llm.js";
import type { BenchRow } from "./session-store.js";

type Lib = typeof import("../src/lib/index.js");

const LIB = resolve(import.meta.dirname, "../dist/lib/index.js");
/** The fake model's answer time for every request. */
export const REVIEW_BENCH_LATENCY_MS = 40;
const BLOCKS = 4;
const TURNS_PER_BLOCK = 8;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function systemOf(request: RecordedRequest): string {
  const body = request.body as { messages?: Array<{ content: unknown }> };
  const content = body.messages?.[0]?.content;
  return typeof content === "string" ? content : "";
}

export async function reviewLatencyBench(): Promise<BenchRow[]> {
  process.stderr.write("background review: turn latency with and without a due review…\n");
  const lib = (await import(pathToFileURL(LIB).href)) as Lib;
  const llm = await startFakeLlm();
  // Each reviewer request is answered by what its conversation so far calls for: save, then close.
  llm.respondWith((request) => {
    if (!systemOf(request).includes("learning reviewer")) return undefined;
    const body = request.body as { messages?: Array<{ role: string }> };
    const toolDone = body.messages?.some((m) => m.role === "tool") === true;
    return (
      toolDone
        ? reply().text("Saved.")
        : reply().toolCall("memory", {
            action: "add",
            target: "user",
            content: `Fact ${Math.random().toString(36).slice(2, 8)}`,
          })
    ).delay(REVIEW_BENCH_LATENCY_MS);
  });
  const open = async (nudge: number) => {
    const root = mkdtempSync(join(tmpdir(), "hermes-bench-review-"));
    const home = join(root, "home");
    const cwd = join(root, "work");
    mkdirSync(home, { recursive: true });
    mkdirSync(cwd, { recursive: true });
    const config = lib.defaultConfig();
    config.memory.nudge_interval = nudge;
    config.memory.user_char_limit = 100_000;
    const store = lib.openSessionStore(join(home, "state.db"));
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, HERMES_HOME: home };
    const resolved = lib.resolveRuntime({
      flags: { provider: "custom", baseUrl: llm.url, model: "fake-model" },
      config: { ...config, model: { ...config.model, api_key: "sk-bench" } },
      env,
      home,
    });
    const session = await lib.ChatSession.open({
      resolved,
      config,
      home,
      cwd,
      env,
      toolsets: ["memory", "skills", "todo"],
      store,
      retry: { maxRetries: 0 },
    });
    return { session, store, home };
  };
  const plain = await open(0);
  const reviewed = await open(1);
  const latencies = { plain: [] as number[], reviewed: [] as number[] };
  let turn = 0;
  const runBlock = async (which: "plain" | "reviewed") => {
    const { session } = which === "plain" ? plain : reviewed;
    for (let i = 0; i < TURNS_PER_BLOCK; i++) {
      llm.enqueue(reply().text(`Answer ${turn}.`).delay(REVIEW_BENCH_LATENCY_MS));
      const started = performance.now();
      const result = await session.run(`Turn ${turn++}: a short question.`).result;
      latencies[which].push(performance.now() - started);
      if (result.reason !== "completed")
        throw new Error(`review bench: ${result.reason} ${result.error ?? ""}`);
    }
  };
  try {
    await runBlock("plain"); // warm-up of both paths, not measured
    await runBlock("reviewed");
    latencies.plain.length = 0;
    latencies.reviewed.length = 0;
    for (let b = 0; b < BLOCKS; b++) {
      await runBlock("plain");
      await runBlock("reviewed");
    }
  } finally {
    await plain.session.close();
    await reviewed.session.close();
  }
  const reviews = (await reviewed.store.listSessions({ source: "review", limit: 1000 })).length;
  const saved = readFileSync(join(reviewed.home, "memories", "USER.md"), "utf8").split("\n§\n").length;
  await plain.store.close();
  await reviewed.store.close();
  await llm.close();
  const expected = (BLOCKS + 1) * TURNS_PER_BLOCK;
  // A row about reviews that never ran would measure nothing: say so loudly.
  if (reviews < expected - 1) throw new Error(`review bench: ${reviews} reviews ran, expected ${expected}`);
  const withReview = median(latencies.reviewed);
  const without = median(latencies.plain);
  const n = latencies.reviewed.length;
  return [
    {
      name: `turn latency with a background review due after every turn (in-process ChatSession, fake LLM ${REVIEW_BENCH_LATENCY_MS} ms per request; ${n} turns, ${reviews} reviews ran, ${saved} USER.md entries saved)`,
      value: withReview,
      unit: "ms",
      baseline: "the same turns with no review",
      baselineValue: without,
      target: "≤ 1.10× baseline",
      met: withReview <= without * 1.1,
    },
  ];
}
