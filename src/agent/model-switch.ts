/**
 * What `/model X` switches to: a model id on the current provider, or with `provider:model` (or
 * an alias naming a provider or endpoint) a new runtime resolved as at start-up. Throws with the
 * reason (an empty name, a broken alias, a provider without its key).
 */
import { parseModelSpec } from "../ai/model-spec.js";
import { type Env, type ResolvedRuntime, resolveRuntime } from "../ai/resolve.js";
import type { HermesConfig } from "../config/defaults.js";
import { SessionStoreError } from "../state/types.js";

export function resolveModelSwitch(
  text: string,
  input: { config: HermesConfig; resolved: ResolvedRuntime | undefined; env: Env },
): { model: string; resolved?: ResolvedRuntime } {
  const parsed = parseModelSpec(text, input.config["model_aliases"]);
  if (!parsed.ok) throw new SessionStoreError("invalid", parsed.message);
  const { spec } = parsed;
  if ((spec.provider || spec.baseUrl) && input.resolved) {
    const next = resolveRuntime({
      flags: {
        provider: spec.provider ?? input.resolved.provider,
        ...(spec.model ? { model: spec.model } : {}),
        ...(spec.baseUrl ? { baseUrl: spec.baseUrl } : {}),
      },
      config: input.config,
      env: input.env,
    });
    return { model: next.model, resolved: next };
  }
  if (!spec.model) {
    throw new SessionStoreError(
      "invalid",
      "Give a model name, for example /model anthropic/claude-sonnet-4.",
    );
  }
  return { model: spec.model };
}
