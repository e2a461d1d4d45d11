/**
 * `npx tsx bench/loop-cpu.ts`: the loop row of bench/lean-start.ts as CPU time per model call,
 * for comparing builds on a loaded machine (Linux only; not part of `npm run bench`). Runs the
 * built `hermes -z` whose model calls `todo` N+1 times (default N=100) and reads the process's
 * CPU time from `/proc/<pid>/schedstat` (nanoseconds, per thread) when the fake server receives the
 * 10th model request and the last one: start-up and exit fall outside, so no second run is
 * subtracted, and time the process spends waiting for a CPU is not counted. Prints the main
 * thread's CPU per model call (what the loop's wall time is made of, next to the server's own
 * time), all threads' (GC helpers, compilers, the WAL checkpointer), and the wall time between the
 * two requests.
 *
 * `BINS=dirA,dirB` compares builds (each a folder with `bin/hermes` and `dist/`, e.g. copies made
 * before and after a change), alternating A B B A ... over `REPS` rounds (default 5), medians
 * printed with every value. `DUR=full` sets `state.durability: full`. `TOOL=process` calls
 * `process` (`list`, a tool that may act: two commits per model call) instead of `todo` (one).
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { reply, startFakeLlm } from "../test/support/fake-llm.js";

const bins = (process.env.BINS ?? resolve(import.meta.dirname, "..")).split(",");
const n = Number(process.env.N ?? 100);
const FIRST = 10;
const llm = await startFakeLlm();
const root = mkdtempSync(join(tmpdir(), "hermes-loop-cpu-"));
const home = join(root, "home");
mkdirSync(home);
writeFileSync(
  join(home, "config.yaml"),
  `model:\n  provider: custom\n  base_url: ${llm.url}\n  default: fake-model\nagent:\n  api_max_retries: 0\n  max_turns: ${n + 10}\n` +
    `state:\n  durability: ${process.env.DUR ?? "normal"}\nmemory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n`,
);
const env = { PATH: process.env.PATH, HOME: home, HERMES_HOME: home, NO_COLOR: "1" };

interface Sample {
  main: number;
  all: number;
  at: number;
}

let pid = 0;
let count = 0;
let first: Sample | undefined;
let result: { main: number; all: number; wall: number } | undefined;

/** CPU nanoseconds of the main thread and of all threads, now. */
function sample(): Sample {
  const ns = (path: string) => Number(readFileSync(path, "utf8").split(" ")[0]);
  let all = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      all += ns(`/proc/${pid}/task/${task}/schedstat`);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return { main: ns(`/proc/${pid}/schedstat`), all, at: performance.now() };
}

llm.respondWith(() => {
  count++;
  if (count === FIRST) first = sample();
  if (count === n + 2 && first) {
    const last = sample();
    const calls = n + 2 - FIRST;
    result = {
      main: (last.main - first.main) / 1e6 / calls,
      all: (last.all - first.all) / 1e6 / calls,
      wall: (last.at - first.at) / calls,
    };
  }
  return undefined; // the scripted queue answers
});

function run(dir: string, calls: number): Promise<void> {
  count = 0;
  first = undefined;
  result = undefined;
  for (let i = 0; i < calls; i++) {
    llm.enqueue(
      process.env.TOOL === "process"
        ? reply().toolCall("process", { action: "list" })
        : reply().toolCall("todo", { todos: [{ id: "t1", content: `step ${i}`, status: "in_progress" }] }),
    );
  }
  llm.enqueue(reply().text("done"));
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(dir, "bin/hermes"), "-z", "go"], {
      env,
      stdio: ["ignore", "ignore", "inherit"],
    });
    pid = child.pid ?? 0;
    child.on("close", (code) => (code === 0 ? done() : fail(new Error(`hermes exited ${code}`))));
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

const out = new Map<string, { main: number[]; all: number[]; wall: number[] }>();
try {
  for (const dir of bins) {
    out.set(dir, { main: [], all: [], wall: [] });
    await run(dir, 1); // warm-up: the code cache
  }
  for (let round = 0; round < Number(process.env.REPS ?? 5); round++) {
    for (const dir of round % 2 ? [...bins].reverse() : bins) {
      await run(dir, n + 1);
      if (!result) throw new Error(`${dir}: the run made fewer than ${n + 2} model requests`);
      const row = out.get(dir);
      row?.main.push(result.main);
      row?.all.push(result.all);
      row?.wall.push(result.wall);
    }
  }
  const list = (values: number[]) => values.map((v) => v.toFixed(2)).join(" ");
  for (const [dir, row] of out) {
    process.stdout.write(
      `${dir}\n  main thread CPU per model call ${median(row.main).toFixed(3)} ms [${list(row.main)}]\n` +
        `  all threads ${median(row.all).toFixed(3)} ms [${list(row.all)}]\n` +
        `  wall per model call, fake server included ${median(row.wall).toFixed(3)} ms [${list(row.wall)}]\n`,
    );
  }
} finally {
  await llm.close();
  rmSync(root, { recursive: true, force: true });
}
