/**
 * Prefix stability of the request bytes over a 30-turn session: how much of each model request is
 * a byte-for-byte prefix of the next one, which is what provider prompt caches (automatic prefix
 * caching, Anthropic `cache_control`) can reuse.
 *
 * One in-process `AIAgent` session (the built library in dist/lib, since the tool descriptions are
 * .md files imported as text) talks to the scripted fake LLM server on 127.0.0.1. Its home holds
 * two skills and a memory entry so the system prompt is realistic; 15 of the 30 user turns call a
 * tool (read_file, terminal `echo`, todo) before answering. For each consecutive pair of model
 * requests the ratio is (longest common byte prefix) / (bytes of the earlier request). The fake
 * server keeps the parsed body; the bytes are re-serialised with JSON.stringify, which is what the
 * OpenAI and Anthropic SDKs send, so key order is the order sent.
 *
 * The same session is then run over the Anthropic Messages wire (`model.api_mode:
 * anthropic_messages`), for reference: its `cache_control` breakpoints sit on the last messages
 * and so move every turn, which breaks the byte prefix early (the cache itself matches on the
 * content, not the markers; this measures bytes only).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { reply, type ScriptedReply, startFakeLlm } from "../test/support/fake-llm.js";
import type { BenchRow } from "./session-store.js";

type Lib = typeof import("../src/lib/index.js");

const TURNS = 30;
const TARGET = 0.95;
const LIB = resolve(import.meta.dirname, "../dist/lib/index.js");

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function makeHome(root: string): { home: string; cwd: string } {
  const home = join(root, "home");
  const cwd = join(root, "work");
  mkdirSync(cwd, { recursive: true });
  const skills: [string, string, string][] = [
    ["devops", "deploy-compose", "Deploy a Docker Compose stack to a remote host over SSH."],
    ["research", "summarise-pdf", "Summarise a long PDF report into a one-page brief with citations."],
  ];
  for (const [category, name, description] of skills) {
    const dir = join(home, "skills", category, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "SKILL.md"),
      `---\nname: ${name}\ndescription: ${description}\nversion: 1.0.0\n---\n# ${name}\n\n1. Do the thing.\n2. Check it.\n`,
    );
  }
  mkdirSync(join(home, "memories"), { recursive: true });
  writeFileSync(
    join(home, "memories", "MEMORY.md"),
    "The project builds with `node scripts/build.mjs`; tests run under vitest.\n",
  );
  writeFileSync(join(home, "memories", "USER.md"), "Prefers short answers with the command to run.\n");
  writeFileSync(join(cwd, "notes.txt"), "alpha\nbeta\ngamma\n");
  return { home, cwd };
}

/** The model's replies for user turn `i`: every other turn calls a tool first. */
function script(i: number): ScriptedReply[] {
  const answer = reply().text(`Answer ${i}: done, nothing else to report for this step.`);
  if (i % 2 === 1) return [answer];
  const call =
    i % 6 === 0
      ? reply().toolCall("read_file", { path: "notes.txt" }, `call_read_${i}`)
      : i % 6 === 2
        ? reply().toolCall("terminal", { command: `echo turn ${i}` }, `call_term_${i}`)
        : reply().toolCall(
            "todo",
            { todos: [{ id: `t${i}`, content: `step ${i}`, status: "in_progress" }] },
            `call_todo_${i}`,
          );
  return [call, answer];
}

interface Measured {
  ratios: number[];
  requests: number;
  firstBytes: number;
  lastBytes: number;
}

async function measure(lib: Lib, apiMode: string): Promise<Measured> {
  const llm = await startFakeLlm();
  const root = mkdtempSync(join(tmpdir(), "hermes-bench-prefix-"));
  const { home, cwd } = makeHome(root);
  const config = lib.defaultConfig();
  config.model.api_mode = apiMode;
  const agent = new lib.AIAgent({
    baseUrl: llm.url,
    provider: "custom",
    model: "fake-model",
    apiKey: "sk-bench",
    config,
    home,
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, HERMES_HOME: home },
    toolsets: ["file", "terminal", "todo", "memory", "skills"],
    retry: { maxRetries: 0 },
  });
  try {
    for (let i = 0; i < TURNS; i++) {
      llm.enqueue(...script(i));
      const result = await agent.run(`Turn ${i}: please handle step ${i} of the plan.`).result;
      if (result.reason !== "completed") throw new Error(`turn ${i}: ${result.reason} ${result.error ?? ""}`);
      if (llm.pending !== 0) throw new Error(`turn ${i}: ${llm.pending} scripted replies left`);
    }
  } finally {
    await agent.close();
    await llm.close();
  }
  const bodies = llm.chatRequests.map((r) => Buffer.from(JSON.stringify(r.body), "utf8"));
  const ratios: number[] = [];
  for (let i = 1; i < bodies.length; i++) {
    const prev = bodies[i - 1]!;
    ratios.push(commonPrefix(prev, bodies[i]!) / prev.length);
  }
  return { ratios, requests: bodies.length, firstBytes: bodies[0]!.length, lastBytes: bodies.at(-1)!.length };
}

export async function prefixStabilityBench(): Promise<BenchRow[]> {
  process.stderr.write("prefix stability: 30-turn sessions…\n");
  const lib = (await import(pathToFileURL(LIB).href)) as Lib;
  const chat = await measure(lib, "chat_completions");
  const anthropic = await measure(lib, "anthropic_messages");
  const pct = (x: number) => x * 100;
  const chatMin = Math.min(...chat.ratios);
  const anthropicMin = Math.min(...anthropic.ratios);
  const label = (m: Measured) =>
    `${m.requests} requests, ${m.ratios.length} pairs, ${m.firstBytes}→${m.lastBytes} bytes`;
  return [
    {
      name: `request prefix stability, chat completions, minimum over consecutive requests (${TURNS} turns, ${label(chat)})`,
      value: pct(chatMin),
      unit: "%",
      baseline: "target",
      baselineValue: pct(TARGET),
      baselineUnit: "%",
      target: "every request ≥ 95% a prefix of the next",
      met: chatMin >= TARGET,
    },
    {
      name: "request prefix stability, chat completions, median",
      value: pct(median(chat.ratios)),
      unit: "%",
      baseline: "target",
      baselineValue: pct(TARGET),
      baselineUnit: "%",
      target: "(for reference)",
      met: true,
    },
    {
      name: `request prefix stability, Anthropic Messages (moving \`cache_control\` breakpoints), minimum (${label(anthropic)})`,
      value: pct(anthropicMin),
      unit: "%",
      baseline: "target",
      baselineValue: pct(TARGET),
      baselineUnit: "%",
      target: "(for reference)",
      met: true,
    },
    {
      name: "request prefix stability, Anthropic Messages, median",
      value: pct(median(anthropic.ratios)),
      unit: "%",
      baseline: "target",
      baselineValue: pct(TARGET),
      baselineUnit: "%",
      target: "(for reference)",
      met: true,
    },
  ];
}
