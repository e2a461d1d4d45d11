/**
 * `npx tsx bench/prof-loop.ts`: the loop row of bench/lean-start.ts as a profiling aid (not part of
 * `npm run bench`). Runs the built `hermes -z` whose model calls `todo` N+1 times (default N=100),
 * after the same one-shot calling it once, and prints both runs' wall and CPU time (user + system,
 * read by a `--require`d probe) and the difference per model call. `PROF=DIR` adds
 * `--cpu-prof --cpu-prof-dir DIR` (0.2 ms sampling; `PROF_INTERVAL` in µs); `REPS` repeats the pair; `DUR=full` sets
 * `state.durability: full`.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { reply, startFakeLlm } from "../test/support/fake-llm.js";

const BIN = resolve(import.meta.dirname, "../bin/hermes");
const n = Number(process.env.N ?? 100);
const llm = await startFakeLlm();
const root = mkdtempSync(join(tmpdir(), "hermes-prof-"));
const home = join(root, "home");
mkdirSync(home);
writeFileSync(
  join(home, "config.yaml"),
  `model:\n  provider: custom\n  base_url: ${llm.url}\n  default: fake-model\nagent:\n  api_max_retries: 0\n  max_turns: ${n + 10}\n` +
    `state:\n  durability: ${process.env.DUR ?? "normal"}\nmemory:\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n`,
);
writeFileSync(
  join(root, "probe.cjs"),
  'process.on("exit", () => { const u = process.resourceUsage(); require("fs").writeFileSync(process.env.PROBE_OUT, String(u.userCPUTime + u.systemCPUTime)); });\n',
);
const env = {
  PATH: process.env.PATH,
  HOME: home,
  HERMES_HOME: home,
  NO_COLOR: "1",
  PROBE_OUT: join(root, "cpu"),
};
const prof = process.env.PROF
  ? [
      "--cpu-prof",
      "--cpu-prof-dir",
      process.env.PROF,
      "--cpu-prof-interval",
      process.env.PROF_INTERVAL ?? "200",
    ]
  : [];

function once(calls: number): Promise<{ ms: number; cpu: number }> {
  for (let i = 0; i < calls; i++) {
    llm.enqueue(
      reply().toolCall("todo", { todos: [{ id: "t1", content: `step ${i}`, status: "in_progress" }] }),
    );
  }
  llm.enqueue(reply().text("done"));
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ["--require", join(root, "probe.cjs"), ...prof, BIN, "-z", "go"], {
      env,
      stdio: ["ignore", "ignore", "inherit"],
    });
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`hermes exited ${code}`));
      const cpu = Number(readFileSync(join(root, "cpu"), "utf8")) / 1000;
      resolvePromise({ ms: performance.now() - started, cpu });
    });
  });
}

for (let r = 0; r < Number(process.env.REPS ?? 1); r++) {
  const short = await once(1);
  const long = await once(n + 1);
  process.stdout.write(
    `wall ${short.ms.toFixed(0)} / ${long.ms.toFixed(0)} ms, ${((long.ms - short.ms) / n).toFixed(2)} ms per call; ` +
      `cpu ${short.cpu.toFixed(0)} / ${long.cpu.toFixed(0)} ms, ${((long.cpu - short.cpu) / n).toFixed(2)} ms per call\n`,
  );
}
await llm.close();
