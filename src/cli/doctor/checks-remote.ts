/**
 * Doctor checks that reach out: each configured provider answers its `/models` and accepts its
 * key (ai/model-listing.ts, no retries), each enabled MCP server starts and lists its tools, and
 * each chat platform the gateway would run has the tokens it needs.
 */

import { listModels } from "../../ai/model-listing.js";
import { findProvider } from "../../ai/providers.js";
import { NoProviderError, type ResolvedRuntime, resolveRuntime } from "../../ai/resolve.js";
import type { VertexSettings } from "../../ai/vertex.js";
import type { HermesConfig } from "../../config/defaults.js";
import { PLATFORMS } from "../../gateway/platforms/registry.js";
import { apiServerEnabled } from "../../gateway/runner.js";
import { startMcpServers } from "../../tools/mcp/manager.js";
import { ToolRegistry } from "../../tools/registry.js";
import type { DoctorLine } from "./types.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The process's Entra ID bearer for `scope` and its source, or the chain's message (never throws). */
async function entraBearer(
  scope: string,
  env: Env,
): Promise<{ ok: true; token: string; source: string } | { ok: false; message: string; hint: string }> {
  try {
    const { sharedAzureTokenProvider } = await import("../../ai/oauth/azure-token.js");
    const token = await sharedAzureTokenProvider(scope, env).token();
    return { ok: true, token: token.token, source: token.source };
  } catch (error) {
    const hint =
      error instanceof Error && "hint" in error && typeof error.hint === "string" ? error.hint : "";
    return { ok: false, message: error instanceof Error ? error.message : String(error), hint };
  }
}

export interface ProviderTarget {
  /** "primary", "fallback 1", ... */
  role: string;
  runtime?: ResolvedRuntime;
  /** Why it could not be resolved (no key, unknown provider). */
  error?: string;
}

/** The primary provider and each `fallback_providers` entry, resolved as a run would. Pure. */
export function providerTargets(config: HermesConfig, env: Env, home: string | undefined): ProviderTarget[] {
  const targets: ProviderTarget[] = [];
  targets.push(resolveTarget("primary", config, env, home));
  const fallbacks = Array.isArray(config.fallback_providers) ? config.fallback_providers : [];
  fallbacks.forEach((entry: unknown, index: number) => {
    const role = `fallback ${index + 1}`;
    if (typeof entry !== "object" || entry === null) {
      targets.push({ role, error: "not a {provider, model} mapping" });
      return;
    }
    const e = entry as Record<string, unknown>;
    const text = (key: string): string => (typeof e[key] === "string" ? (e[key] as string) : "");
    const model = { ...config.model, provider: text("provider"), default: text("model") };
    model.base_url = text("base_url");
    model.api_key = text("api_key");
    model.api_mode = text("api_mode");
    targets.push(resolveTarget(role, { ...config, model }, env, home));
  });
  return targets;
}

function resolveTarget(
  role: string,
  config: HermesConfig,
  env: Env,
  home: string | undefined,
): ProviderTarget {
  try {
    return { role, runtime: resolveRuntime({ flags: {}, config, env, home }) };
  } catch (error) {
    if (error instanceof NoProviderError) return { role, error: error.message };
    throw error;
  }
}

/**
 * Vertex has no model listing to probe: the check is that Google issues a token for the
 * configured credentials (the project and location are reported; Vertex judges them at the first call).
 */
async function vertexLine(
  group: string,
  name: string,
  rt: ResolvedRuntime,
  settings: VertexSettings,
  fetchImpl: typeof fetch | undefined,
): Promise<DoctorLine> {
  const { vertexTokenProblem } = await import("../../ai/vertex-transport.js");
  const deps = fetchImpl ? { fetch: fetchImpl } : {};
  let problem = await vertexTokenProblem(settings, deps);
  let projectId = settings.projectId;
  if (!problem && projectId === undefined) {
    // Credentials from the metadata server, no project named: the server says which.
    const { vertexMetadataProject } = await import("../../ai/vertex-transport.js");
    projectId = await vertexMetadataProject(settings, deps).catch((error: Error) => {
      problem = error.message;
      return undefined;
    });
  }
  const who =
    settings.account ??
    (settings.kind === "metadata" ? "this machine's service account" : "gcloud user login");
  if (problem) {
    return {
      group,
      name,
      status: "fail",
      detail: problem,
      fix: "Run hermes setup model (asks for the key file, project and location).",
    };
  }
  return {
    group,
    name,
    status: "ok",
    detail: `token issued for ${who}, project ${projectId}, location ${settings.region}, model ${rt.model}`,
  };
}

