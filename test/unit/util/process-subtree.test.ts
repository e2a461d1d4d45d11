/**
 * subtreeFromProc walks a /proc laid out as Linux lays it out (each thread's `children` list, each
 * process's `stat`) and reads only the subtree; it agrees with `descendants` over the full table,
 * and says "unsupported" for a kernel without children lists so the caller reads the table.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { descendants, listProcesses, subtreeFromProc } from "../../../src/util/process-tree.js";

interface Fake {
  pid: number;
  ppid: number;
  pgid: number;
  name?: string;
  /** tid → children pids; default: one thread (tid = pid) with the children whose ppid is pid. */
  threads?: Record<number, number[]>;
}

function fakeProc(processes: Fake[], options: { noChildrenFiles?: boolean } = {}): string {
  const proc = mkdtempSync(join(tmpdir(), "hermes-fake-proc-"));
  for (const p of processes) {
    const dir = join(proc, String(p.pid));
    mkdirSync(dir);
    writeFileSync(join(dir, "stat"), `${p.pid} (${p.name ?? "sh"}) S ${p.ppid} ${p.pgid} ${p.pgid} 0 -1\n`);
    const threads = p.threads ?? {
      [p.pid]: processes.filter((c) => c.ppid === p.pid).map((c) => c.pid),
    };
    for (const [tid, kids] of Object.entries(threads)) {
      mkdirSync(join(dir, "task", tid), { recursive: true });
      if (!options.noChildrenFiles)
        writeFileSync(join(dir, "task", tid, "children"), kids.map((k) => `${k} `).join(""));
    }
  }
  return proc;
}

describe("subtreeFromProc", () => {
  const tree: Fake[] = [
    { pid: 1, ppid: 0, pgid: 1, name: "init" },
    { pid: 100, ppid: 1, pgid: 100 },
    // Two threads, each the parent of one child.
    { pid: 200, ppid: 100, pgid: 200, name: "node ) (x", threads: { 200: [300], 210: [301] } },
    { pid: 201, ppid: 100, pgid: 777 },
    { pid: 300, ppid: 200, pgid: 200 },
    { pid: 301, ppid: 200, pgid: 301 },
    { pid: 400, ppid: 201, pgid: 777 },
    { pid: 500, ppid: 1, pgid: 500, name: "unrelated" },
  ];

  it("finds children of every thread, children before grandchildren, with groups and odd names", () => {
    const proc = fakeProc(tree);
    const walked = subtreeFromProc(100, new Set(), proc);
    expect(walked?.map((p) => [p.pid, p.ppid, p.pgid])).toEqual([
      [200, 100, 200],
      [201, 100, 777],
      [300, 200, 200],
      [301, 200, 301],
      [400, 201, 777],
    ]);
  });

  it("leaves out a skipped group's whole subtree, and processes that exited while it looked", () => {
    const proc = fakeProc(tree.filter((p) => p.pid !== 301));
    // 301 is still listed as 200's child (thread 210) but its files are gone.
    writeFileSync(join(proc, "200", "task", "210", "children"), "301 ");
    const walked = subtreeFromProc(100, new Set([777]), proc);
    expect(walked?.map((p) => p.pid)).toEqual([200, 300]);
  });

  it("answers unsupported without children lists, and nothing for a root that is gone", () => {
    expect(subtreeFromProc(100, new Set(), fakeProc(tree, { noChildrenFiles: true }))).toBeUndefined();
    expect(subtreeFromProc(999, new Set(), fakeProc(tree))).toEqual([]);
  });

  it("descendants without a table finds a real shell's children and grandchildren", async () => {
    const shell = spawn("sh", ["-c", "sleep 30 & (sleep 31 &) ; sh -c 'sleep 32' & wait"], {
      stdio: "ignore",
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const pid = shell.pid as number;
      const viaTable = descendants(pid, listProcesses())
        .map((p) => p.pid)
        .sort();
      const viaWalk = descendants(pid)
        .map((p) => p.pid)
        .sort();
      expect(viaWalk).toEqual(viaTable);
      expect(viaWalk.length).toBeGreaterThanOrEqual(2);
    } finally {
      for (const p of descendants(shell.pid as number, listProcesses())) {
        try {
          process.kill(p.pid, "SIGKILL");
        } catch {
          // gone
        }
      }
      shell.kill("SIGKILL");
    }
  });
});
