/**
 * Decides which provider, model, endpoint and key a session talks to, from command-line flags,
 * `config.yaml` and the environment, and builds the transport for it.
 */
import { join } from "node:path";
import { readClaudeCodeToken } from "../config/claude-code.js";
import type { HermesConfig } from "../config/defaults.js";
import { resolveHome } from "../config/home.js";
import { processRedactor } from "../util/redact.js";
import { detectApiMode } from "./api-mode.js";
import { NoProviderError } from "./no-provider.js";
import { type EntraSettings, entraSettings } from "./oauth/entra-config.js";
import {
  activeLoginProvider,
  copilotLogin,
  loginKey,
  poolLoginKey,
  type RuntimeLogin,
} from "./oauth/runtime-login.js";
import { isStoredLoginProvider, loginCommand } from "./oauth/types.js";
import { findProvider, PROVIDERS, type ProviderProfile } from "./providers.js";
import { redactingTransport } from "./redacting-transport.js";
import { type AcpLaunch, copilotAcpRuntimeLaunch } from "./transports/acp-launch.js";
import type { ApiMode, Transport } from "./types.js";
import { isVertexClaude, type VertexSettings, vertexModelId, withVertexProject } from "./vertex.js";
import { vertexRuntimeUrl, vertexSettings } from "./vertex-runtime.js";

export interface RuntimeFlags {
  model?: string | undefined;
  provider?: string | undefined;
  baseUrl?: string | undefined;
}

export interface ResolvedRuntime {
  /** Canonical provider id (`custom` for an alias such as `ollama`, or `custom:<name>`). */
  provider: string;
  model: string;
  /** Without a trailing slash. */
  baseUrl: string;
  apiKey: string | undefined;
  apiMode: ApiMode;
  /**
   * The OAuth login `apiKey` came from (Nous Portal, ChatGPT, Claude Pro/Max, Copilot): the
   * transport renews the bearer from it before it expires and after a 401. Absent for keys.
   */
  login?: RuntimeLogin | undefined;
  /**
   * True when nothing named a model and `model` is the provider's placeholder default: for a local
   * server the caller may ask the server which models it serves (cli/setup/local-model.ts).
   */
  modelIsDefault?: boolean;
  /** The header carrying the key instead of `Authorization: Bearer` (the catalog's `apiKeyHeader`). */
  apiKeyHeader?: string | undefined;
  /**
   * Azure AI Foundry with `model.auth_mode: entra_id`: no key; the transport sends an Entra ID
   * bearer for this scope, renewed before it expires and after a 401 (oauth/azure-token.ts).
   */
  entra?: EntraSettings | undefined;
  /**
   * Google Vertex AI's credentials, project and location (no secret): the transport gets each
   * access token from them (vertex-transport.ts). Set only for the `vertex` provider.
   */
  vertex?: VertexSettings | undefined;
  /**
   * For `copilot-acp`: the agent program (found on PATH) and its arguments. The transport starts
   * it and speaks ACP to it instead of HTTP to `baseUrl` (`acp://copilot`).
   */
  acp?: AcpLaunch | undefined;
}

export type Env = Readonly<Record<string, string | undefined>>;

export { NoProviderError };

/** The runtime names an api_mode that has no transport yet. A configuration error (exit 2). */
export class UnsupportedApiModeError extends Error {
  readonly apiMode: ApiMode;
  constructor(apiMode: ApiMode, provider: string) {
    super(
      `api_mode "${apiMode}" (provider ${provider}) is not supported yet.\n` +
        "Use an OpenAI-compatible endpoint (api_mode chat_completions), e.g.: hermes config set model.provider openrouter",
    );
    this.name = "UnsupportedApiModeError";
    this.apiMode = apiMode;
  }
}

/** Environment variables that name a provider when nothing else does, in priority order. */
const ENV_DETECTION: readonly { env: string; provider: string }[] = [
  { env: "OPENROUTER_API_KEY", provider: "openrouter" },
  { env: "NOUS_API_KEY", provider: "nous" },
  { env: "ANTHROPIC_API_KEY", provider: "anthropic" },
  { env: "OPENAI_API_KEY", provider: "openai-api" },
];

interface Choice {
  /** As written, possibly an alias (`ollama`) or `custom:<name>`. */
  provider: string | undefined;
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string | undefined;
  apiMode: string | undefined;
}

