/**
 * Session search in PostgreSQL next to SQLite for `npm run bench` (issue 27): p50/p95 over the
 * same 1M-message corpus (bench/session-store.ts's, cached), the same queries, in the same run.
 *
 * The corpus's sessions and messages are copied into a PostgreSQL server started for the bench
 * (test/support/postgres.ts: Debian's postgresql, a temp cluster, fsync off) with multi-row
 * `INSERT … SELECT FROM unnest(…)` in batches, ids kept, before the search migration runs, so
 * the tsvector column and the GIN indexes are built once over the loaded rows, as `hermes state
 * migrate` then `migrate` would. The built cluster is cached in bench/.tmp/ (keyed by the corpus,
 * the migrations and a generator version) and later runs start PostgreSQL on the cached data
 * directly. Both sides answer through their store code: `store.search` on
 * the SQLite file, `pgSearch` over a pool. Progress goes to stderr. Skipped (no rows) when
 * PostgreSQL is not installed.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import type BetterSqlite3 from "better-sqlite3";
import { openPgDatabase, type PgDatabase } from "../src/state/postgres/database.js";
import { migrate } from "../src/state/postgres/migrate.js";
import { MIGRATIONS } from "../src/state/postgres/migrations/index.js";
import { SEARCH_MIGRATIONS } from "../src/state/postgres/migrations/search.js";
import { SESSION_MIGRATIONS } from "../src/state/postgres/migrations/sessions.js";
import { pgSearch } from "../src/state/postgres/search.js";
import { openSqliteStore } from "../src/state/sqlite-store.js";
import { PG_BIN, postgresSkipReason, startPostgres } from "../test/support/postgres.js";
import { type BenchRow, corpus, QUERIES } from "./session-store.js";

const BATCH = 5000;
/** Bump when what the cached cluster holds changes. */
const PG_BENCH_VERSION = 1;
const TMP = resolve(import.meta.dirname, ".tmp");
const asRoot = process.getuid?.() === 0;

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address ? address.port : 0));
    });
  });
}

function asOwner(bin: string, args: string[]): [string, string[]] {
  return asRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
}

/** PostgreSQL on an existing (cached) data directory: its URL prefix and a stop function. */
async function startCluster(
  data: string,
): Promise<{ url: (db: string) => string; stop: () => Promise<void> }> {
  const sock = mkdtempSync(join(tmpdir(), "hermes-pg-bench-"));
  if (asRoot) {
    const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
    chownSync(sock, id("-u"), id("-g"));
  }
  chmodSync(sock, 0o755);
  const port = await freePort();
  const [cmd, args] = asOwner(join(PG_BIN!, "postgres"), [
    "-D",
    data,
    "-p",
    String(port),
    "-k",
    sock,
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "fsync=off",
    "-c",
    "full_page_writes=off",
  ]);
  const child: ChildProcess = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  child.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      execFileSync(join(PG_BIN!, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres"], {
        stdio: "ignore",
      });
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`PostgreSQL did not start: ${log.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    url: (db) => `postgres://postgres@127.0.0.1:${port}/${db}`,
    async stop() {
      const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
      if (pid) process.kill(pid, "SIGINT");
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once("exit", r)));
      rmSync(sock, { recursive: true, force: true });
    },
  };
}

