/**
 * Choosing the provider, key and model: the `model` section of `hermes setup` and `hermes model`.
 * The flows only decide; `applyModelPlan` writes config.yaml and `.env` (0600) in one place, so a
 * cancelled conversation leaves the files as they were.
 */

import { listModelsCached } from "../../ai/model-cache.js";
import { formatModelLines, modelChoices, pickModel } from "../../ai/model-choices.js";
import type { ListedModel } from "../../ai/model-listing.js";
import { defaultBaseUrl, findProvider, PROVIDERS } from "../../ai/providers.js";
import { NoProviderError, type ResolvedRuntime, resolveRuntime } from "../../ai/resolve.js";
import { VERTEX_MODELS } from "../../ai/vertex.js";
import type { HermesConfig } from "../../config/defaults.js";
import { setEnvVar } from "../../config/env-file.js";
import { setConfigValue } from "../../config/write.js";
import { CliFailure } from "../command.js";
import { configuredEndpoint, endpointExample, needsEndpoint, normaliseEndpoint } from "./endpoint.js";
import { serverModelDecision } from "./local-model.js";
import type { Prompter } from "./prompter.js";
import { askVertex, googleCredentialsOrigin, VERTEX_PATH_VARIABLE } from "./vertex-flow.js";

export interface FlowContext {
  home: string;
  /** The process environment with the home's `.env` underneath it. */
  env: Record<string, string | undefined>;
  config: HermesConfig;
  fetch?: typeof fetch;
  now?: () => number;
}

/** What to write: `model.provider`, `model.base_url`, `model.default`, and keys for `.env`. */
export interface ModelPlan {
  provider: string;
  /** Empty for a hosted provider (its catalog address). */
  baseUrl: string;
  model: string;
  envWrites: Array<{ name: string; value: string }>;
  /** What `model.api_key` gets: a custom server's key as a reference to its `.env` entry. */
  apiKeyRef?: string;
  /** AWS Bedrock's region, for `bedrock.region`. */
  region?: string;
  /** Google Vertex AI's project and location, for `vertex.project_id` and `vertex.region`. */
  vertex?: { projectId: string; region: string };
  /** The runtime the plan gives, for the connection test. */
  runtime: ResolvedRuntime;
}

interface ProviderOption {
  /** What `model.provider` gets. */
  provider: string;
  label: string;
  /** A server on this machine (or one the user names): asked for its address, key optional. */
  local: boolean;
  /** Default address of a local server. */
  baseUrl: string;
}

/** The setup menu: the catalog's hosted providers, then local servers and any endpoint. */
export const PROVIDER_OPTIONS: readonly ProviderOption[] = [
  ...PROVIDERS.filter((p) => p.id !== "custom" && p.id !== "lmstudio").map((p) => ({
    provider: p.id,
    label: p.name,
    local: false,
    baseUrl: "",
  })),
  { provider: "ollama", label: "Ollama (local)", local: true, baseUrl: defaultBaseUrl("ollama") },
  { provider: "lmstudio", label: "LM Studio (local)", local: true, baseUrl: defaultBaseUrl("lmstudio") },
  { provider: "vllm", label: "vLLM (local)", local: true, baseUrl: defaultBaseUrl("vllm") },
  {
    provider: "llamacpp",
    label: "llama.cpp server (local)",
    local: true,
    baseUrl: defaultBaseUrl("llamacpp"),
  },
  { provider: "custom", label: "Any OpenAI-compatible endpoint (give its URL)", local: true, baseUrl: "" },
];

/** `model.provider` as written for an option: local aliases are `custom` with a base URL. */
function writtenProvider(option: ProviderOption): string {
  return option.provider === "lmstudio" ? "lmstudio" : option.local ? "custom" : option.provider;
}

/** The first of the provider's key variables that holds a value, if any. */
export function keyVariableSet(provider: string, env: FlowContext["env"]): string | undefined {
  return findProvider(provider)?.apiKeyEnv.find((name) => (env[name] ?? "").trim() !== "");
}

/** Where a custom server's key is kept (`model.api_key` names it), out of config.yaml's plain text. */
export const CUSTOM_KEY_VARIABLE = "CUSTOM_API_KEY";

