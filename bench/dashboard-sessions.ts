/**
 * Dashboard figures for `npm run bench` (issue 26): the Sessions page's first paint and the
 * session search's latency with 100k sessions in state.db, each next to the same measurement on a
 * 1k-session store in the same run.
 *
 * The stores are written through the real SessionStore (`createSession` + `appendMessages`, one
 * transaction each, durability normal) from a deterministic generator (bench/session-store.ts's
 * text: a ~4 KB system prompt and 2 or 4 messages a session, a tool call in some, sources cli/telegram/discord/subagent,
 * four models, one in ten titled), and cached in bench/.tmp/ under a key made of the generator
 * version and a digest of the schema, so reruns skip the build. Each measurement copies the cached
 * file into a fresh home, starts the built `hermes dashboard` on it and drives it with Chromium
 * (playwright-core, /usr/bin/chromium). Progress goes to stderr.
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import type { Browser } from "playwright-core";
import type { Message } from "../src/ai/types.js";
import { sessionRoutes } from "../src/dashboard/api-sessions.js";
import { FTS, INDEXES, SCHEMA_VERSION, TABLES } from "../src/state/schema.js";
import { openSessionStore } from "../src/state/sqlite-store.js";
import { http, type RunningDashboard, startDashboardProcess } from "../test/support/dashboard.js";
import { hasChromium, launchBrowser } from "../test/support/dashboard-browser.js";
import { type BenchRow, TextGen, turn } from "./session-store.js";

/** Bump when the generator below changes what it writes. */
export const DASHBOARD_GENERATOR_VERSION = 2;
const TMP = resolve(import.meta.dirname, ".tmp");

const SOURCES = ["cli", "cli", "cli", "cli", "cli", "cli", "telegram", "telegram", "discord", "subagent"];
const MODELS = ["anthropic/claude-sonnet-4", "openai/gpt-5", "nous/hermes-4-405b", "google/gemini-2.5-pro"];

/**
 * A system prompt of about 4 KB, as real sessions store one each (identity, tool guidance, skills
 * index, context files): the same body with a per-session line, so rows weigh what real rows do.
 */
function systemPrompt(g: TextGen, i: number): string {
  PROMPT_BODY ??= new TextGen(4).paragraph(560, 600);
  return `You are Hermes, session ${i}, working in /home/user/${g.word()}.\n\n${PROMPT_BODY}`;
}
let PROMPT_BODY: string | undefined;

function schemaKey(): string {
  return createHash("sha256")
    .update(JSON.stringify([SCHEMA_VERSION, TABLES, INDEXES, FTS]))
    .digest("hex")
    .slice(0, 12);
}

/** Builds (or reuses) a state.db holding `sessions` sessions; returns its path. */
export async function sessionsStore(sessions: number): Promise<{ db: string; messages: number }> {
  mkdirSync(TMP, { recursive: true });
  const base = join(TMP, `dashboard-sessions-g${DASHBOARD_GENERATOR_VERSION}-${schemaKey()}-${sessions}`);
  const db = `${base}.db`;
  const done = `${base}.done`;
  if (existsSync(done) && existsSync(db)) {
    const { readFileSync } = await import("node:fs");
    return { db, messages: Number(readFileSync(done, "utf8").trim()) || 0 };
  }
  const tmp = `${base}.tmp.db`;
  for (const p of [tmp, `${tmp}-wal`, `${tmp}-shm`, db, done]) rmSync(p, { force: true });
  let clock = 1_760_000_000;
  const store = openSessionStore(tmp, { durability: "normal", now: () => clock });
  const g = new TextGen(26);
  const ids: string[] = [];
  let messages = 0;
  const started = performance.now();
  try {
    for (let i = 0; i < sessions; i++) {
      clock += g.int(30, 900);
      const source = g.pick(SOURCES);
      const parent = source === "subagent" && ids.length > 0 ? ids[ids.length - 1] : undefined;
      const session = await store.createSession({
        source,
        model: g.pick(MODELS),
        systemPrompt: systemPrompt(g, i),
        startedAt: clock,
        ...(parent ? { parentSessionId: parent } : {}),
        ...(i % 10 === 0 ? { title: `Session ${i}: ${g.word()} ${g.word()}` } : {}),
      });
      ids.push(session.id);
      const batch: Message[] = turn(g, i);
      await store.appendMessages(session.id, batch);
      messages += batch.length;
      clock += batch.length * 15;
      if (i % 5000 === 4999) {
        const rate = (i + 1) / ((performance.now() - started) / 1000);
        process.stderr.write(
          `\r  dashboard store: ${(i + 1).toLocaleString()} sessions (${rate.toFixed(0)}/s)   `,
        );
      }
    }
    process.stderr.write(
      `\r  dashboard store: ${sessions.toLocaleString()} sessions, ${messages.toLocaleString()} messages\n`,
    );
  } finally {
    store.close();
  }
  renameSync(tmp, db);
  writeFileSync(done, `${messages}\n`);
  return { db, messages };
}