/** Loads the corpus into a fresh cluster and indexes it; leaves the cluster's data in `cache`. */
async function buildCluster(sqliteFile: string, cache: string): Promise<void> {
  const pg = await startPostgres();
  try {
    const url = await pg.createDatabase("hermes_bench_search");
    let db = await openPgDatabase(url, { max: 2 });
    try {
      await db.query("ALTER DATABASE hermes_bench_search SET maintenance_work_mem = '512MB'");
      await migrate(db, SESSION_MIGRATIONS);
      const started = performance.now();
      const Sqlite = createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
      const file = new Sqlite(sqliteFile, { readonly: true });
      try {
        await copyTable(
          file,
          db,
          "sessions",
          "CASE WHEN parent_session_id IS NULL THEN 0 ELSE 1 END, started_at, rowid",
        );
        await copyTable(file, db, "messages", "id");
      } finally {
        file.close();
      }
      const loaded = performance.now();
      process.stderr.write("  postgres: search column and indexes (migration 200)…\n");
      await db.close();
      db = await openPgDatabase(url, { max: 2 });
      await migrate(db, MIGRATIONS);
      await db.query("VACUUM ANALYZE messages");
      await db.query("VACUUM ANALYZE sessions");
      await db.query("CHECKPOINT");
      process.stderr.write(
        `  postgres: loaded in ${((loaded - started) / 1000).toFixed(0)} s, indexed in ${((performance.now() - loaded) / 1000).toFixed(0)} s\n`,
      );
    } finally {
      await db.close();
    }
    await pg.kill();
    rmSync(cache, { recursive: true, force: true });
    mkdirSync(cache, { recursive: true });
    execFileSync("cp", ["-a", join(pg.dir, "data"), join(cache, "data")]);
    rmSync(join(cache, "data", "postmaster.pid"), { force: true });
    writeFileSync(join(cache, "done"), new Date().toISOString());
  } finally {
    await pg.dispose();
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function latency(runs: number, fn: () => unknown): Promise<number[]> {
  await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  return samples;
}

const ARRAY_TYPE: Record<string, string> = {
  text: "text[]",
  "double precision": "float8[]",
  integer: "int4[]",
  bigint: "int8[]",
};

async function copyTable(
  file: BetterSqlite3.Database,
  db: PgDatabase,
  table: string,
  order: string,
): Promise<void> {
  const pgCols = await db.query<{ name: string; type: string }>(
    `SELECT column_name AS name, data_type AS type FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER'`,
    [table],
  );
  const types = new Map(pgCols.map((c) => [c.name, c.type]));
  const columns = (file.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>)
    .map((c) => c.name)
    .filter((c) => ARRAY_TYPE[types.get(c) ?? ""]);
  const sql = `INSERT INTO ${table} (${columns.join(", ")}) SELECT * FROM unnest(${columns
    .map((c, i) => `$${i + 1}::${ARRAY_TYPE[types.get(c)!]}`)
    .join(", ")})`;
  let batch: unknown[][] = columns.map(() => []);
  let n = 0;
  const flush = async () => {
    if (batch[0]!.length === 0) return;
    await db.query(sql, batch);
    batch = columns.map(() => []);
  };
  for (const row of file
    .prepare(`SELECT ${columns.join(", ")} FROM ${table} ORDER BY ${order}`)
    .raw()
    .iterate()) {
    (row as unknown[]).forEach((v, i) => {
      // PostgreSQL text cannot hold NUL: content parts take the \u0001 prefix the codec reads.
      batch[i]!.push(
        typeof v === "string" && v.includes("\u0000")
          ? v.replace(/^\u0000json:/, "\u0001json:").replaceAll("\u0000", "\ufffd")
          : v,
      );
    });
    if (++n % BATCH === 0) {
      await flush();
      if (n % 100_000 === 0) process.stderr.write(`\r  postgres: ${table} ${n.toLocaleString()} rows   `);
    }
  }
  await flush();
  process.stderr.write(`\r  postgres: ${table} ${n.toLocaleString()} rows\n`);
}

export interface PgSearchBenchOptions {
  /** Messages in the corpus (default 1M). */
  size?: number;
  runs?: number;
}

export async function pgSearchBench(options: PgSearchBenchOptions = {}): Promise<BenchRow[]> {
  if (postgresSkipReason) {
    process.stderr.write(`pg search: skipped (${postgresSkipReason})\n`);
    return [];
  }
  const size = options.size ?? 1_000_000;
  const runs = options.runs ?? 40;
  const label = size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1000}k`;
  const c = corpus(size);
  const key = createHash("sha256")
    // Only the tables this bench reads: other areas' migrations do not invalidate the 15-minute build.
    .update(JSON.stringify([PG_BENCH_VERSION, [...SESSION_MIGRATIONS, ...SEARCH_MIGRATIONS]]))
    .digest("hex")
    .slice(0, 12);
  const cache = join(TMP, `pg-search-${key}-${size}`);
  if (!existsSync(join(cache, "done"))) {
    process.stderr.write(
      `pg search: building the ${label}-message PostgreSQL copy (cached for later runs)…\n`,
    );
    await buildCluster(c.db, cache);
  }
  const cluster = await startCluster(join(cache, "data"));
  let db: PgDatabase | undefined;
  try {
    db = await openPgDatabase(cluster.url("hermes_bench_search"), { max: 2 });
    process.stderr.write(`pg search: ${label} messages, SQLite and PostgreSQL…\n`);
    const store = openSqliteStore(c.db, { readonly: true });
    const lite = new Map<string, number[]>();
    const post = new Map<string, number[]>();
    try {
      for (const q of QUERIES) {
        lite.set(q.kind, await latency(runs, () => store.search({ query: q.query })));
        const pgdb = db;
        post.set(q.kind, await latency(runs, () => pgSearch(pgdb, { query: q.query })));
      }
    } finally {
      store.close();
    }
    const all = (m: Map<string, number[]>) => [...m.values()].flat();
    const rows: BenchRow[] = [];
    for (const p of [50, 95]) {
      const value = percentile(all(post), p);
      rows.push({
        name: `session search p${p}, ${label} messages, PostgreSQL (mixed set: ${QUERIES.map((q) => q.kind).join(", ")})`,
        value,
        unit: "ms",
        baseline: `SQLite p${p}, same corpus and queries`,
        baselineValue: percentile(all(lite), p),
        target: p === 50 ? "< 20 ms" : "(for reference)",
        met: p === 50 ? value < 20 : true,
      });
    }
    for (const q of QUERIES) {
      const s = post.get(q.kind)!;
      const l = lite.get(q.kind)!;
      rows.push({
        name: `search ${label} PostgreSQL: ${q.kind} \`${q.query}\` p50 (p95 ${percentile(s, 95).toFixed(1)} ms; SQLite p95 ${percentile(l, 95).toFixed(1)} ms)`,
        value: percentile(s, 50),
        unit: "ms",
        baseline: "SQLite p50",
        baselineValue: percentile(l, 50),
        target: "(for reference)",
        met: true,
      });
    }
    return rows;
  } finally {
    await db?.close();
    await cluster.stop();
  }
}