/**
 * Resolves the runtime. Precedence: flags, then `config.yaml` (`model.*`), then the environment
 * (`OPENAI_BASE_URL` for a custom endpoint; else the first of OPENROUTER_API_KEY, NOUS_API_KEY,
 * ANTHROPIC_API_KEY, OPENAI_API_KEY; `HERMES_INFERENCE_MODEL` for the model), then the provider's
 * default model. `model.base_url` and `model.api_key` apply only to the provider config.yaml names,
 * and nothing from config.yaml applies once `--provider` names a different one (`--provider nous`
 * does not inherit OpenRouter's model). A base URL without a provider means `custom`; "auto" means
 * unset. Throws `NoProviderError` (nothing configured, unknown provider, missing key or URL).
 * Reads one file: Claude Code's credentials under env `HOME`, for Anthropic with no key set.
 */
export function resolveRuntime(input: {
  flags: RuntimeFlags;
  config: HermesConfig;
  env: Env;
  /**
   * The Hermes home whose OAuth logins (auth.json, `.anthropic_oauth.json`) may stand in for a
   * key: the active home of the command (under `-p NAME` the profile's). Required so no caller
   * forgets it: `-p` does not set HERMES_HOME, so a guess from `env` would read another home's
   * logins. Undefined only where no home exists (tests, library use): then HERMES_HOME, else
   * `$HOME/.hermes` from `env`; with neither, logins are not used.
   */
  home: string | undefined;
}): ResolvedRuntime {
  const { flags, config, env } = input;
  const home = input.home ?? homeFromEnv(env);
  const flagChoice: Choice = {
    provider: cleanProvider(flags.provider),
    baseUrl: clean(flags.baseUrl),
    apiKey: undefined,
    model: clean(flags.model),
    apiMode: undefined,
  };
  const configChoice: Choice = {
    provider: cleanProvider(config.model.provider),
    baseUrl: clean(config.model.base_url),
    apiKey: clean(config.model.api_key),
    model: clean(config.model.default),
    apiMode: clean(config.model.api_mode),
  };
  const envChoice = detectFromEnv(env);

  const flagProvider = flagChoice.provider ?? (flagChoice.baseUrl ? "custom" : undefined);
  const configProvider = configChoice.provider ?? (configChoice.baseUrl ? "custom" : undefined);
  // A login recorded as active (Python Hermes's `hermes login`) beats keys that merely exist.
  const loginProvider =
    flagProvider === undefined && configProvider === undefined && home
      ? activeLoginProvider(home)
      : undefined;
  const providerName = flagProvider ?? configProvider ?? loginProvider ?? envChoice?.provider;
  if (!providerName) {
    throw new NoProviderError(
      "No model provider is configured.\n" +
        "Run: hermes setup (pick a provider, paste a key or point at a local server), or set OPENROUTER_API_KEY (or OPENAI_BASE_URL for a local server) in ~/.hermes/.env",
    );
  }
  // The endpoint and key in config.yaml belong to config.yaml's provider; its model and api_mode
  // hold unless the flags switch to a different provider.
  const switched =
    flagProvider !== undefined && configProvider !== undefined && !sameProvider(flagProvider, configProvider);
  const configEndpoint = configProvider !== undefined && !switched ? configChoice : undefined;
  const configModel = switched ? undefined : configChoice;
  const fromEnv = !flagProvider && !configProvider && !loginProvider ? envChoice : undefined;

  const named = namedCustomProvider(providerName, config);
  const profile = named ? findProvider("custom") : findProvider(providerName);
  if (!profile) {
    throw new NoProviderError(
      `Unknown provider "${providerName}".\n` +
        `Use one of: ${PROVIDERS.map((p) => p.id).join(", ")} (or a name from custom_providers in config.yaml).`,
    );
  }
  const providerId = named ? `custom:${named.name}` : profile.id;

  const baseUrl =
    flagChoice.baseUrl ??
    configEndpoint?.baseUrl ??
    named?.baseUrl ??
    fromEnv?.baseUrl ??
    // An alias's own address (ollama's port) beats OPENAI_BASE_URL, which beats the profile default.
    clean(profile.aliasBaseUrls?.[providerName.toLowerCase()]) ??
    firstEnv(env, profile.baseUrlEnv ?? []) ??
    clean(profile.baseUrl);
  if (!baseUrl) {
    const ownVar = profile.id === "custom" ? undefined : profile.baseUrlEnv?.[0];
    // Only fixes every command has: the wizard, `hermes model` on a terminal, the variable, config.yaml.
    throw new NoProviderError(
      `Provider "${providerName}" needs a base URL.\n` +
        (ownVar
          ? `Run hermes setup model, or hermes model ${profile.id}:MODEL on a terminal (both ask for the endpoint); ` +
            `or set ${ownVar} in ~/.hermes/.env; or set model.provider: ${profile.id} and model.base_url in config.yaml`
          : "Run hermes setup model (it asks for the server's address); or set OPENAI_BASE_URL in ~/.hermes/.env; " +
            "or set model.provider: custom and model.base_url (e.g. http://127.0.0.1:8080/v1) in config.yaml"),
      { missing: "base_url", provider: profile.id },
    );
  }

  // Entra ID replaces the key: none is needed, and none is sent even when one is set.
  const entra =
    !named && profile.id === "azure-foundry"
      ? entraSettings(config.model as unknown as Record<string, unknown>)
      : undefined;

  const explicitBaseUrl =
    (flagChoice.baseUrl ??
      configEndpoint?.baseUrl ??
      named?.baseUrl ??
      fromEnv?.baseUrl ??
      firstEnv(env, profile.baseUrlEnv ?? [])) !== undefined;
  // Vertex signs in with Google credentials, not a key (vertex.ts); its URL names the project.
  const vertex = profile.id === "vertex" && !named ? vertexSettings(config, env) : undefined;
  let apiKey = entra
    ? undefined
    : (configEndpoint?.apiKey ?? named?.apiKey ?? fromEnv?.apiKey ?? keyFromEnv(profile, baseUrl, env));
  let login: RuntimeLogin | undefined;
  let loginBaseUrl: string | undefined;
  if (!apiKey && !named && profile.login && home) {
    const stored = loginKey(profile.login, { home, env, baseUrl, explicitBaseUrl });
    if (stored) {
      apiKey = stored.apiKey;
      login = stored.login;
      loginBaseUrl = stored.baseUrl;
    }
  }
  if (!apiKey && !named) apiKey = claudeCodeKey(profile, baseUrl, env);
  if (!apiKey && !named && !login && profile.login && home && isStoredLoginProvider(profile.login)) {
    // The main login was removed but a second account's OAuth entry is in the pool: start on it.
    const pooled = poolLoginKey(profile.login, {
      home,
      env,
      config: config as unknown as Record<string, unknown>,
      explicitBaseUrl,
    });
    if (pooled) {
      apiKey = pooled.apiKey;
      loginBaseUrl = pooled.baseUrl;
    }
  }
  if (apiKey && !login && profile.login === "copilot") {
    // A GitHub token is not what Copilot's API takes: the transport exchanges it first.
    const copilot = copilotLogin(apiKey, { home: home ?? "", explicitBaseUrl });
    if ("problem" in copilot) throw new NoProviderError(`Provider copilot: ${copilot.problem}`);
    login = copilot.login;
  }
  if (!apiKey && !profile.keyOptional && !entra) {
    const vars = profile.apiKeyEnv.join(" or ");
    const logIn = profile.login ? `Log in with: ${loginCommand(profile.login)}` : "";
    if (profile.apiKeyEnv.length === 0) {
      throw new NoProviderError(`Provider ${profile.id} needs a login, and there is none.\n${logIn}`);
    }
    throw new NoProviderError(
      `Provider ${profile.id} needs an API key, and ${vars} is not set.\n` +
        `Add ${profile.apiKeyEnv[0] ?? "the key"} to ~/.hermes/.env, or run: hermes config set model.api_key <key>` +
        (logIn ? `; or ${logIn.charAt(0).toLowerCase()}${logIn.slice(1)}` : ""),
    );
  }

  const chosenModel =
    flagChoice.model ?? configModel?.model ?? named?.model ?? clean(env["HERMES_INFERENCE_MODEL"]);
  const model = vertex
    ? vertexModelId(chosenModel ?? profile.defaultModel)
    : (chosenModel ?? profile.defaultModel);

  // A Claude model on Vertex speaks Anthropic's Messages wire at its publisher endpoint; Gemini
  // and the rest, the OpenAI-compatible one.
  const vertexUrl = vertex
    ? vertexRuntimeUrl(vertex, env, flagChoice.baseUrl ?? configEndpoint?.baseUrl, model)
    : undefined;
  let apiMode: ApiMode;
  try {
    apiMode = vertex
      ? isVertexClaude(model)
        ? "anthropic_messages"
        : "chat_completions"
      : detectApiMode({
          provider: profile.id,
          baseUrl,
          model,
          explicit: configModel?.apiMode ?? named?.apiMode,
        });
  } catch (err) {
    throw new NoProviderError((err as Error).message);
  }

  const finalUrl = (vertexUrl ?? loginBaseUrl ?? baseUrl).replace(/\/+$/, "");
  const acp = profile.id === "copilot-acp" && !named ? copilotAcpRuntimeLaunch(env) : undefined;
  return {
    provider: providerId,
    model,
    baseUrl: finalUrl,
    apiKey,
    apiMode,
    ...(login ? { login } : {}),
    ...(chosenModel === undefined ? { modelIsDefault: true } : {}),
    ...(profile.apiKeyHeader && !named && !entra ? { apiKeyHeader: profile.apiKeyHeader } : {}),
    ...(entra ? { entra } : {}),
    ...(vertex ? { vertex } : {}),
    ...(acp ? { acp } : {}),
  };
}

