/**
 * Which models a `mixture_of_agents` call uses, read from config.yaml. Pure: no I/O, no network.
 *
 * Three places, first match wins (upstream's names):
 * 1. `moa.presets.<name>` (`name` = `moa.active_preset`, else `moa.default_preset`, else
 *    `default`) when it lists `reference_models` and is not `enabled: false`: its
 *    `reference_models`, `aggregator`, `reference_temperature`, `aggregator_temperature`,
 *    `max_tokens`.
 * 2. `auxiliary.moa_reference`: `models: [...]` (several references sharing the section's
 *    provider, base_url and api_key unless an entry names its own) or one `provider`/`model`; the
 *    aggregator is `auxiliary.moa_aggregator`.
 * 3. Upstream's defaults: MiniMax-M2.7 and deepseek-reasoner as references, Xiaomi MiMo v2 Pro as
 *    the aggregator (each usable only when its provider's key is set).
 *
 * A route written as a string is `provider:model` (as `hermes model` reads it) or a bare model id:
 * a bare id takes the section's provider; without one, an OpenRouter-style `vendor/model` slug
 * goes to OpenRouter (as upstream does) and anything else to the main provider.
 */
import { parseModelSpec } from "../ai/model-spec.js";

export interface MoaRoute {
  provider?: string;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  /** What results and errors call this model. */
  label: string;
}

export interface MoaPlan {
  references: MoaRoute[];
  aggregator: MoaRoute;
  referenceTemperature: number;
  aggregatorTemperature: number;
  /** Output cap of each model call. */
  maxTokens: number;
  /** Where the plan came from, for error messages: `moa.presets.default`, `auxiliary.moa_reference`, `defaults`. */
  source: string;
  /** Entries that could not be read (a number where a model was expected): reported, never fatal. */
  problems: string[];
}

export const MOA_DEFAULT_REFERENCES: readonly MoaRoute[] = [
  { provider: "minimax", model: "MiniMax-M2.7", label: "minimax/MiniMax-M2.7" },
  { provider: "deepseek", model: "deepseek-reasoner", label: "deepseek/deepseek-reasoner" },
];
export const MOA_DEFAULT_AGGREGATOR: MoaRoute = {
  provider: "xiaomi",
  model: "mimo-v2-pro",
  label: "xiaomi/mimo-v2-pro",
};
export const MOA_REFERENCE_TEMPERATURE = 0.6;
export const MOA_AGGREGATOR_TEMPERATURE = 0.4;
export const MOA_MAX_TOKENS = 4096;

type Rec = Record<string, unknown>;

const rec = (value: unknown): Rec =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Rec) : {};
const str = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() ? value.trim() : undefined;
const num = (value: unknown, fallback: number, min: number, max: number): number =>
  typeof value === "number" && Number.isFinite(value) ? Math.min(max, Math.max(min, value)) : fallback;

function labelOf(provider: string | undefined, model: string | undefined, explicit?: string): string {
  if (explicit) return explicit;
  if (provider && provider !== "auto" && provider !== "main") return `${provider}/${model ?? ""}`;
  return model ?? provider ?? "?";
}

/** Shared defaults of a section: provider, base_url, api_key. */
interface Inherit {
  provider?: string | undefined;
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
}

/** One route from a string or mapping; undefined (with a problem noted) when it names no model. */
export function readRoute(
  spec: unknown,
  where: string,
  inherit: Inherit,
  problems: string[],
): MoaRoute | undefined {
  if (typeof spec === "string") {
    const parsed = parseModelSpec(spec);
    if (!parsed.ok) {
      problems.push(`${where}: ${parsed.message}`);
      return undefined;
    }
    const model = parsed.spec.model || undefined;
    const provider =
      parsed.spec.provider ??
      inherit.provider ??
      (inherit.baseUrl ? undefined : model?.includes("/") ? "openrouter" : "main");
    const route: MoaRoute = { label: labelOf(provider, model) };
    if (provider) route.provider = provider;
    if (model) route.model = model;
    const baseUrl = parsed.spec.baseUrl ?? (parsed.spec.provider ? undefined : inherit.baseUrl);
    if (baseUrl) route.baseUrl = baseUrl;
    if (inherit.apiKey && !parsed.spec.provider) route.apiKey = inherit.apiKey;
    return route;
  }
  const entry = rec(spec);
  const model = str(entry["model"]);
  if (!model) {
    problems.push(`${where} names no model (write "provider:model" or {provider, model}).`);
    return undefined;
  }
  const own = str(entry["provider"]);
  const baseUrl = str(entry["base_url"]) ?? (own ? undefined : inherit.baseUrl);
  const provider =
    own ?? inherit.provider ?? (baseUrl ? undefined : model.includes("/") ? "openrouter" : "main");
  const apiKey = str(entry["api_key"]) ?? (own ? undefined : inherit.apiKey);
  const route: MoaRoute = { model, label: labelOf(provider, model, str(entry["label"])) };
  if (provider) route.provider = provider;
  if (baseUrl) route.baseUrl = baseUrl;
  if (apiKey) route.apiKey = apiKey;
  return route;
}

