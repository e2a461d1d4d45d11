import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  claimGateway,
  GatewayRunningError,
  pidPath,
  processStartTime,
  readGatewayRecord,
  runningGateway,
} from "../../../src/gateway/pid-file.js";

const home = () => mkdtempSync(join(tmpdir(), "hermes-gwpid-"));

describe("gateway pid file and lock", () => {
  it("claims the home, records this process, refuses a second claim, and cleans up on release", () => {
    const dir = home();
    const release = claimGateway(dir, ["gateway", "run"]);
    const record = readGatewayRecord(dir);
    expect(record).toMatchObject({ pid: process.pid, kind: "hermes-gateway", argv: ["gateway", "run"] });
    expect(runningGateway(dir)?.pid).toBe(process.pid);
    expect(() => claimGateway(dir, [])).toThrow(GatewayRunningError);
    release();
    expect(existsSync(pidPath(dir))).toBe(false);
    expect(runningGateway(dir)).toBeNull();
    // Free again once released.
    claimGateway(dir, [])();
  });

  it("treats a dead, reused or foreign record as not running", () => {
    const dir = home();
    const write = (record: unknown) => writeFileSync(pidPath(dir), JSON.stringify(record));
    write({ pid: 2 ** 22 + 12345, kind: "hermes-gateway", hermes_home: dir, start_time: 1 });
    expect(runningGateway(dir)).toBeNull();
    // This process, but a different start time: the PID was reused by someone else.
    write({
      pid: process.pid,
      kind: "hermes-gateway",
      hermes_home: dir,
      start_time: (processStartTime(process.pid) ?? 0) + 1,
    });
    expect(runningGateway(dir)).toBeNull();
    write({ pid: process.pid, kind: "hermes-gateway", hermes_home: "/some/other/home", start_time: null });
    expect(runningGateway(dir)).toBeNull();
    writeFileSync(pidPath(dir), "not json");
    expect(readGatewayRecord(dir)).toBeNull();
    // A bare number, as very old files hold.
    writeFileSync(pidPath(dir), String(process.pid));
    expect(runningGateway(dir)?.pid).toBe(process.pid);
  });
});