function runtimeFor(
  ctx: FlowContext,
  plan: {
    provider: string;
    baseUrl: string;
    model: string;
    envWrites: ModelPlan["envWrites"];
    apiKeyRef?: string | undefined;
    vertex?: ModelPlan["vertex"] | undefined;
  },
): ResolvedRuntime {
  const env = { ...ctx.env };
  for (const { name, value } of plan.envWrites) env[name] = value;
  const base = plan.vertex ? withVertex(ctx.config, plan.vertex) : ctx.config;
  // A new key in .env must count even where config.yaml holds an older model.api_key; a custom
  // server's key is model.api_key itself, as it will read once `${CUSTOM_API_KEY}` is expanded.
  // (It counts only with config.yaml naming this provider and address, as it will once written.)
  const config = plan.apiKeyRef
    ? {
        ...base,
        model: {
          ...ctx.config.model,
          provider: plan.provider,
          base_url: plan.baseUrl,
          api_key: env[CUSTOM_KEY_VARIABLE] ?? "",
        },
      }
    : plan.envWrites.length > 0
      ? { ...base, model: { ...ctx.config.model, api_key: "" } }
      : base;
  try {
    return resolveRuntime({
      flags: { provider: plan.provider, model: plan.model || undefined, baseUrl: plan.baseUrl || undefined },
      config,
      env,
      home: ctx.home,
    });
  } catch (error) {
    if (error instanceof NoProviderError) {
      const profile = findProvider(plan.provider);
      if ((profile?.login && profile.apiKeyEnv.length === 0) || profile?.id === "copilot-acp")
        throw new NeedsLogin(error.message.replace("\n", " "));
      throw new CliFailure(error.message, 2);
    }
    throw error;
  }
}

/** config.yaml as it reads once the plan's `vertex.project_id` and `vertex.region` are written. */
export function withVertex(config: HermesConfig, vertex: NonNullable<ModelPlan["vertex"]>): HermesConfig {
  const section = config["vertex"];
  const current = typeof section === "object" && section !== null ? section : {};
  return { ...config, vertex: { ...current, project_id: vertex.projectId, region: vertex.region } };
}

async function listFor(ctx: FlowContext, runtime: ResolvedRuntime, refresh: boolean) {
  // Vertex's OpenAI surface lists no models: the catalog's own list, never a keyless probe.
  if (runtime.vertex) {
    return {
      ok: true as const,
      models: VERTEX_MODELS.map((id) => ({ id })),
      fetchedAt: 0,
      source: "cache" as const,
    };
  }
  return listModelsCached({
    home: ctx.home,
    provider: runtime.provider,
    baseUrl: runtime.baseUrl,
    apiKey: runtime.apiKey,
    apiKeyHeader: runtime.apiKeyHeader,
    apiMode: runtime.apiMode,
    ...(runtime.acp ? { acp: runtime.acp, env: ctx.env } : {}),
    refresh,
    ...(ctx.fetch ? { fetch: ctx.fetch } : {}),
    ...(ctx.now ? { now: ctx.now } : {}),
  });
}

/** The current choice in config.yaml, as `provider:model`, or undefined. */
export function currentChoice(config: HermesConfig): string | undefined {
  const provider = config.model.provider.trim();
  const model = config.model.default.trim();
  if (!provider && !model) return undefined;
  return provider ? `${provider}:${model || "(provider default)"}` : model;
}

/**
 * The interactive choice: provider from the menu, its key (kept, or pasted and stored in `.env`)
 * or the local server's address, then a model from the provider's own list (cached in the home).
 * Throws PromptCancelled when the user leaves.
 */
export async function askModelPlan(ctx: FlowContext, p: Prompter): Promise<ModelPlan> {
  const current = currentChoice(ctx.config);
  if (current) p.say(`Current model: ${current}`);
  p.say("Providers:");
  PROVIDER_OPTIONS.forEach((o, i) => {
    const found = !o.local ? keyVariableSet(o.provider, ctx.env) : undefined;
    const google = o.provider === "vertex" ? googleCredentialsOrigin(ctx.env) : undefined;
    const note = found ? `  (key found: ${found})` : google ? `  (credentials found: ${google})` : "";
    p.say(`  ${String(i + 1).padStart(2)}. ${o.label}${note}`);
  });
  const currentIndex = PROVIDER_OPTIONS.findIndex((o) => o.provider === ctx.config.model.provider.trim());
  let fallback = String(currentIndex >= 0 ? currentIndex + 1 : 1);
  for (;;) {
    let option: ProviderOption | undefined;
    while (!option) {
      const answer = await p.ask("Provider (number or name)", fallback);
      option = /^\d+$/.test(answer)
        ? PROVIDER_OPTIONS[Number(answer) - 1]
        : PROVIDER_OPTIONS.find(
            (o) => o.provider === answer.toLowerCase() || findProvider(answer)?.id === o.provider,
          );
      if (!option) p.say(`"${answer}" is not in the list.`);
    }
    try {
      return await planFor(ctx, p, option);
    } catch (error) {
      // A provider that works only after a login (ChatGPT, Copilot, …): say how, and let the
      // user pick another one instead of ending the wizard.
      if (!(error instanceof NeedsLogin)) throw error;
      p.say(`✗ ${error.message}`);
      p.say("Pick another provider, or leave (Ctrl+C), log in as shown and run this again.");
      fallback = String(PROVIDER_OPTIONS.indexOf(option) + 1);
    }
  }
}