// ── Measurements ────────────────────────────────────────────────────────────────────────────────

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[at] ?? Number.NaN;
}
const median = (values: number[]) => percentile(values, 50);

/** Records when the first session row enters the DOM and, through Element Timing, when it is painted. */
const PAINT_PROBE = `
window.__bench = { row: null, painted: null };
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if (e.identifier === "first-session" && window.__bench.painted === null) window.__bench.painted = e.renderTime || e.loadTime;
  }).observe({ type: "element", buffered: true });
} catch {}
new MutationObserver((_, observer) => {
  if (document.querySelector("tr.session-row")) {
    window.__bench.row = performance.now();
    observer.disconnect();
  }
}).observe(document, { childList: true, subtree: true });
`;

interface PaintSample {
  /** Navigation start to the first row painted (Element Timing), else to the frame after it was added. */
  firstRow: number;
  fcp: number;
}

async function firstPaint(browser: Browser, dash: RunningDashboard): Promise<PaintSample> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  try {
    const page = await context.newPage();
    await page.addInitScript(PAINT_PROBE);
    const url = new URL(dash.url);
    url.hash = "#/sessions";
    await page.goto(url.href, { waitUntil: "domcontentloaded" });
    await page.waitForSelector("tr.session-row", { timeout: 30_000 });
    const result = (await page.evaluate(`new Promise((resolve) => {
      const started = performance.now();
      const check = () => {
        const b = window.__bench;
        if (b.painted !== null || performance.now() - started > 2000) {
          const fcp = performance.getEntriesByName("first-contentful-paint")[0];
          resolve({ painted: b.painted, row: b.row, fcp: fcp ? fcp.startTime : null });
        } else requestAnimationFrame(check);
      };
      requestAnimationFrame(check);
    })`)) as { painted: number | null; row: number | null; fcp: number | null };
    const firstRow = result.painted ?? result.row;
    if (firstRow === null) throw new Error("the first session row was never seen");
    return { firstRow, fcp: result.fcp ?? Number.NaN };
  } finally {
    await context.close();
  }
}

/** Queries for the HTTP search latency (words from the generator's vocabulary). */
const SEARCHES: ReadonlyArray<{ kind: string; query: string }> = [
  { kind: "common word", query: "q=error" },
  { kind: "rare word", query: "q=quetzalcoatl" },
  { kind: "phrase", query: `q=${encodeURIComponent('"connection pool"')}` },
  { kind: "prefix", query: `q=${encodeURIComponent("kubern*")}` },
  { kind: "substring", query: "q=ockerfi" },
  { kind: "CJK", query: `q=${encodeURIComponent("天气预报")}` },
  { kind: "word + source", query: "q=deploy&source=telegram" },
  { kind: "word + model", query: `q=config&model=${encodeURIComponent("openai/gpt-5")}` },
];

async function searchLatency(dash: RunningDashboard, runs: number): Promise<number[]> {
  const headers = { authorization: `Bearer ${dash.token ?? ""}` };
  const samples: number[] = [];
  for (const s of SEARCHES) {
    const path = `/api/sessions?${s.query}&limit=25`;
    const warm = await http(dash.port, "GET", path, { headers });
    if (warm.status !== 200) throw new Error(`search ${path} answered ${warm.status}: ${warm.text}`);
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      const answer = await http(dash.port, "GET", path, { headers });
      samples.push(performance.now() - t);
      if (answer.status !== 200) throw new Error(`search ${path} answered ${answer.status}`);
    }
  }
  return samples;
}

