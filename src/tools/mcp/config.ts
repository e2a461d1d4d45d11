/**
 * `mcp_servers` in config.yaml, read the way Python Hermes reads it:
 *
 *   mcp_servers:
 *     <name>:
 *       command: npx            # stdio server…
 *       args: [-y, some-server]
 *       env: {API_KEY: "${SOME_KEY}"}
 *       url: https://host/mcp   # …or an HTTP server (Streamable HTTP, falling back to SSE)
 *       headers: {Authorization: "Bearer ${TOKEN}"}
 *       timeout: 120            # seconds per tool call
 *       connect_timeout: 60     # seconds to start and list tools
 *       enabled: true
 *       tools: {include: [...], exclude: [...], resources: true, prompts: true}
 *       auth: oauth, oauth: {...}, ssl_verify, client_cert, client_key, sampling: {...}
 *                               # see config-options.ts
 *
 * Pure: no I/O. Problems come back as messages naming the server and the key, one server's mistake
 * never hiding the others.
 */
import { substituteEnv } from "../../config/env-subst.js";
import {
  type McpOAuthConfig,
  type McpSamplingConfig,
  type McpTlsConfig,
  parseOAuth,
  parseSampling,
  parseTls,
} from "./config-options.js";

type Env = Readonly<Record<string, string | undefined>>;

interface CommonServerConfig {
  /** The key under `mcp_servers`, as written. */
  name: string;
  /** Per tool call, in ms (`timeout`, default 120 s). */
  timeoutMs: number;
  /** To connect and list tools, in ms (`connect_timeout`, default 60 s). */
  connectTimeoutMs: number;
  enabled: boolean;
  /** Server tool names to offer (when non-empty, `exclude` is ignored). */
  include: string[];
  /** Server tool names never to offer. */
  exclude: string[];
  /** Offer `list_resources`/`read_resource` wrappers when the server has resources (default true). */
  resources: boolean;
  /** Offer `list_prompts`/`get_prompt` wrappers when the server has prompts (default true). */
  prompts: boolean;
  /** `supports_parallel_tool_calls`: the server's tools may run in parallel with each other. */
  parallel: boolean;
  /** `sampling:`: whether the server may ask the agent's model for completions, and its limits. */
  sampling: McpSamplingConfig;
}

export interface StdioServerConfig extends CommonServerConfig {
  transport: "stdio";
  command: string;
  args: string[];
  /** Variables for the child on top of the filtered inherited environment. */
  env: Record<string, string>;
  /** Working directory of the child; default: Hermes's own. */
  cwd?: string;
}

export interface HttpServerConfig extends CommonServerConfig {
  transport: "http";
  url: string;
  /** Request headers, `${VAR}` references already expanded. */
  headers: Record<string, string>;
  /** `auth: oauth`: tokens from `hermes mcp login NAME`, kept under `<home>/mcp-tokens/`. */
  oauth?: McpOAuthConfig;
  /** `ssl_verify`, `client_cert`, `client_key`. */
  tls?: McpTlsConfig;
}

export type McpServerConfig = StdioServerConfig | HttpServerConfig;

export interface ParsedMcpServers {
  /** Every well-formed server, enabled or not, in config order. */
  servers: McpServerConfig[];
  /** One message per server that could not be read (`mcp_servers.x.timeout: expected …`). */
  errors: string[];
  /** Things that still work but not as written (an unsupported `auth: oauth`). */
  warnings: string[];
}

export const DEFAULT_CALL_TIMEOUT_S = 120;
export const DEFAULT_CONNECT_TIMEOUT_S = 60;

/**
 * Server names as `hermes mcp add` writes them (they become part of tool and toolset names). Names
 * already in config.yaml are read whatever they are.
 */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;

/** A server entry that cannot be used, with the message the user sees. */
export class McpConfigError extends Error {
  constructor(
    readonly server: string,
    readonly key: string | undefined,
    detail: string,
  ) {
    super(`mcp_servers.${server}${key ? `.${key}` : ""}: ${detail}`);
    this.name = "McpConfigError";
  }
}

/**
 * Reads the `mcp_servers` value of a loaded config. Absent, null or empty gives no servers; a
 * value that is not a mapping is one error. `env` expands `${VAR}` in headers (and anything the
 * config loader left unexpanded).
 */
export function parseMcpServers(raw: unknown, env: Env = {}): ParsedMcpServers {
  const result: ParsedMcpServers = { servers: [], errors: [], warnings: [] };
  if (raw === undefined || raw === null) return result;
  if (!isRecord(raw)) {
    result.errors.push(`mcp_servers: expected a mapping of server names to settings, got ${describe(raw)}`);
    return result;
  }
  for (const [name, entry] of Object.entries(raw)) {
    try {
      result.servers.push(parseMcpServer(name, entry, env, result.warnings));
    } catch (error) {
      if (!(error instanceof McpConfigError)) throw error;
      result.errors.push(error.message);
    }
  }
  return result;
}

/** Whether `raw` (`config.mcp_servers`) names at least one server that is not `enabled: false`. */
export function hasEnabledMcpServers(raw: unknown): boolean {
  if (!isRecord(raw)) return false;
  return Object.values(raw).some((entry) => !isRecord(entry) || parseBool(entry["enabled"]) !== false);
}