/** The provider cannot be used without an OAuth login, and there is none. */
class NeedsLogin extends Error {}

async function planFor(ctx: FlowContext, p: Prompter, option: ProviderOption): Promise<ModelPlan> {
  const provider = writtenProvider(option);
  const configured = ctx.config.model.provider.trim();
  const sameProvider =
    provider === configured ||
    (findProvider(configured) !== undefined && findProvider(configured) === findProvider(provider));
  const envWrites: ModelPlan["envWrites"] = [];
  let baseUrl = "";
  // A deployment name read from a pasted Azure request URL: the model the picker offers first.
  let suggested: string | undefined;
  let apiKeyRef: string | undefined;
  let region: string | undefined;
  let vertex: ModelPlan["vertex"];
  const ownEndpoint = !option.local && needsEndpoint(option.provider);
  if (option.local) {
    const known =
      sameProvider && ctx.config.model.base_url.trim() ? ctx.config.model.base_url.trim() : option.baseUrl;
    baseUrl = await askUrl(p, known);
  } else {
    if (ownEndpoint) {
      const asked = await askEndpoint(
        p,
        option.provider,
        configuredEndpoint(option.provider, ctx.config, ctx.env),
      );
      baseUrl = asked.url;
      suggested = asked.deployment;
    } else if (sameProvider && ctx.config.model.base_url.trim()) {
      // A proxy or private endpoint set for this provider stays: re-running setup keeps it.
      baseUrl = ctx.config.model.base_url.trim();
      p.say(`Address kept from config.yaml: ${baseUrl} (model.base_url).`);
    }
    if (option.provider === "bedrock") region = await askRegion(p, bedrockRegion(ctx));
    if (option.provider === "vertex") {
      const answers = await askVertex(p, ctx);
      vertex = { projectId: answers.projectId, region: answers.region };
      if (answers.keyPath) envWrites.push({ name: VERTEX_PATH_VARIABLE, value: answers.keyPath });
    } else await askKey(ctx, p, option, envWrites);
  }

  for (let attempt = 0; ; attempt++) {
    const runtime = runtimeFor(ctx, { provider, baseUrl, model: "", envWrites, apiKeyRef, vertex });
    const listing = await listFor(ctx, runtime, true);
    let models: ListedModel[] = [];
    if (listing.ok) {
      models = listing.models;
    } else {
      p.say(`✗ ${listing.failure.message}`);
      if (listing.failure.kind === "auth" && !option.local && attempt < 3) {
        p.say("The key was refused; paste it again.");
        envWrites.length = 0;
        await askKey(ctx, p, option, envWrites, true);
        continue;
      }
      if (listing.failure.kind === "auth" && option.local && attempt < 3) {
        // A server started with a key (vLLM --api-key, a proxy): the address stays, the key is asked.
        const variable = provider === "lmstudio" ? "LM_API_KEY" : CUSTOM_KEY_VARIABLE;
        p.say(`The server wants a key${envWrites.length > 0 ? " and refused this one" : ""}.`);
        const key = await askSecret(p, `Paste the server's key (stored in .env as ${variable})`);
        envWrites.length = 0;
        envWrites.push({ name: variable, value: key });
        if (variable === CUSTOM_KEY_VARIABLE) apiKeyRef = `\${${CUSTOM_KEY_VARIABLE}}`;
        continue;
      }
      if (listing.failure.kind === "unreachable" && option.local && attempt < 2) {
        baseUrl = await askUrl(p, baseUrl);
        continue;
      }
      if (ownEndpoint && listing.failure.kind !== "auth" && attempt < 3) {
        // The key already given is kept; only the address is asked again.
        p.say("Check the address (the resource's endpoint, as the portal shows it).");
        const asked = await askEndpoint(p, option.provider, baseUrl, true);
        baseUrl = asked.url;
        suggested = asked.deployment ?? suggested;
        continue;
      }
      if (listing.stale) models = listing.stale.models;
    }
    const fallback =
      sameProvider && ctx.config.model.default.trim() ? ctx.config.model.default.trim() : undefined;
    if (ownEndpoint)
      p.say("The model is the name of a deployment on the resource; type it if the list does not show it.");
    const model = await askModel(
      p,
      models,
      runtime,
      suggested ?? fallback ?? (runtime.modelIsDefault ? undefined : runtime.model),
      ownEndpoint,
    );
    return {
      provider,
      baseUrl,
      model,
      envWrites,
      ...(apiKeyRef ? { apiKeyRef } : {}),
      ...(region ? { region } : {}),
      ...(vertex ? { vertex } : {}),
      runtime: { ...runtimeFor(ctx, { provider, baseUrl, model, envWrites, apiKeyRef, vertex }) },
    };
  }
}

