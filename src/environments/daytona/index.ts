/**
 * `terminal.backend: daytona`: commands run in a Daytona cloud sandbox through the official
 * `@daytonaio/sdk`. Upstream's keys: `daytona_image`, `container_cpu`, `container_memory` (MiB),
 * `container_disk` (MiB, capped at Daytona's 10 GiB), `container_persistent` (keep the sandbox
 * `hermes-default` stopped at exit and resume it next time; otherwise a fresh sandbox is deleted
 * at exit), `terminal.cwd` when absolute; credentials DAYTONA_API_KEY (or DAYTONA_JWT_TOKEN with
 * DAYTONA_ORGANIZATION_ID), DAYTONA_API_URL, DAYTONA_TARGET.
 */

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rename, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, posix, relative } from "node:path";
import type { Daytona, Sandbox } from "@daytonaio/sdk";
import { SandboxEnvironment, type SandboxLink } from "../cloud-environment.js";
import { type ContainerSettings, containerSettings, mbToGib, terminalSection } from "../cloud-settings.js";
import type { BackendContext, BackendModule, DoctorCheck, Environment } from "../types.js";
import { createDaytonaChannel, daemonQuote } from "./channel.js";
import { createDaytonaFiles } from "./files.js";
import {
  type DaytonaClientSettings,
  daytonaClientSettings,
  daytonaStartError,
  loadDaytonaSdk,
  requireCredentials,
} from "./sdk.js";

/** Daytona's per-sandbox disk limit. */
export const DAYTONA_MAX_DISK_GIB = 10;
/** The name a persistent sandbox is kept under (upstream: `hermes-{task_id}`, task "default"). */
export const PERSISTENT_NAME = "hermes-default";
const START_TIMEOUT_SEC = 180;

/** The create request's resources (pure): GiB, disk capped at the platform limit. */
export function daytonaResources(settings: ContainerSettings): {
  cpu?: number;
  memory?: number;
  disk?: number;
  capped: boolean;
} {
  const disk = settings.diskMb > 0 ? mbToGib(settings.diskMb) : undefined;
  return {
    ...(settings.cpu > 0 ? { cpu: Math.max(1, Math.round(settings.cpu)) } : {}),
    ...(settings.memoryMb > 0 ? { memory: mbToGib(settings.memoryMb) } : {}),
    ...(disk !== undefined ? { disk: Math.min(disk, DAYTONA_MAX_DISK_GIB) } : {}),
    capped: disk !== undefined && disk > DAYTONA_MAX_DISK_GIB,
  };
}

function graceMs(config: Readonly<Record<string, unknown>>): number | undefined {
  const raw = terminalSection(config)["daemon_term_grace_seconds"];
  return typeof raw === "number" && raw >= 0 ? raw * 1000 : undefined;
}

async function openSandbox(
  client: Daytona,
  settings: ContainerSettings,
  sdk: typeof import("@daytonaio/sdk"),
): Promise<Sandbox> {
  if (settings.persistent) {
    try {
      const existing = await client.get(PERSISTENT_NAME);
      if (existing.state !== sdk.SandboxState.STARTED) await existing.start(START_TIMEOUT_SEC);
      return existing;
    } catch (error) {
      if (!(error instanceof sdk.DaytonaNotFoundError)) throw error;
    }
  }
  const resources = daytonaResources(settings);
  return client.create(
    {
      image: settings.image,
      name: settings.persistent ? PERSISTENT_NAME : `hermes-${randomBytes(4).toString("hex")}`,
      labels: { hermes_task_id: "default", "hermes-agent": "1" },
      autoStopInterval: 0,
      resources: {
        ...(resources.cpu !== undefined ? { cpu: resources.cpu } : {}),
        ...(resources.memory !== undefined ? { memory: resources.memory } : {}),
        ...(resources.disk !== undefined ? { disk: resources.disk } : {}),
      },
    },
    { timeout: START_TIMEOUT_SEC },
  );
}

/** Host tar of a directory, uploaded and unpacked in the sandbox (the SDK moves files, not trees). */
async function uploadTree(sandbox: Sandbox, hostDir: string, envDir: string): Promise<void> {
  const files: { source: string; destination: string }[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile())
        files.push({ source: full, destination: posix.join(envDir, relative(hostDir, full)) });
    }
  };
  await walk(hostDir);
  await sandbox.fs.createFolder(envDir, "755");
  if (files.length > 0) await sandbox.fs.uploadFiles(files);
}

async function downloadTree(sandbox: Sandbox, envDir: string, hostPath: string): Promise<void> {
  const tar = `/tmp/.hermes-download-${randomBytes(6).toString("hex")}.tar`;
  const parent = posix.dirname(envDir);
  const packed = await sandbox.process.executeCommand(
    `tar -C ${daemonQuote(parent)} -cf ${tar} ${daemonQuote(posix.basename(envDir))}`,
  );
  if (packed.exitCode !== 0) throw new Error(`tar in the sandbox failed: ${packed.result.trim()}`);
  const staging = await mkdtemp(join(tmpdir(), "hermes-daytona-"));
  try {
    await sandbox.fs.downloadFile(tar, join(staging, "tree.tar"));
    await new Promise<void>((resolve, reject) => {
      const child = spawn("tar", ["-C", staging, "-xf", join(staging, "tree.tar")], { stdio: "ignore" });
      child.on("error", reject);
      child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`tar exited with ${code}`))));
    });
    await rm(hostPath, { recursive: true, force: true });
    await rename(join(staging, posix.basename(envDir)), hostPath);
  } finally {
    await rm(staging, { recursive: true, force: true });
    await sandbox.process.executeCommand(`rm -f ${tar}`).catch(() => undefined);
  }
}

