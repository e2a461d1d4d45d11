/**
 * The singularity backend against a STUB `apptainer` on PATH (test/support/apptainer-stub.sh):
 * Apptainer is not packaged for Debian 12, so these tests check the calls the backend makes (the
 * stub records its arguments) and run the commands locally, without any isolation. What they
 * prove is the backend's side of the conversation, not Apptainer's containment.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  create,
  doctor,
  findRuntime,
  instanceStartArgv,
  sifCachePath,
} from "../../../src/environments/singularity/index.js";
import { type BackendContext, EnvironmentError } from "../../../src/environments/types.js";
import { describeEnvironmentContract } from "../../environments/contract.js";
import { ptyProbe } from "../../environments/pty-probe.js";

const STUB = resolve(import.meta.dirname, "../../support/apptainer-stub.sh");
const roots: string[] = [];

interface Stub {
  ctx: BackendContext;
  log(): string[];
  bin: string;
}

function stubContext(terminal: Record<string, unknown> = {}): Stub {
  const root = mkdtempSync(join(tmpdir(), "hermes-apptainer-"));
  roots.push(root);
  const bin = join(root, "bin");
  const home = join(root, "home");
  mkdirSync(bin);
  mkdirSync(home);
  symlinkSync(STUB, join(bin, "apptainer"));
  const logFile = join(root, "calls.log");
  writeFileSync(logFile, "");
  const childEnv = {
    PATH: `${bin}:/usr/bin:/bin`,
    APPTAINER_STUB_LOG: logFile,
    APPTAINER_STUB_STATE: join(root, "instances"),
  };
  return {
    ctx: {
      home,
      cwd: root,
      processEnv: { ...childEnv, SECRET_API_KEY: "sk-never-passed" },
      childEnv,
      config: { terminal: { backend: "singularity", ...terminal } },
    },
    log: () => readFileSync(logFile, "utf8").split("\n").filter(Boolean),
    bin,
  };
}

afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

describeEnvironmentContract("singularity (stub apptainer)", async () => {
  const stub = stubContext({ container_persistent: false });
  const env = create(stub.ctx);
  await env.start();
  return { env };
});

describe("singularity backend (stub apptainer: records arguments, runs commands locally)", () => {
  it("builds the docker:// image into a cached SIF once, starts one instance, stops it", async () => {
    const stub = stubContext();
    const env = create(stub.ctx);
    expect(env.isolation).toBe("isolated");
    await env.start();
    const result = await env.exec("echo in-instance");
    expect(result.stdout.toString()).toBe("in-instance\n");
    const sif = sifCachePath(stub.ctx.home, "docker://nikolaik/python-nodejs:python3.11-nodejs20");
    const calls = stub.log();
    expect(calls[0]).toBe(`build ${sif} docker://nikolaik/python-nodejs:python3.11-nodejs20 `);
    const start = calls.find((c) => c.startsWith("instance start"));
    const name = /(hermes_[0-9a-f]{12})/.exec(start ?? "")?.[1];
    expect(start).toBe(
      `instance start --containall --no-home --overlay ${join(stub.ctx.home, "sandboxes/singularity/overlay-default")} --memory 5120M --cpus 1 ${sif} ${name} `,
    );
    expect(calls.some((c) => c.startsWith(`exec instance://${name} bash -c`))).toBe(true);
    expect(env.describe()).toContain(`Apptainer instance ${name}`);
    await env.stop();
    expect(stub.log().at(-1)).toBe(`instance stop ${name} `);

    // A second process reuses the cached SIF: no second build.
    const again = create(stub.ctx);
    await again.start();
    expect(stub.log().filter((c) => c.startsWith("build"))).toHaveLength(1);
    await again.stop();
  });

  it("without persistence the instance gets a throw-away writable tmpfs", () => {
    expect(
      instanceStartArgv(
        { image: "x.sif", cpu: 0, memoryMb: 0, diskMb: 0, persistent: false },
        "/i/x.sif",
        "hermes_abc",
        undefined,
      ),
    ).toEqual([
      "instance",
      "start",
      "--containall",
      "--no-home",
      "--writable-tmpfs",
      "/i/x.sif",
      "hermes_abc",
    ]);
  });

  it("the persistent shell keeps cwd and variables inside the instance", async () => {
    const stub = stubContext({ container_persistent: false, cwd: "/tmp" });
    const env = create(stub.ctx);
    await env.start();
    const shell = env.shell("t1");
    await shell.run("cd / && export HERMES_X=1", { timeoutMs: 10_000 });
    const result = await shell.run('echo "$PWD $HERMES_X"', { timeoutMs: 10_000 });
    expect(result.output.trim()).toBe("/ 1");
    await env.stop();
  });

  it("gives a process a terminal of the asked size through a local pty around apptainer exec", async () => {
    const stub = stubContext({ container_persistent: false, cwd: "/tmp" });
    const env = create(stub.ctx);
    await env.start();
    const run = (pty: boolean): Promise<string> =>
      ptyProbe(env, "/", pty ? { cols: 90, rows: 20 } : undefined);
    const withPty = await run(true);
    expect(withPty).toContain("has-tty");
    expect(withPty).toContain("20 90");
    expect(await run(false)).toContain("no-tty");
    // It went through apptainer exec into the instance, like every other process.
    expect(
      stub.log().some((line) => /^exec .*instance:\/\/\S+ bash /.test(line) && line.includes("stty")),
    ).toBe(true);
    await env.stop();
  });

  it("Hermes's own secrets never reach the instance's client", async () => {
    const stub = stubContext({ container_persistent: false });
    const env = create(stub.ctx);
    await env.start();
    const result = await env.exec("printenv SECRET_API_KEY || echo unset");
    expect(result.stdout.toString()).toBe("unset\n");
    await env.stop();
  });

  it("no apptainer or singularity on PATH: a runtime error with the fix, never the host", async () => {
    const stub = stubContext();
    const ctx = { ...stub.ctx, childEnv: { ...stub.ctx.childEnv, PATH: "/nonexistent" } };
    const env = create(ctx);
    const failure = await env.start().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EnvironmentError);
    expect(failure).toMatchObject({ reason: "runtime" });
    expect((failure as EnvironmentError).fix).toMatch(/Install Apptainer/);
    expect(stub.log()).toEqual([]);
    const checks = await doctor(ctx);
    expect(checks[0]).toMatchObject({ name: "singularity: runtime", ok: false });
  });

  it("falls back to `singularity` when only that is installed", () => {
    const stub = stubContext();
    rmSync(join(stub.bin, "apptainer"));
    symlinkSync(STUB, join(stub.bin, "singularity"));
    expect(findRuntime(stub.ctx.childEnv["PATH"])).toBe(join(stub.bin, "singularity"));
  });

  it("a .sif path that does not exist is a config error naming the key", async () => {
    const stub = stubContext({ singularity_image: "images/missing.sif" });
    const failure = await create(stub.ctx)
      .start()
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ reason: "config" });
    expect((failure as Error).message).toContain("terminal.singularity_image");
    const checks = await doctor(stub.ctx);
    expect(checks.find((c) => c.name === "singularity: image")).toMatchObject({ ok: false });
  });

  it("bad settings, a failed instance start and use after stop are errors, never the host", async () => {
    const stub = stubContext({ container_persistent: false, container_cpu: "lots" });
    expect(() => create(stub.ctx)).toThrow(/terminal.container_cpu/);

    const failing = stubContext({ container_persistent: false });
    const ctx = { ...failing.ctx, childEnv: { ...failing.ctx.childEnv, APPTAINER_STUB_FAIL_START: "1" } };
    const failure = await create(ctx)
      .start()
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ reason: "runtime" });
    expect((failure as Error).message).toMatch(/instance start failed .*permission denied/);

    const ok = stubContext({ container_persistent: false });
    const env = create(ok.ctx);
    await env.start();
    await env.stop();
    await expect(env.exec("true")).rejects.toThrow(/stopped/);
  });
});
