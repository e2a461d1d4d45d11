import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FileLockTimeoutError, withFileLock } from "../../../src/util/file-lock.js";

const python = spawnSync("python3", ["-c", "import fcntl"]).status === 0;

describe("withFileLock", () => {
  it("serialises read-modify-write within one process", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lock-"));
    const file = join(dir, "counter");
    writeFileSync(file, "0");
    await Promise.all(
      Array.from({ length: 20 }, () =>
        withFileLock(file, async () => {
          const n = Number(readFileSync(file, "utf8"));
          await new Promise((r) => setTimeout(r, 1));
          writeFileSync(file, String(n + 1));
        }),
      ),
    );
    expect(readFileSync(file, "utf8")).toBe("20");
  });

  it("releases the lock when the callback throws", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "lock-")), "f");
    await expect(withFileLock(file, () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(withFileLock(file, () => 1)).resolves.toBe(1);
  });

  it.skipIf(!python)("excludes a Python process holding fcntl.flock on the same lock file", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "lock-")), "MEMORY.md");
    const child = spawn("python3", [
      "-c",
      `import fcntl,sys,time\nf=open(sys.argv[1]+'.lock','a+')\nfcntl.flock(f,fcntl.LOCK_EX)\nprint('held',flush=True)\ntime.sleep(1.5)`,
      file,
    ]);
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    await expect(withFileLock(file, () => "got", { timeoutMs: 200 })).rejects.toBeInstanceOf(
      FileLockTimeoutError,
    );
    const started = Date.now();
    await expect(withFileLock(file, () => "got", { timeoutMs: 5000 })).resolves.toBe("got");
    expect(Date.now() - started).toBeGreaterThan(200);
    child.kill();
  });
});
