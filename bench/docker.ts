/**
 * The docker backend's costs: the first command in a fresh environment (container start included,
 * image present) next to a bare `docker run --rm IMAGE true`; and the per-command cost of the
 * persistent shell (`echo hi` through `shell().run`) next to `docker exec CTR bash -c 'echo hi'`
 * run directly. Skipped (no rows) where docker is not installed.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { create } from "../src/environments/docker/index.js";
import { dockerReady, TEST_IMAGE } from "../test/support/docker.js";
import type { BenchRow } from "./session-store.js";

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export async function dockerBench(runs = 5, commands = 20): Promise<BenchRow[]> {
  const skip = await dockerReady();
  if (skip) {
    process.stderr.write(`docker bench skipped: ${skip}\n`);
    return [];
  }
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "hermes-bench-docker-")));
  const ctx = {
    home: join(cwd, "home"),
    cwd,
    processEnv: { PATH: process.env.PATH },
    childEnv: { PATH: process.env.PATH },
    config: { terminal: { backend: "docker", docker_image: TEST_IMAGE } },
  };
  const first: number[] = [];
  const bare: number[] = [];
  const perCommand: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    spawnSync("docker", ["run", "--rm", TEST_IMAGE, "true"]);
    bare.push(performance.now() - t);
    const env = create(ctx);
    t = performance.now();
    await env.start();
    await env.shell("bench").run("echo hi", { timeoutMs: 60_000 });
    first.push(performance.now() - t);
    const shell = env.shell("bench");
    t = performance.now();
    for (let c = 0; c < commands; c++) await shell.run("echo hi", { timeoutMs: 60_000 });
    perCommand.push((performance.now() - t) / commands);
    t = performance.now();
    for (let c = 0; c < commands; c++)
      spawnSync("docker", ["exec", env.container as string, "bash", "-c", "echo hi"]);
    direct.push((performance.now() - t) / commands);
    await env.stop();
  }
  return [
    {
      name: "docker: first command in a fresh environment",
      value: median(first),
      unit: "ms",
      baseline: "docker run --rm IMAGE true",
      baselineValue: median(bare),
      target: "< 3× the bare container start",
      met: median(first) < 3 * median(bare),
    },
    {
      name: "docker: per command in the persistent shell (`echo hi`, container up)",
      value: median(perCommand),
      unit: "ms",
      baseline: "docker exec CTR bash -c 'echo hi'",
      baselineValue: median(direct),
      target: "≤ 1.5× baseline",
      met: median(perCommand) <= 1.5 * median(direct),
    },
  ];
}