async function bringUp(settings: ContainerSettings, client: DaytonaClientSettings): Promise<SandboxLink> {
  requireCredentials(client);
  const sdk = await loadDaytonaSdk();
  let daytona: Daytona | undefined;
  let sandbox: Sandbox;
  try {
    daytona = new sdk.Daytona({
      ...(client.apiKey ? { apiKey: client.apiKey } : {}),
      ...(client.jwtToken ? { jwtToken: client.jwtToken } : {}),
      ...(client.organizationId ? { organizationId: client.organizationId } : {}),
      ...(client.target ? { target: client.target } : {}),
      apiUrl: client.apiUrl,
    });
    sandbox = await openSandbox(daytona, settings, sdk);
  } catch (error) {
    await daytona?.[Symbol.asyncDispose]().catch(() => undefined);
    throw daytonaStartError(error, client);
  }
  const home = settings.cwd ?? (await sandbox.getUserHomeDir().catch(() => undefined)) ?? "/home/daytona";
  const resources = daytonaResources(settings);
  const channel = createDaytonaChannel(sandbox);
  return {
    channel,
    files: createDaytonaFiles(sandbox),
    workdir: home,
    description:
      `a Daytona sandbox ${sandbox.id} (image ${settings.image})` +
      (resources.capped ? `, disk capped at Daytona's ${DAYTONA_MAX_DISK_GIB} GiB` : ""),
    async upload(hostPath, envPath) {
      const info = await stat(hostPath);
      if (info.isDirectory()) await uploadTree(sandbox, hostPath, envPath);
      else await sandbox.fs.uploadFile(hostPath, envPath);
    },
    async download(envPath, hostPath) {
      const info = await sandbox.fs.getFileDetails(envPath);
      if (info.isDir) await downloadTree(sandbox, envPath, hostPath);
      else await sandbox.fs.downloadFile(envPath, hostPath);
    },
    async down() {
      try {
        if (settings.persistent) await sandbox.stop();
        else await sandbox.delete();
      } catch {
        // Already gone, or the API is unreachable: nothing more can be done from here.
      }
      await daytona?.[Symbol.asyncDispose]().catch(() => undefined);
    },
  };
}

export function create(ctx: BackendContext): Environment {
  const settings = containerSettings(ctx.config, "daytona_image");
  const client = daytonaClientSettings(ctx.processEnv);
  const grace = graceMs(ctx.config);
  return new SandboxEnvironment({
    kind: "daytona",
    pendingDescription: `a Daytona sandbox (image ${settings.image}; not started yet)`,
    pendingWorkdir: settings.cwd ?? "/home/daytona",
    up: () => bringUp(settings, client),
    ...(grace !== undefined ? { killGraceMs: grace } : {}),
  });
}

export async function doctor(ctx: BackendContext): Promise<DoctorCheck[]> {
  const client = daytonaClientSettings(ctx.processEnv);
  const checks: DoctorCheck[] = [];
  const hasKey = Boolean(client.apiKey || (client.jwtToken && client.organizationId));
  checks.push({
    name: "daytona: credentials",
    ok: hasKey,
    detail: hasKey ? "DAYTONA_API_KEY is set" : "DAYTONA_API_KEY is not set",
    ...(hasKey ? {} : { fix: "Put DAYTONA_API_KEY=<key from app.daytona.io> in ~/.hermes/.env." }),
  });
  let sdk: typeof import("@daytonaio/sdk");
  try {
    sdk = await loadDaytonaSdk();
    checks.push({ name: "daytona: SDK", ok: true, detail: "@daytonaio/sdk loads" });
  } catch (error) {
    checks.push({
      name: "daytona: SDK",
      ok: false,
      detail: (error as Error).message,
      fix: "Reinstall Hermes-TS.",
    });
    return checks;
  }
  if (!hasKey) return checks;
  const daytona = new sdk.Daytona({
    ...(client.apiKey ? { apiKey: client.apiKey } : {}),
    ...(client.jwtToken ? { jwtToken: client.jwtToken } : {}),
    ...(client.organizationId ? { organizationId: client.organizationId } : {}),
    apiUrl: client.apiUrl,
    useDeprecatedPolling: true,
  });
  try {
    await daytona.list({ limit: 1 }).next();
    checks.push({ name: "daytona: API", ok: true, detail: `${client.apiUrl} answers and accepts the key` });
  } catch (error) {
    const failure = daytonaStartError(error, client);
    checks.push({ name: "daytona: API", ok: false, detail: failure.message, fix: failure.fix });
  } finally {
    await daytona[Symbol.asyncDispose]().catch(() => undefined);
  }
  return checks;
}

export const backend: BackendModule = { create, doctor };
