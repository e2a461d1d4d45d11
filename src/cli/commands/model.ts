/**
 * `hermes model [SPEC] [--list] [--refresh] [--global]`: the provider and model new sessions use.
 * SPEC is a model id, `provider:model`, `custom:<name>:model` or a `model_aliases` name; with no
 * SPEC on a terminal it is the picker (provider, key, the provider's own model list with context
 * windows and prices). The list is cached in `<home>/provider_models_cache.json`.
 */

import { listModelsCached } from "../../ai/model-cache.js";
import { formatModelLines, modelChoices, pickModel } from "../../ai/model-choices.js";
import { parseModelSpec } from "../../ai/model-spec.js";
import { findProvider } from "../../ai/providers.js";
import { NoProviderError, resolveRuntime } from "../../ai/resolve.js";
import { VERTEX_MODELS } from "../../ai/vertex.js";
import { CliFailure, type ConfigContext, defineCommand, withConfig } from "../command.js";
import { homeFor } from "../home-env.js";
import { configuredEndpoint, endpointExample, endpointVariable, needsEndpoint } from "../setup/endpoint.js";
import {
  applyModelPlan,
  askEndpoint,
  askModelPlan,
  askSecret,
  automaticModelPlan,
  currentChoice,
  keyVariableSet,
  withVertex,
} from "../setup/model-flow.js";
import { PromptCancelled, terminalPrompter } from "../setup/prompter.js";
import { askVertex, VERTEX_PATH_VARIABLE, vertexNeedsAnswers } from "../setup/vertex-flow.js";

interface ModelFlags {
  list?: boolean;
  refresh?: boolean;
  global?: boolean;
}

export const modelCommand = defineCommand({
  name: "model",
  description: "choose the provider and model: hermes model [provider:]MODEL, or pick from the list",
  needs: "home",
  parse: (cmd) =>
    cmd
      .argument("[spec]", "MODEL, PROVIDER:MODEL, custom:NAME:MODEL or an alias from model_aliases")
      .option("--list", "list the provider's models with context windows and prices, and change nothing")
      .option("--refresh", "ask the provider for its model list even when the cached one is fresh")
      .option("--global", "write the root home's config.yaml (~/.hermes), not the active profile's"),
  run: async (base, spec: string | undefined, flags: ModelFlags) => {
    const home = flags.global ? homeFor(base.io.env, "default") : base.home;
    const ctx = withConfig({ ...base, home });
    if (flags.list) return listCommand(ctx, spec, flags.refresh === true);
    if (spec === undefined) return pickInteractively(ctx);
    return setFromSpec(ctx, spec, flags.refresh === true);
  },
});

async function pickInteractively(ctx: ConfigContext): Promise<number> {
  if (ctx.io.stdin.isTTY !== true) {
    const current = currentChoice(ctx.config);
    ctx.io.out(current ?? "no model configured");
    if (!current) ctx.io.err("Choose one: hermes model PROVIDER:MODEL, or run hermes model on a terminal.");
    return current ? 0 : 1;
  }
  const prompter = terminalPrompter(ctx.io);
  try {
    const plan = await askModelPlan(ctx, prompter);
    for (const line of applyModelPlan(ctx.home, ctx.config, plan)) prompter.say(`saved ${line}`);
    ctx.io.out(`${plan.provider}:${plan.model}`);
    return 0;
  } catch (error) {
    if (error instanceof PromptCancelled) {
      ctx.io.err("\nNothing changed.");
      return 1;
    }
    throw error;
  } finally {
    prompter.close();
  }
}

/**
 * Switching to a provider with no address of its own (azure-foundry) and none configured: on a
 * terminal its endpoint is asked (and its key, when no variable holds one); elsewhere the message
 * names what to set. Undefined when nothing is missing.
 */