/**
 * `copilot-acp`: the Copilot CLI found on PATH answers ACP and opens a session (which needs its
 * own login), listing the models it offers.
 */
async function copilotAcpLine(
  group: string,
  name: string,
  rt: ResolvedRuntime,
  acp: NonNullable<ResolvedRuntime["acp"]>,
  env: Env,
  timeoutMs: number | undefined,
): Promise<DoctorLine> {
  const cli = [acp.command, ...acp.args].join(" ");
  const listing = await listModels({
    baseUrl: rt.baseUrl,
    apiMode: rt.apiMode,
    acp,
    env,
    timeoutMs: Math.max(timeoutMs ?? 0, 15_000),
  });
  if (!listing.ok) {
    return {
      group,
      name,
      status: "fail",
      detail: listing.message,
      fix: "Run copilot once and log in there (Hermes uses the CLI's own login); check that it is the GitHub Copilot CLI with ACP support (copilot --help lists --acp), or set HERMES_COPILOT_ACP_COMMAND / HERMES_COPILOT_ACP_ARGS.",
    };
  }
  const offered = listing.models.map((m) => m.id).filter((id) => id !== "copilot-acp");
  if (rt.model !== "copilot-acp" && offered.length > 0 && !offered.includes(rt.model)) {
    return {
      group,
      name,
      status: "warn",
      detail: `${cli} answers ACP, but does not offer ${rt.model} (it offers ${offered.join(", ")})`,
      fix: `Pick one it offers: hermes model copilot-acp:${offered[0]} (or copilot-acp for the CLI's own choice)`,
    };
  }
  return {
    group,
    name,
    status: "ok",
    detail: `${cli} answers ACP and opens a session (its own login), model ${rt.model}${offered.length > 0 ? `; it offers ${offered.length} models` : ""}`,
  };
}

/** Probes each target's `/models` with its key. `fetchImpl` is injected by tests. */
export async function providerChecks(
  config: HermesConfig,
  env: Env,
  home: string | undefined,
  options: { timeoutMs?: number; fetch?: typeof fetch } = {},
): Promise<DoctorLine[]> {
  const group = "Providers";
  const targets = providerTargets(config, env, home);
  return Promise.all(
    targets.map(async (target): Promise<DoctorLine> => {
      if (!target.runtime) {
        const [what, fix] = (target.error ?? "not configured").split("\n");
        return {
          group,
          name: target.role,
          status: "fail",
          detail: what ?? "not configured",
          // The resolver's own fix already names `hermes setup` since the setup wizard exists.
          fix:
            target.role === "primary" && !(fix ?? "").includes("hermes setup")
              ? fix
                ? `Run hermes setup, or: ${fix}`
                : "Run hermes setup"
              : (fix ?? ""),
        };
      }
      const rt = target.runtime;
      const name = `${target.role}: ${rt.provider}`;
      if (rt.vertex) return vertexLine(group, name, rt, rt.vertex, options.fetch);
      if (rt.acp) return copilotAcpLine(group, name, rt, rt.acp, env, options.timeoutMs);
      let sent: { apiKey: string | undefined; apiKeyHeader: string | undefined; entra?: string } = {
        apiKey: rt.apiKey,
        apiKeyHeader: rt.apiKeyHeader,
      };
      if (rt.entra) {
        const got = await entraBearer(rt.entra.scope, env);
        if (!got.ok) {
          const fix = got.hint ? `${got.hint.charAt(0).toUpperCase()}${got.hint.slice(1)}.` : "";
          return { group, name, status: "fail", detail: got.message, fix };
        }
        sent = { apiKey: got.token, apiKeyHeader: undefined, entra: got.source };
      }
      const listing = await listModels({
        baseUrl: rt.baseUrl,
        apiKey: sent.apiKey,
        apiKeyHeader: sent.apiKeyHeader,
        apiMode: rt.apiMode,
        timeoutMs: options.timeoutMs ?? 8000,
        ...(options.fetch ? { fetch: options.fetch } : {}),
      });
      if (listing.ok) {
        const listed = listing.models.some((m) => m.id === rt.model);
        if (listing.models.length > 0 && !listed) {
          return {
            group,
            name,
            status: "warn",
            detail: `${rt.baseUrl} answered with ${listing.models.length} models, but not ${rt.model}`,
            fix: `Pick one it lists: hermes model (or hermes config set model.default ${listing.models[0]?.id ?? "<model>"})`,
          };
        }
        const key = sent.entra
          ? `Entra ID token (${sent.entra}) accepted`
          : rt.apiKey
            ? "key accepted"
            : "no key needed";
        return { group, name, status: "ok", detail: `${rt.baseUrl} reachable, ${key}, model ${rt.model}` };
      }
      const keyVar = findProvider(rt.provider)?.apiKeyEnv[0] ?? "the provider's API key";
      switch (listing.kind) {
        case "auth":
          if (rt.entra) {
            return {
              group,
              name,
              status: "fail",
              detail: `${listing.message} (with an Entra ID token from ${sent.entra ?? "the chain"})`,
              fix:
                "Give the identity a role on the resource (e.g. Cognitive Services OpenAI User), " +
                `or check model.entra.scope (now ${rt.entra.scope}).`,
            };
          }
          return {
            group,
            name,
            status: "fail",
            detail: listing.message,
            fix: `Check the key: set ${keyVar} in .env (hermes config set ${keyVar} <key>) or hermes auth add ${rt.provider}.`,
          };
        case "unreachable":
          return {
            group,
            name,
            status: "fail",
            detail: listing.message,
            fix: `Check that the server runs and that model.base_url (${rt.baseUrl}) is its address.`,
          };
        case "unsupported":
          return { group, name, status: "ok", detail: `${listing.message}; not probed` };
        default:
          return {
            group,
            name,
            status: "warn",
            detail: listing.message,
            fix: "The endpoint answered but not with a model list; chats may still work. Check model.base_url.",
          };
      }
    }),
  );
}

