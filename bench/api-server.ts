/**
 * The API server under load: 200 concurrent conversations through the built `hermes api-server`
 * (a subprocess, so its memory is its own) against the fake LLM, each answered with its own
 * token. Figures: throughput (conversations/s), p99 added latency (p99 through the server minus
 * p99 of the direct baseline), and memory per conversation (peak RSS of the server during the
 * first batch minus its RSS before it, / 200). The server runs with max_concurrent_runs 200, so
 * the latency is the server's own overhead, not deliberate queueing.
 *
 * The direct baseline is like with like: right after each batch through the server, the 200 model
 * requests the server sent in it (recorded by the fake: system prompt, tool schemas, streaming)
 * are sent straight to the fake LLM, 200 at once, with the openai client. The fake's own work per
 * request (parsing a ~25 KB body, streaming the answer) is then in both figures, and the ratio is
 * the server's own cost. The former baseline, a bare one-message request per conversation, is
 * kept as a reference row.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import OpenAI from "openai";
import { fakeProviderConfig, HERMES_BIN, tempHome } from "../test/support/cli.js";
import { type RecordedRequest, reply, startFakeLlm } from "../test/support/fake-llm.js";
import type { BenchRow } from "./session-store.js";

const CONVERSATIONS = 200;
const KEY = "bench-api-server-key";

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
}

/** A /proc/<pid>/status field in bytes (Linux); NaN elsewhere. */
function procKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1];
    return kb ? Number(kb) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

function startServer(
  home: string,
  cwd: string,
): Promise<{ child: ChildProcessWithoutNullStreams; url: string }> {
  // BENCH_CPU_PROF=DIR writes a V8 CPU profile of the server process there (to find per-turn costs).
  const prof = process.env.BENCH_CPU_PROF ? ["--cpu-prof", "--cpu-prof-dir", process.env.BENCH_CPU_PROF] : [];
  const child = spawn(
    process.execPath,
    [...prof, process.env.BENCH_HERMES_BIN ?? HERMES_BIN, "api-server", "--port", "0"],
    {
      cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, HERMES_HOME: home, API_SERVER_KEY: KEY },
      stdio: "pipe",
    },
  );
  return new Promise((resolve, reject) => {
    let out = "";
    let errText = "";
    child.stderr.on("data", (d: Buffer) => (errText += d.toString("utf8")));
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString("utf8");
      const url = /Listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url) resolve({ child, url });
    });
    child.on("exit", (code) => reject(new Error(`hermes api-server exited (${code}): ${errText}`)));
  });
}