async function askMissingEndpoint(
  ctx: ConfigContext,
  provider: string,
): Promise<{ baseUrl: string; env: Record<string, string> } | "cancelled" | undefined> {
  if (!needsEndpoint(provider) || configuredEndpoint(provider, ctx.config, ctx.env)) return undefined;
  const profile = findProvider(provider);
  if (ctx.io.stdin.isTTY !== true) throw missingEndpoint(provider);
  const prompter = terminalPrompter(ctx.io);
  try {
    prompter.say(`${profile?.name ?? provider} has no endpoint configured yet.`);
    const asked = await askEndpoint(prompter, provider, undefined);
    const env: Record<string, string> = {};
    const keyVar = profile?.apiKeyEnv[0];
    if (keyVar && !keyVariableSet(provider, ctx.env)) {
      env[keyVar] = await askSecret(
        prompter,
        `Paste the ${profile?.name ?? provider} key (stored in .env as ${keyVar})`,
      );
    }
    return { baseUrl: asked.url, env };
  } catch (error) {
    if (error instanceof PromptCancelled) {
      ctx.io.err("\nNothing changed.");
      return "cancelled";
    }
    throw error;
  } finally {
    prompter.close();
  }
}

function missingEndpoint(provider: string): CliFailure {
  const variable = endpointVariable(provider);
  return new CliFailure(
    `${findProvider(provider)?.id ?? provider} needs its endpoint, and none is configured: set ${variable ?? "model.base_url"} ` +
      `(e.g. ${endpointExample(provider)}), or run hermes model on a terminal, which asks for it.`,
    2,
  );
}

function parsed(ctx: ConfigContext, spec: string) {
  const result = parseModelSpec(spec, ctx.config["model_aliases"]);
  if (!result.ok) throw new CliFailure(result.message, 2);
  return result.spec;
}

/**
 * Switching to vertex while its credentials, project or location are missing or wrong: on a
 * terminal they are asked; elsewhere the one-line problem is the error. Undefined when nothing is missing.
 */
async function askMissingVertex(
  ctx: ConfigContext,
  provider: string,
): Promise<
  { env: Record<string, string>; vertex: { projectId: string; region: string } } | "cancelled" | undefined
> {
  if (findProvider(provider)?.id !== "vertex") return undefined;
  try {
    resolveRuntime({ flags: { provider }, config: ctx.config, env: ctx.env, home: ctx.home });
    return undefined;
  } catch (error) {
    if (!(error instanceof NoProviderError) || !vertexNeedsAnswers(error.message)) throw error;
    if (ctx.io.stdin.isTTY !== true) throw new CliFailure(error.message, 2);
    const prompter = terminalPrompter(ctx.io);
    try {
      prompter.say(`✗ ${error.message}`);
      const answers = await askVertex(prompter, ctx);
      const env: Record<string, string> = answers.keyPath ? { [VERTEX_PATH_VARIABLE]: answers.keyPath } : {};
      return { env, vertex: { projectId: answers.projectId, region: answers.region } };
    } catch (asked) {
      if (asked instanceof PromptCancelled) {
        ctx.io.err("\nNothing changed.");
        return "cancelled";
      }
      throw asked;
    } finally {
      prompter.close();
    }
  }
}

