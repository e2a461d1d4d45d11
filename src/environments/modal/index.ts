/**
 * `terminal.backend: modal`: commands run in a Modal sandbox through Modal's official JS SDK
 * (`modal` 0.11, gRPC), required on first use (external to the CLI bundle). Upstream's keys:
 * `modal_image` (a registry reference), `container_cpu`, `container_memory` (MiB); the sandbox
 * lives in the app `hermes-agent` (created when missing), runs `sleep infinity`, and is
 * terminated when hermes stops. Credentials: MODAL_TOKEN_ID + MODAL_TOKEN_SECRET, or the active
 * profile of ~/.modal.toml (MODAL_CONFIG_PATH); MODAL_SERVER_URL and MODAL_ENVIRONMENT as the SDK
 * reads them. Not carried over from upstream: filesystem snapshots between runs
 * (`modal_snapshots.json`) and the Nous-managed gateway mode (`modal_mode`).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ModalClient, Sandbox } from "modal";
import { SandboxEnvironment, type SandboxLink } from "../cloud-environment.js";
import { type ContainerSettings, containerSettings, terminalSection } from "../cloud-settings.js";
import { createExecFiles, downloadOver, uploadOver } from "../exec-files.js";
import { type BackendContext, type DoctorCheck, type Environment, EnvironmentError } from "../types.js";
import { createModalChannel } from "./channel.js";

export type ModalSdk = typeof import("modal");

export const MODAL_APP_NAME = "hermes-agent";
/** A sandbox's lifetime when nothing ends it first (upstream: 3600 s). */
const SANDBOX_TIMEOUT_MS = 3_600_000;

let sdkPromise: Promise<ModalSdk> | undefined;
function loadModalSdk(): Promise<ModalSdk> {
  sdkPromise ??= new Promise<ModalSdk>((resolve) => {
    resolve(createRequire(import.meta.url)("modal") as ModalSdk);
  }).catch((error: unknown) => {
    sdkPromise = undefined;
    throw new EnvironmentError(
      `Modal's SDK (modal) could not be loaded: ${(error as Error).message}`,
      "Reinstall Hermes-TS so its dependencies are complete (npm install in its directory).",
      "runtime",
    );
  });
  return sdkPromise;
}

/** Where the SDK reads its profile (pure over the environment). */
export function modalConfigPath(env: Readonly<Record<string, string | undefined>>): string {
  return env["MODAL_CONFIG_PATH"] || join(env["HOME"] || homedir(), ".modal.toml");
}

/** Token credentials from the environment, or undefined to let the SDK use ~/.modal.toml. */
export function modalTokens(
  env: Readonly<Record<string, string | undefined>>,
): { tokenId: string; tokenSecret: string } | undefined {
  const tokenId = env["MODAL_TOKEN_ID"]?.trim();
  const tokenSecret = env["MODAL_TOKEN_SECRET"]?.trim();
  return tokenId && tokenSecret ? { tokenId, tokenSecret } : undefined;
}

function missingCredentials(env: Readonly<Record<string, string | undefined>>): EnvironmentError | undefined {
  if (modalTokens(env) || existsSync(modalConfigPath(env))) return undefined;
  const half = env["MODAL_TOKEN_ID"]
    ? "MODAL_TOKEN_SECRET"
    : env["MODAL_TOKEN_SECRET"]
      ? "MODAL_TOKEN_ID"
      : undefined;
  return new EnvironmentError(
    half
      ? `terminal.backend is modal but ${half} is not set (and there is no ${modalConfigPath(env)})`
      : `terminal.backend is modal but no Modal credentials were found (no MODAL_TOKEN_ID/MODAL_TOKEN_SECRET, no ${modalConfigPath(env)})`,
    "Put MODAL_TOKEN_ID and MODAL_TOKEN_SECRET in ~/.hermes/.env (from `modal token new`), or choose another terminal.backend.",
    "config",
  );
}

/** An SDK or gRPC failure at start-up, as an EnvironmentError with the fix. */
export function modalStartError(error: unknown, serverUrl: string): EnvironmentError {
  if (error instanceof EnvironmentError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown }).code;
  // nice-grpc Status: 16 UNAUTHENTICATED, 7 PERMISSION_DENIED, 14 UNAVAILABLE, 4 DEADLINE_EXCEEDED.
  if (code === 16 || code === 7 || /missing credentials|unauthenticated|token/i.test(message)) {
    return new EnvironmentError(
      `Modal rejected the credentials (${message})`,
      "Check MODAL_TOKEN_ID/MODAL_TOKEN_SECRET in ~/.hermes/.env (they win over ~/.modal.toml), or run `modal token new`.",
      "config",
    );
  }
  if (
    code === 14 ||
    code === 4 ||
    /ECONNREFUSED|ENOTFOUND|UNAVAILABLE|No connection established/i.test(message)
  ) {
    return new EnvironmentError(
      `Could not reach Modal at ${serverUrl}: ${message}`,
      "Check the network and MODAL_SERVER_URL (unset it for api.modal.com), then try again.",
      "unreachable",
    );
  }
  return new EnvironmentError(
    `The Modal sandbox could not be started: ${message}`,
    "Check terminal.modal_image (a registry image with bash) and your Modal workspace's limits, then try again.",
    "unreachable",
  );
}

