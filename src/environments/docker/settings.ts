/**
 * The docker/podman backend's settings, read from `terminal.*` with upstream's key names (pure).
 * Secrets reach the container only through `docker_env` (literal values) and `docker_forward_env`
 * (names whose values are taken from Hermes's own environment): nothing else of the host's
 * environment is passed on.
 */
import { createHash } from "node:crypto";
import { isAbsolute, resolve } from "node:path";
import { type BackendContext, EnvironmentError, type EnvMount } from "../types.js";

export const DEFAULT_IMAGE = "nikolaik/python-nodejs:python3.11-nodejs20";

export interface DockerSettings {
  kind: "docker" | "podman";
  /** The CLI: `docker`, `HERMES_DOCKER_BINARY`, or `podman`. */
  binary: string;
  image: string;
  /** Host directories mounted into the container (volumes, the cwd, credential files). */
  mounts: EnvMount[];
  /** Variables set in the container (docker_env, then docker_forward_env). */
  env: Record<string, string>;
  workdir: string;
  /** `uid:gid` to run as, when docker_run_as_host_user. */
  user?: string;
  extraArgs: string[];
  cpus?: number;
  memoryMb?: number;
  diskMb?: number;
  /** Keep the container when hermes exits and reuse it next time. */
  persistent: boolean;
  /** Label value naming the persistent container of this home and image. */
  persistKey: string;
  graceMs: number;
  idleLifetimeMs?: number;
}

function bad(key: string, want: string, got: unknown): EnvironmentError {
  return new EnvironmentError(
    `terminal.${key} must be ${want}, got ${JSON.stringify(got)}.`,
    `Fix terminal.${key} in config.yaml (hermes config set terminal.${key} ...).`,
    "config",
  );
}

function stringList(t: Record<string, unknown>, key: string): string[] {
  const v = t[key];
  if (v === undefined || v === null) return [];
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v as string[];
  throw bad(key, "a list of strings", v);
}

function positive(t: Record<string, unknown>, key: string): number | undefined {
  const v = t[key];
  if (v === undefined || v === null || v === 0) return undefined;
  if (typeof v === "number" && Number.isFinite(v) && v > 0) return v;
  throw bad(key, "a positive number", v);
}

function flag(t: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const v = t[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v === "boolean") return v;
  throw bad(key, "true or false", v);
}

/** Parses `docker_volumes` entries: `host:container[:ro|rw]`; a relative host path is from the cwd. */
export function parseVolume(spec: string, cwd: string): EnvMount {
  const parts = spec.split(":");
  const mode = parts.length === 3 ? parts[2] : undefined;
  if (
    parts.length < 2 ||
    parts.length > 3 ||
    !parts[0] ||
    !parts[1] ||
    (mode && mode !== "ro" && mode !== "rw")
  ) {
    throw bad("docker_volumes", 'entries like "/host/dir:/container/dir" or "...:ro"', spec);
  }
  if (!isAbsolute(parts[1])) throw bad("docker_volumes", "entries with an absolute container path", spec);
  return { hostPath: resolve(cwd, parts[0]), envPath: parts[1], readOnly: mode === "ro" };
}

export function resolveDockerSettings(ctx: BackendContext, kind: "docker" | "podman"): DockerSettings {
  const raw = ctx.config.terminal;
  const t = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const binary = kind === "podman" ? "podman" : ctx.processEnv.HERMES_DOCKER_BINARY?.trim() || "docker";
  const image =
    typeof t.docker_image === "string" && t.docker_image.trim() ? t.docker_image.trim() : DEFAULT_IMAGE;
  const mounts = stringList(t, "docker_volumes").map((v) => parseVolume(v, ctx.cwd));
  const mountCwd = flag(t, "docker_mount_cwd_to_workspace", false);
  if (mountCwd) mounts.push({ hostPath: ctx.cwd, envPath: "/workspace", readOnly: false });
  // credential_files: host files made visible read-only at the same path under the container's home.
  for (const file of stringList(t, "credential_files")) {
    const host = resolve(ctx.cwd, file.replace(/^~(?=\/|$)/, ctx.processEnv.HOME ?? "~"));
    const home = ctx.processEnv.HOME;
    const inside = home && host.startsWith(`${home}/`) ? `/root/${host.slice(home.length + 1)}` : host;
    mounts.push({ hostPath: host, envPath: inside, readOnly: true });
  }
  const env: Record<string, string> = {};
  const literal = t.docker_env;
  if (literal !== undefined && literal !== null) {
    if (typeof literal !== "object" || Array.isArray(literal))
      throw bad("docker_env", "a map of NAME: value", literal);
    for (const [k, v] of Object.entries(literal as Record<string, unknown>)) env[k] = String(v);
  }
  for (const name of stringList(t, "docker_forward_env")) {
    const value = ctx.processEnv[name];
    if (value !== undefined) env[name] = value;
  }
  for (const name of Object.keys(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw bad("docker_env", "variable names of letters, digits and _", name);
  }
  const runAsHost = flag(t, "docker_run_as_host_user", false);
  const uid = process.getuid?.();
  const gid = process.getgid?.();
  const persistent =
    flag(t, "container_persistent", false) || flag(t, "docker_persist_across_processes", false);
  const grace = positive(t, "daemon_term_grace_seconds");
  const lifetime = positive(t, "lifetime_seconds");
  const cpus = positive(t, "container_cpu");
  const memoryMb = positive(t, "container_memory");
  const diskMb = positive(t, "container_disk");
  return {
    kind,
    binary,
    image,
    mounts,
    env,
    workdir: mountCwd ? "/workspace" : runAsHost ? "/tmp" : "/root",
    ...(runAsHost && uid !== undefined && gid !== undefined ? { user: `${uid}:${gid}` } : {}),
    extraArgs: stringList(t, "docker_extra_args"),
    ...(cpus === undefined ? {} : { cpus }),
    ...(memoryMb === undefined ? {} : { memoryMb }),
    ...(diskMb === undefined ? {} : { diskMb }),
    persistent,
    persistKey: createHash("sha256").update(`${kind}\0${ctx.home}\0${image}`).digest("hex").slice(0, 16),
    graceMs: (grace ?? 2) * 1000,
    ...(lifetime === undefined ? {} : { idleLifetimeMs: lifetime * 1000 }),
  };
}