async function apiLatency(dash: RunningDashboard, path: string, runs: number): Promise<number> {
  const headers = { authorization: `Bearer ${dash.token ?? ""}` };
  await http(dash.port, "GET", path, { headers });
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const answer = await http(dash.port, "GET", path, { headers });
    samples.push(performance.now() - t);
    if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}`);
  }
  return median(samples);
}

/**
 * The facets route's handler in this process over a read-only open of the same file, its 30 s
 * cache expired before every call (the clock it is given jumps 31 s a call).
 */
async function facetsUncached(db: string, runs: number): Promise<number> {
  const store = openSessionStore(db, { readonly: true });
  try {
    let clock = 0;
    const route = sessionRoutes(store, () => (clock += 31_000)).find(
      (r) => r.path === "/api/sessions/facets",
    );
    if (!route) throw new Error("no facets route");
    const call = () => route.handler({ method: "GET", params: {}, query: new URLSearchParams(), body: {} });
    await call();
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await call();
      samples.push(performance.now() - t);
    }
    return median(samples);
  } finally {
    store.close();
  }
}

/** From setting `#/sessions?q=…` (what the search box's submit does) to the hits drawn, in the page. */
async function searchRender(browser: Browser, dash: RunningDashboard, rounds: number): Promise<number[]> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const samples: number[] = [];
  try {
    const page = await context.newPage();
    const url = new URL(dash.url);
    url.hash = "#/sessions";
    await page.goto(url.href, { waitUntil: "domcontentloaded" });
    await page.waitForSelector("tr.session-row", { timeout: 30_000 });
    const words = ["error", "kubernetes", "deploy", "config", "latency", "docker", "token", "cache"];
    for (let r = 0; r < rounds; r++) {
      for (const word of words) {
        await page.evaluate(`location.hash = "#/sessions"`);
        await page.waitForSelector("tr.session-row", { timeout: 30_000 });
        const ms = (await page.evaluate(`new Promise((resolve) => {
          const t0 = performance.now();
          location.hash = "#/sessions?q=" + encodeURIComponent(${JSON.stringify(word)});
          const check = () => {
            if (document.querySelector(".hit, .empty")) requestAnimationFrame(() => resolve(performance.now() - t0));
            else requestAnimationFrame(check);
          };
          requestAnimationFrame(check);
        })`)) as number;
        samples.push(ms);
      }
    }
  } finally {
    await context.close();
  }
  return samples;
}

interface Figures {
  sessions: number;
  messages: number;
  firstRow: number;
  fcp: number;
  searchP50: number;
  searchP95: number;
  render: number;
  facets: number;
  listPage: number;
  deepPage: number;
  deepCursor: number;
}

