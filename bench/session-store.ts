/**
 * Session store figures for `npm run bench`: append rate, and search latency at 100k and 1M stored
 * messages next to `grep -r -F` over the same text exported as JSONL (one file per session).
 *
 * The corpora are generated once (deterministic PRNG: varied vocabulary with a Zipf tail, tool
 * calls and results, some CJK), through the store's own `appendMessages`, and cached under
 * `~/.cache/hermes-ts/bench/` keyed by GENERATOR_VERSION; bump it when the generator changes.
 * Progress goes to stderr.
 */
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Message } from "../src/ai/types.js";
import { openSqliteStore } from "../src/state/sqlite-store.js";
import type { SyncSessionStore } from "../src/state/types.js";

export const GENERATOR_VERSION = 1;

/** One row of the bench table (bench/run.ts prints and records them). */
export interface BenchRow {
  name: string;
  value: number;
  unit: string;
  baseline: string;
  baselineValue: number;
  /** Unit of the baseline figure (default ms). */
  baselineUnit?: string;
  target: string;
  met: boolean;
}

// ── Deterministic text ──────────────────────────────────────────────────────────────────────────

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COMMON = `the to of and a in is it you that for on with this be are as can at not have or from by an
will if but your do we use all there so when what which more one would about out up then them
these has how also need just like some my me could into only other time new should make now
file error function code run test data config server build version path user value type
output command project update change line request module install docker python script list
check issue log return message system default using example setup string object key result`.split(/\s+/);

const TECH = `nginx kubernetes postgres redis webpack typescript dockerfile makefile pytest vitest
compose yaml json schema migration endpoint handler router middleware cache proxy certificate
token session cookie header payload timeout retry backoff latency throughput benchmark profile
thread process signal socket buffer stream parser lexer tokenizer compiler linker bundle
deploy rollback release branch commit rebase merge conflict pipeline workflow artifact registry
container volume network ingress service secret configmap namespace cluster replica shard index
query transaction lock deadlock vacuum checkpoint journal snapshot backup restore archive
gradient tensor embedding attention transformer inference quantize checkpointing scheduler`.split(/\s+/);

const SYLLABLES =
  "ka lo mi ne ru sa te vo zu bar cor den fal gim hox jur kel mon pra qui rix sol tur vex wyn zal".split(" ");
const CJK = [
  "今天天气预报说会下雨",
  "请帮我检查一下服务器日志",
  "这个配置文件有问题吗",
  "我们明天继续讨论这个项目",
  "数据库连接池需要调整",
  "天气很好，我们去公园散步",
  "部署脚本失败了，请看一下错误信息",
];

export class TextGen {
  private readonly rand: () => number;
  private readonly vocab: string[];

  constructor(seed: number) {
    this.rand = mulberry32(seed);
    const tail: string[] = [];
    const r = mulberry32(seed ^ 0x5eed);
    for (let i = 0; i < 30_000; i++) {
      const n = 2 + Math.floor(r() * 3);
      let w = "";
      for (let j = 0; j < n; j++) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)];
      tail.push(w);
    }
    this.vocab = [...COMMON, ...TECH, ...tail];
  }

  int(lo: number, hi: number): number {
    return lo + Math.floor(this.rand() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.rand() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rand() * items.length)]!;
  }

  /** Zipf-ish: rank ~ exp(u * ln N) concentrates on the head of the vocabulary. */
  word(): string {
    const rank = Math.floor(Math.exp(this.rand() * Math.log(this.vocab.length))) - 1;
    return this.vocab[Math.min(rank, this.vocab.length - 1)]!;
  }

  sentence(words: number): string {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(this.word());
    if (this.chance(0.006)) out.splice(this.int(0, out.length), 0, "connection", "pool");
    if (this.chance(0.00005)) out.splice(this.int(0, out.length), 0, "quetzalcoatl");
    const s = out.join(" ");
    return `${s.charAt(0).toUpperCase()}${s.slice(1)}.`;
  }

  paragraph(minWords: number, maxWords: number): string {
    let total = this.int(minWords, maxWords);
    const parts: string[] = [];
    while (total > 0) {
      const n = Math.min(total, this.int(6, 18));
      parts.push(this.sentence(n));
      total -= n;
    }
    if (this.chance(0.03)) parts.push(this.pick(CJK));
    return parts.join(" ");
  }
}

const TOOLS = [
  "terminal",
  "read_file",
  "write_file",
  "search_files",
  "web_search",
  "patch",
  "browser_navigate",
];

export function turn(g: TextGen, n: number): Message[] {
  const user: Message = { role: "user", content: g.paragraph(4, 45) };
  if (!g.chance(0.6))
    return [user, { role: "assistant", content: g.paragraph(15, 160), finish_reason: "stop" }];
  const tool = g.pick(TOOLS);
  const id = `call_${n.toString(36)}`;
  const args = JSON.stringify(
    tool === "terminal"
      ? { command: `${g.word()} ${g.word()} --${g.word()}` }
      : { path: `src/${g.word()}/${g.word()}.ts` },
  );
  return [
    user,
    {
      role: "assistant",
      content: g.chance(0.5) ? g.paragraph(5, 30) : null,
      tool_calls: [{ id, type: "function", function: { name: tool, arguments: args } }],
      finish_reason: "tool_calls",
    },
    { role: "tool", tool_call_id: id, name: tool, content: g.paragraph(30, 220) },
    { role: "assistant", content: g.paragraph(15, 160), finish_reason: "stop" },
  ];
}

