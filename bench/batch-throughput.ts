/**
 * Batch throughput: prompts per second of `runBatch` (in-process, the code `hermes batch run` runs)
 * at 1, 2 and 4 workers, against the fake LLM on 127.0.0.1 answering every request after a fixed
 * latency. Each prompt is a real session recorded in state.db: one `todo` call (not a terminal
 * command: a bash start per prompt would measure the local shell, not the runner) and two model calls, its trajectory line and checkpoint written as in a real run. The row's
 * ratio is 4 workers against 1 measured in the same run; 2 workers are in the row's name.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { reply, startFakeLlm } from "../test/support/fake-llm.js";
import type { BenchRow } from "./session-store.js";

type Lib = typeof import("../src/lib/index.js");
/** The built library: the tool descriptions are bundled there (tsx cannot load the .md files). */
const LIB = join(import.meta.dirname, "../dist/lib/index.js");

/** The fake model's answer time for every request. */
export const BATCH_BENCH_LATENCY_MS = 50;
const PROMPTS = 16;

export async function batchThroughputBench(): Promise<BenchRow[]> {
  process.stderr.write("batch: prompts per second at 1, 2 and 4 workers…\n");
  const { defaultConfig, openSessionStore, resolveRuntime, runBatch } = (await import(
    pathToFileURL(LIB).href
  )) as Lib;
  const llm = await startFakeLlm();
  llm.respondWith((request) => {
    const body = request.body as { messages?: Array<{ role: string }> };
    const answered = body.messages?.some((m) => m.role === "tool") === true;
    return (
      answered
        ? reply().reasoning("done").text("ok")
        : reply()
            .reasoning("plan it")
            .toolCall("todo", { todos: [{ id: "1", content: "step", status: "pending" }] })
    ).delay(BATCH_BENCH_LATENCY_MS);
  });
  const run = async (workers: number): Promise<number> => {
    const root = mkdtempSync(join(tmpdir(), "hermes-bench-batch-"));
    const home = join(root, "home");
    mkdirSync(home, { recursive: true });
    const dataset = join(root, "prompts.jsonl");
    writeFileSync(
      dataset,
      Array.from({ length: PROMPTS }, (_, i) => `${JSON.stringify({ prompt: `task ${i}` })}\n`).join(""),
    );
    const config = defaultConfig();
    const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, HERMES_HOME: home };
    const resolved = resolveRuntime({
      flags: { provider: "custom", baseUrl: llm.url, model: "fake-model" },
      config: { ...config, model: { ...config.model, api_key: "sk-bench" } },
      env,
      home,
    });
    const store = openSessionStore(join(home, "state.db"));
    const started = performance.now();
    try {
      const summary = await runBatch({
        home,
        config,
        env,
        dataset,
        runName: `bench-${workers}`,
        workers,
        toolsets: ["todo"],
        maxTurns: 4,
        model: "fake-model",
        resolved,
        store,
      });
      if (summary.statistics.prompts.completed !== PROMPTS) {
        throw new Error(
          `batch bench: ${summary.statistics.prompts.completed} of ${PROMPTS} prompts completed`,
        );
      }
    } finally {
      await store.close();
    }
    return PROMPTS / ((performance.now() - started) / 1000);
  };
  try {
    await run(4); // warm-up: module loading, JIT, the fake's sockets
    const one = await run(1);
    const two = await run(2);
    const four = await run(4);
    return [
      {
        name: `batch throughput, 4 workers (in-process runBatch, fake LLM ${BATCH_BENCH_LATENCY_MS} ms per request; ${PROMPTS} prompts of 2 model calls and 1 todo call, each a session recorded in state.db; 2 workers: ${two.toFixed(1)} prompts/s)`,
        value: four,
        unit: "prompts/s",
        baseline: "1 worker",
        baselineValue: one,
        baselineUnit: "prompts/s",
        target: "≥ 2× baseline",
        met: four >= one * 2,
      },
    ];
  } finally {
    llm.respondWith(undefined);
    await llm.close();
  }
}
