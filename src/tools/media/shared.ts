/**
 * Helpers shared by the media and Home Assistant tools: reading their API keys, nested config
 * sections, local binaries, running them, and the home's cache folders.
 */
import { execFile } from "node:child_process";
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { keyEnv } from "../key-env.js";

export type Env = Readonly<Record<string, string | undefined>>;

/** The environment to read keys from: see `keyEnv` (src/tools/key-env.ts). */
export function toolEnv(ctx: { env: Env; secrets?: Env | undefined }): Env {
  return keyEnv(ctx);
}

/** A trimmed, non-empty string value, else undefined. */
export function str(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return trimmed ? trimmed : undefined;
}

/** The first of `names` set to a non-empty value in `env`. */
export function envValue(env: Env, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = str(env[name]);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** `config.a.b.c` as a plain object; `{}` when any step is missing or not an object. */
export function section(config: unknown, ...keys: string[]): Record<string, unknown> {
  let current: unknown = config;
  for (const key of keys) {
    if (!current || typeof current !== "object" || Array.isArray(current)) return {};
    current = (current as Record<string, unknown>)[key];
  }
  return current && typeof current === "object" && !Array.isArray(current)
    ? (current as Record<string, unknown>)
    : {};
}

/** A positive finite number from config, else undefined. */
export function positiveNumber(value: unknown): number | undefined {
  const n = typeof value === "string" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** The absolute path of an executable found on `env.PATH`, else undefined. */
export function findBinary(name: string, env: Env): string | undefined {
  for (const dir of (env["PATH"] ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface RunResult {
  stdout: string;
  stderr: string;
}

/**
 * Runs a program (no shell) and resolves with its output; rejects with an error naming the
 * program, its exit status and the end of its stderr. Stops it when `signal` aborts or after
 * `timeoutMs`.
 */
export function runProgram(
  file: string,
  args: readonly string[],
  options: { signal?: AbortSignal; timeoutMs?: number; input?: string; env?: Env; shell?: boolean } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      [...args],
      {
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 16 * 1024 * 1024,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.env ? { env: options.env as NodeJS.ProcessEnv } : {}),
        ...(options.shell ? { shell: true } : {}),
      },
      (error, stdout, stderr) => {
        if (!error) {
          resolve({ stdout: String(stdout), stderr: String(stderr) });
          return;
        }
        const name = options.shell ? "command" : file.split("/").pop();
        const tail = String(stderr).trim().split("\n").slice(-3).join(" ").slice(0, 400);
        const err = error as NodeJS.ErrnoException & { killed?: boolean; code?: unknown };
        const why =
          err.name === "AbortError"
            ? "was interrupted"
            : err.killed
              ? `timed out after ${Math.round((options.timeoutMs ?? 120_000) / 1000)} s`
              : `failed (${typeof err.code === "number" ? `exit ${err.code}` : String(err.code ?? err.message)})`;
        reject(new Error(`${name} ${why}${tail ? `: ${tail}` : ""}`));
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
    else child.stdin?.end();
  });
}

/**
 * A folder of the home as Python Hermes picks it: the legacy `<home>/<legacy>` when it already
 * exists (older installs), else `<home>/<modern>` (e.g. `cache/audio`). Not created here.
 */
export function homeDir(home: string, modern: string, legacy: string): string {
  const old = join(home, legacy);
  return existsSync(old) ? old : join(home, modern);
}

/** `prefix_YYYYmmdd_HHMMSS_micro.ext`, unique enough for files written by one process. */
export function timestampedName(prefix: string, ext: string, now = new Date()): string {
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  const stamp =
    `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}_` +
    `${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}_` +
    `${pad(now.getMilliseconds(), 3)}${pad(Math.floor(Math.random() * 1000), 3)}`;
  return `${prefix}_${stamp}.${ext}`;
}

/**
 * The message inside an API's error body (`{error: {message}}`, `{error: "..."}`, `{detail}`,
 * `{message}`), else the start of the raw text.
 */
export function apiErrorMessage(body: string): string {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const error = parsed["error"];
    if (error && typeof error === "object") {
      const message = (error as Record<string, unknown>)["message"];
      if (typeof message === "string" && message) return message;
    }
    for (const value of [error, parsed["detail"], parsed["message"]]) {
      if (typeof value === "string" && value) return value;
      if (value && typeof value === "object") return JSON.stringify(value).slice(0, 300);
    }
  } catch {
    // not JSON
  }
  return body.trim().slice(0, 300) || "(empty body)";
}

/**
 * `fetch` with a timeout that also honours `signal`; a connection failure becomes an error
 * naming `label` and the URL's origin.
 */
export async function fetchWithTimeout(
  url: string,
  init: RequestInit & { timeoutMs?: number; label: string },
): Promise<Response> {
  const { timeoutMs = 120_000, label, signal, ...rest } = init;
  const timeout = AbortSignal.timeout(timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    return await fetch(url, { ...rest, signal: combined });
  } catch (error) {
    if (signal?.aborted) throw new Error(`${label} request was interrupted`);
    if (timeout.aborted) throw new Error(`${label} did not answer within ${Math.round(timeoutMs / 1000)} s`);
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const origin = safeOrigin(url);
    throw new Error(`cannot reach ${label} at ${origin}: ${cause?.code ?? cause?.message ?? String(error)}`);
  }
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}
