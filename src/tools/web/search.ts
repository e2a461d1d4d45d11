/**
 * web_search: one query to the configured search service (see backend-select.ts), answered as
 * `{ results: [{ title, url, snippet }], backend }`. Works without any key through DuckDuckGo's
 * HTML page. A failing service becomes a tool error that names it; nothing here throws past the
 * registry unexplained.
 */
import { Type } from "@sinclair/typebox";
import { defineTool, type ToolContext } from "../types.js";
import { requireKeys, selectSearchBackend } from "./backend-select.js";
import description from "./search.md";
import { SEARCH_BACKENDS, type SearchResult } from "./search-backends.js";
import { resolveWebEnv, type WebEnvSource } from "./web-env.js";

const DEFAULT_LIMIT = 5;
const MAX_LIMIT = 20;

const parameters = Type.Object({
  query: Type.String({ minLength: 1, description: "What to search for." }),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_LIMIT,
      description: `Results to return (default ${DEFAULT_LIMIT}).`,
    }),
  ),
});

export interface WebSearchResponse {
  results: SearchResult[];
  /** The service that answered: firecrawl, tavily, exa, brave, searxng or duckduckgo. */
  backend: string;
}

export interface WebSearchDeps {
  /** Where keys and endpoints are read (default: the process environment and the home's .env under ctx.env). */
  env?: WebEnvSource;
}

/** Runs one search; throws a readable error (config, service or network) on failure. */
export async function webSearch(
  args: { query: string; limit?: number | undefined },
  ctx: Pick<ToolContext, "config" | "env" | "home" | "signal">,
  deps: WebSearchDeps = {},
): Promise<WebSearchResponse> {
  const query = args.query.trim();
  if (!query) throw new Error("web_search needs a non-empty query.");
  const env = (deps.env ?? resolveWebEnv)(ctx);
  const choice = selectSearchBackend(ctx.config, env);
  requireKeys(choice, env);
  const limit = Math.max(1, Math.min(MAX_LIMIT, args.limit ?? DEFAULT_LIMIT));
  const results = await SEARCH_BACKENDS[choice.name]({ query, limit, env, signal: ctx.signal });
  return { results, backend: choice.name };
}

export function createWebSearchTool(deps: WebSearchDeps = {}) {
  return defineTool({
    name: "web_search",
    toolset: "web",
    description,
    parameters,
    parallelSafe: true,
    sideEffectFree: true,
    emoji: "🔍",
    handler: (args, ctx) => webSearch(args, ctx, deps),
  });
}

export const webSearchTool = createWebSearchTool();