/** Starts every enabled MCP server once, as a chat would, and reports each; then stops them. */
export async function mcpChecks(config: HermesConfig, env: Env, home?: string): Promise<DoctorLine[]> {
  const group = "MCP servers";
  const servers = config["mcp_servers"];
  if (typeof servers !== "object" || servers === null || Object.keys(servers).length === 0) {
    return [];
  }
  const problems: string[] = [];
  const manager = startMcpServers({
    config: servers,
    registry: new ToolRegistry(),
    env,
    ...(home ? { home } : {}),
    onWarning: (message) => problems.push(message),
  });
  try {
    await manager.ready;
    const lines: DoctorLine[] = manager.status().map((status) => {
      if (status.state === "disabled") {
        return { group, name: status.name, status: "ok", detail: "disabled (enabled: false)" };
      }
      if (status.state === "connected") {
        return {
          group,
          name: status.name,
          status: "ok",
          detail: `started, ${status.tools.length} tool${status.tools.length === 1 ? "" : "s"} (${status.transport})`,
        };
      }
      return {
        group,
        name: status.name,
        status: "fail",
        detail: `${status.error ?? "did not start"}${status.stderr ? ` — server said: ${lastLine(status.stderr)}` : ""}`,
        fix: `Run it by hand to see why: hermes mcp test ${status.name}`,
      };
    });
    const named = new Set(manager.status().map((s) => s.name));
    for (const problem of problems) {
      if ([...named].some((n) => problem.includes(`"${n}"`))) continue;
      lines.push({
        group,
        name: "config",
        status: "fail",
        detail: problem,
        fix: "Fix mcp_servers in config.yaml.",
      });
    }
    return lines;
  } finally {
    await manager.close();
  }
}

function lastLine(text: string): string {
  const lines = text.trim().split("\n");
  return (lines[lines.length - 1] ?? "").slice(0, 200);
}

interface PlatformNeed {
  /** Any one of these variables satisfies it. */
  anyOf: readonly string[];
  /** A config.yaml key under the platform's section that satisfies it too. */
  setting?: string;
  why: string;
}

