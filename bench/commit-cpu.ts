/**
 * `npx tsx bench/commit-cpu.ts`: the SQLite write of one model call of the CLI loop, alone (a
 * profiling aid, not part of `npm run bench`; Linux only). A recording store (as the CLI opens
 * state.db: WAL, `synchronous=NORMAL`, `DUR=full` for FULL) gets N+100 writes (N=250 by default) of what a call of a
 * tool that changes nothing outside the session stores: the assistant message with its tool call
 * and the tool's result, with the call's usage, in one commit. Prints the main thread's CPU per
 * commit after the first 100 (`/proc/thread-self/schedstat`: time waiting for a CPU not counted),
 * and how many WAL frames (pages written) a commit takes, by the table or index that owns them.
 * `TRACE=1` adds each statement's CPU per commit (process CPU around each call, so a little more
 * than without the trace). `REPS` (default 5) repeats the run; medians are what to compare between builds.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import type { Message } from "../src/ai/types.js";
import { openRecordingStore } from "../src/state/recording-store.js";

const Database = createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
// Few enough commits that the WAL stays under the size that starts the checkpointer thread.
const n = Number(process.env.N ?? 250);
const WARM = 100;
const trace = process.env.TRACE === "1";
const perStatement = new Map<string, { calls: number; us: number }>();

if (trace) {
  const proto = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1")) as Record<
    string,
    (...args: unknown[]) => unknown
  >;
  for (const method of ["run", "get", "all"]) {
    const original = proto[method]!;
    proto[method] = function (this: { source: string }, ...args: unknown[]) {
      const before = process.cpuUsage();
      try {
        return original.apply(this, args);
      } finally {
        const spent = process.cpuUsage(before);
        const key = `${method} ${this.source.replace(/\s+/g, " ").slice(0, 80)}`;
        const entry = perStatement.get(key) ?? { calls: 0, us: 0 };
        entry.calls++;
        entry.us += spent.user + spent.system;
        perStatement.set(key, entry);
      }
    };
  }
}

const mainCpuUs = () => Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0]) / 1000;

function step(i: number): Message[] {
  const todos = [{ id: "t1", content: `step ${i}`, status: "in_progress" }];
  const id = `call_${i}`;
  return [
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id, type: "function", function: { name: "todo", arguments: JSON.stringify({ todos }) } },
      ],
      finish_reason: "tool_calls",
    },
    {
      role: "tool",
      tool_call_id: id,
      name: "todo",
      content: JSON.stringify({ todos, summary: { total: 1, pending: 0, in_progress: 1, completed: 0 } }),
    },
  ];
}

/** Pages of the last `commits` commits in the WAL, by owner (from `dbstat`). */
function framesByOwner(home: string, commits: number): { perCommit: number; owners: Map<string, number> } {
  const wal = readFileSync(join(home, "state.db-wal"));
  const pageSize = wal.readUInt32BE(8);
  const ends: number[] = [];
  const pages: number[] = [];
  // Frames of the WAL's current generation carry its salt; any after them are stale.
  const salt = wal.subarray(16, 24);
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (!wal.subarray(at + 8, at + 16).equals(salt)) break;
    pages.push(wal.readUInt32BE(at));
    if (wal.readUInt32BE(at + 4) !== 0) ends.push(pages.length);
  }
  const from = ends[Math.max(0, ends.length - 1 - commits)] ?? 0;
  const last = pages.slice(from, ends[ends.length - 1]);
  const db = new Database(join(home, "state.db"), { readonly: true });
  const owner = new Map<number, string>();
  for (const r of db.prepare("SELECT name, pageno FROM dbstat").all() as Array<{
    name: string;
    pageno: number;
  }>)
    owner.set(r.pageno, r.name);
  db.close();
  const owners = new Map<string, number>();
  for (const p of last) {
    const name = p === 1 ? "page 1 (file header)" : (owner.get(p) ?? "free list");
    owners.set(name, (owners.get(name) ?? 0) + 1);
  }
  return { perCommit: last.length / Math.min(commits, ends.length - 1), owners };
}

const cpu: number[] = [];
for (let rep = 0; rep < Number(process.env.REPS ?? 5); rep++) {
  const home = mkdtempSync(join(tmpdir(), "hermes-commit-cpu-"));
  const store = openRecordingStore(home, {
    notify: () => undefined,
    open: { durability: process.env.DUR === "full" ? "full" : "normal" },
  });
  const sessionId = "bench-session";
  await store.startSession(
    { id: sessionId, source: "cli", model: "fake-model" },
    { role: "user", content: "go" },
  );
  const usage = { inputTokens: 1200, outputTokens: 40, costStatus: "unknown" as const };
  for (let i = 0; i < WARM; i++) await store.appendMessages(sessionId, step(i), { usage });
  perStatement.clear();
  const started = mainCpuUs();
  for (let i = WARM; i < WARM + n; i++) await store.appendMessages(sessionId, step(i), { usage });
  cpu.push((mainCpuUs() - started) / n);
  const statements = [...perStatement].sort((a, b) => b[1].us - a[1].us);
  // The WAL holds the last commits until a checkpoint: a sample of the latest ones.
  const frames = framesByOwner(home, 50);
  process.stdout.write(
    `main thread CPU per commit ${cpu[cpu.length - 1]!.toFixed(1)} µs; ${frames.perCommit.toFixed(1)} WAL frames per commit: ` +
      `${[...frames.owners].map(([name, count]) => `${name} ${(count / 50).toFixed(1)}`).join(", ")}\n`,
  );
  for (const [sql, st] of statements)
    process.stdout.write(
      `  ${(st.us / n).toFixed(1).padStart(6)} µs  ${(st.calls / n).toFixed(1)}×  ${sql}\n`,
    );
  await store.close();
  rmSync(home, { recursive: true, force: true });
}
cpu.sort((a, b) => a - b);
if (cpu.length > 1)
  process.stdout.write(`median ${cpu[Math.floor(cpu.length / 2)]!.toFixed(1)} µs per commit\n`);
