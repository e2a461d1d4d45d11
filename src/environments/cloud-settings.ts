/**
 * Reading upstream's `terminal.*` keys for the cloud and HPC backends (daytona, modal,
 * singularity). Pure: the whole config in, typed settings or an `EnvironmentError` (reason
 * `config`) naming the key and the value out.
 */
import { EnvironmentError } from "./types.js";

/** Upstream's default image for every container backend. */
export const DEFAULT_IMAGE = "nikolaik/python-nodejs:python3.11-nodejs20";

/** Resource and lifetime keys shared by the cloud backends (`container_*`). */
export interface ContainerSettings {
  image: string;
  /** CPUs (0: the platform's default). */
  cpu: number;
  /** MiB (0: the platform's default). */
  memoryMb: number;
  /** MiB (0: the platform's default). */
  diskMb: number;
  /** Keep the sandbox (or its filesystem) when hermes stops, and reuse it next time. */
  persistent: boolean;
  /** `terminal.cwd` when it names an absolute directory inside the environment. */
  cwd?: string;
}

export function terminalSection(config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const terminal = config["terminal"];
  return terminal && typeof terminal === "object" && !Array.isArray(terminal)
    ? (terminal as Record<string, unknown>)
    : {};
}

function numberKey(terminal: Record<string, unknown>, key: string, fallback: number): number {
  const raw = terminal[key];
  if (raw === undefined || raw === null || raw === "") return fallback;
  const value = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value) || value < 0) {
    throw new EnvironmentError(
      `terminal.${key}: expected a non-negative number, got ${JSON.stringify(raw)}`,
      `Set terminal.${key} to a number in config.yaml (or remove it for the default).`,
      "config",
    );
  }
  return value;
}

function boolKey(terminal: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const raw = terminal[key];
  if (raw === undefined || raw === null || raw === "") return fallback;
  if (typeof raw === "boolean") return raw;
  if (raw === "true" || raw === "1" || raw === "yes") return true;
  if (raw === "false" || raw === "0" || raw === "no") return false;
  throw new EnvironmentError(
    `terminal.${key}: expected true or false, got ${JSON.stringify(raw)}`,
    `Set terminal.${key} to true or false in config.yaml.`,
    "config",
  );
}

function stringKey(terminal: Record<string, unknown>, key: string): string | undefined {
  const raw = terminal[key];
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "string") {
    throw new EnvironmentError(
      `terminal.${key}: expected a string, got ${JSON.stringify(raw)}`,
      `Set terminal.${key} to a string in config.yaml.`,
      "config",
    );
  }
  const trimmed = raw.trim();
  return trimmed === "" ? undefined : trimmed;
}

/**
 * The image and `container_*` keys for one backend. `imageKey` is `daytona_image`,
 * `modal_image` or `singularity_image`; defaults follow upstream (1 CPU, 5 GiB memory, 50 GiB
 * disk, persistent).
 */
export function containerSettings(
  config: Readonly<Record<string, unknown>>,
  imageKey: string,
  defaultImage: string = DEFAULT_IMAGE,
): ContainerSettings {
  const terminal = terminalSection(config);
  const cwd = stringKey(terminal, "cwd");
  return {
    image: stringKey(terminal, imageKey) ?? defaultImage,
    cpu: numberKey(terminal, "container_cpu", 1),
    memoryMb: numberKey(terminal, "container_memory", 5120),
    diskMb: numberKey(terminal, "container_disk", 51200),
    persistent: boolKey(terminal, "container_persistent", true),
    // "." and relative paths mean the host's cwd for the local backend; a sandbox has its own.
    ...(cwd?.startsWith("/") ? { cwd } : {}),
  };
}

/** MiB to whole GiB, at least 1 (the unit Daytona and Modal's disk take). */
export function mbToGib(mb: number): number {
  return Math.max(1, Math.ceil(mb / 1024));
}