/** What a platform needs besides the variable that turns it on. */
const PLATFORM_NEEDS: Readonly<Record<string, readonly PlatformNeed[]>> = {
  slack: [
    {
      anyOf: ["SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"],
      why: "SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET (HTTP events)",
    },
  ],
  email: [
    { anyOf: ["EMAIL_PASSWORD"], why: "EMAIL_PASSWORD" },
    { anyOf: ["EMAIL_IMAP_HOST"], why: "EMAIL_IMAP_HOST" },
    { anyOf: ["EMAIL_SMTP_HOST"], why: "EMAIL_SMTP_HOST" },
  ],
  signal: [{ anyOf: ["SIGNAL_ACCOUNT"], setting: "account", why: "SIGNAL_ACCOUNT (the bot's number)" }],
  sms: [
    { anyOf: ["TWILIO_AUTH_TOKEN"], why: "TWILIO_AUTH_TOKEN" },
    { anyOf: ["TWILIO_PHONE_NUMBER"], why: "TWILIO_PHONE_NUMBER" },
  ],
  mattermost: [{ anyOf: ["MATTERMOST_URL"], setting: "url", why: "MATTERMOST_URL (the server's address)" }],
  matrix: [
    {
      anyOf: ["MATRIX_ACCESS_TOKEN", "MATRIX_PASSWORD"],
      why: "MATRIX_ACCESS_TOKEN, or MATRIX_USER_ID and MATRIX_PASSWORD",
    },
  ],
  whatsapp_cloud: [
    {
      anyOf: ["WHATSAPP_CLOUD_PHONE_NUMBER_ID"],
      setting: "phone_number_id",
      why: "WHATSAPP_CLOUD_PHONE_NUMBER_ID (the sending number's id)",
    },
    { anyOf: ["WHATSAPP_CLOUD_APP_SECRET"], why: "WHATSAPP_CLOUD_APP_SECRET (to accept signed webhooks)" },
    {
      anyOf: ["WHATSAPP_CLOUD_VERIFY_TOKEN"],
      why: "WHATSAPP_CLOUD_VERIFY_TOKEN (Meta's subscription handshake)",
    },
  ],
};

/** The API server refuses a shorter key at start-up. */
const MIN_API_KEY_CHARS = 16;

/**
 * Gateway tokens: each platform that has its token (or that config.yaml enables) has everything
 * it needs; the API server, when enabled, has its key. Nothing configured is one ok line.
 */
export function gatewayChecks(config: HermesConfig, env: Env): DoctorLine[] {
  const group = "Gateway";
  const lines: DoctorLine[] = [];
  const set = (name: string): boolean => (env[name]?.trim() ?? "") !== "";
  const platforms = asRecord(config["platforms"]);
  for (const [name, spec] of Object.entries(PLATFORMS)) {
    const section = asRecord(platforms[name]);
    const enabled = section["enabled"] === true;
    const hasToken = set(spec.token);
    if (!hasToken && !enabled) continue;
    if (section["enabled"] === false) {
      lines.push({ group, name, status: "ok", detail: "turned off (platforms." + name + ".enabled: false)" });
      continue;
    }
    if (!hasToken) {
      lines.push({
        group,
        name,
        status: "fail",
        detail: `platforms.${name}.enabled is true but ${spec.token} is not set`,
        fix: `hermes config set ${spec.token} <token>`,
      });
      continue;
    }
    const settings = asRecord(config[name]);
    const missing = (PLATFORM_NEEDS[name] ?? []).filter(
      (need) => !need.anyOf.some(set) && !(need.setting && String(settings[need.setting] ?? "").trim()),
    );
    if (missing.length > 0) {
      lines.push({
        group,
        name,
        status: "fail",
        detail: `${spec.token} is set, but ${missing.map((need) => need.why).join(", ")} ${missing.length > 1 ? "are" : "is"} missing`,
        fix: `hermes config set ${missing[0]?.anyOf[0] ?? spec.token} <value>`,
      });
      continue;
    }
    lines.push({ group, name, status: "ok", detail: `${spec.token} present` });
  }
  if (apiServerEnabled(config, { ...env })) {
    lines.push(
      !set("API_SERVER_KEY")
        ? {
            group,
            name: "api server",
            status: "fail",
            detail: "the API server is enabled but API_SERVER_KEY is not set; it will refuse to start",
            fix: "hermes config set API_SERVER_KEY $(openssl rand -hex 32)",
          }
        : (env["API_SERVER_KEY"]?.trim().length ?? 0) < MIN_API_KEY_CHARS
          ? {
              group,
              name: "api server",
              status: "fail",
              detail: `API_SERVER_KEY is shorter than ${MIN_API_KEY_CHARS} characters; the API server refuses it`,
              fix: "hermes config set API_SERVER_KEY $(openssl rand -hex 32)",
            }
          : { group, name: "api server", status: "ok", detail: "API_SERVER_KEY present" },
    );
  }
  if (lines.length === 0) {
    lines.push({
      group,
      name: "platforms",
      status: "ok",
      detail: "none configured (optional: hermes gateway)",
    });
  }
  return lines;
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