// ── Corpus cache ────────────────────────────────────────────────────────────────────────────────

function cacheDir(): string {
  const dir = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "hermes-ts", "bench");
  mkdirSync(dir, { recursive: true });
  return dir;
}

interface Corpus {
  db: string;
  jsonl: string;
  messages: number;
}

/** Builds (or reuses) a store holding `target` messages and its JSONL export. */
export function corpus(target: number): Corpus {
  const label = target >= 1_000_000 ? `${target / 1_000_000}m` : `${target / 1000}k`;
  const base = join(cacheDir(), `session-store-v${GENERATOR_VERSION}-${label}`);
  const done = `${base}.done`;
  const out = { db: `${base}.db`, jsonl: `${base}-jsonl`, messages: target };
  if (existsSync(done)) return out;
  for (const p of [out.db, `${out.db}-wal`, `${out.db}-shm`, out.jsonl])
    rmSync(p, { recursive: true, force: true });
  const tmp = `${base}.tmp.db`;
  for (const p of [tmp, `${tmp}-wal`, `${tmp}-shm`]) rmSync(p, { force: true });
  let clock = 1_700_000_000;
  const store = openSqliteStore(tmp, { durability: "normal", now: () => clock });
  const g = new TextGen(42);
  let written = 0;
  let n = 0;
  const started = performance.now();
  try {
    while (written < target) {
      clock += g.int(60, 3600);
      const session = store.createSession({
        source: g.chance(0.8) ? "cli" : "telegram",
        model: g.pick(["m/a", "m/b", "m/c"]),
      });
      const turns = g.int(2, 25);
      const batch: Message[] = [];
      for (let t = 0; t < turns && written + batch.length < target; t++) batch.push(...turn(g, n++));
      const slice = batch.slice(0, target - written);
      store.appendMessages(session.id, slice);
      written += slice.length;
      clock += slice.length * 20;
      if (n % 2000 < turns) {
        const rate = written / ((performance.now() - started) / 1000);
        process.stderr.write(
          `\r  generating ${label}: ${written.toLocaleString()} messages (${rate.toFixed(0)}/s)   `,
        );
      }
    }
    process.stderr.write(
      `\r  generating ${label}: ${written.toLocaleString()} messages, exporting JSONL…          \n`,
    );
    mkdirSync(out.jsonl, { recursive: true });
    for (const { session, messages } of store.exportSessions()) {
      const lines = messages.map((m) =>
        JSON.stringify({
          role: m.role,
          content: m.content,
          tool_calls: m.toolCalls ?? undefined,
          name: m.toolName ?? undefined,
        }),
      );
      writeFileSync(join(out.jsonl, `${session.id}.jsonl`), `${lines.join("\n")}\n`);
    }
  } finally {
    store.close();
  }
  renameSync(tmp, out.db);
  writeFileSync(done, new Date().toISOString());
  return out;
}

// ── Measurements ────────────────────────────────────────────────────────────────────────────────

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[at]!;
}

const median = (values: number[]) => percentile(values, 50);