function inheritOf(section: Rec): Inherit {
  return {
    provider: str(section["provider"]),
    baseUrl: str(section["base_url"]),
    apiKey: str(section["api_key"]),
  };
}

/** The aggregator from `auxiliary.moa_aggregator`; undefined when that section names no model. */
function auxAggregator(config: Rec, problems: string[]): MoaRoute | undefined {
  const section = rec(rec(config["auxiliary"])["moa_aggregator"]);
  if (!str(section["model"])) return undefined;
  return readRoute(section, "auxiliary.moa_aggregator", {}, problems);
}

/** The preset in use, when it lists reference models and is not switched off. */
function activePreset(config: Rec): { name: string; preset: Rec } | undefined {
  const moa = rec(config["moa"]);
  const name = str(moa["active_preset"]) ?? str(moa["default_preset"]) ?? "default";
  const preset = rec(rec(moa["presets"])[name]);
  if (preset["enabled"] === false) return undefined;
  const refs = preset["reference_models"];
  if (!Array.isArray(refs) || refs.length === 0) return undefined;
  return { name, preset };
}

/** Reads the plan (see the file comment). Never throws; `problems` lists entries it skipped. */
export function readMoaPlan(config: Readonly<Record<string, unknown>>): MoaPlan {
  const problems: string[] = [];
  const aux = rec(config["auxiliary"]);
  const refSection = rec(aux["moa_reference"]);
  const aggSection = rec(aux["moa_aggregator"]);
  const preset = activePreset(config);
  if (preset) {
    const where = `moa.presets.${preset.name}`;
    const refs = (preset.preset["reference_models"] as unknown[])
      .map((spec, i) => readRoute(spec, `${where}.reference_models[${i}]`, {}, problems))
      .filter((r): r is MoaRoute => r !== undefined);
    const aggregatorSpec = preset.preset["aggregator"] ?? preset.preset["aggregator_model"];
    const aggregator =
      (aggregatorSpec !== undefined
        ? readRoute(aggregatorSpec, `${where}.aggregator`, {}, problems)
        : undefined) ??
      auxAggregator(config, problems) ??
      MOA_DEFAULT_AGGREGATOR;
    return {
      references: refs,
      aggregator,
      referenceTemperature: num(preset.preset["reference_temperature"], MOA_REFERENCE_TEMPERATURE, 0, 2),
      aggregatorTemperature: num(preset.preset["aggregator_temperature"], MOA_AGGREGATOR_TEMPERATURE, 0, 2),
      maxTokens: Math.round(num(preset.preset["max_tokens"], MOA_MAX_TOKENS, 16, 200_000)),
      source: where,
      problems,
    };
  }
  const listed = refSection["models"];
  let references: MoaRoute[] | undefined;
  if (Array.isArray(listed) && listed.length > 0) {
    references = listed
      .map((spec, i) =>
        readRoute(spec, `auxiliary.moa_reference.models[${i}]`, inheritOf(refSection), problems),
      )
      .filter((r): r is MoaRoute => r !== undefined);
  } else if (str(refSection["model"])) {
    const one = readRoute(refSection, "auxiliary.moa_reference", {}, problems);
    references = one ? [one] : [];
  }
  const aggregator = auxAggregator(config, problems) ?? MOA_DEFAULT_AGGREGATOR;
  return {
    references: references ?? [...MOA_DEFAULT_REFERENCES],
    aggregator,
    referenceTemperature: num(refSection["temperature"], MOA_REFERENCE_TEMPERATURE, 0, 2),
    aggregatorTemperature: num(aggSection["temperature"], MOA_AGGREGATOR_TEMPERATURE, 0, 2),
    maxTokens: Math.round(num(refSection["max_tokens"], MOA_MAX_TOKENS, 16, 200_000)),
    source: references ? "auxiliary.moa_reference" : "defaults",
    problems,
  };
}
