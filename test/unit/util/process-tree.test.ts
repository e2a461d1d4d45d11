/**
 * groupsAlive without a table: a group no process is in is answered by a signal alone; a group
 * that still has a live process, or only a zombie, is told apart through the process table.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { groupsAlive, listProcesses } from "../../../src/util/process-tree.js";

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) {
    try {
      process.kill(-(child.pid as number), "SIGKILL");
    } catch {
      // already gone
    }
  }
});

function group(script: string): number {
  const child = spawn("sh", ["-c", script], { detached: true, stdio: "ignore" });
  started.push(child);
  return child.pid as number;
}

const until = async (check: () => boolean) => {
  const deadline = Date.now() + 5000;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return check();
};

describe("groupsAlive", () => {
  it("is true for a group with a live process and false once the group is gone", async () => {
    const pgid = group("sleep 30");
    expect(groupsAlive([pgid])).toBe(true);
    expect(groupsAlive([pgid], listProcesses())).toBe(true);
    process.kill(-pgid, "SIGKILL");
    expect(await until(() => !groupsAlive([pgid]))).toBe(true);
    expect(groupsAlive([pgid], listProcesses())).toBe(false);
  });

  it("leaves out a group whose only process is a zombie nobody has reaped", async () => {
    // `setsid` puts the short sleep in a group of its own; its parent then becomes a `sleep` that
    // never waits, so once it exits it stays a zombie, the only process of its group.
    const dir = mkdtempSync(join(tmpdir(), "hermes-zombie-"));
    const pidFile = join(dir, "pid");
    group(`setsid sh -c 'echo $$ > ${pidFile}; exec sleep 0.2' & exec sleep 30`);
    expect(await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "")).toBe(true);
    const pgid = Number(readFileSync(pidFile, "utf8"));
    expect(groupsAlive([pgid])).toBe(true);
    const zombie = () => listProcesses().some((p) => p.pid === pgid && p.state === "Z");
    expect(await until(zombie)).toBe(true);
    // The group still "exists" for a signal, but nothing in it is alive.
    expect(() => process.kill(-pgid, 0)).not.toThrow();
    expect(groupsAlive([pgid])).toBe(false);
  });

  it("is false for no groups and for groups that never existed", () => {
    expect(groupsAlive([])).toBe(false);
    expect(groupsAlive([2_000_000_000])).toBe(false);
  });
});
