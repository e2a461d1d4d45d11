/**
 * Which model and provider a subagent talks to: `delegation.model`, `provider`, `base_url`,
 * `api_key`, `api_mode` (upstream's keys), else the parent's. A provider or endpoint named there is
 * resolved the way `model.*` is, so a missing key is the same clear error; `delegation.model` alone
 * keeps the parent's provider with another model. `delegation.reasoning_effort` replaces
 * `agent.reasoning_effort` for children.
 */
import { type ResolvedRuntime, resolveRuntime } from "../../ai/resolve.js";
import type { HermesConfig } from "../../config/defaults.js";

export interface ChildModel {
  /** The child's provider; undefined when the parent has none (a transport handed in directly). */
  resolved: ResolvedRuntime | undefined;
  /** The model id to ask for when there is no resolved runtime. */
  model: string;
  /** The child's configuration (the parent's, with `delegation.reasoning_effort` applied). */
  config: HermesConfig;
}

function text(section: Record<string, unknown>, key: string): string | undefined {
  const value = section[key];
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

/**
 * The child's model. Throws `NoProviderError` (with the fix) when `delegation.provider` or
 * `delegation.base_url` names a provider that cannot be used.
 */
export function childModel(input: {
  config: HermesConfig;
  env: Readonly<Record<string, string | undefined>>;
  parent: ResolvedRuntime | undefined;
  parentModel: string;
  /** The parent's home: `delegation.provider` may use that home's OAuth login. */
  home: string;
}): ChildModel {
  const { config, env, parent, parentModel } = input;
  const d = (config.delegation ?? {}) as Record<string, unknown>;
  const model = text(d, "model");
  const provider = text(d, "provider");
  const baseUrl = text(d, "base_url");
  const effort = text(d, "reasoning_effort");
  const childConfig: HermesConfig = effort
    ? { ...config, agent: { ...config.agent, reasoning_effort: effort } }
    : config;
  if (!provider && !baseUrl) {
    const apiKey = text(d, "api_key");
    return {
      resolved: parent
        ? { ...parent, ...(model ? { model } : {}), ...(apiKey ? { apiKey } : {}) }
        : undefined,
      model: model ?? parentModel,
      config: childConfig,
    };
  }
  const resolved = resolveRuntime({
    flags: {},
    config: {
      ...config,
      model: {
        ...config.model,
        provider: provider ?? "custom",
        base_url: baseUrl ?? "",
        api_key: text(d, "api_key") ?? "",
        default: model ?? "",
        api_mode: text(d, "api_mode") ?? "",
      },
    },
    env,
    home: input.home,
  });
  return { resolved, model: resolved.model, config: childConfig };
}
