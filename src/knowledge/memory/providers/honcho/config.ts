/**
 * Honcho's settings, read from the same file and with the same precedence as Python Hermes
 * (plugins/memory/honcho/README.md): the first of `$HERMES_HOME/honcho.json`,
 * `~/.hermes/honcho.json`, `~/.honcho/config.json` that exists; for every key the host block
 * (`hosts.hermes`, or `hosts.hermes_<profile>`) wins over the root, which wins over the environment
 * (`HONCHO_API_KEY`, `HONCHO_BASE_URL`, `HONCHO_ENVIRONMENT`), which wins over the default.
 * Resolution is pure ({@link resolveHonchoSettings}); reading and writing the file are apart.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { isPlainObject } from "../../../../config/coerce.js";
import { atomicWriteFileSync } from "../../../../util/atomic-write.js";

type Env = Readonly<Record<string, string | undefined>>;

export type RecallMode = "hybrid" | "context" | "tools";
export type SessionStrategy = "per-directory" | "per-session" | "per-repo" | "global";

export interface HonchoSettings {
  /** The host block in use (`hermes`, `hermes_<profile>`, or `HERMES_HONCHO_HOST`). */
  host: string;
  apiKey: string | undefined;
  /** Where the key came from, for `status` (`honcho.json`, `HONCHO_API_KEY`). */
  apiKeySource: string | undefined;
  baseUrl: string | undefined;
  environment: string | undefined;
  /** `enabled` as written; when unset, on when a key or a base URL is present. */
  enabled: boolean;
  workspace: string;
  peerName: string | undefined;
  aiPeer: string;
  recallMode: RecallMode;
  saveMessages: boolean;
  sessionStrategy: SessionStrategy;
  /** Directory → session name (`sessions` map). */
  sessions: Record<string, string>;
  contextTokens: number | undefined;
  contextCadence: number;
  dialecticCadence: number;
  dialecticReasoningLevel: string;
  dialecticMaxChars: number;
  messageMaxChars: number;
  /** Seconds a request (and the prefetch as a whole) may take; `timeout` / `requestTimeout`. */
  timeoutSeconds: number;
  /** The file read, when there was one. */
  file: string | undefined;
  /** Problems with values in the file (ignored values, with the default used instead). */
  problems: string[];
}

const RECALL_MODES: readonly RecallMode[] = ["hybrid", "context", "tools"];
const STRATEGIES: readonly SessionStrategy[] = ["per-directory", "per-session", "per-repo", "global"];
const REASONING_LEVELS = ["minimal", "low", "medium", "high", "max"];
const DEFAULT_TIMEOUT_SECONDS = 5;

/** `hermes` for the default profile, `hermes_<profile>` otherwise; `HERMES_HONCHO_HOST` overrides. */
export function honchoHostKey(env: Env, profile: string | undefined): string {
  const override = env["HERMES_HONCHO_HOST"]?.trim();
  if (override) return override;
  return profile && profile !== "default" ? `hermes_${profile}` : "hermes";
}

/** The profile a home belongs to: `~/.hermes/profiles/<name>` → `<name>`; otherwise undefined. */
export function profileOfHome(home: string): string | undefined {
  return basename(dirname(home)) === "profiles" ? basename(home) : undefined;
}

/** Candidate files in precedence order; the first that exists is read. */
export function honchoConfigCandidates(home: string, env: Env): string[] {
  const user = env["HOME"]?.trim() || homedir();
  return [
    join(home, "honcho.json"),
    join(user, ".hermes", "honcho.json"),
    join(user, ".honcho", "config.json"),
  ];
}

/** The profile-local file that `hermes memory setup` writes. */
export function honchoConfigPath(home: string): string {
  return join(home, "honcho.json");
}

export interface HonchoFile {
  path: string;
  data: Record<string, unknown>;
}

/**
 * Reads the first existing candidate. A file that is not a JSON object throws with the path, so the
 * user learns which file to fix (callers turning this into a status line catch it).
 */
export function readHonchoFile(home: string, env: Env): HonchoFile | undefined {
  for (const path of honchoConfigCandidates(home, env)) {
    if (!existsSync(path)) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path, "utf8"));
    } catch (error) {
      throw new Error(
        `${path} is not valid JSON (${error instanceof Error ? error.message : String(error)})`,
      );
    }
    if (!isPlainObject(parsed)) throw new Error(`${path} must hold a JSON object`);
    return { path, data: parsed };
  }
  return undefined;
}

