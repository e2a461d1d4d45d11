/**
 * Choosing the execution environment: `terminal.backend` (or upstream's `TERMINAL_ENV` mirror)
 * names a backend; each non-local backend lives in its own folder and is loaded only when it is
 * configured, so `hermes -z` with the local shell never pays for docker, ssh or a cloud SDK.
 * There is no fallback: a backend that is unknown, missing or cannot start is an
 * `EnvironmentError`, never a quiet run on the host.
 */
import { createLocalEnvironment, localDoctor } from "./local/index.js";
import {
  type BackendContext,
  type BackendKind,
  type BackendModule,
  type DoctorCheck,
  type Environment,
  EnvironmentError,
} from "./types.js";

/**
 * Each backend's folder under src/environments/. docker and podman share one module (it reads
 * the kind from the config). A folder's `index.ts` exports `create` and `doctor` (`BackendModule`).
 */
const BACKEND_FOLDERS: Readonly<Record<Exclude<BackendKind, "local">, string>> = {
  docker: "docker",
  podman: "docker",
  ssh: "ssh",
  singularity: "singularity",
  daytona: "daytona",
  modal: "modal",
};

/** Every name `terminal.backend` accepts, in the order the error message lists them. */
export const BACKEND_KINDS: readonly BackendKind[] = [
  "local",
  "docker",
  "podman",
  "ssh",
  "singularity",
  "daytona",
  "modal",
];

/** Other spellings upstream accepts for a backend. */
const ALIASES: Readonly<Record<string, BackendKind>> = { apptainer: "singularity" };

/**
 * The backend kind the config asks for: `terminal.backend`, lower-cased and trimmed; empty means
 * local. Throws an `EnvironmentError` (reason "config") naming the valid kinds for anything else.
 */
export function backendKind(config: Readonly<Record<string, unknown>>): BackendKind {
  const raw = terminalSection(config).backend;
  if (raw === undefined || raw === null) return "local";
  if (typeof raw !== "string") {
    throw new EnvironmentError(
      `terminal.backend must be a string, got ${JSON.stringify(raw)}.`,
      `Set terminal.backend to one of: ${BACKEND_KINDS.join(", ")} (hermes config set terminal.backend local).`,
      "config",
    );
  }
  const name = raw.trim().toLowerCase();
  if (name === "") return "local";
  const kind = ALIASES[name] ?? (BACKEND_KINDS as readonly string[]).find((k) => k === name);
  if (kind === undefined) {
    throw new EnvironmentError(
      `Unknown terminal backend "${raw}".`,
      `Set terminal.backend in config.yaml (or TERMINAL_ENV) to one of: ${BACKEND_KINDS.join(", ")}; e.g. hermes config set terminal.backend local.`,
      "config",
    );
  }
  return kind as BackendKind;
}

/** The raw `terminal` section (each backend reads its own keys from it). */
export function terminalSection(config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const section = config.terminal;
  return typeof section === "object" && section !== null && !Array.isArray(section)
    ? (section as Record<string, unknown>)
    : {};
}

/** Loads a backend's module by kind. Throws an `EnvironmentError` when this build lacks it. */
export async function loadBackend(kind: Exclude<BackendKind, "local">): Promise<BackendModule> {
  const folder = BACKEND_FOLDERS[kind];
  let module: Partial<BackendModule>;
  try {
    // A template literal, so esbuild bundles every `./<folder>/index.ts` as a lazy chunk and a
    // backend is enabled by adding its folder; nothing here names a module that may not exist yet.
    module = (await import(`./${folder}/index.ts`)) as Partial<BackendModule>;
  } catch (error) {
    throw new EnvironmentError(
      `The ${kind} terminal backend could not be loaded: ${(error as Error).message}`,
      `This build of Hermes has no ${kind} backend; set terminal.backend to one of the others (local works everywhere).`,
      "runtime",
    );
  }
  if (typeof module.create !== "function" || typeof module.doctor !== "function") {
    throw new EnvironmentError(
      `The ${kind} terminal backend module is incomplete (no create/doctor).`,
      "Reinstall Hermes, or set terminal.backend to another backend.",
      "runtime",
    );
  }
  return module as BackendModule;
}

/**
 * Creates (but does not start) the environment the config names. Unknown kind: `EnvironmentError`
 * "config". The caller starts it (`environment.start()`), which is where a missing runtime or an
 * unreachable host is reported.
 */
export async function createEnvironment(ctx: BackendContext): Promise<Environment> {
  const kind = backendKind(ctx.config);
  if (kind === "local") return createLocalEnvironment(ctx);
  const module = await loadBackend(kind);
  return module.create(ctx);
}

/**
 * `hermes doctor` lines for the configured backend: which backend, then its own checks (runtime
 * found, image present, host reachable). Never throws: a failure becomes a failed check.
 */
export async function doctorChecks(ctx: BackendContext): Promise<DoctorCheck[]> {
  let kind: BackendKind;
  try {
    kind = backendKind(ctx.config);
  } catch (error) {
    return [failedCheck("terminal backend", error)];
  }
  const head: DoctorCheck = { name: "terminal backend", ok: true, detail: kind };
  try {
    if (kind === "local") return [head, ...(await localDoctor(ctx))];
    const module = await loadBackend(kind);
    return [head, ...(await module.doctor(ctx))];
  } catch (error) {
    return [head, failedCheck(`${kind} backend`, error)];
  }
}

function failedCheck(name: string, error: unknown): DoctorCheck {
  if (error instanceof EnvironmentError) return { name, ok: false, detail: error.message, fix: error.fix };
  return { name, ok: false, detail: error instanceof Error ? error.message : String(error) };
}

/** The text a surface prints for an environment that could not start, and the exit code it uses. */
export function environmentFailure(error: EnvironmentError): { message: string; exitCode: 1 | 2 } {
  return {
    message: `${error.message}\nFix: ${error.fix}`,
    exitCode: error.reason === "config" ? 2 : 1,
  };
}

export type {
  BackendContext,
  BackendKind,
  BackendModule,
  DoctorCheck,
  EnvIsolation,
  Environment,
  EnvMount,
  EnvProcess,
  EnvShell,
} from "./types.js";
export { EnvironmentError } from "./types.js";