async function askUrl(p: Prompter, fallback: string): Promise<string> {
  for (;;) {
    const url = await p.ask("Server address (OpenAI-compatible, ending in /v1)", fallback || undefined);
    const checked = normaliseEndpoint("custom", url);
    if (checked.ok) {
      if (checked.note) p.say(`Using ${checked.url} (${checked.note}).`);
      return checked.url;
    }
    p.say(checked.message);
  }
}

const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;

/** Bedrock's region as configured: `bedrock.region`, else AWS_REGION / AWS_DEFAULT_REGION, else us-east-1. */
function bedrockRegion(ctx: FlowContext): string {
  const section = ctx.config["bedrock"];
  const configured =
    typeof section === "object" && section !== null
      ? (section as Record<string, unknown>)["region"]
      : undefined;
  if (typeof configured === "string" && configured.trim()) return configured.trim();
  return ctx.env["AWS_REGION"]?.trim() || ctx.env["AWS_DEFAULT_REGION"]?.trim() || "us-east-1";
}

async function askRegion(p: Pick<Prompter, "ask" | "say">, fallback: string): Promise<string> {
  for (;;) {
    const answer = (await p.ask("AWS region for Bedrock (bedrock.region)", fallback)).trim().toLowerCase();
    if (AWS_REGION.test(answer)) return answer;
    p.say(`"${answer}" is not an AWS region, e.g. us-east-1, eu-west-1, ap-southeast-2.`);
  }
}

/** The endpoint of a provider that has none of its own (azure-foundry), checked and normalised. */
export async function askEndpoint(
  p: Pick<Prompter, "ask" | "say">,
  provider: string,
  fallback: string | undefined,
  again = false,
): Promise<{ url: string; deployment?: string }> {
  const name = findProvider(provider)?.name ?? provider;
  if (!again) p.say(`${name} needs your resource's endpoint, e.g. ${endpointExample(provider)}`);
  for (;;) {
    const answer = await p.ask(`${name} endpoint`, fallback || undefined);
    const checked = normaliseEndpoint(provider, answer);
    if (checked.ok) {
      if (checked.note) p.say(`Using ${checked.url} (${checked.note}).`);
      return { url: checked.url, ...(checked.deployment ? { deployment: checked.deployment } : {}) };
    }
    p.say(checked.message);
  }
}

async function askKey(
  ctx: FlowContext,
  p: Prompter,
  option: ProviderOption,
  envWrites: ModelPlan["envWrites"],
  again = false,
): Promise<void> {
  const profile = findProvider(option.provider);
  const variable = profile?.apiKeyEnv[0];
  if (!profile || !variable) {
    if (profile?.id === "bedrock")
      p.say("Bedrock uses your AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID, …).");
    if (profile?.id === "copilot-acp")
      p.say(
        "GitHub Copilot ACP runs the copilot CLI (npm install -g @github/copilot) and uses its own login: " +
          "run copilot once and log in there. HERMES_COPILOT_ACP_COMMAND names another path.",
      );
    return;
  }
  const found = keyVariableSet(option.provider, ctx.env);
  if (found && !again && (await p.confirm(`Use the key already in ${found}?`, true))) return;
  // "OpenAI API" is a catalog name too: no "OpenAI API API key".
  const what = `${profile.name.replace(/ API$/, "")} API key`;
  const key = await askSecret(p, `Paste your ${what} (stored in .env as ${variable})`);
  envWrites.push({ name: variable, value: key });
}

