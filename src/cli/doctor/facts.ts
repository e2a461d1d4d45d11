/**
 * What `hermes status` and `hermes dump` report about a home, read without changing anything:
 * the model and provider as a run would resolve them, which keys are set (and where), logins in
 * auth.json, the terminal backend, chat platforms, the gateway process, cron jobs, sessions and
 * skills. Secrets never leave here whole: a key is "set", or masked by {@link maskKey}.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { entraSourcesSetUp } from "../../ai/oauth/entra-config.js";
import { PROVIDERS } from "../../ai/providers.js";
import { NoProviderError, resolveRuntime } from "../../ai/resolve.js";
import { vertexFacts } from "../../ai/vertex.js";
import { poolProviders, poolRecords, readAuthStore } from "../../config/auth-store.js";
import { defaultConfig, type HermesConfig } from "../../config/defaults.js";
import { loadEnvFile } from "../../config/env-file.js";
import { ConfigError } from "../../config/errors.js";
import { cronJobsPath, envPath, skillsDir } from "../../config/home.js";
import { loadConfig } from "../../config/load.js";
import { backendKind } from "../../environments/index.js";
import { runningGateway } from "../../gateway/pid-file.js";
import { PLATFORMS } from "../../gateway/platforms/registry.js";
import { protectSecrets } from "../secrets.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Tool and service keys reported next to the providers' own. */
const TOOL_KEYS: readonly string[] = [
  "FIRECRAWL_API_KEY",
  "EXA_API_KEY",
  "PARALLEL_API_KEY",
  "TAVILY_API_KEY",
  "BRAVE_SEARCH_API_KEY",
  "BROWSERBASE_API_KEY",
  "BROWSER_USE_API_KEY",
  "FAL_KEY",
  "ELEVENLABS_API_KEY",
  "VOICE_TOOLS_OPENAI_KEY",
  "GROQ_API_KEY",
  "MISTRAL_API_KEY",
  "HONCHO_API_KEY",
  "GITHUB_TOKEN",
  // Azure AI Foundry with Entra ID (model.auth_mode: entra_id): a service principal's secret.
  "AZURE_CLIENT_SECRET",
];

/** Every key name status and dump know, providers first, without repeats. */
export function knownKeyNames(): string[] {
  return [...new Set([...PROVIDERS.flatMap((p) => p.apiKeyEnv), ...TOOL_KEYS])];
}

/** First and last 4 characters of a long key (`sk-o…cdef`); short keys are fully masked. */
export function maskKey(value: string): string {
  return value.length < 16 ? "****" : `${value.slice(0, 4)}…${value.slice(-4)}`;
}

export interface KeyFact {
  name: string;
  value: string | undefined;
  /** Set in the shell only, not in the home's `.env` (a gateway service would not see it). */
  shellOnly: boolean;
}

export interface ModelFact {
  model: string;
  provider: string;
  baseUrl: string;
  /** How the provider is signed in to, when it is not by key (Entra ID: scope and sources set up). */
  auth?: string;
  /** Why no provider resolves, when none does (first line). */
  error?: string;
  /** More rows for the provider (Vertex's Google sign-in, project, location). */
  extra?: Array<[string, string]>;
}

export function modelFact(config: HermesConfig, env: Env, home: string): ModelFact {
  try {
    const rt = resolveRuntime({ flags: {}, config, env, home });
    return {
      model: rt.model,
      provider: rt.provider,
      baseUrl: rt.baseUrl,
      ...(rt.entra ? { auth: entraAuthFact(rt.entra.scope, env) } : {}),
      ...(rt.vertex ? { extra: vertexFacts(rt.vertex) } : {}),
    };
  } catch (error) {
    if (!(error instanceof NoProviderError)) throw error;
    return {
      model: config.model.default || "(not set)",
      provider: config.model.provider || "(none)",
      baseUrl: config.model.base_url,
      error: error.message.split("\n")[0] ?? error.message,
    };
  }
}

/** Entra ID at a glance: the scope and the sources set up here, no token asked (`--deep` asks). */
function entraAuthFact(scope: string, env: Env): string {
  const sources = entraSourcesSetUp(env);
  const tried =
    sources.length > 0 ? sources.join(", ") : "none set up; managed identity (IMDS) and az login are tried";
  return `Entra ID, scope ${scope} (sources: ${tried})`;
}

