/**
 * `terminal.backend: singularity` (alias `apptainer`): one Apptainer (else Singularity) instance per
 * hermes process, `apptainer instance start --containall --no-home`, commands through `apptainer
 * exec instance://NAME`, `instance stop` at exit. Upstream's keys: `singularity_image` (a
 * `docker://` reference, built once into a cached SIF under `<HERMES_HOME>/sandboxes/singularity/`,
 * or a `.sif` path), `container_cpu`, `container_memory` (MiB), `container_persistent` (a writable
 * overlay directory kept between runs; otherwise `--writable-tmpfs`), `terminal.cwd` when absolute.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { onProcessExit } from "../../util/exit-reaper.js";
import { SandboxEnvironment, type SandboxLink } from "../cloud-environment.js";
import { type ContainerSettings, containerSettings, terminalSection } from "../cloud-settings.js";
import { createExecFiles, downloadOver, uploadOver } from "../exec-files.js";
import { type BackendContext, type DoctorCheck, type Environment, EnvironmentError } from "../types.js";
import { type ApptainerTarget, createApptainerChannel } from "./channel.js";

export const DEFAULT_SINGULARITY_IMAGE = "docker://nikolaik/python-nodejs:python3.11-nodejs20";

/** The first of `apptainer`, `singularity` that is an executable file on PATH (pure over fs). */
export function findRuntime(path: string | undefined): string | undefined {
  for (const name of ["apptainer", "singularity"]) {
    for (const dir of (path ?? "").split(delimiter)) {
      if (!dir) continue;
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

/** `instance start` argv (pure). */
export function instanceStartArgv(
  settings: ContainerSettings,
  image: string,
  instance: string,
  overlay: string | undefined,
): string[] {
  const argv = ["instance", "start", "--containall", "--no-home"];
  if (overlay) argv.push("--overlay", overlay);
  else argv.push("--writable-tmpfs");
  if (settings.memoryMb > 0) argv.push("--memory", `${settings.memoryMb}M`);
  if (settings.cpu > 0) argv.push("--cpus", String(settings.cpu));
  argv.push(image, instance);
  return argv;
}

/** The cached SIF for a `docker://` reference (pure). */
export function sifCachePath(home: string, image: string): string {
  const name = image.replace(/^docker:\/\//, "").replace(/[/:@]/g, "-");
  return join(home, "sandboxes", "singularity", `${name}.sif`);
}

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(
  executable: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<RunResult> {
  return new Promise((done) => {
    const child = spawn(executable, argv, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      done({ code: 127, stdout, stderr: error.message });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** The image to start: a `.sif` path as is (it must exist), a `docker://` reference built once. */
async function resolveImage(
  executable: string,
  image: string,
  ctx: BackendContext,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  if (!image.includes("://")) {
    const path = isAbsolute(image) ? image : resolve(ctx.cwd, image);
    if (!existsSync(path)) {
      throw new EnvironmentError(
        `terminal.singularity_image: no image file at ${path}`,
        "Point terminal.singularity_image at an existing .sif file, or use a docker:// reference.",
        "config",
      );
    }
    return path;
  }
  if (!image.startsWith("docker://")) return image; // library://, oras://...: Apptainer pulls it.
  const sif = sifCachePath(ctx.home, image);
  if (existsSync(sif)) return sif;
  await mkdir(join(ctx.home, "sandboxes", "singularity"), { recursive: true });
  const built = await run(executable, ["build", sif, image], env, 600_000);
  // As upstream: when the one-time build fails, start from the reference (Apptainer pulls it).
  return built.code === 0 && existsSync(sif) ? sif : image;
}

function graceMs(config: Readonly<Record<string, unknown>>): number {
  const raw = terminalSection(config)["daemon_term_grace_seconds"];
  return typeof raw === "number" && raw >= 0 ? raw * 1000 : 2000;
}

async function bringUp(ctx: BackendContext, settings: ContainerSettings): Promise<SandboxLink> {
  const executable = findRuntime(ctx.childEnv["PATH"]);
  if (!executable) {
    throw new EnvironmentError(
      "terminal.backend is singularity but neither apptainer nor singularity is on PATH",
      "Install Apptainer (https://apptainer.org/docs/admin/main/installation.html) or SingularityCE, or choose another terminal.backend.",
      "runtime",
    );
  }
  const env = { ...ctx.childEnv } as NodeJS.ProcessEnv;
  const image = await resolveImage(executable, settings.image, ctx, env);
  const instance = `hermes_${randomBytes(6).toString("hex")}`;
  let overlay: string | undefined;
  if (settings.persistent) {
    overlay = join(ctx.home, "sandboxes", "singularity", "overlay-default");
    await mkdir(overlay, { recursive: true });
  }
  const started = await run(executable, instanceStartArgv(settings, image, instance, overlay), env, 180_000);
  if (started.code !== 0) {
    throw new EnvironmentError(
      `${executable} instance start failed (exit ${started.code}): ${started.stderr.trim().slice(0, 500)}`,
      "Check terminal.singularity_image and that Apptainer can run containers here (`apptainer exec <image> true`).",
      "runtime",
    );
  }
  // If hermes dies without stop(), the instance must not outlive it.
  const unhook = onProcessExit(() => {
    spawnSync(executable, ["instance", "stop", instance], { env, stdio: "ignore", timeout: 10_000 });
  });
  const target: ApptainerTarget = { executable, instance, clientEnv: ctx.childEnv };
  const channel = createApptainerChannel(target, graceMs(ctx.config));
  let workdir = settings.cwd;
  if (!workdir) {
    const probe = await channel.exec("cd ~ 2>/dev/null || cd /; pwd");
    workdir = probe.exitCode === 0 && probe.stdout.toString().trim() ? probe.stdout.toString().trim() : "/";
  }
  return {
    channel,
    files: createExecFiles(channel),
    workdir,
    description: `an Apptainer instance ${instance} (image ${settings.image}${settings.persistent ? ", persistent overlay" : ""})`,
    upload: (hostPath, envPath) => uploadOver(channel, hostPath, envPath),
    download: (envPath, hostPath) => downloadOver(channel, envPath, hostPath),
    async down() {
      unhook();
      await run(executable, ["instance", "stop", instance], env, 30_000);
    },
  };
}

export function create(ctx: BackendContext): Environment {
  const settings = containerSettings(ctx.config, "singularity_image", DEFAULT_SINGULARITY_IMAGE);
  return new SandboxEnvironment({
    kind: "singularity",
    pendingDescription: `an Apptainer instance (image ${settings.image}; not started yet)`,
    pendingWorkdir: settings.cwd ?? "/",
    up: () => bringUp(ctx, settings),
    killGraceMs: graceMs(ctx.config),
  });
}

export async function doctor(ctx: BackendContext): Promise<DoctorCheck[]> {
  const executable = findRuntime(ctx.childEnv["PATH"]);
  if (!executable) {
    return [
      {
        name: "singularity: runtime",
        ok: false,
        detail: "neither apptainer nor singularity is on PATH",
        fix: "Install Apptainer (https://apptainer.org/docs/admin/main/installation.html).",
      },
    ];
  }
  const env = { ...ctx.childEnv } as NodeJS.ProcessEnv;
  const version = await run(executable, ["version"], env, 10_000);
  const checks: DoctorCheck[] = [
    {
      name: "singularity: runtime",
      ok: version.code === 0,
      detail:
        version.code === 0
          ? `${executable} ${version.stdout.trim()}`
          : `${executable} version failed: ${version.stderr.trim()}`,
      ...(version.code === 0 ? {} : { fix: "Reinstall Apptainer; `apptainer version` must work." }),
    },
  ];
  let image: string;
  try {
    image = containerSettings(ctx.config, "singularity_image", DEFAULT_SINGULARITY_IMAGE).image;
  } catch (error) {
    const failure = error as EnvironmentError;
    return [...checks, { name: "singularity: image", ok: false, detail: failure.message, fix: failure.fix }];
  }
  if (image.startsWith("docker://")) {
    const sif = sifCachePath(ctx.home, image);
    checks.push({
      name: "singularity: image",
      ok: true,
      detail: existsSync(sif) ? `${image} (built: ${sif})` : `${image} (built into ${sif} on first start)`,
    });
  } else if (!image.includes("://")) {
    const path = isAbsolute(image) ? image : resolve(ctx.cwd, image);
    const ok = existsSync(path);
    checks.push({
      name: "singularity: image",
      ok,
      detail: ok ? path : `no image file at ${path}`,
      ...(ok ? {} : { fix: "Point terminal.singularity_image at an existing .sif file." }),
    });
  } else checks.push({ name: "singularity: image", ok: true, detail: image });
  return checks;
}
