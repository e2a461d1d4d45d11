/**
 * `npm run bench`: start-up, round-trip and loop-overhead figures, each next to a baseline measured
 * in the same run. Prints a table and rewrites bench/RESULTS.md. Never part of `npm test`.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { Type } from "@sinclair/typebox";
import { ToolLoopGuard } from "../src/agent/guardrails.js";
import { runLoop } from "../src/agent/loop.js";
import type { Message } from "../src/ai/types.js";
import { defaultConfig } from "../src/config/defaults.js";
import { ToolRegistry } from "../src/tools/registry.js";
import { defineTool } from "../src/tools/types.js";
import { reply, startFakeLlm } from "../test/support/fake-llm.js";
import { callTools, ScriptedTransport, say } from "../test/support/scripted-transport.js";
import { makeToolContext } from "../test/support/tool-context.js";
import { apiServerBench } from "./api-server.js";
import { batchThroughputBench } from "./batch-throughput.js";
import { commandAnalyserBench } from "./command-analyser.js";
import { dashboardSessionsBench } from "./dashboard-sessions.js";
import { dockerBench } from "./docker.js";
import { executeCodeBench } from "./execute-code.js";
import { leanStartBench } from "./lean-start.js";
import { multiInstanceBench } from "./multi-instance.js";
import { pgSearchBench } from "./pg-search.js";
import { pluginsBench } from "./plugins.js";
import { prefixStabilityBench } from "./prefix-stability.js";
import { promptSizeBench } from "./prompt-size.js";
import { redactionBench } from "./redaction.js";
import { reviewLatencyBench } from "./review-latency.js";
import { type BenchRow, sessionStoreBench } from "./session-store.js";
import { sshEnvironmentBench } from "./ssh-environment.js";
import { threatScanBench } from "./threat-scan.js";

const ROOT = resolve(import.meta.dirname, "..");
const BIN = join(ROOT, "bin/hermes");

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const child = spawn(cmd, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`${cmd} ${args.join(" ")} exited ${code}: ${stderr}`));
      else resolvePromise(performance.now() - started);
    });
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function sample(runs: number, fn: () => Promise<number>): Promise<number> {
  await fn(); // warm-up: file cache, JIT of the harness
  const values: number[] = [];
  for (let i = 0; i < runs; i++) values.push(await fn());
  return median(values);
}

async function roundTrip(runs: number, compileCache = true): Promise<number> {
  const llm = await startFakeLlm();
  const root = mkdtempSync(join(tmpdir(), "hermes-bench-"));
  const home = join(root, "home");
  mkdirSync(home);
  writeFileSync(
    join(home, "config.yaml"),
    `model:\n  provider: custom\n  base_url: ${llm.url}\n  default: fake-model\nagent:\n  api_max_retries: 0\n`,
  );
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    HERMES_HOME: home,
    NO_COLOR: "1",
    ...(compileCache ? {} : { HERMES_NO_COMPILE_CACHE: "1" }),
  };
  try {
    return await sample(runs, () => {
      llm.enqueue(reply().toolCall("terminal", { command: "echo bench" }), reply().text("done"));
      return run(process.execPath, [BIN, "-z", "run echo"], env);
    });
  } finally {
    await llm.close();
  }
}

/** Milliseconds of loop overhead per model call over `turns` scripted tool-calling turns. */
async function loopPerTurn(turns: number): Promise<number> {
  const registry = new ToolRegistry();
  registry.register(
    defineTool({
      name: "noop",
      toolset: "bench",
      description: "Does nothing",
      parameters: Type.Object({ i: Type.Integer() }),
      handler: (args) => `ok ${args.i}`,
    }),
  );
  const ctx = makeToolContext();
  const scripts: Message[] = Array.from({ length: turns }, (_, i) => callTools(["noop", { i }]));
  scripts.push(say("finished"));
  const transport = new ScriptedTransport(scripts, { record: false });
  const messages: Message[] = [{ role: "user", content: "go" }];
  const g = defaultConfig().tool_loop_guardrails;
  const events: string[] = [];
  const started = performance.now();
  const result = await runLoop(
    messages,
    {
      transport,
      model: "bench",
      tools: registry.schemas(["noop"]),
      systemPrompt: "bench",
      maxIterations: turns + 10,
      traits: () => ({ parallelSafe: true, interactive: false }),
      executeTool: (call, signal) => registry.execute(call.name, call.args, { ...ctx, signal }),
      guard: ToolLoopGuard.fromConfig(g),
      unknownToolMisses: { count: 0 },
      emit: (event) => events.push(event.type),
    },
    new AbortController().signal,
  );
  const elapsed = performance.now() - started;
  if (result.iterations !== turns + 1) throw new Error(`loop ran ${result.iterations} iterations`);
  return elapsed / (turns + 1);
}

type Row = BenchRow;

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(3));