async function measure(
  browser: Browser,
  sessions: number,
  paintRuns: number,
  searchRuns: number,
): Promise<Figures> {
  const store = await sessionsStore(sessions);
  const root = mkdtempSync(join(tmpdir(), "hermes-bench-dash-"));
  const home = join(root, "home");
  mkdirSync(home);
  copyFileSync(store.db, join(home, "state.db"));
  writeFileSync(
    join(home, "config.yaml"),
    "model:\n  provider: custom\n  base_url: http://127.0.0.1:9/v1\n  default: bench-model\n",
  );
  const dash = await startDashboardProcess({ home, cwd: root }, [], 60_000);
  try {
    process.stderr.write(`dashboard: measuring at ${sessions.toLocaleString()} sessions…\n`);
    await firstPaint(browser, dash); // warm-up: the file cache, the server's statement cache
    const paints: PaintSample[] = [];
    for (let i = 0; i < paintRuns; i++) paints.push(await firstPaint(browser, dash));
    const search = await searchLatency(dash, searchRuns);
    const render = await searchRender(browser, dash, 2);
    const facets = await facetsUncached(store.db, 7);
    const listPage = await apiLatency(dash, "/api/sessions?limit=25", 15);
    const deepPage = await apiLatency(dash, `/api/sessions?limit=25&offset=${Math.max(0, sessions - 50)}`, 5);
    const anchor = await http(
      dash.port,
      "GET",
      `/api/sessions?limit=1&offset=${Math.max(0, sessions - 51)}`,
      {
        headers: { authorization: `Bearer ${dash.token ?? ""}` },
      },
    );
    const cursor = (anchor.json()["sessions"] as Array<{ startedAt: number }>)[0]?.startedAt ?? 0;
    const deepCursor = await apiLatency(dash, `/api/sessions?limit=25&before=${cursor}&skip=1`, 15);
    return {
      sessions,
      messages: store.messages,
      firstRow: median(paints.map((p) => p.firstRow)),
      fcp: median(paints.map((p) => p.fcp)),
      searchP50: median(search),
      searchP95: percentile(search, 95),
      render: median(render),
      facets,
      listPage,
      deepPage,
      deepCursor,
    };
  } finally {
    await dash.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

export interface DashboardBenchOptions {
  /** Sessions in the big store (default 100 000, or BENCH_DASHBOARD_SESSIONS). */
  sessions?: number;
  baselineSessions?: number;
  paintRuns?: number;
  searchRuns?: number;
}

export async function dashboardSessionsBench(options: DashboardBenchOptions = {}): Promise<BenchRow[]> {
  if (!hasChromium) {
    process.stderr.write("dashboard: no Chromium at /usr/bin/chromium, rows skipped\n");
    return [];
  }
  const bigN = options.sessions ?? Number(process.env.BENCH_DASHBOARD_SESSIONS ?? 100_000);
  const smallN = options.baselineSessions ?? 1000;
  const paintRuns = options.paintRuns ?? 9;
  const searchRuns = options.searchRuns ?? 12;
  const browser = await launchBrowser();
  let big: Figures;
  let small: Figures;
  try {
    small = await measure(browser, smallN, paintRuns, searchRuns);
    big = await measure(browser, bigN, paintRuns, searchRuns);
  } finally {
    await browser.close();
  }
  const k = (n: number) => (n >= 1000 ? `${Math.round(n / 1000)}k` : String(n));
  const at = `${k(big.sessions)} sessions (${k(big.messages)} messages)`;
  const base = `the same at ${k(small.sessions)} sessions`;
  return [
    {
      name: `dashboard Sessions page: navigation to the first session row painted (Element Timing, fresh browser context), ${at}`,
      value: big.firstRow,
      unit: "ms",
      baseline: base,
      baselineValue: small.firstRow,
      target: "≤ 1000 ms and ≤ 1.5× baseline",
      met: big.firstRow <= 1000 && big.firstRow <= small.firstRow * 1.5,
    },
    {
      name: `dashboard Sessions page: first contentful paint (the shell), ${at}`,
      value: big.fcp,
      unit: "ms",
      baseline: base,
      baselineValue: small.fcp,
      target: "(for reference)",
      met: true,
    },
    {
      name: `dashboard search API p50, end to end over HTTP (\`GET /api/sessions?q=\`, 8 queries: common, rare, phrase, prefix, substring, CJK, with source, with model), ${at}`,
      value: big.searchP50,
      unit: "ms",
      baseline: base,
      baselineValue: small.searchP50,
      target: "< 50 ms",
      met: big.searchP50 < 50,
    },
    {
      name: `dashboard search API p95 (same queries), ${at}`,
      value: big.searchP95,
      unit: "ms",
      baseline: base,
      baselineValue: small.searchP95,
      target: "< 200 ms",
      met: big.searchP95 < 200,
    },
    {
      name: `dashboard search in the page: from the search submitted (hash set) to the hits drawn, median of 16, ${at}`,
      value: big.render,
      unit: "ms",
      baseline: base,
      baselineValue: small.render,
      target: "< 300 ms",
      met: big.render < 300,
    },
    {
      name: `dashboard \`GET /api/sessions?limit=25\` (the list's first page), ${at}`,
      value: big.listPage,
      unit: "ms",
      baseline: base,
      baselineValue: small.listPage,
      target: "(for reference)",
      met: true,
    },
    {
      name: `dashboard \`GET /api/sessions?offset=<last page>\` (paging to the oldest), ${at}`,
      value: big.deepPage,
      unit: "ms",
      baseline: base,
      baselineValue: small.deepPage,
      target: "(for reference)",
      met: true,
    },
    {
      name: `dashboard \`GET /api/sessions?before=<cursor>\` (the same oldest page through the cursor the page's Older button uses), ${at}`,
      value: big.deepCursor,
      unit: "ms",
      baseline: base,
      baselineValue: small.deepCursor,
      target: "≤ 1.5× baseline",
      met: big.deepCursor <= small.deepCursor * 1.5,
    },
    {
      name: `dashboard \`GET /api/sessions/facets\` (totals, sources, models), its cache expired (the page asks once a load; answers are reused 30 s), ${at}`,
      value: big.facets,
      unit: "ms",
      baseline: base,
      baselineValue: small.facets,
      target: "(for reference)",
      met: true,
    },
  ];
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  // Alone (`npx tsx bench/dashboard-sessions.ts`): the rows as bench/run.ts writes them into RESULTS.md.
  const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(3));
  for (const r of await dashboardSessionsBench())
    process.stdout.write(
      `| ${r.name} | ${fmt(r.value)} ${r.unit} | ${r.baseline} ${fmt(r.baselineValue)} ${r.baselineUnit ?? "ms"} | ${(r.value / r.baselineValue).toFixed(2)}× | ${r.target} | ${r.target.startsWith("(") ? "–" : r.met ? "yes" : "no"} |\n`,
    );
}