/** The home whose logins apply when the caller did not say: HERMES_HOME, else `$HOME/.hermes`. */
function homeFromEnv(env: Env): string | undefined {
  const userHome = clean(env["HOME"]);
  if (clean(env["HERMES_HOME"])) return resolveHome({ env, ...(userHome ? { homedir: userHome } : {}) });
  return userHome ? join(userHome, ".hermes") : undefined;
}

export interface TransportOptions {
  timeoutMs?: number | undefined;
  defaultHeaders?: Record<string, string> | undefined;
  stream?: boolean | undefined;
  /** Anthropic prompt-cache lifetime (`prompt_caching.cache_ttl`): "5m" (default) or "1h". */
  cacheTtl?: string | undefined;
  /** A started stream silent this long is cut as stalled (`agent.stream_stall_timeout`); 0 never. */
  stallTimeoutMs?: number | undefined;
  /**
   * OpenRouter's provider preferences (`provider_routing`: sort, only, ignore, order,
   * require_parameters, data_collection, ...), sent as the request's `provider` object on
   * OpenRouter only.
   */
  providerRouting?: Readonly<Record<string, unknown>> | undefined;
  /** Environment for transports that read their own credentials (Bedrock: AWS_*). */
  env?: Env | undefined;
  /** The working directory of a transport that runs a program (`copilot-acp`); default the process's. */
  cwd?: string | undefined;
  /** config.yaml's `bedrock:` section (`region`, `guardrail`). */
  bedrock?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The `provider` object OpenRouter reads from `provider_routing`: known keys with a value, empty
 * lists and blank strings dropped; undefined when nothing is left.
 */
export function openRouterProviderPreferences(
  routing: Readonly<Record<string, unknown>> | undefined,
): Record<string, unknown> | undefined {
  if (!routing || typeof routing !== "object") return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(routing)) {
    if (value === null || value === undefined) continue;
    if (typeof value === "string" && value.trim() === "") continue;
    if (Array.isArray(value)) {
      const items = value
        .filter((v) => typeof v === "string" && v.trim() !== "")
        .map((v) => String(v).trim());
      if (items.length > 0) out[key] = items;
      continue;
    }
    out[key] = typeof value === "string" ? value.trim() : value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function isOpenRouter(runtime: ResolvedRuntime): boolean {
  if (runtime.provider.toLowerCase() === "openrouter") return true;
  try {
    return new URL(runtime.baseUrl).hostname.toLowerCase().endsWith("openrouter.ai");
  } catch {
    return false;
  }
}

/**
 * The transport for a resolved runtime, loading its module on demand. Throws
 * `UnsupportedApiModeError` for an api_mode without a transport yet.
 */
export async function createTransport(
  runtime: ResolvedRuntime,
  options: TransportOptions = {},
): Promise<Transport> {
  // Every key this process sends to a provider (the configured one, a pool rotation, a fallback,
  // the auxiliary model's) is a secret to keep out of everything else it writes.
  const redactor = processRedactor();
  redactor.addSecret(runtime.apiKey, `${runtime.provider.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}_KEY`);
  if (runtime.entra) {
    // Each new Entra ID bearer gets its own wire client, built here so it is redacted too.
    const { createEntraTransport } = await import("./oauth/azure-token.js");
    const build = (bearer: string) =>
      createTransport({ ...runtime, entra: undefined, apiKeyHeader: undefined, apiKey: bearer }, options);
    return createEntraTransport({ ...runtime, scope: runtime.entra.scope, env: options.env, build });
  }
  if (runtime.login) return loginTransport(runtime, runtime.login, options);
  if (runtime.vertex) return vertexTransport(runtime, runtime.vertex, options);
  if (runtime.acp) {
    const { createAcpTransport } = await import("./transports/acp-provider.js");
    const acp = createAcpTransport({
      launch: runtime.acp,
      env: options.env ?? process.env,
      baseUrl: runtime.baseUrl,
      ...(options.cwd ? { cwd: options.cwd } : {}),
      ...(options.stallTimeoutMs !== undefined ? { stallTimeoutMs: options.stallTimeoutMs } : {}),
    });
    return redactingTransport(acp, redactor);
  }
  return redactingTransport(await wireTransport(runtime, options), redactor);
}

/**
 * A transport over an OAuth login: each bearer the login yields (renewed before it expires and
 * after a 401) gets its own wire client, built through `createTransport` so it is redacted too.
 */
async function loginTransport(
  runtime: ResolvedRuntime,
  login: RuntimeLogin,
  options: TransportOptions,
): Promise<Transport> {
  const [{ createOAuthTransport }, { oauthSource }, { defaultOAuthDeps }] = await Promise.all([
    import("./oauth/transport.js"),
    import("./oauth/source.js"),
    import("./oauth/types.js"),
  ]);
  const deps = defaultOAuthDeps(options.env ?? process.env);
  const githubToken = login.provider === "copilot" ? runtime.apiKey : undefined;
  return createOAuthTransport({
    apiMode: runtime.apiMode,
    baseUrl: runtime.baseUrl,
    source: oauthSource(login.provider, login.home, deps, githubToken),
    build: (credential) =>
      createTransport(
        {
          ...runtime,
          login: undefined,
          apiKey: credential.accessToken,
          baseUrl: (login.followBaseUrl && credential.baseUrl ? credential.baseUrl : runtime.baseUrl).replace(
            /\/+$/,
            "",
          ),
        },
        credential.headers
          ? { ...options, defaultHeaders: { ...options.defaultHeaders, ...credential.headers } }
          : options,
      ),
  });
}

/**
 * A transport to Vertex AI: each Google access token (renewed before it expires and after a 401)
 * gets its own chat-completions client, built through `createTransport` so it is redacted too.
 */
async function vertexTransport(
  runtime: ResolvedRuntime,
  settings: VertexSettings,
  options: TransportOptions,
): Promise<Transport> {
  const { createVertexTransport, vertexTokenSource } = await import("./vertex-transport.js");
  return createVertexTransport({
    apiMode: runtime.apiMode,
    settings,
    baseUrl: runtime.baseUrl,
    model: runtime.model,
    source: vertexTokenSource(settings),
    build: (token, known) =>
      createTransport(
        {
          ...runtime,
          vertex: undefined,
          apiKey: token.accessToken,
          // The metadata server's project, once asked, takes its place in the URL.
          baseUrl: withVertexProject(runtime.baseUrl, known.projectId),
        },
        options,
      ),
  });
}

async function wireTransport(runtime: ResolvedRuntime, options: TransportOptions): Promise<Transport> {
  const { cacheTtl, providerRouting, env, bedrock, cwd: _cwd, ...common } = options;
  if (runtime.apiMode === "anthropic_messages") {
    const { createAnthropicTransport } = await import("./transports/anthropic-messages.js");
    // MiniMax's Anthropic endpoint wants the key as a bearer token; Anthropic itself as x-api-key
    // (OAuth tokens, sk-ant-oat…, are recognised by the transport and sent as bearer).
    const bearer = ["minimax", "minimax-cn", "minimax-oauth"].includes(runtime.provider.toLowerCase());
    // Claude on Vertex AI: a Google access token as bearer, the request moved to the publisher path.
    const vertexClaude = runtime.provider === "vertex";
    const vertexFetch = vertexClaude
      ? (await import("./vertex-claude.js")).vertexClaudeFetch(
          (await import("../util/http-fetch.js")).httpFetch,
        )
      : undefined;
    return createAnthropicTransport({
      ...(vertexFetch ? { fetch: vertexFetch } : {}),
      baseUrl: runtime.baseUrl,
      ...(runtime.apiKey
        ? bearer || vertexClaude
          ? { authToken: runtime.apiKey }
          : { apiKey: runtime.apiKey }
        : {}),
      ...(common.defaultHeaders ? { headers: common.defaultHeaders } : {}),
      ...(common.timeoutMs !== undefined ? { timeoutMs: common.timeoutMs } : {}),
      ...(common.stream !== undefined ? { stream: common.stream } : {}),
      ...(common.stallTimeoutMs !== undefined ? { stallTimeoutMs: common.stallTimeoutMs } : {}),
      cacheTtl: cacheTtl === "1h" ? "1h" : "5m",
    });
  }
  if (runtime.apiMode === "codex_responses") {
    const { createResponsesTransport } = await import("./transports/codex-responses.js");
    return createResponsesTransport({
      baseUrl: runtime.baseUrl,
      ...(runtime.apiKey ? { apiKey: runtime.apiKey } : {}),
      ...(runtime.apiKeyHeader ? { apiKeyHeader: runtime.apiKeyHeader } : {}),
      ...(common.defaultHeaders ? { headers: common.defaultHeaders } : {}),
      ...(common.stallTimeoutMs !== undefined ? { stallTimeoutMs: common.stallTimeoutMs } : {}),
    });
  }
  if (runtime.apiMode === "bedrock_converse") {
    const { createBedrockTransport } = await import("./transports/bedrock-converse.js");
    const region = bedrockRegion(runtime.baseUrl, bedrock, env);
    const guardrail = bedrock?.["guardrail"];
    return createBedrockTransport({
      baseUrl: runtime.baseUrl,
      ...(env ? { env } : {}),
      ...(region ? { region } : {}),
      ...(isGuardrail(guardrail) ? { guardrail } : {}),
      ...(common.defaultHeaders ? { headers: common.defaultHeaders } : {}),
      ...(common.timeoutMs !== undefined ? { timeoutMs: common.timeoutMs } : {}),
      ...(common.stream !== undefined ? { stream: common.stream } : {}),
      ...(common.stallTimeoutMs !== undefined ? { stallTimeoutMs: common.stallTimeoutMs } : {}),
    });
  }
  if (runtime.apiMode !== "chat_completions")
    throw new UnsupportedApiModeError(runtime.apiMode, runtime.provider);
  const { createChatCompletionsTransport } = await import("./transports/chat-completions.js");
  const openRouter = isOpenRouter(runtime);
  const preferences = openRouter ? openRouterProviderPreferences(providerRouting) : undefined;
  return createChatCompletionsTransport({
    baseUrl: runtime.baseUrl,
    apiKey: runtime.apiKey,
    ...(runtime.apiKeyHeader ? { apiKeyHeader: runtime.apiKeyHeader } : {}),
    ...common,
    ...(preferences ? { extraBody: { provider: preferences } } : {}),
    // OpenRouter hands Claude models' cache_control to Anthropic: the same four breakpoints.
    ...(openRouter ? { claudeCacheTtl: cacheTtl === "1h" ? ("1h" as const) : ("5m" as const) } : {}),
  });
}

/**
 * The AWS region for Bedrock: `bedrock.region` in config.yaml, else the region of a base URL the
 * user chose, else AWS_REGION / AWS_DEFAULT_REGION; undefined leaves it to the transport (the
 * catalog's default host says us-east-1).
 */
function bedrockRegion(
  baseUrl: string,
  section: Readonly<Record<string, unknown>> | undefined,
  env: Env | undefined,
): string | undefined {
  const configured = section?.["region"];
  if (typeof configured === "string" && configured.trim()) return configured.trim();
  const isDefaultHost = sameUrl(baseUrl, findProvider("bedrock")?.baseUrl);
  if (!isDefaultHost) return undefined;
  return clean(env?.["AWS_REGION"]) ?? clean(env?.["AWS_DEFAULT_REGION"]);
}

function isGuardrail(
  value: unknown,
): value is { guardrailIdentifier: string; guardrailVersion: string; [key: string]: unknown } {
  if (typeof value !== "object" || value === null) return false;
  const g = value as Record<string, unknown>;
  return typeof g["guardrailIdentifier"] === "string" && typeof g["guardrailVersion"] === "string";
}

function clean(value: string | undefined | null): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

/** A provider name, where "auto" (Python Hermes's default) means "not chosen". */
function cleanProvider(value: string | undefined | null): string | undefined {
  const name = clean(value);
  return name?.toLowerCase() === "auto" ? undefined : name;
}

function firstEnv(env: Env, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = clean(env[name]);
    if (value) return value;
  }
  return undefined;
}

function sameProvider(a: string, b: string): boolean {
  return (
    a.toLowerCase() === b.toLowerCase() ||
    (findProvider(a) !== undefined && findProvider(a) === findProvider(b))
  );
}

function detectFromEnv(env: Env): Choice | undefined {
  const baseUrl = clean(env["OPENAI_BASE_URL"]);
  if (baseUrl) {
    return {
      provider: "custom",
      baseUrl,
      apiKey: clean(env["OPENAI_API_KEY"]),
      model: undefined,
      apiMode: undefined,
    };
  }
  const hit = ENV_DETECTION.find((d) => clean(env[d.env]));
  if (!hit) return undefined;
  return {
    provider: hit.provider,
    baseUrl: undefined,
    apiKey: undefined,
    model: undefined,
    apiMode: undefined,
  };
}

/**
 * A key from the provider's variables. A custom endpoint takes OPENAI_API_KEY only when it is the
 * OPENAI_BASE_URL endpoint that key was paired with, so an OpenAI key never travels to some other
 * URL the user typed.
 */
function keyFromEnv(profile: ProviderProfile, baseUrl: string, env: Env): string | undefined {
  if (profile.id === "custom") {
    return sameUrl(baseUrl, env["OPENAI_BASE_URL"]) ? clean(env["OPENAI_API_KEY"]) : undefined;
  }
  return firstEnv(env, profile.apiKeyEnv);
}

/** A Claude Pro/Max login through Claude Code, for the Anthropic API itself only. */
function claudeCodeKey(profile: ProviderProfile, baseUrl: string, env: Env): string | undefined {
  if (profile.id !== "anthropic") return undefined;
  const home = clean(env["HOME"]);
  if (!home || !sameHost(baseUrl, "api.anthropic.com")) return undefined;
  return readClaudeCodeToken(home)?.accessToken;
}

function sameHost(url: string, host: string): boolean {
  try {
    return new URL(url).hostname.toLowerCase() === host;
  } catch {
    return false;
  }
}

function sameUrl(a: string, b: string | undefined): boolean {
  return b !== undefined && a.trim().replace(/\/+$/, "") === b.trim().replace(/\/+$/, "");
}

interface NamedCustomProvider {
  name: string;
  baseUrl: string | undefined;
  apiKey: string | undefined;
  model: string | undefined;
  apiMode: string | undefined;
}

/** An entry of config.yaml's `custom_providers` list matching `name` or `custom:<name>`. */
function namedCustomProvider(provider: string, config: HermesConfig): NamedCustomProvider | undefined {
  const list = config["custom_providers"];
  if (!Array.isArray(list)) return undefined;
  const wanted = provider.toLowerCase().replace(/^custom:/, "");
  if (wanted === "" || (findProvider(provider) && !provider.toLowerCase().startsWith("custom:")))
    return undefined;
  for (const entry of list) {
    if (typeof entry !== "object" || entry === null) continue;
    const e = entry as Record<string, unknown>;
    const str = (key: string) => (typeof e[key] === "string" ? clean(e[key] as string) : undefined);
    const name = str("name");
    if (name?.toLowerCase() !== wanted) continue;
    return {
      name,
      baseUrl: str("base_url"),
      apiKey: str("api_key"),
      model: str("model"),
      apiMode: str("api_mode"),
    };
  }
  return undefined;
}
