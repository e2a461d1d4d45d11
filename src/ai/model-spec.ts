/**
 * What the user typed to name a model (`hermes model X`, `/model X`): a model id, `provider:model`,
 * `custom:<name>:model`, or an alias from config.yaml's `model_aliases`. Pure: no I/O.
 */
import { findProvider } from "./providers.js";

/** A model choice: the provider when one was named, the model (empty: the provider's own choice). */
export interface ModelSpec {
  /** As written (`openrouter`, `ollama`, `custom:work`); undefined keeps the current provider. */
  provider?: string;
  model: string;
  /** From an alias that names an endpoint. */
  baseUrl?: string;
}

export type ParsedModelSpec = { ok: true; spec: ModelSpec } | { ok: false; message: string };

/**
 * Parses `text`. The part before the first `:` counts as a provider only when it is a catalog id or
 * alias (`anthropic:claude-sonnet-4-5`, `ollama:qwen3:8b`) or `custom:<name>:`; otherwise the whole
 * text is a model id, since local ids carry colons of their own (`llama3:8b`, Bedrock's `…-v1:0`).
 * `aliases` is config.yaml's `model_aliases` (name → "provider:model" | model | {model, provider,
 * base_url}); an alias is followed once, never into another alias.
 */
export function parseModelSpec(text: string, aliases: unknown = {}): ParsedModelSpec {
  const trimmed = text.trim();
  if (trimmed === "")
    return {
      ok: false,
      message: "Give a model, e.g. anthropic/claude-sonnet-4 or openrouter:anthropic/claude-sonnet-4.",
    };
  const alias = aliasEntry(aliases, trimmed);
  if (alias !== undefined) {
    if (typeof alias === "string") return splitSpec(alias, trimmed);
    if (typeof alias === "object" && alias !== null) {
      const entry = alias as Record<string, unknown>;
      const model = typeof entry["model"] === "string" ? entry["model"].trim() : "";
      const provider = typeof entry["provider"] === "string" ? entry["provider"].trim() : "";
      const baseUrl = typeof entry["base_url"] === "string" ? entry["base_url"].trim() : "";
      if (!model && !provider) {
        return {
          ok: false,
          message: `model_aliases.${trimmed} names neither a model nor a provider; fix it in config.yaml.`,
        };
      }
      return {
        ok: true,
        spec: { model, ...(provider ? { provider } : {}), ...(baseUrl ? { baseUrl } : {}) },
      };
    }
    return {
      ok: false,
      message: `model_aliases.${trimmed} must be a string or a mapping; fix it in config.yaml.`,
    };
  }
  return splitSpec(trimmed, undefined);
}

function aliasEntry(aliases: unknown, name: string): unknown {
  if (typeof aliases !== "object" || aliases === null || Array.isArray(aliases)) return undefined;
  return Object.hasOwn(aliases, name) ? (aliases as Record<string, unknown>)[name] : undefined;
}

function splitSpec(text: string, aliasName: string | undefined): ParsedModelSpec {
  const value = text.trim();
  if (value === "") {
    return { ok: false, message: `model_aliases.${aliasName ?? "?"} is empty; fix it in config.yaml.` };
  }
  const custom = /^custom:([^:]+):(.*)$/i.exec(value);
  if (custom) return { ok: true, spec: { provider: `custom:${custom[1]}`, model: (custom[2] ?? "").trim() } };
  const colon = value.indexOf(":");
  if (colon > 0) {
    const head = value.slice(0, colon);
    if (findProvider(head))
      return { ok: true, spec: { provider: head, model: value.slice(colon + 1).trim() } };
  }
  return { ok: true, spec: { model: value } };
}

/** `provider:model` as the user would type it back. */
export function formatModelSpec(provider: string, model: string): string {
  return provider ? `${provider}:${model}` : model;
}
