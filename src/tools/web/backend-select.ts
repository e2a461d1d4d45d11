/**
 * Which service answers `web_search` and `web_extract`. Pure: the configuration and environment
 * come in, a choice (and why) goes out.
 *
 * Order: `web.search_backend` / `web.extract_backend` when set; else Python Hermes's shared
 * `web.backend` when it names a service this tool supports; else the first service whose key is
 * set (Firecrawl, then Tavily, then Exa, as Python Hermes orders them; search then also tries
 * Brave and SearXNG); else the keyless default (DuckDuckGo for search, local extraction).
 */
import { configSection, type Env, envValue } from "./web-env.js";

export const SEARCH_BACKEND_NAMES = ["firecrawl", "tavily", "exa", "brave", "searxng", "duckduckgo"] as const;
export const EXTRACT_BACKEND_NAMES = ["local", "firecrawl", "tavily", "exa"] as const;

export type SearchBackendChoice = (typeof SEARCH_BACKEND_NAMES)[number];
export type ExtractBackendChoice = (typeof EXTRACT_BACKEND_NAMES)[number];

/** A web setting in config.yaml names something unknown, or its service lacks a key. */
export class WebConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebConfigError";
  }
}

export interface BackendChoice<T extends string> {
  name: T;
  /** Where the choice came from: a config key, an environment variable, or `default`. */
  source: string;
}

/** The variables that make each service usable (any one of them). */
const KEYS: Record<string, readonly string[]> = {
  firecrawl: ["FIRECRAWL_API_KEY", "FIRECRAWL_API_URL"],
  tavily: ["TAVILY_API_KEY"],
  exa: ["EXA_API_KEY"],
  brave: ["BRAVE_SEARCH_API_KEY"],
  searxng: ["SEARXNG_URL"],
};

function configured(config: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const value = configSection(config, "web")[key];
  if (typeof value !== "string") return undefined;
  const clean = value.trim().toLowerCase();
  return clean && clean !== "auto" ? clean : undefined;
}

function select<T extends string>(
  names: readonly T[],
  ownKey: string,
  byKey: readonly T[],
  fallback: T,
  config: Readonly<Record<string, unknown>>,
  env: Env,
): BackendChoice<T> {
  const own = configured(config, ownKey);
  if (own !== undefined) {
    const alias = own === "ddg" ? "duckduckgo" : own === "builtin" ? "local" : own;
    if (!names.includes(alias as T)) {
      throw new WebConfigError(
        `config.yaml web.${ownKey}: "${own}" is not supported; use one of ${names.join(", ")} (or remove it to choose by the keys that are set).`,
      );
    }
    return { name: alias as T, source: `web.${ownKey}` };
  }
  // Python Hermes's single setting; a service this tool lacks (e.g. parallel) falls through.
  const shared = configured(config, "backend");
  if (shared !== undefined && names.includes(shared as T))
    return { name: shared as T, source: "web.backend" };
  for (const name of byKey) {
    const found = (KEYS[name] ?? []).find((k) => envValue(env, k) !== undefined);
    if (found) return { name, source: found };
  }
  return { name: fallback, source: "default" };
}

export function selectSearchBackend(
  config: Readonly<Record<string, unknown>>,
  env: Env,
): BackendChoice<SearchBackendChoice> {
  return select(
    SEARCH_BACKEND_NAMES,
    "search_backend",
    ["firecrawl", "tavily", "exa", "brave", "searxng"],
    "duckduckgo",
    config,
    env,
  );
}

export function selectExtractBackend(
  config: Readonly<Record<string, unknown>>,
  env: Env,
): BackendChoice<ExtractBackendChoice> {
  return select(
    EXTRACT_BACKEND_NAMES,
    "extract_backend",
    ["firecrawl", "tavily", "exa"],
    "local",
    config,
    env,
  );
}

/** Throws when the chosen service needs a key (or URL) that is not set. */
export function requireKeys(choice: BackendChoice<string>, env: Env): void {
  const keys = KEYS[choice.name];
  if (!keys || keys.some((k) => envValue(env, k) !== undefined)) return;
  throw new WebConfigError(
    `${choice.source} selects ${choice.name}, but ${keys.join(" or ")} is not set. Add it to ~/.hermes/.env, or change ${choice.source}.`,
  );
}
