/**
 * The podman backend (`terminal.backend: podman`, the docker backend's code with the podman CLI)
 * against real podman and the locally built test image imported into podman's store. This host is
 * nested and unprivileged: podman's default ulimits cannot be raised here, so the suite asks for
 * lower ones through terminal.docker_extra_args, as a user on such a host would (the start error
 * says so). Skipped only where podman or catatonit is not installed.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type DockerEnvironment, LABEL } from "../../../src/environments/docker/environment.js";
import { create, doctor } from "../../../src/environments/docker/index.js";
import { type BackendContext, EnvironmentError } from "../../../src/environments/types.js";
import { describeEnvironmentContract } from "../../environments/contract.js";
import { PODMAN_ULIMITS, podmanReady, TEST_DISTRO, TEST_IMAGE } from "../../support/docker.js";

const skip = podmanReady();
const suite = skip ? describe.skip : describe;
const started: DockerEnvironment[] = [];
const root = realpathSync(mkdtempSync(join(tmpdir(), "hermes-podman-test-")));
let n = 0;

function context(
  terminal: Record<string, unknown> = {},
  processEnv: Record<string, string> = {},
): BackendContext {
  const cwd = join(root, `cwd-${++n}`);
  mkdirSync(cwd, { recursive: true });
  const childEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
  return {
    home: join(root, "home"),
    cwd,
    processEnv: { ...childEnv, ...processEnv },
    childEnv,
    config: {
      terminal: {
        backend: "podman",
        docker_image: `localhost/${TEST_IMAGE}`,
        docker_extra_args: PODMAN_ULIMITS,
        daemon_term_grace_seconds: 0.3,
        ...terminal,
      },
    },
  };
}

async function startEnv(ctx: BackendContext): Promise<DockerEnvironment> {
  const env = create(ctx);
  started.push(env);
  await env.start();
  return env;
}

afterAll(async () => {
  await Promise.all(started.map((e) => e.stop()));
});

describeEnvironmentContract("podman", async () => ({ env: await startEnv(context()) }), {
  timeoutMs: 60_000,
  ...(skip ? { skip } : {}),
});

suite("podman backend", () => {
  it("runs in the test image through podman, labelled, and says so", { timeout: 60_000 }, async () => {
    const env = await startEnv(context());
    expect(env.kind).toBe("podman");
    expect((await env.exec("cat /etc/os-release")).stdout.toString()).toContain(TEST_DISTRO);
    expect(env.describe()).toMatch(
      /^a podman container \(image localhost\/hermes-test-distro:1, container [0-9a-f]{12}\)/,
    );
    const label = spawnSync("podman", [
      "inspect",
      "--format",
      `{{index .Config.Labels "${LABEL}.pid"}}`,
      env.container as string,
    ]);
    expect(label.stdout.toString().trim()).toBe(String(process.pid));
  });

  it("reaps a container a crashed run of this home left behind", { timeout: 90_000 }, async () => {
    const ctx = context();
    // A container labelled as a dead hermes process's (pid 1's start time never matches).
    const orphan = spawnSync("podman", [
      "run",
      "-d",
      ...PODMAN_ULIMITS,
      "--label",
      `${LABEL}=1`,
      "--label",
      `${LABEL}.home=${ctx.home}`,
      "--label",
      `${LABEL}.pid=999999`,
      "--label",
      `${LABEL}.start=gone`,
      `localhost/${TEST_IMAGE}`,
      "sleep",
      "600",
    ]);
    const id = orphan.stdout.toString().trim();
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    await startEnv(ctx);
    const still = spawnSync("podman", ["ps", "-aq", "--no-trunc", "--filter", `id=${id}`]);
    expect(still.stdout.toString().trim()).toBe("");
  });

  it("refuses to start with the host's rlimit error turned into a fix, and leaves no container", {
    timeout: 60_000,
  }, async () => {
    const before = spawnSync("podman", [
      "ps",
      "-aq",
      "--filter",
      `label=${LABEL}.pid=${process.pid}`,
    ]).stdout.toString();
    // Limits above this process's own hard limits cannot be granted without privileges.
    const env = create(context({ docker_extra_args: ["--ulimit", "nproc=4194304:4194304"] }));
    const error = await env.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    await env.stop();
    expect(error).toBeInstanceOf(EnvironmentError);
    expect((error as EnvironmentError).fix).toContain("docker_extra_args");
    const after = spawnSync("podman", [
      "ps",
      "-aq",
      "--filter",
      `label=${LABEL}.pid=${process.pid}`,
    ]).stdout.toString();
    expect(after.split("\n").filter(Boolean).length).toBe(before.split("\n").filter(Boolean).length);
  });

  it("doctor finds podman and the image", { timeout: 60_000 }, async () => {
    const checks = await doctor(context());
    expect(checks.every((c) => c.ok)).toBe(true);
    expect(checks.map((c) => c.name)).toEqual(["podman", "podman image"]);
  });

  it("writes files the host reads back when the cwd is mounted", { timeout: 60_000 }, async () => {
    const ctx = context({ docker_mount_cwd_to_workspace: true });
    writeFileSync(join(ctx.cwd, "host.txt"), "from host\n");
    const env = await startEnv(ctx);
    expect((await env.exec("cat /workspace/host.txt")).stdout.toString()).toBe("from host\n");
  });
});