/** A key, asked without echo until one without spaces is given. Throws PromptCancelled. */
export async function askSecret(p: Pick<Prompter, "secret" | "say">, question: string): Promise<string> {
  for (;;) {
    const key = await p.secret(question);
    if (key && !/\s/.test(key)) return key;
    p.say(key ? "A key has no spaces; paste it again." : "No key given; paste it (Ctrl+C leaves).");
  }
}

async function askModel(
  p: Prompter,
  models: readonly ListedModel[],
  runtime: ResolvedRuntime,
  current: string | undefined,
  free = false,
): Promise<string> {
  const choices = modelChoices(models);
  if (choices.length === 0) {
    p.say("No model list from this provider; type a model id.");
    for (;;) {
      const id = await p.ask("Model", current ?? (runtime.modelIsDefault ? undefined : runtime.model));
      if (id) return id;
    }
  }
  const shown = choices.slice(0, 40);
  p.say(`Models at ${runtime.baseUrl} (${choices.length}):`);
  for (const line of formatModelLines(shown, current)) p.say(line);
  if (choices.length > shown.length) p.say(`  … ${choices.length - shown.length} more: type part of an id.`);
  const listed = choices.findIndex((c) => c.id === current);
  const fallback = listed >= 0 ? String(listed + 1) : free && current ? current : "1";
  for (;;) {
    const answer = await p.ask("Model (number, id or part of one)", fallback);
    const picked = pickModel(answer, choices, { free });
    if (picked.ok) return picked.id;
    p.say(picked.message);
  }
}

/**
 * The choice without questions (`setup --non-interactive`, `hermes model SPEC`): the provider and
 * model given, else config.yaml's, else what the environment names (OPENROUTER_API_KEY,
 * OPENAI_BASE_URL, …); a local server's only model, or the provider's default. A key found only in
 * the process environment is kept in `.env`. Throws CliFailure (2) when nothing names a provider
 * or a local server serves several models.
 */
export async function automaticModelPlan(
  ctx: FlowContext,
  wanted: { provider?: string; model?: string; baseUrl?: string } = {},
  processEnv: Record<string, string | undefined> = {},
): Promise<ModelPlan & { listing?: ListedModel[] }> {
  const keyed = customKeyConfig(ctx, wanted.provider);
  let runtime: ResolvedRuntime;
  try {
    runtime = resolveRuntime({
      flags: { provider: wanted.provider, model: wanted.model || undefined, baseUrl: wanted.baseUrl },
      config: keyed?.config ?? ctx.config,
      env: ctx.env,
      home: ctx.home,
    });
  } catch (error) {
    if (error instanceof NoProviderError) throw new CliFailure(error.message, 2);
    throw error;
  }
  const profile = findProvider(runtime.provider.replace(/^custom:.*/, "custom"));
  const ownEndpoint = needsEndpoint(runtime.provider);
  if (ownEndpoint) {
    // Checked as a typed one would be: a key never goes to a plain-http remote host.
    const checked = normaliseEndpoint(runtime.provider, runtime.baseUrl);
    if (!checked.ok) {
      const variable = findProvider(runtime.provider)?.baseUrlEnv?.[0];
      throw new CliFailure(
        `the ${runtime.provider} endpoint (model.base_url${variable ? ` or ${variable}` : ""}): ${checked.message}`,
        2,
      );
    }
    runtime = { ...runtime, baseUrl: checked.url };
  }
  const local =
    runtime.provider === "custom" ||
    runtime.provider === "lmstudio" ||
    runtime.provider.startsWith("custom:");
  // Canonical already: `ollama` became `custom`; a named endpoint keeps its own base_url entry.
  const provider = runtime.provider;
  // A provider whose address the user gave (azure-foundry) keeps it in model.base_url, as does one
  // whose address was named here or already set in config.yaml for this same provider.
  const sameAsConfig =
    ctx.config.model.provider.trim() !== "" &&
    findProvider(ctx.config.model.provider)?.id === profile?.id &&
    ctx.config.model.base_url.trim() !== "";
  const keepUrl =
    provider === "custom" ||
    provider === "lmstudio" ||
    ownEndpoint ||
    wanted.baseUrl !== undefined ||
    sameAsConfig;
  const baseUrl = keepUrl && !provider.startsWith("custom:") ? runtime.baseUrl : "";
  const listing = await listFor(ctx, runtime, false);
  const models = listing.ok ? listing.models : (listing.stale?.models ?? []);
  let model = runtime.model;
  if (runtime.modelIsDefault && local) {
    const decision = listing.ok ? serverModelDecision({ ok: true, models }) : { kind: "keep" as const };
    if (decision.kind === "use") model = decision.id;
    else if (decision.kind === "choose") {
      throw new CliFailure(
        `the server at ${runtime.baseUrl} serves ${decision.ids.length} models: ${decision.ids.slice(0, 10).join(", ")}.\n` +
          `Name one: hermes model custom:${decision.ids[0]} (or set HERMES_INFERENCE_MODEL).`,
        2,
      );
    } else if (decision.kind === "none") {
      throw new CliFailure(
        `the server at ${runtime.baseUrl} lists no models; load one in the server first.`,
        2,
      );
    } else if (!listing.ok && listing.failure.kind === "auth") {
      throw new CliFailure(
        `${listing.failure.message}; set ${CUSTOM_KEY_VARIABLE} to the server's key (setup keeps it in .env).`,
        2,
      );
    } else if (!listing.ok) {
      throw new CliFailure(`${listing.failure.message}; is the server running?`, 2);
    }
  }
  const envWrites: ModelPlan["envWrites"] = [];
  const customKey = keyed && processEnv[CUSTOM_KEY_VARIABLE]?.trim();
  if (customKey) envWrites.push({ name: CUSTOM_KEY_VARIABLE, value: customKey });
  for (const name of profile?.apiKeyEnv ?? []) {
    const value = processEnv[name]?.trim();
    if (value && runtime.apiKey === value) {
      envWrites.push({ name, value });
      break;
    }
  }
  return {
    provider,
    baseUrl,
    model,
    envWrites,
    ...(keyed && provider === "custom" ? { apiKeyRef: keyed.apiKeyRef } : {}),
    runtime: { ...runtime, model },
    ...(listing.ok || listing.stale ? { listing: models } : {}),
  };
}