/** Each known key with its value (or undefined) and whether it came only from the shell. */
export function keyFacts(env: Env, fromEnvFile: ReadonlySet<string>, home: string): KeyFact[] {
  const inFile = envFileNames(home);
  return knownKeyNames().map((name) => {
    const value = env[name]?.trim() || undefined;
    return { name, value, shellOnly: value !== undefined && !fromEnvFile.has(name) && !inFile.has(name) };
  });
}

function envFileNames(home: string): Set<string> {
  const names = new Set<string>();
  let text = "";
  try {
    text = readFileSync(envPath(home), "utf8");
  } catch {
    return names;
  }
  for (const raw of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(\S.*)?$/.exec(raw);
    if (match?.[1] && (match[2] ?? "").replace(/^["']|["']$/g, "") !== "") names.add(match[1]);
  }
  return names;
}

export interface LoginFact {
  provider: string;
  entries: number;
  oauth: number;
}

/** Credential pool entries per provider in auth.json; an unreadable file is reported, not thrown. */
export function loginFacts(home: string): { logins: LoginFact[]; error?: string } {
  try {
    const { data } = readAuthStore(home);
    const logins = poolProviders(data).map((provider) => {
      const records = poolRecords(data, provider);
      return {
        provider,
        entries: records.length,
        oauth: records.filter((r) => String(r.auth_type ?? "").startsWith("oauth")).length,
      };
    });
    return { logins };
  } catch (error) {
    return { logins: [], error: error instanceof Error ? error.message : String(error) };
  }
}

export interface PlatformFact {
  name: string;
  token: string;
  set: boolean;
}

export function platformFacts(env: Env): PlatformFact[] {
  return Object.entries(PLATFORMS).map(([name, spec]) => ({
    name,
    token: spec.token,
    set: (env[spec.token]?.trim() ?? "") !== "",
  }));
}

export function terminalFact(config: HermesConfig): string {
  try {
    return backendKind(config);
  } catch (error) {
    return `invalid (${error instanceof Error ? error.message : String(error)})`;
  }
}

export function gatewayFact(home: string): string {
  const record = runningGateway(home);
  return record ? `running (pid ${record.pid})` : "stopped";
}

/** `2 active / 3 total`, `0`, or `(unreadable)`. */
export function cronFact(home: string): string {
  const path = cronJobsPath(home);
  if (!existsSync(path)) return "0";
  try {
    const body = JSON.parse(readFileSync(path, "utf8").replace(/^\uFEFF/, "")) as { jobs?: unknown };
    const jobs = Array.isArray(body.jobs) ? body.jobs : [];
    const active = jobs.filter((j) => (j as { enabled?: unknown })?.enabled !== false).length;
    return `${active} active / ${jobs.length} total`;
  } catch {
    return "(unreadable)";
  }
}

/** SKILL.md files under the home's skills folder (archives and hub state left out). */
export function skillCount(home: string): number {
  let count = 0;
  const walk = (dir: string, depth: number): void => {
    if (depth > 4) return;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith(".")) continue;
      const path = join(dir, name);
      if (name === "SKILL.md") count++;
      else if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) walk(path, depth + 1);
    }
  };
  walk(skillsDir(home), 0);
  return count;
}

/** Dotted keys whose value differs from the built-in default, among those support asks about. */
export const INTERESTING_KEYS: readonly string[] = [
  "agent.max_turns",
  "agent.reasoning_effort",
  "terminal.backend",
  "terminal.docker_image",
  "terminal.persistent_shell",
  "approvals.mode",
  "compression.enabled",
  "compression.threshold",
  "display.streaming",
  "display.show_reasoning",
  "memory.provider",
  "security.redact_secrets",
  "checkpoints.enabled",
];

export interface ReportInput {
  env: Record<string, string | undefined>;
  config: HermesConfig;
  /** Why config.yaml did not load (the report then uses the built-in defaults). */
  configError?: string;
}

/**
 * `.env` and config.yaml for a report that must work when the config is broken (that is when a
 * support summary is needed most): a config that does not load gives the defaults and its error.
 * Secrets are registered with the redactor before anything is printed, as for every command.
 */
export function loadForReport(home: string, processEnv: Record<string, string | undefined>): ReportInput {
  const { env } = loadEnvFile(home, processEnv);
  let config: HermesConfig;
  let configError: string | undefined;
  try {
    config = loadConfig({ home, env }).config;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    config = defaultConfig();
    configError = error.message;
  }
  protectSecrets({ home, env, config });
  return configError === undefined ? { env, config } : { env, config, configError };
}
