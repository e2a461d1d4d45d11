/**
 * The docker backend against the real dockerd (started by test/support/docker.ts when needed) and
 * the locally built test image. Skipped only where docker.io is not installed.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { dockerChannel } from "../../../src/environments/docker/cli.js";
import { type DockerEnvironment, LABEL } from "../../../src/environments/docker/environment.js";
import { create, doctor } from "../../../src/environments/docker/index.js";
import { type BackendContext, EnvironmentError } from "../../../src/environments/types.js";
import { describeEnvironmentContract } from "../../environments/contract.js";
import { ptyProbe } from "../../environments/pty-probe.js";
import { dockerReady, TEST_DISTRO, TEST_IMAGE } from "../../support/docker.js";
import { remoteShellCases } from "./remote-shell-cases.js";

const skip = await dockerReady();
const suite = skip ? describe.skip : describe;
const started: DockerEnvironment[] = [];
const root = realpathSync(mkdtempSync(join(tmpdir(), "hermes-docker-test-")));
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
      terminal: { backend: "docker", docker_image: TEST_IMAGE, daemon_term_grace_seconds: 0.3, ...terminal },
    },
  };
}

async function startEnv(ctx: BackendContext): Promise<DockerEnvironment> {
  const env = create(ctx);
  started.push(env);
  await env.start();
  return env;
}

const out = async (env: DockerEnvironment, command: string) => (await env.exec(command)).stdout.toString();

afterAll(async () => {
  await Promise.all(started.map((e) => e.stop()));
});

describeEnvironmentContract("docker", async () => ({ env: await startEnv(context()) }), {
  timeoutMs: 60_000,
  ...(skip ? { skip } : {}),
});

suite("remote shell inside a docker container", () => {
  let shared: DockerEnvironment | undefined;
  remoteShellCases(async () => {
    shared ??= await startEnv(context());
    const channel = dockerChannel("docker", shared.container as string, { PATH: process.env.PATH });
    const dir = (await channel.exec("mktemp -d")).stdout.toString().trim();
    return { channel, dir };
  });
});

suite("docker backend", () => {
  it("runs in the test image's distro, isolated, and says so", { timeout: 60_000 }, async () => {
    const env = await startEnv(context());
    expect(await out(env, "cat /etc/os-release")).toContain(TEST_DISTRO);
    expect(env.isolation).toBe("isolated");
    expect(env.mounts).toEqual([]);
    expect(env.dockerSocket).toBe(false);
    expect(env.describe()).toMatch(
      /docker container \(image hermes-test-distro:1, container [0-9a-f]{12}\).*no host paths mounted/,
    );
    const labels = spawnSync("docker", [
      "inspect",
      "--format",
      `{{index .Config.Labels "${LABEL}.pid"}}`,
      env.container as string,
    ]);
    expect(labels.stdout.toString().trim()).toBe(String(process.pid));
  });

  it("gives a process a terminal inside the container when pty is asked for", {
    timeout: 60_000,
  }, async () => {
    const env = await startEnv(context());
    const run = (pty: boolean): Promise<string> =>
      ptyProbe(env, "/", pty ? { cols: 100, rows: 30 } : undefined);
    const withPty = await run(true);
    expect(withPty).toContain("has-tty");
    expect(withPty).toContain("30 100");
    expect(await run(false)).toContain("no-tty");
  });

  it("passes no secret into the container unless forwarded explicitly", { timeout: 60_000 }, async () => {
    const ctx = context(
      { docker_forward_env: ["PASS_ME"], docker_env: { LITERAL: "lit" } },
      { OPENAI_API_KEY: "sk-secret-1", PASS_ME: "forwarded" },
    );
    const env = await startEnv(ctx);
    const seen = await out(env, "env");
    expect(seen).not.toContain("sk-secret-1");
    expect(seen).toContain("PASS_ME=forwarded");
    expect(seen).toContain("LITERAL=lit");
    // Nor on the docker command line on the host.
    const args = spawnSync("docker", [
      "inspect",
      "--format",
      "{{json .Config.Env}}",
      env.container as string,
    ]);
    expect(args.stdout.toString()).not.toContain("sk-secret-1");
  });

  it("mounts the cwd at /workspace, volumes, credential files read-only; reports them", {
    timeout: 60_000,
  }, async () => {
    const vol = join(root, "vol");
    mkdirSync(vol, { recursive: true });
    writeFileSync(join(vol, "v.txt"), "volume\n");
    const cred = join(root, "cred.json");
    writeFileSync(cred, "{}\n");
    const ctx = context({
      docker_mount_cwd_to_workspace: true,
      docker_volumes: [`${vol}:/data:ro`, "/var/run/docker.sock:/var/run/docker.sock"],
      credential_files: [cred],
    });
    writeFileSync(join(ctx.cwd, "here.txt"), "cwd file\n");
    const env = await startEnv(ctx);
    expect(env.workdir).toBe("/workspace");
    expect(await out(env, "cat /workspace/here.txt /data/v.txt")).toBe("cwd file\nvolume\n");
    expect((await env.exec("echo x > /data/new")).exitCode).not.toBe(0);
    expect((await env.exec(`echo x > ${cred}`)).exitCode).not.toBe(0);
    expect(env.dockerSocket).toBe(true);
    expect(env.mounts).toContainEqual({ hostPath: ctx.cwd, envPath: "/workspace", readOnly: false });
    expect(env.mounts).toContainEqual({ hostPath: cred, envPath: cred, readOnly: true });
    expect(env.describe()).toContain(`${ctx.cwd} -> /workspace`);
  });

  it("warns at start that container_disk cannot be enforced on this storage driver", {
    timeout: 60_000,
  }, async () => {
    const env = await startEnv(context({ container_disk: 1024, container_memory: 256, container_cpu: 1 }));
    const driver = spawnSync("docker", ["info", "--format", "{{json .DriverStatus}}"]).stdout.toString();
    if (/"xfs"/.test(driver)) expect(env.warnings).toEqual([]);
    else expect(env.warnings.join("\n")).toMatch(/container_disk \(1024 MB\) is not enforced.*XFS.*pquota/);
    const mem = spawnSync("docker", [
      "inspect",
      "--format",
      "{{.HostConfig.Memory}}",
      env.container as string,
    ]);
    expect(mem.stdout.toString().trim()).toBe(String(256 * 1024 * 1024));
  });

  it("reaps containers of a dead owner, not a live owner's nor a persistent one", {
    timeout: 60_000,
  }, async () => {
    const ctx = context();
    const mk = (labels: Record<string, string>) =>
      spawnSync("docker", [
        "run",
        "-d",
        ...Object.entries({ [LABEL]: "1", [`${LABEL}.home`]: ctx.home, ...labels }).flatMap(([k, v]) => [
          "--label",
          `${k}=${v}`,
        ]),
        TEST_IMAGE,
        "sleep",
        "600",
      ])
        .stdout.toString()
        .trim();
    const dead = mk({ [`${LABEL}.pid`]: "999999", [`${LABEL}.start`]: "1" });
    const reused = mk({ [`${LABEL}.pid`]: "1", [`${LABEL}.start`]: "not-the-start-of-pid-1" });
    const persistent = mk({ [`${LABEL}.pid`]: "999999", [`${LABEL}.start`]: "1", [`${LABEL}.persist`]: "k" });
    const env = await startEnv(ctx);
    const alive = (id: string) => spawnSync("docker", ["inspect", id]).status === 0;
    expect(alive(dead)).toBe(false);
    expect(alive(reused)).toBe(false);
    expect(alive(persistent)).toBe(true);
    expect(alive(env.container as string)).toBe(true);
    // A second environment of this same live process leaves the first alone.
    await startEnv(ctx);
    expect(alive(env.container as string)).toBe(true);
    spawnSync("docker", ["rm", "-f", persistent]);
  });

  it("persistent: the container is kept on stop and reused by the next start", {
    timeout: 60_000,
  }, async () => {
    const ctx = context({ container_persistent: true });
    const first = await startEnv(ctx);
    await first.exec("echo kept > /root/mark");
    const id = first.container as string;
    await first.stop();
    const second = await startEnv(ctx);
    expect(second.container).toBe(id);
    expect(await out(second, "cat /root/mark")).toBe("kept\n");
    spawnSync("docker", ["rm", "-f", id]);
  });

  it("start-up errors name the fix: missing binary, daemon down, image absent", {
    timeout: 60_000,
  }, async () => {
    const missing = create(context({}, { HERMES_DOCKER_BINARY: "/nonexistent/docker" }));
    await expect(missing.start()).rejects.toMatchObject({
      reason: "runtime",
      fix: expect.stringMatching(/docker\.io/),
    });
    const down = create({
      ...context(),
      childEnv: { PATH: process.env.PATH, DOCKER_HOST: `unix://${root}/no.sock` },
    });
    const error = await down.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EnvironmentError);
    expect(error).toMatchObject({ reason: "unreachable", fix: expect.stringMatching(/Start it/) });
    const absent = create(context({ docker_image: "hermes-no-such-image:0" }));
    await expect(absent.start()).rejects.toMatchObject({
      reason: "runtime",
      fix: expect.stringMatching(/docker_image/),
    });
    expect(await doctor(context({ docker_image: "hermes-no-such-image:0" }))).toMatchObject([
      { ok: true },
      { ok: false, fix: expect.stringMatching(/docker pull/) },
    ]);
  });
});