/**
 * A custom server named by the flags or config.yaml with no key of its own yet, while
 * CUSTOM_API_KEY holds one: the configuration as it will read once `model.api_key` refers to it.
 * Undefined otherwise (a named `custom:<name>` entry keeps its own key).
 */
function customKeyConfig(
  ctx: FlowContext,
  wantedProvider: string | undefined,
): { config: HermesConfig; apiKeyRef: string } | undefined {
  const key = ctx.env[CUSTOM_KEY_VARIABLE]?.trim();
  const configured = ctx.config.model.provider.trim();
  const named = (wantedProvider ?? configured).trim();
  if (!key || !named || named.toLowerCase().startsWith("custom:") || findProvider(named)?.id !== "custom") {
    return undefined;
  }
  const same = findProvider(configured)?.id === "custom";
  if (same && ctx.config.model.api_key.trim()) return undefined;
  // Switching from another provider: its model and endpoint do not carry over.
  const model = same
    ? { ...ctx.config.model, api_key: key }
    : { ...ctx.config.model, provider: named, api_key: key, default: "", base_url: "", api_mode: "" };
  return { config: { ...ctx.config, model }, apiKeyRef: `\${${CUSTOM_KEY_VARIABLE}}` };
}

/**
 * Writes the plan: keys into `.env` (0600), then `model.provider`, `model.base_url`,
 * `model.default`; switching provider clears the old provider's `model.api_key` and `api_mode`,
 * which would otherwise apply to the new one. Returns one line per file change.
 */
export function applyModelPlan(home: string, config: HermesConfig, plan: ModelPlan): string[] {
  const lines: string[] = [];
  for (const { name, value } of plan.envWrites) {
    const path = setEnvVar(home, name, value);
    lines.push(`${name} → ${path}`);
  }
  const switching = plan.provider !== config.model.provider.trim();
  const edits: Array<[string, string]> = [
    ["model.provider", plan.provider],
    ["model.base_url", plan.baseUrl],
    ["model.default", plan.model],
  ];
  if (plan.apiKeyRef) edits.push(["model.api_key", plan.apiKeyRef]);
  else if ((switching || plan.envWrites.length > 0) && config.model.api_key.trim())
    edits.push(["model.api_key", ""]);
  if (switching && config.model.api_mode.trim()) edits.push(["model.api_mode", ""]);
  if (plan.region) edits.push(["bedrock.region", plan.region]);
  if (plan.vertex)
    edits.push(["vertex.project_id", plan.vertex.projectId], ["vertex.region", plan.vertex.region]);
  for (const [key, value] of edits) {
    const result = setConfigValue(home, key, value);
    lines.push(`${key}: ${value === "" ? '""' : value} → ${result.path}`);
  }
  return lines;
}
