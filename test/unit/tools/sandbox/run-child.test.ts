import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runChild } from "../../../../src/tools/sandbox/run-child.js";
import { isRunning } from "../terminal/helpers.js";

const base = {
  cwd: tmpdir(),
  env: { PATH: process.env.PATH ?? "" },
  timeoutMs: 60_000,
  stdoutLimit: 1000,
  stderrLimit: 1000,
};

describe("runChild", () => {
  it("captures stdout, stderr and the exit code", async () => {
    const r = await runChild({ ...base, command: "sh", args: ["-c", "echo out; echo err >&2; exit 3"] });
    expect(r).toMatchObject({ exitCode: 3, exitSignal: null, timedOut: false, interrupted: false });
    expect(r.stdout.result().text).toBe("out\n");
    expect(r.stderr.result().text).toBe("err\n");
  });

  it("escalates to SIGKILL when the group ignores SIGTERM after a timeout", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hermes-runchild-"));
    const script = `trap '' TERM; sh -c "trap '' TERM; echo \\$\\$ > ${dir}/pid; while :; do sleep 1; done" & wait`;
    const r = await runChild({
      ...base,
      command: "sh",
      args: ["-c", script],
      timeoutMs: 1000,
      killGraceMs: 100,
    });
    expect(r.timedOut).toBe(true);
    expect(r.exitSignal).toBe("SIGKILL");
    expect(isRunning(Number(readFileSync(join(dir, "pid"), "utf8")))).toBe(false);
  });

  it("reports a missing interpreter as a spawn error", async () => {
    const r = await runChild({ ...base, command: "/nonexistent/python3", args: [] });
    expect(r.spawnError).toContain("ENOENT");
    expect(r.exitCode).toBeNull();
  });
});