async function main(): Promise<void> {
  const runs = Number(process.env.BENCH_RUNS ?? 15);
  const nodeBaseline = await sample(runs, () => run(process.execPath, ["-e", "0"]));
  const version = await sample(runs, () => run(process.execPath, [BIN, "--version"]));
  const trip = await roundTrip(Math.max(5, Math.round(runs * 0.7)));
  const tripCold = await roundTrip(Math.max(5, Math.round(runs * 0.7)), false);
  const loops: number[] = [];
  for (let i = 0; i < 5; i++) loops.push(await loopPerTurn(1000));
  const loop = median(loops);

  const rows: Row[] = [
    {
      name: "`hermes --version` cold start",
      value: version,
      unit: "ms",
      baseline: "`node -e 0`",
      baselineValue: nodeBaseline,
      target: "≤ 1.5× baseline",
      met: version <= nodeBaseline * 1.5,
    },
    {
      name: "one-shot tool round trip (`hermes -z`, 2 model requests + `terminal`)",
      value: trip,
      unit: "ms",
      baseline: "`node -e 0`",
      baselineValue: nodeBaseline,
      target: "≤ 400 ms",
      met: trip <= 400,
    },
    {
      name: "the same round trip with the V8 compile cache off (`HERMES_NO_COMPILE_CACHE=1`)",
      value: tripCold,
      unit: "ms",
      baseline: "`node -e 0`",
      baselineValue: nodeBaseline,
      target: "(for reference)",
      met: true,
    },
    {
      name: "loop overhead per turn (1000 scripted turns, in-process)",
      value: loop,
      unit: "ms",
      baseline: "`node -e 0`",
      baselineValue: nodeBaseline,
      target: "≤ 1 ms",
      met: loop <= 1,
    },
  ];
  rows.push(...(await leanStartBench(BIN, Math.max(5, Math.round(runs * 0.7)))));
  rows.push(...promptSizeBench(BIN));
  rows.push(...commandAnalyserBench());
  rows.push(...(await prefixStabilityBench()));
  rows.push(...(await executeCodeBench()));
  rows.push(...(await dockerBench()));
  rows.push(...(await apiServerBench()));
  rows.push(...(await multiInstanceBench()));
  rows.push(...(await reviewLatencyBench()));
  rows.push(...(await batchThroughputBench()));
  rows.push(...(await pluginsBench()));
  rows.push(...redactionBench());
  rows.push(...threatScanBench());
  rows.push(...(await sshEnvironmentBench()));
  // BENCH_STORE_SIZES=100000 measures search at one size only (the 1M corpus takes minutes to build once).
  const sizes = process.env.BENCH_STORE_SIZES?.split(",").map(Number);
  rows.push(...(await sessionStoreBench(sizes ? { sizes } : {})));
  rows.push(...(await dashboardSessionsBench()));
  rows.push(...(await pgSearchBench()));

  const header = "| benchmark | median | baseline | ratio | target | met |\n|---|---|---|---|---|---|";
  const lines = rows.map(
    (r) =>
      `| ${r.name} | ${fmt(r.value)} ${r.unit} | ${r.baseline} ${fmt(r.baselineValue)} ${r.baselineUnit ?? "ms"} | ${(r.value / r.baselineValue).toFixed(2)}× | ${r.target} | ${r.target.startsWith("(") ? "–" : r.met ? "yes" : "no"} |`,
  );
  const table = [header, ...lines].join("\n");
  process.stdout.write(`${table}\n`);

  const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}`;
  const md = [
    "# Benchmark results",
    "",
    "Written by `npm run bench`. Each figure is a median (start-up figures over " +
      `${runs} runs after a warm-up; the loop over 5 runs of 1000 turns), next to \`node -e 0\` measured in the same run.`,
    "",
    "The round trip runs the built CLI against the scripted fake LLM server on 127.0.0.1. bin/hermes keeps a V8 code " +
      "cache of the bundle in ~/.cache/hermes-ts; the warm-up run creates it, so the first row shows repeated use and " +
      "the second row shows a start without it.",
    "",
    "Lean-start rows (bench/lean-start.ts): peak RSS is each process's own `process.resourceUsage().maxRSS` at " +
      "exit (a `--require`d probe), the one-shot alternating with `node -e 0`; `--help` alternates with `node -e 0` " +
      "too. The loop row runs `hermes -z` whose model calls `todo` 101 times, minus the same one-shot calling it " +
      "once (so one-time costs such as the tool's validator fall in both), per model call, minus the fake server's own cost per request (the recorded requests replayed to it " +
      "directly); medians of 9, with every message committed to state.db before the next step. That wall-clock " +
      "difference moves with the machine's load (the fake server shares the CPUs), so the CPU row next to it gives " +
      "the same runs' user + system time of the `hermes` process per model call, next to the bench process's own " +
      "CPU per replayed request (fake server plus a bare HTTP client). The request body grows with the history " +
      "(about 25 KB at the first call, 64 KB at the 100th), so both rows include serializing it.",
    "",
    "API server rows (bench/api-server.ts): the built `hermes api-server` in its own process, 200 conversations sent at " +
      "once with the openai client, each batch followed by its direct baseline: the 200 model requests the server sent " +
      "in that batch (system prompt, tool schemas, streaming), recorded by the fake LLM and replayed straight to it at " +
      "once, so the fake's own work is in both figures; medians of 3 batches. The former baseline, 200 bare one-message " +
      "requests, is the reference row after it. The CPU row reads the server's user + system time from /proc, next to " +
      "the bench process's own CPU per replayed request (fake LLM plus client).",
    "",
    "Session store rows (bench/session-store.ts): append rates are medians of 3 runs of 150 turns against a JSONL " +
      "file written and fsynced per message; search latencies are per query over 40 runs (after a warm-up) on " +
      "generated stores of 100k and 1M messages, next to `grep -r -F -i -l` over the same text exported as one JSONL " +
      "file per session (5 runs per query). The stores are generated once and cached in ~/.cache/hermes-ts/bench.",
    "",
    "Prompt rows (bench/prompt-size.ts) come from the built `hermes prompt-size --json` on a home with 100 installed " +
      "skills and a configured model (so every default tool is offered), counted in o200k tokens, next to Python " +
      "Hermes's figures reported in NousResearch/hermes-agent issue #4379 (31 default tools: 8,759 tokens of tool " +
      "definitions plus 5,176 of system prompt).",
    "",
    "Prefix-stability rows (bench/prefix-stability.ts) run one in-process 30-turn session (15 turns call read_file, " +
      "`terminal` or `todo` first; a home with 2 skills and a memory entry) against the fake server, over chat " +
      "completions and, for reference, Anthropic Messages, and give the longest common byte prefix of each model " +
      "request with the next divided by the earlier request's length; the bytes are the recorded bodies " +
      "re-serialised with JSON.stringify, as the SDKs send them, so key order is the order sent.",
    "",
    "Command analyser rows (bench/command-analyser.ts): every command of the test zoo analysed 15 times after a " +
      "warm-up, the median per command kept; p50 and p95 over the zoo, next to the shell parser alone on the same commands.",
    "",
    "execute_code rows (bench/execute-code.ts): a Python script makes 50 sequential read_file calls of a one-line " +
      "file through the sandbox socket; the per-call figure is (that script's time minus the same script making no " +
      "calls) / 50, next to the same call made in-process through the registry. Start-up is the empty script's " +
      "whole execute_code run, next to `python3 -c pass`. Medians of 9 runs.",
    "",
    "Background review row (bench/review-latency.ts): two in-process ChatSessions (the REPL's path) against the fake " +
      "server answering every request after a fixed latency; one with `memory.nudge_interval: 0`, one with 1 (a review " +
      "that saves a USER.md entry is due after every turn and runs while the next turn does). A turn is timed from " +
      "`run()` to its result; blocks of 8 turns alternate between the two sessions; medians over all turns.",
    "",
    "Plugins row (bench/plugins.ts): each sample is a fresh plain `node` process (bench/plugins-start.mjs, the built " +
      "library) with a fresh home holding three plugins (a tool, two hooks and a command each); it times loading them " +
      "(`loadPlugins`), opening a ChatSession and its first turn against the fake server, next to the same start with " +
      "none enabled; 12 pairs (none and with, which first alternating), the median of the pairs' differences, as wall time and as the CPU " +
      "time (user + system) the sample's process used over the same span, which other processes on a shared machine " +
      "barely move. Plugin manifests in flat `key: value` form are read without the YAML library (its cold first " +
      "parse was most of the load, --cpu-prof).",
    "",
    "ssh rows (bench/ssh-environment.ts): a real sshd on 127.0.0.1 with a throw-away user. First command: a fresh " +
      "ssh environment's start (connect, prepare the remote side) plus its persistent shell's first `true`, next to a " +
      "fresh `ssh host true` with no shared connection (9 runs each). Per command: the persistent shell running `true` " +
      "once it is up, next to `ssh host true` over a live ControlMaster, alternating, 30 runs each.",
    "",
    "Dashboard rows (bench/dashboard-sessions.ts): state.db files of 100k and 1k sessions (a ~4 KB system prompt and 2 or 4 messages each, " +
      "some with a tool call) written through the SessionStore and cached in bench/.tmp/ (keyed by generator version " +
      "and a digest of the schema; the 100k file takes minutes to build once); each is copied into a fresh home and " +
      "served by the built `hermes dashboard`, driven by Chromium through playwright-core. First paint: a fresh browser " +
      "context opens `#/sessions` with the token; the figure is the Element Timing render time of the first row's link " +
      "(from navigation start), median of 9 after a warm-up; first contentful paint is the shell's. Search API: 8 " +
      "queries (common word, rare word, phrase, prefix, substring, CJK, with a source, with a model) sent 12 times each " +
      "over HTTP with the token, limit 25, p50 and p95 over all samples. Search in the page: the time from setting " +
      "`#/sessions?q=<word>` (what submitting the search box does; the box's 300 ms typing debounce is not counted) to " +
      "the frame after the hits are in the page, 8 words twice. Facets: the route's handler in-process with its cache expired.",
    "",
    `Machine: ${machine}. Measured ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC.`,
    "",
    table,
    "",
  ].join("\n");
  writeFileSync(join(ROOT, "bench/RESULTS.md"), md);
}

await main();
