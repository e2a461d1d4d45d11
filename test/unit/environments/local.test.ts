import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createLocalEnvironment } from "../../../src/environments/local/index.js";
import { describeEnvironmentContract } from "../../environments/contract.js";

function local() {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "hermes-local-env-")));
  return createLocalEnvironment({
    home: join(cwd, ".hermes"),
    cwd,
    processEnv: process.env,
    childEnv: { PATH: process.env.PATH, HOME: process.env.HOME },
    config: { terminal: { daemon_term_grace_seconds: 1 } },
  });
}

describeEnvironmentContract("local", async () => ({ env: local() }));

describe("local environment", () => {
  it("says it is the host, with no mounts and no isolation", () => {
    const env = local();
    expect(env.kind).toBe("local");
    expect(env.isolation).toBe("host");
    expect(env.mounts).toEqual([]);
    expect(env.describe()).toMatch(/^the local machine \(.*host .+\), no isolation$/);
  });

  it("stops background processes it started when stopped", async () => {
    const env = local();
    const proc = await env.spawn("sleep 30", { cwd: env.workdir });
    await env.stop();
    const status = await proc.exited;
    expect(status.signal ?? status.code).toBeTruthy();
  });
});