/** Reads one server entry; throws {@link McpConfigError} naming the server and key. */
export function parseMcpServer(
  name: string,
  entry: unknown,
  env: Env = {},
  warnings: string[] = [],
): McpServerConfig {
  const fail = (key: string | undefined, detail: string): never => {
    throw new McpConfigError(name, key, detail);
  };
  if (name.trim() === "" || /[\r\n]/.test(name)) fail(undefined, "a server needs a name on one line");
  if (!isRecord(entry)) {
    return fail(undefined, `expected a mapping with command or url, got ${describe(entry)}`);
  }
  const common: CommonServerConfig = {
    name,
    timeoutMs: seconds(entry, "timeout", DEFAULT_CALL_TIMEOUT_S, fail),
    connectTimeoutMs: seconds(entry, "connect_timeout", DEFAULT_CONNECT_TIMEOUT_S, fail),
    enabled: boolean(entry, "enabled", true, fail),
    parallel: boolean(entry, "supports_parallel_tool_calls", false, fail),
    ...toolFilters(entry["tools"], fail),
    sampling: parseSampling(entry, fail),
  };
  const command = optionalString(entry, "command", fail);
  const url = optionalString(entry, "url", fail);
  if (command !== undefined && url !== undefined) {
    fail(undefined, "set either command (a local stdio server) or url (an HTTP server), not both");
  }
  if (command !== undefined) {
    if (!command.trim()) fail("command", "is empty; give the program that starts the server");
    const cwd = optionalString(entry, "cwd", fail);
    parseOAuth(entry, false, fail, warnings, name, env);
    parseTls(entry, false, fail, warnings, name, env);
    return {
      ...common,
      transport: "stdio",
      command,
      args: stringList(entry, "args", fail),
      env: stringMap(entry, "env", fail, (value) => expand(value, env)),
      ...(cwd ? { cwd } : {}),
    };
  }
  if (url !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      fail("url", `${JSON.stringify(url)} is not a URL; write it like https://example.com/mcp`);
    }
    if (parsed && parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      fail("url", `${JSON.stringify(url)} must start with http:// or https://`);
    }
    const oauth = parseOAuth(entry, true, fail, warnings, name, env);
    const tls = parseTls(entry, true, fail, warnings, name, env);
    if (tls && parsed?.protocol === "http:") {
      warnings.push(
        `mcp_servers.${name}: ssl_verify and client_cert apply to https:// urls; ${url} is plain http`,
      );
    }
    return {
      ...common,
      transport: "http",
      url,
      headers: stringMap(entry, "headers", fail, (value) => expand(value, env)),
      ...(oauth ? { oauth } : {}),
      ...(tls ? { tls } : {}),
    };
  }
  return fail(undefined, "needs command (a local stdio server) or url (an HTTP server)");
}

/** What a listing shows for a server: its command line, or its URL. */
export function describeEndpoint(server: McpServerConfig): string {
  return server.transport === "stdio" ? [server.command, ...server.args].join(" ") : server.url;
}

type Fail = (key: string | undefined, detail: string) => never;

function toolFilters(
  raw: unknown,
  fail: Fail,
): Pick<CommonServerConfig, "include" | "exclude" | "resources" | "prompts"> {
  if (raw === undefined || raw === null) return { include: [], exclude: [], resources: true, prompts: true };
  if (!isRecord(raw)) fail("tools", `expected a mapping with include or exclude, got ${describe(raw)}`);
  const tools = raw as Record<string, unknown>;
  const prefixed: Fail = (key, detail) => fail(`tools.${key ?? ""}`, detail);
  return {
    include: stringList(tools, "include", prefixed),
    exclude: stringList(tools, "exclude", prefixed),
    resources: boolean(tools, "resources", true, prefixed),
    prompts: boolean(tools, "prompts", true, prefixed),
  };
}

function seconds(entry: Record<string, unknown>, key: string, fallback: number, fail: Fail): number {
  const value = entry[key];
  if (value === undefined || value === null) return fallback * 1000;
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value.trim()) : Number.NaN;
  if (!Number.isFinite(n) || n <= 0 || (typeof value === "string" && value.trim() === "")) {
    return fail(key, `expected a positive number of seconds, got ${describe(value)}`);
  }
  return Math.round(n * 1000);
}

function boolean(entry: Record<string, unknown>, key: string, fallback: boolean, fail: Fail): boolean {
  const value = entry[key];
  if (value === undefined || value === null) return fallback;
  const parsed = parseBool(value);
  if (parsed === undefined) return fail(key, `expected true or false, got ${describe(value)}`);
  return parsed;
}

function parseBool(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (typeof value !== "string") return undefined;
  const word = value.trim().toLowerCase();
  if (["true", "yes", "on", "1"].includes(word)) return true;
  if (["false", "no", "off", "0"].includes(word)) return false;
  return undefined;
}

function optionalString(entry: Record<string, unknown>, key: string, fail: Fail): string | undefined {
  const value = entry[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") return fail(key, `expected text, got ${describe(value)}`);
  return value;
}

function stringList(entry: Record<string, unknown>, key: string, fail: Fail): string[] {
  const value = entry[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return fail(key, `expected a list, got ${describe(value)}`);
  return value.map((item, index) => {
    if (isScalar(item)) return String(item);
    return fail(`${key}.${index}`, `expected text, got ${describe(item)}`);
  });
}

function stringMap(
  entry: Record<string, unknown>,
  key: string,
  fail: Fail,
  transform: (value: string) => string,
): Record<string, string> {
  const value = entry[key];
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) return fail(key, `expected a mapping of names to values, got ${describe(value)}`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null || v === undefined) continue;
    if (!isScalar(v)) fail(`${key}.${k}`, `expected text, got ${describe(v)}`);
    out[k] = transform(String(v));
  }
  return out;
}

function expand(value: string, env: Env): string {
  return substituteEnv(value, env).value;
}

function isScalar(value: unknown): value is string | number | boolean {
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return JSON.stringify(value);
}