async function setFromSpec(base: ConfigContext, text: string, refresh: boolean): Promise<number> {
  const spec = parsed(base, text);
  const vertex = spec.provider && !spec.baseUrl ? await askMissingVertex(base, spec.provider) : undefined;
  if (vertex === "cancelled") return 1;
  const missing = spec.provider && !spec.baseUrl ? await askMissingEndpoint(base, spec.provider) : undefined;
  if (missing === "cancelled") return 1;
  const env = { ...base.env, ...missing?.env, ...vertex?.env };
  const ctx = vertex
    ? { ...base, env, config: withVertex(base.config, vertex.vertex) }
    : missing
      ? { ...base, env }
      : base;
  const baseUrl = missing?.baseUrl ?? spec.baseUrl;
  const plan = await automaticModelPlan(
    ctx,
    {
      ...(spec.provider ? { provider: spec.provider } : {}),
      ...(spec.model ? { model: spec.model } : {}),
      ...(baseUrl ? { baseUrl } : {}),
    },
    { ...ctx.io.env, ...missing?.env },
  );
  if (vertex) {
    plan.vertex = vertex.vertex;
    for (const [name, value] of Object.entries(vertex.env)) plan.envWrites.push({ name, value });
  }
  let listing = plan.listing;
  if ((refresh || listing === undefined) && !plan.runtime.vertex) {
    const fresh = await listModelsCached({
      home: ctx.home,
      provider: plan.runtime.provider,
      baseUrl: plan.runtime.baseUrl,
      apiKey: plan.runtime.apiKey,
      apiKeyHeader: plan.runtime.apiKeyHeader,
      apiMode: plan.runtime.apiMode,
      ...(plan.runtime.acp ? { acp: plan.runtime.acp, env: ctx.env } : {}),
      refresh: true,
    });
    if (fresh.ok) listing = fresh.models;
  }
  if (listing && listing.length > 0 && !listing.some((m) => m.id === plan.model)) {
    // Lists can be partial (routers, fine-tunes), so an unlisted id is kept, with a warning.
    const near = pickModel(plan.model, modelChoices(listing));
    ctx.io.err(
      `hermes model: warning: ${plan.model} is not in ${plan.runtime.provider}'s list of ${listing.length} models` +
        `${near.ok ? `; did you mean ${near.id}?` : ""} (hermes model --list shows them)`,
    );
  }
  for (const line of applyModelPlan(ctx.home, ctx.config, plan)) ctx.io.err(`saved ${line}`);
  ctx.io.out(`${plan.provider}:${plan.model}`);
  return 0;
}

async function listCommand(ctx: ConfigContext, text: string | undefined, refresh: boolean): Promise<number> {
  const spec = text ? parsed(ctx, text.includes(":") ? text : `${text}:`) : undefined;
  const wanted = spec?.provider ?? ctx.config.model.provider.trim();
  if (wanted && !spec?.baseUrl && needsEndpoint(wanted) && !configuredEndpoint(wanted, ctx.config, ctx.env)) {
    throw missingEndpoint(wanted);
  }
  let runtime: ReturnType<typeof resolveRuntime>;
  try {
    runtime = resolveRuntime({
      flags: {
        ...(spec?.provider ? { provider: spec.provider } : {}),
        ...(spec?.baseUrl ? { baseUrl: spec.baseUrl } : {}),
      },
      config: ctx.config,
      env: ctx.env,
      home: ctx.home,
    });
  } catch (error) {
    if (error instanceof NoProviderError) throw new CliFailure(error.message, 2);
    throw error;
  }
  if (runtime.vertex) {
    // Vertex's OpenAI surface has no model listing: the ids it serves, as the catalog knows them.
    ctx.io.out(`${runtime.provider} at ${runtime.baseUrl}: ${VERTEX_MODELS.length} models`);
    const current = ctx.config.model.default.trim() || undefined;
    for (const line of formatModelLines(modelChoices(VERTEX_MODELS.map((id) => ({ id }))), current))
      ctx.io.out(line);
    return 0;
  }
  const listing = await listModelsCached({
    home: ctx.home,
    provider: runtime.provider,
    baseUrl: runtime.baseUrl,
    apiKey: runtime.apiKey,
    apiKeyHeader: runtime.apiKeyHeader,
    apiMode: runtime.apiMode,
    ...(runtime.acp ? { acp: runtime.acp, env: ctx.env } : {}),
    refresh,
  });
  let models = listing.ok ? listing.models : listing.stale?.models;
  if (!listing.ok) {
    ctx.io.err(
      `hermes model: ${listing.failure.message}${listing.stale ? " (showing the cached list)" : ""}`,
    );
    if (!models) return 1;
  }
  models = models ?? [];
  const current = ctx.config.model.default.trim() || undefined;
  ctx.io.out(`${runtime.provider} at ${runtime.baseUrl}: ${models.length} models`);
  for (const line of formatModelLines(modelChoices(models), current)) ctx.io.out(line);
  return 0;
}