function newClient(sdk: ModalSdk, env: Readonly<Record<string, string | undefined>>): ModalClient {
  const tokens = modalTokens(env);
  return new sdk.ModalClient({ ...(tokens ?? {}) });
}

async function bringUp(ctx: BackendContext, settings: ContainerSettings): Promise<SandboxLink> {
  const missing = missingCredentials(ctx.processEnv);
  if (missing) throw missing;
  const sdk = await loadModalSdk();
  const serverUrl = ctx.processEnv["MODAL_SERVER_URL"] || "https://api.modal.com:443";
  let client: ModalClient | undefined;
  let sandbox: Sandbox;
  try {
    client = newClient(sdk, ctx.processEnv);
    const app = await client.apps.fromName(MODAL_APP_NAME, { createIfMissing: true });
    const image = client.images.fromRegistry(settings.image);
    sandbox = await client.sandboxes.create(app, image, {
      command: ["sleep", "infinity"],
      timeoutMs: SANDBOX_TIMEOUT_MS,
      ...(settings.cpu > 0 ? { cpu: settings.cpu } : {}),
      ...(settings.memoryMb > 0 ? { memoryMiB: settings.memoryMb } : {}),
      ...(settings.cwd ? { workdir: settings.cwd } : {}),
    });
  } catch (error) {
    client?.close();
    throw modalStartError(error, serverUrl);
  }
  const channel = createModalChannel(sandbox, graceMs(ctx.config));
  let workdir = settings.cwd;
  if (!workdir) {
    const probe = await channel.exec("cd ~ 2>/dev/null || cd /; pwd").catch(() => undefined);
    workdir =
      probe?.exitCode === 0 && probe.stdout.toString().trim() ? probe.stdout.toString().trim() : "/root";
  }
  return {
    channel,
    files: createExecFiles(channel),
    workdir,
    description: `a Modal sandbox ${sandbox.sandboxId} (image ${settings.image})`,
    upload: (hostPath, envPath) => uploadOver(channel, hostPath, envPath),
    download: (envPath, hostPath) => downloadOver(channel, envPath, hostPath),
    async down() {
      try {
        await sandbox.terminate();
      } catch {
        // Already ended (its timeout) or unreachable: Modal ends it at its timeout anyway.
      }
      client?.close();
    },
  };
}

function graceMs(config: Readonly<Record<string, unknown>>): number {
  const raw = terminalSection(config)["daemon_term_grace_seconds"];
  return typeof raw === "number" && raw >= 0 ? raw * 1000 : 2000;
}

export function create(ctx: BackendContext): Environment {
  const settings = containerSettings(ctx.config, "modal_image");
  return new SandboxEnvironment({
    kind: "modal",
    pendingDescription: `a Modal sandbox (image ${settings.image}; not started yet)`,
    pendingWorkdir: settings.cwd ?? "/root",
    up: () => bringUp(ctx, settings),
    killGraceMs: graceMs(ctx.config),
  });
}

export async function doctor(ctx: BackendContext): Promise<DoctorCheck[]> {
  const missing = missingCredentials(ctx.processEnv);
  const checks: DoctorCheck[] = [
    missing
      ? { name: "modal: credentials", ok: false, detail: missing.message, fix: missing.fix }
      : {
          name: "modal: credentials",
          ok: true,
          detail: modalTokens(ctx.processEnv)
            ? "MODAL_TOKEN_ID/MODAL_TOKEN_SECRET are set"
            : modalConfigPath(ctx.processEnv),
        },
  ];
  let sdk: ModalSdk;
  try {
    sdk = await loadModalSdk();
    checks.push({
      name: "modal: SDK",
      ok: true,
      detail: `modal ${new sdk.ModalClient({ tokenId: "x", tokenSecret: "x" }).version()}`,
    });
  } catch (error) {
    const failure = error as EnvironmentError;
    checks.push({ name: "modal: SDK", ok: false, detail: failure.message, fix: failure.fix });
    return checks;
  }
  if (missing) return checks;
  const serverUrl = ctx.processEnv["MODAL_SERVER_URL"] || "https://api.modal.com:443";
  const client = newClient(sdk, ctx.processEnv);
  try {
    await client.apps.fromName(MODAL_APP_NAME, { createIfMissing: true });
    checks.push({ name: "modal: API", ok: true, detail: `${serverUrl} answers and accepts the credentials` });
  } catch (error) {
    const failure = modalStartError(error, serverUrl);
    checks.push({ name: "modal: API", ok: false, detail: failure.message, fix: failure.fix });
  } finally {
    client.close();
  }
  return checks;
}
