/**
 * What `/model X` switches to: a model id on the current provider, or with `provider:model` (or
 * an alias naming a provider or endpoint) a new runtime resolved as at start-up. Throws with the
 * reason (an empty name, a broken alias, a provider without its key).
 */
import { listModelsCached } from "../ai/model-cache.js";
import { formatModelLines, modelChoices } from "../ai/model-choices.js";
import { parseModelSpec } from "../ai/model-spec.js";
import { requestAuth } from "../ai/oauth/entra-config.js";
import { type Env, type ResolvedRuntime, resolveRuntime } from "../ai/resolve.js";
import { isVertexClaude, VERTEX_MODELS, vertexModelId } from "../ai/vertex.js";
import type { HermesConfig } from "../config/defaults.js";
import { SessionStoreError } from "../state/types.js";

export function resolveModelSwitch(
  text: string,
  input: {
    config: HermesConfig;
    resolved: ResolvedRuntime | undefined;
    env: Env;
    /** The session's home: a `provider:model` switch may use that home's OAuth login. */
    home: string;
    /** The endpoint for a `provider:model` switch when the spec names none (asked in the REPL). */
    baseUrl?: string;
  },
): { model: string; resolved?: ResolvedRuntime } {
  const parsed = parseModelSpec(text, input.config["model_aliases"]);
  if (!parsed.ok) throw new SessionStoreError("invalid", parsed.message);
  const { spec } = parsed;
  // On Vertex, Claude and Gemini speak different wires at different paths: a bare switch between
  // them resolves the runtime again, as a `vertex:MODEL` switch would.
  const vertexWire =
    input.resolved?.vertex !== undefined &&
    spec.model !== undefined &&
    isVertexClaude(spec.model) !== isVertexClaude(input.resolved.model);
  if ((spec.provider || spec.baseUrl || vertexWire) && input.resolved) {
    const next = resolveRuntime({
      flags: {
        provider: spec.provider ?? input.resolved.provider,
        ...(spec.model ? { model: spec.model } : {}),
        ...(spec.baseUrl || input.baseUrl ? { baseUrl: spec.baseUrl ?? input.baseUrl } : {}),
      },
      config: input.config,
      env: input.env,
      home: input.home,
    });
    return { model: next.model, resolved: next };
  }
  if (!spec.model) {
    throw new SessionStoreError(
      "invalid",
      "Give a model name, for example /model anthropic/claude-sonnet-4.",
    );
  }
  // Vertex's OpenAI surface wants Gemini's publisher (`google/`), as at start-up.
  return { model: input.resolved?.vertex ? vertexModelId(spec.model) : spec.model };
}

/**
 * `/model` with no name: the current provider's own model list (cached for an hour in the home,
 * `refresh` asks again), numbered, with context windows and prices, the current one marked.
 */
export async function sessionModelList(input: {
  provider: string;
  model: string;
  config: HermesConfig;
  home: string;
  env: Env;
  refresh?: boolean;
}): Promise<{ lines: string[]; note?: string }> {
  let runtime: ResolvedRuntime;
  try {
    runtime = resolveRuntime({
      flags: { provider: input.provider, model: input.model },
      config: input.config,
      env: input.env,
      home: input.home,
    });
  } catch (error) {
    return { lines: [], note: error instanceof Error ? error.message : String(error) };
  }
  // Vertex's OpenAI surface lists no models: the ids the catalog knows it serves.
  if (runtime.vertex) {
    return { lines: formatModelLines(modelChoices(VERTEX_MODELS.map((id) => ({ id }))), input.model) };
  }
  const auth = await requestAuth(runtime, input.env);
  const listing = await listModelsCached({
    home: input.home,
    provider: runtime.provider,
    baseUrl: runtime.baseUrl,
    apiKey: auth.apiKey,
    apiKeyHeader: auth.apiKeyHeader,
    apiMode: runtime.apiMode,
    ...(runtime.acp ? { acp: runtime.acp, env: input.env } : {}),
    ...(input.refresh ? { refresh: true } : {}),
  });
  if (listing.ok) return { lines: formatModelLines(modelChoices(listing.models), input.model) };
  const note = `the provider's model list is unavailable: ${listing.failure.message}`;
  if (!listing.stale) return { lines: [], note };
  // The last list seen, when the endpoint cannot be asked now.
  return {
    lines: formatModelLines(modelChoices(listing.stale.models), input.model),
    note: `${note} (showing the cached list)`,
  };
}