function appendRate(batched: boolean, turns: number): number {
  const dir = mkdtempSync(join(tmpdir(), "hermes-bench-store-"));
  const store = openSqliteStore(join(dir, "state.db"));
  const g = new TextGen(7);
  try {
    const session = store.createSession({ source: "cli" });
    const all: Message[][] = [];
    for (let i = 0; i < turns; i++) all.push(turn(g, i));
    const started = performance.now();
    let count = 0;
    for (const t of all) {
      if (batched) store.appendMessages(session.id, t);
      else for (const m of t) store.appendMessage(session.id, m);
      count += t.length;
    }
    return count / ((performance.now() - started) / 1000);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The legacy way: one JSON line per message, fsynced, appended to the session's file. */
function jsonlAppendRate(turns: number): number {
  const dir = mkdtempSync(join(tmpdir(), "hermes-bench-jsonl-"));
  const g = new TextGen(7);
  const all: Message[][] = [];
  for (let i = 0; i < turns; i++) all.push(turn(g, i));
  const file = join(dir, "session.jsonl");
  const started = performance.now();
  let count = 0;
  for (const t of all) {
    for (const m of t) {
      appendFileSync(file, `${JSON.stringify(m)}\n`);
      const fd = openSync(file, "r+");
      fsyncSync(fd);
      closeSync(fd);
      count++;
    }
  }
  const rate = count / ((performance.now() - started) / 1000);
  rmSync(dir, { recursive: true, force: true });
  return rate;
}

export const QUERIES: ReadonlyArray<{ kind: string; query: string; grep: string }> = [
  { kind: "common word", query: "error", grep: "error" },
  { kind: "rare word", query: "quetzalcoatl", grep: "quetzalcoatl" },
  { kind: "two-word phrase", query: '"connection pool"', grep: "connection pool" },
  { kind: "substring", query: "ockerfi", grep: "ockerfi" },
  { kind: "CJK substring", query: "天气预报", grep: "天气预报" },
];

interface Latency {
  p50: number;
  p95: number;
  samples: number[];
}

function latency(runs: number, fn: () => void): Latency {
  fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    samples.push(performance.now() - t);
  }
  return { p50: median(samples), p95: percentile(samples, 95), samples };
}

export function searchLatencies(store: SyncSessionStore, runs: number): Map<string, Latency> {
  const out = new Map<string, Latency>();
  for (const q of QUERIES)
    out.set(
      q.kind,
      latency(runs, () => store.search({ query: q.query })),
    );
  return out;
}

function grepLatencies(dir: string, runs: number): Map<string, Latency> {
  const out = new Map<string, Latency>();
  for (const q of QUERIES) {
    out.set(
      q.kind,
      latency(runs, () => {
        const r = spawnSync("grep", ["-r", "-F", "-i", "-l", "-e", q.grep, dir], {
          stdio: ["ignore", "ignore", "ignore"],
        });
        if (r.status !== 0 && r.status !== 1) throw new Error(`grep exited ${r.status}`);
      }),
    );
  }
  return out;
}

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(3));

export interface SessionStoreBenchOptions {
  /** Sizes to measure search at (default 100k and 1M). */
  sizes?: number[];
  searchRuns?: number;
  grepRuns?: number;
}

export async function sessionStoreBench(options: SessionStoreBenchOptions = {}): Promise<BenchRow[]> {
  const sizes = options.sizes ?? [100_000, 1_000_000];
  const searchRuns = options.searchRuns ?? 40;
  const grepRuns = options.grepRuns ?? 5;
  const rows: BenchRow[] = [];

  process.stderr.write("session store: append rate…\n");
  const rates = { single: [] as number[], batched: [] as number[], jsonl: [] as number[] };
  for (let i = 0; i < 3; i++) {
    rates.single.push(appendRate(false, 150));
    rates.batched.push(appendRate(true, 150));
    rates.jsonl.push(jsonlAppendRate(150));
  }
  const jsonl = median(rates.jsonl);
  rows.push(
    {
      name: "store append, `appendMessage` per message as a turn writes them (durability full)",
      value: median(rates.single),
      unit: "msg/s",
      baseline: "JSONL line + fsync per message",
      baselineValue: jsonl,
      baselineUnit: "msg/s",
      target: "(for reference)",
      met: true,
    },
    {
      name: "store append, `appendMessages` once per turn (durability full)",
      value: median(rates.batched),
      unit: "msg/s",
      baseline: "JSONL line + fsync per message",
      baselineValue: jsonl,
      baselineUnit: "msg/s",
      target: "(for reference)",
      met: true,
    },
  );

  for (const size of sizes) {
    const label = size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1000}k`;
    const c = corpus(size);
    process.stderr.write(`session store: search at ${label} messages…\n`);
    const store = openSqliteStore(c.db, { readonly: true });
    let ours: Map<string, Latency>;
    try {
      ours = searchLatencies(store, searchRuns);
    } finally {
      store.close();
    }
    const grep = grepLatencies(c.jsonl, grepRuns);
    const all = [...ours.values()].flatMap((l) => l.samples);
    const allGrep = [...grep.values()].flatMap((l) => l.samples);
    const p50 = median(all);
    const p95 = percentile(all, 95);
    rows.push(
      {
        name: `session search p50, ${label} messages (mixed set: ${QUERIES.map((q) => q.kind).join(", ")})`,
        value: p50,
        unit: "ms",
        baseline: "`grep -r -F -i -l` p50",
        baselineValue: median(allGrep),
        target: size >= 1_000_000 ? "< 20 ms" : "(for reference)",
        met: size >= 1_000_000 ? p50 < 20 : true,
      },
      {
        name: `session search p95, ${label} messages (mixed set)`,
        value: p95,
        unit: "ms",
        baseline: "`grep -r -F -i -l` p95",
        baselineValue: percentile(allGrep, 95),
        target: "(for reference)",
        met: true,
      },
    );
    if (size === sizes[sizes.length - 1]) {
      for (const q of QUERIES) {
        const l = ours.get(q.kind)!;
        const gl = grep.get(q.kind)!;
        rows.push({
          name: `search ${label}: ${q.kind} \`${q.query}\` p50 (p95 ${fmt(l.p95)} ms; grep p95 ${fmt(gl.p95)} ms)`,
          value: l.p50,
          unit: "ms",
          baseline: "grep p50",
          baselineValue: gl.p50,
          target: "(for reference)",
          met: true,
        });
      }
    }
  }
  return rows;
}
