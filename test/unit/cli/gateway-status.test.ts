import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { formatGatewayStatus, gatewayStatus } from "../../../src/cli/commands/gateway-status.js";
import { processStartTime } from "../../../src/gateway/pid-file.js";

const home = () => mkdtempSync(join(tmpdir(), "hermes-status-"));

describe("hermes gateway status without a control socket", () => {
  it("says not running when there is neither a socket nor a live pid record", async () => {
    const h = home();
    expect(await gatewayStatus(h)).toEqual({ running: false });
    // A stale socket file nobody listens on changes nothing.
    writeFileSync(join(h, "gateway.sock"), "");
    expect(formatGatewayStatus(await gatewayStatus(h))).toBe("Gateway: not running");
  });

  it("falls back to gateway.pid (an older or Python gateway) and says why details are missing", async () => {
    const h = home();
    writeFileSync(
      join(h, "gateway.pid"),
      JSON.stringify({
        pid: process.pid,
        kind: "hermes-gateway",
        hermes_home: resolve(h),
        start_time: processStartTime(process.pid),
        argv: [],
        started_at: "2026-01-01T00:00:00.000Z",
      }),
    );
    const report = await gatewayStatus(h);
    expect(report).toMatchObject({ running: true, source: "pid-file", pid: process.pid });
    expect(formatGatewayStatus(report)).toBe(
      `Gateway: running (pid ${process.pid}, since 2026-01-01T00:00:00.000Z)\n` +
        "  (details unavailable: no control socket (an older or Python Hermes gateway?))",
    );
  });
});