/** The process's user + system CPU time in ms, from /proc/<pid>/stat (Linux); NaN elsewhere. */
function procCpuMs(pid: number): number {
  try {
    // Fields after the parenthesised command name: state is [0], utime [11], stime [12], in ticks.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8")
      .replace(/^.*\) /s, "")
      .split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** The model requests the server sent to the fake since `from` (its chat completions, in order). */
function sentSince(requests: readonly RecordedRequest[], from: number): Record<string, unknown>[] {
  return requests
    .slice(from)
    .filter((r) => r.method === "POST" && r.path.endsWith("/chat/completions"))
    .map((r) => r.body as Record<string, unknown>);
}

/**
 * Sends `bodies` straight to the fake at once, as they were sent (streamed when they asked to be,
 * every chunk read); returns each one's latency and the batch's wall time.
 */
async function replay(
  client: OpenAI,
  bodies: Record<string, unknown>[],
): Promise<{ latencies: number[]; wallMs: number }> {
  if (bodies.length !== CONVERSATIONS)
    throw new Error(`the server sent ${bodies.length} model requests for ${CONVERSATIONS} conversations`);
  const started = performance.now();
  const latencies = await Promise.all(
    bodies.map(async (body) => {
      const t0 = performance.now();
      // biome-ignore lint/suspicious/noExplicitAny: a recorded wire body, sent back as it was
      const params = body as any;
      if (params.stream) {
        const stream = await client.chat.completions.create(params);
        for await (const _chunk of stream as unknown as AsyncIterable<unknown>) {
          // read to the end, as the server does
        }
      } else await client.chat.completions.create(params);
      return performance.now() - t0;
    }),
  );
  return { latencies, wallMs: performance.now() - started };
}

/** Sends one batch of conversations at once; returns each one's latency and the batch's wall time. */
async function batch(client: OpenAI, model: string): Promise<{ latencies: number[]; wallMs: number }> {
  const tokens = Array.from({ length: CONVERSATIONS }, () => randomBytes(6).toString("hex"));
  const started = performance.now();
  const latencies = await Promise.all(
    tokens.map(async (token) => {
      const t0 = performance.now();
      const done = await client.chat.completions.create({
        model,
        messages: [{ role: "user", content: `token ${token}` }],
      });
      const text = done.choices[0]?.message.content ?? "";
      if (text !== `answer ${token}`)
        throw new Error(`crossed or lost reply: wanted ${token}, got "${text}"`);
      return performance.now() - t0;
    }),
  );
  return { latencies, wallMs: performance.now() - started };
}

export async function apiServerBench(runs = 3): Promise<BenchRow[]> {
  const llm = await startFakeLlm();
  llm.respondWith((request) => {
    const messages = (request.body as { messages?: { content: unknown }[] }).messages ?? [];
    const last = messages.at(-1)?.content;
    const token = /token (\w+)/.exec(typeof last === "string" ? last : "")?.[1] ?? "none";
    return reply().text(`answer ${token}`).usage({ prompt: 10, completion: 3 });
  });
  const { home, cwd } = tempHome(
    fakeProviderConfig(llm.url, `gateway:\n  api_server:\n    max_concurrent_runs: ${CONVERSATIONS}\n`),
  );
  const { child, url } = await startServer(home, cwd);
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  try {
    const viaServer = new OpenAI({ baseURL: `${url}/v1`, apiKey: KEY, maxRetries: 0 });
    const direct = new OpenAI({ baseURL: llm.url, apiKey: "none", maxRetries: 0 });
    // Warm-up: the first turn loads the tool registry and the prompt builder.
    let from = llm.requests.length;
    await batch(viaServer, "hermes-agent");
    await replay(direct, sentSince(llm.requests, from));
    await batch(direct, "fake-model");

    const throughput: number[] = [];
    const added: number[] = [];
    const directP99: number[] = [];
    const perConversation: number[] = [];
    const servedWall: number[] = [];
    const directWall: number[] = [];
    const bareWall: number[] = [];
    const serverCpu: number[] = [];
    const directCpu: number[] = [];
    for (let run = 0; run < runs; run++) {
      process.stderr.write(`api server: batch ${run + 1}/${runs} of ${CONVERSATIONS} conversations…\n`);
      bareWall.push((await batch(direct, "fake-model")).wallMs);
      const rssBefore = procKb(child.pid ?? 0, "VmRSS");
      const cpuBefore = procCpuMs(child.pid ?? 0);
      from = llm.requests.length;
      const served = await batch(viaServer, "hermes-agent");
      serverCpu.push((procCpuMs(child.pid ?? 0) - cpuBefore) / CONVERSATIONS);
      const peak = procKb(child.pid ?? 0, "VmHWM");
      const replayCpu = process.cpuUsage();
      const base = await replay(direct, sentSince(llm.requests, from));
      const spent = process.cpuUsage(replayCpu);
      directCpu.push((spent.user + spent.system) / 1000 / CONVERSATIONS);
      servedWall.push(served.wallMs);
      directWall.push(base.wallMs);
      throughput.push(CONVERSATIONS / (served.wallMs / 1000));
      added.push(Math.max(0, p99(served.latencies) - p99(base.latencies)));
      directP99.push(p99(base.latencies));
      // The peak is a high-water mark over the process's life: only the first batch reads cleanly.
      if (run === 0) perConversation.push(Math.max(0, peak - rssBefore) / CONVERSATIONS);
    }
    const rate = median(throughput);
    const addedP99 = median(added);
    const memory = median(perConversation) / 1024 / 1024;
    const wall = median(servedWall);
    const directWallMs = median(directWall);
    const directRate = CONVERSATIONS / (directWallMs / 1000);
    return [
      {
        // Issue 22 item 6: the cost of a turn, as the wall time of the same N requests.
        name: `api server: wall time of ${CONVERSATIONS} concurrent conversations (each batch followed by its direct replay, medians of ${runs})`,
        value: wall,
        unit: "ms",
        baseline: `the ${CONVERSATIONS} model requests the server sent in that batch, replayed straight to the fake LLM at once`,
        baselineValue: directWallMs,
        target: "≤ 3× baseline",
        met: wall <= directWallMs * 3,
      },
      {
        name: `api server: the same wall time next to ${CONVERSATIONS} bare one-message requests (no system prompt, no tools) sent straight to the fake LLM (the former baseline)`,
        value: wall,
        unit: "ms",
        baseline: `${CONVERSATIONS} one-message requests straight to the fake LLM`,
        baselineValue: median(bareWall),
        target: "(for reference)",
        met: true,
      },
      {
        name: "api server: CPU time of the server process per conversation (user + system, same batches)",
        value: median(serverCpu),
        unit: "ms",
        baseline:
          "the bench process's CPU per replayed request (the fake LLM and an openai client, same requests)",
        baselineValue: median(directCpu),
        target: "(for reference: load-independent)",
        met: true,
      },
      {
        name: `api server: ${CONVERSATIONS} concurrent conversations (conversations/s)`,
        value: rate,
        unit: "conv/s",
        baseline: "the server's model requests replayed straight to the fake LLM (requests/s)",
        baselineValue: directRate,
        baselineUnit: "req/s",
        target: ">= 20 conv/s",
        met: rate >= 20,
      },
      {
        name: "api server: p99 added latency (server p99 - direct p99)",
        value: addedP99,
        unit: "ms",
        baseline: "p99 of the server's 200 model requests replayed straight to the fake LLM at once",
        baselineValue: median(directP99),
        target: "< 5000 ms at 200 concurrent",
        met: addedP99 < 5000,
      },
      {
        name: "api server: memory per conversation (peak RSS delta / 200)",
        value: memory,
        unit: "MiB",
        baseline: "server RSS before the batch",
        baselineValue: procKb(child.pid ?? 0, "VmRSS") / 1024 / 1024,
        baselineUnit: "MiB",
        target: "< 2 MiB",
        met: Number.isFinite(memory) && memory < 2,
      },
    ];
  } finally {
    child.kill("SIGTERM");
    await exited;
    await llm.close();
  }
}
