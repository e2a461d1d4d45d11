/**
 * The daytona backend end to end over `@daytonaio/sdk`, against the loopback fake of the Daytona
 * API and toolbox daemon (test/support/fake-daytona.ts: the "sandbox" is a temp dir here, so these
 * tests prove the backend's conversation with the API, not Daytona's isolation).
 */
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ptyArgv } from "../../../src/environments/daytona/channel.js";
import {
  create,
  DAYTONA_MAX_DISK_GIB,
  daytonaResources,
  doctor,
  PERSISTENT_NAME,
} from "../../../src/environments/daytona/index.js";
import { type BackendContext, EnvironmentError } from "../../../src/environments/types.js";
import { describeEnvironmentContract } from "../../environments/contract.js";
import { ptyProbe } from "../../environments/pty-probe.js";
import { type FakeDaytona, startFakeDaytona } from "../../support/fake-daytona.js";

let fake: FakeDaytona;

beforeAll(async () => {
  fake = await startFakeDaytona();
});
afterAll(async () => {
  await fake?.close();
});

function context(terminal: Record<string, unknown> = {}, env: Record<string, string> = {}): BackendContext {
  const processEnv = {
    DAYTONA_API_KEY: fake.apiKey,
    DAYTONA_API_URL: fake.apiUrl,
    DAYTONA_TARGET: "us",
    ...env,
  };
  return {
    home: "/nonexistent-home",
    cwd: "/tmp",
    processEnv,
    childEnv: { PATH: process.env["PATH"] },
    config: { terminal: { backend: "daytona", ...terminal } },
  };
}

describeEnvironmentContract(
  "daytona (loopback fake of the API)",
  async () => {
    const env = create(context({ container_persistent: false, daytona_image: "debian:12" }));
    await env.start();
    return { env };
  },
  { timeoutMs: 60_000 },
);

describe("daytona backend", () => {
  it("gives a process a terminal inside the sandbox (util-linux script), sized as asked", async () => {
    const env = create(context({ container_persistent: false }));
    await env.start();
    const run = (pty: boolean): Promise<string> =>
      ptyProbe(env, env.workdir, pty ? { cols: 110, rows: 33 } : undefined);
    const withPty = await run(true);
    expect(withPty).toContain("has-tty");
    expect(withPty).toContain("33 110");
    expect(await run(false)).toContain("no-tty");
    await env.stop();
  });

  it("says how to fix a sandbox without script instead of running without a terminal", () => {
    const argv = ptyArgv(["top", "-b"], { cols: 80, rows: 24 });
    const shown = spawnSync("/bin/bash", argv.slice(1), { env: { PATH: "/nonexistent" }, encoding: "utf8" });
    expect(shown.status).toBe(127);
    expect(shown.stderr).toMatch(/no 'script' \(util-linux\).*without pty/);
  });

  it("a fresh sandbox per process when not persistent, deleted at stop", async () => {
    const env = create(
      context({
        container_persistent: false,
        daytona_image: "python:3.12",
        container_memory: 2048,
        container_disk: 4096,
        container_cpu: 2,
      }),
    );
    expect(env.isolation).toBe("isolated");
    expect(env.describe()).toContain("not started yet");
    await env.start();
    const sandbox = [...fake.sandboxes.values()].find((s) => env.describe().includes(s.id));
    expect(sandbox?.created).toMatchObject({
      image: "python:3.12",
      cpu: 2,
      memory: 2,
      disk: 4,
      autoStopInterval: 0,
    });
    expect(env.describe()).toBe(`a Daytona sandbox ${sandbox?.id} (image python:3.12)`);
    expect(env.workdir).toBe(sandbox?.home);
    const who = await env.shell("t").run("pwd", { timeoutMs: 20_000 });
    expect(who.output.trim()).toBe(sandbox?.home);
    await env.stop();
    expect(fake.sandboxes.has(sandbox?.id ?? "")).toBe(false);
  });

  it("persistent: stopped at exit and resumed (same files) by the next process", async () => {
    const first = create(context({ container_persistent: true }));
    await first.start();
    await first.files.write(`${first.workdir}/kept.txt`, "still here\n");
    await first.stop();
    const kept = [...fake.sandboxes.values()].find((s) => s.name === PERSISTENT_NAME);
    expect(kept?.state).toBe("stopped");
    const second = create(context({ container_persistent: true }));
    await second.start();
    expect(kept?.state).toBe("started");
    expect((await second.files.read(`${second.workdir}/kept.txt`)).toString()).toBe("still here\n");
    await second.stop();
  });

  it("disk above Daytona's limit is capped and said so", () => {
    expect(daytonaResources({ image: "x", cpu: 1, memoryMb: 5120, diskMb: 51200, persistent: true })).toEqual(
      {
        cpu: 1,
        memory: 5,
        disk: DAYTONA_MAX_DISK_GIB,
        capped: true,
      },
    );
  });

  it("no API key: a config error with the fix, before any request", async () => {
    const before = fake.requests.length;
    const env = create(context({}, { DAYTONA_API_KEY: "" }));
    const failure = await env.start().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EnvironmentError);
    expect(failure).toMatchObject({ reason: "config" });
    expect((failure as EnvironmentError).fix).toContain("DAYTONA_API_KEY");
    expect(fake.requests.length).toBe(before);
    const checks = await doctor(context({}, { DAYTONA_API_KEY: "" }));
    expect(checks[0]).toMatchObject({ name: "daytona: credentials", ok: false });
  });

  it("a rejected key and an unreachable API are told apart", async () => {
    const rejected = await create(context({}, { DAYTONA_API_KEY: "wrong" }))
      .start()
      .catch((error: unknown) => error);
    expect(rejected).toMatchObject({ reason: "config" });
    expect((rejected as Error).message).toMatch(/rejected the credentials/);
    const unreachable = await create(context({}, { DAYTONA_API_URL: "http://127.0.0.1:9/api" }))
      .start()
      .catch((error: unknown) => error);
    expect(unreachable).toMatchObject({ reason: "unreachable" });
    expect((unreachable as Error).message).toContain("127.0.0.1:9");
  });

  it("doctor: key set, SDK loads, API answers", async () => {
    const checks = await doctor(context());
    expect(checks.map((c) => [c.name, c.ok])).toEqual([
      ["daytona: credentials", true],
      ["daytona: SDK", true],
      ["daytona: API", true],
    ]);
  });
});