/** Pure: the effective settings from the file's data (or none), the host key and the environment. */
export function resolveHonchoSettings(
  data: Record<string, unknown> | undefined,
  host: string,
  env: Env,
  file?: string,
): HonchoSettings {
  const root = data ?? {};
  const hosts = isPlainObject(root["hosts"]) ? root["hosts"] : {};
  const block = isPlainObject(hosts[host]) ? hosts[host] : {};
  const problems: string[] = [];
  const pick = (key: string): unknown => (key in block ? block[key] : root[key]);
  const text = (key: string): string | undefined => {
    const value = pick(key);
    return typeof value === "string" && value.trim() ? value.trim() : undefined;
  };
  const flag = (key: string, fallback: boolean): boolean => {
    const value = pick(key);
    if (value === undefined || value === null) return fallback;
    if (typeof value === "boolean") return value;
    problems.push(`${key}: expected true or false, got ${JSON.stringify(value)}; using ${fallback}`);
    return fallback;
  };
  const count = (key: string, fallback: number | undefined, min = 1): number | undefined => {
    const value = pick(key);
    if (value === undefined || value === null) return fallback;
    const n = typeof value === "number" ? value : Number(value);
    if (Number.isFinite(n) && n >= min) return n;
    problems.push(`${key}: expected a number of at least ${min}, got ${JSON.stringify(value)}`);
    return fallback;
  };
  const choice = <T extends string>(
    key: string,
    allowed: readonly T[],
    fallback: T,
    alias?: Record<string, T>,
  ) => {
    const value = text(key);
    if (value === undefined) return fallback;
    const mapped = alias?.[value] ?? value;
    if ((allowed as readonly string[]).includes(mapped)) return mapped as T;
    problems.push(`${key}: expected one of ${allowed.join(", ")}, got "${value}"; using ${fallback}`);
    return fallback;
  };

  const fileKey = text("apiKey");
  const envKey = env["HONCHO_API_KEY"]?.trim() || undefined;
  const apiKey = fileKey ?? envKey;
  const baseUrl = text("baseUrl") ?? (env["HONCHO_BASE_URL"]?.trim() || undefined);
  const enabledRaw = pick("enabled");
  const enabled =
    typeof enabledRaw === "boolean" ? enabledRaw : apiKey !== undefined || baseUrl !== undefined;
  const sessionsRaw = pick("sessions");
  const sessions: Record<string, string> = {};
  if (isPlainObject(sessionsRaw)) {
    for (const [dir, name] of Object.entries(sessionsRaw)) if (typeof name === "string") sessions[dir] = name;
  }
  const timeout = count("timeout", undefined, 0) ?? count("requestTimeout", undefined, 0);
  const level = text("dialecticReasoningLevel");
  if (level && !REASONING_LEVELS.includes(level)) {
    problems.push(`dialecticReasoningLevel: expected one of ${REASONING_LEVELS.join(", ")}, got "${level}"`);
  }
  return {
    host,
    apiKey,
    apiKeySource: fileKey ? "honcho.json apiKey" : envKey ? "HONCHO_API_KEY" : undefined,
    baseUrl,
    environment: text("environment") ?? (env["HONCHO_ENVIRONMENT"]?.trim() || undefined),
    enabled,
    workspace: text("workspace") ?? host,
    peerName: text("peerName"),
    aiPeer: text("aiPeer") ?? host,
    recallMode: choice("recallMode", RECALL_MODES, "hybrid", { auto: "hybrid" }),
    saveMessages: flag("saveMessages", true),
    sessionStrategy: choice("sessionStrategy", STRATEGIES, "per-directory"),
    sessions,
    contextTokens: count("contextTokens", undefined),
    contextCadence: count("contextCadence", 1) ?? 1,
    dialecticCadence: count("dialecticCadence", 1) ?? 1,
    dialecticReasoningLevel: level && REASONING_LEVELS.includes(level) ? level : "low",
    dialecticMaxChars: count("dialecticMaxChars", 600) ?? 600,
    messageMaxChars: count("messageMaxChars", 25_000) ?? 25_000,
    timeoutSeconds: timeout && timeout > 0 ? timeout : DEFAULT_TIMEOUT_SECONDS,
    file,
    problems,
  };
}

/** True for a base URL on this machine: a self-hosted Honcho there needs no API key (as upstream). */
export function isLocalBaseUrl(url: string | undefined): boolean {
  if (!url) return false;
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    return host === "localhost" || host === "::1" || /^127\./.test(host);
  } catch {
    return false;
  }
}

/**
 * Writes `patch` into the host block of the profile-local `honcho.json` (created with mode 0600:
 * it may hold `apiKey`), keeping every other key as it was. A `null` value removes that key.
 * Returns the path written.
 */
export function writeHonchoHostSettings(home: string, host: string, patch: Record<string, unknown>): string {
  const path = honchoConfigPath(home);
  let data: Record<string, unknown> = {};
  if (existsSync(path)) {
    const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (!isPlainObject(parsed)) throw new Error(`${path} must hold a JSON object; fix or move it first`);
    data = parsed;
  }
  const hosts = isPlainObject(data["hosts"]) ? { ...data["hosts"] } : {};
  const block: Record<string, unknown> = isPlainObject(hosts[host]) ? { ...hosts[host] } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete block[key];
    else block[key] = value;
  }
  hosts[host] = block;
  data = { ...data, hosts };
  mkdirSync(home, { recursive: true });
  atomicWriteFileSync(path, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  return path;
}
