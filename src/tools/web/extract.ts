/**
 * web_extract: read up to five URLs. By default pages are fetched and read here (no key needed);
 * with `web.extract_backend` (or a Firecrawl, Tavily or Exa key, as Python Hermes decides) a
 * service reads them instead. Either way, private addresses are refused unless
 * `security.allow_private_urls` is on, each URL reports its own error, and long pages are
 * condensed (condense.ts) so that the whole answer fits the tool-output limit.
 */
import { Type } from "@sinclair/typebox";
import { defineTool, type ToolContext } from "../types.js";
import { requireKeys, selectExtractBackend } from "./backend-select.js";
import { condense, cutAt } from "./condense.js";
import description from "./extract.md";
import { extractViaService } from "./extract-backends.js";
import { fetchPage, type PageResult } from "./local-extract.js";
import { allowPrivateUrls, checkUrl, type LookupFn, WebFetchError } from "./url-guard.js";
import { resolveWebEnv, type WebEnvSource } from "./web-env.js";

export const MAX_URLS = 5;
/** Characters one page may take by default (fewer each when several URLs share the answer). */
export const DEFAULT_PAGE_CHARS = 20_000;
/** What all pages of one answer may take together by default, below the 50 KB tool-output cap. */
const ANSWER_CHARS = 45_000;
/** Room left for the JSON around the pages when fitting the answer to the tool-output cap. */
const ANSWER_MARGIN_BYTES = 1_000;

const parameters = Type.Object({
  urls: Type.Array(Type.String({ minLength: 1 }), {
    minItems: 1,
    maxItems: MAX_URLS,
    description: `http(s) URLs (at most ${MAX_URLS}).`,
  }),
  char_limit: Type.Optional(
    Type.Integer({
      minimum: 500,
      maximum: 100_000,
      description: `Max characters per page (default ${DEFAULT_PAGE_CHARS}).`,
    }),
  ),
});

export interface ExtractedPage extends PageResult {
  summarized?: true;
  truncated?: true;
  original_chars?: number;
}

export interface WebExtractResponse {
  results: ExtractedPage[];
  /** Who read the pages: local, firecrawl, tavily or exa. */
  backend: string;
}

export interface WebExtractDeps {
  /** Where keys and endpoints are read (default: the process environment and the home's .env under ctx.env). */
  env?: WebEnvSource;
  /** Name resolution for the private-address check (tests). */
  lookup?: LookupFn;
  /** Which addresses count as private (tests). */
  isBlockedAddress?: (address: string) => boolean;
  /** Total time for fetching one page (default 30 s). */
  timeoutMs?: number;
  /** Largest page body read, in bytes (default 10 MB). */
  maxBytes?: number;
}

type Ctx = Pick<ToolContext, "config" | "env" | "home" | "signal" | "progress">;

/** Reads the pages; throws only for a configuration error or an interruption. */
export async function webExtract(
  args: { urls: string[]; char_limit?: number | undefined },
  ctx: Ctx,
  deps: WebExtractDeps = {},
): Promise<WebExtractResponse> {
  const urls = [...new Set(args.urls.map((u) => u.trim()).filter(Boolean))].slice(0, MAX_URLS);
  if (urls.length === 0) throw new Error("web_extract needs at least one URL.");
  const env = (deps.env ?? resolveWebEnv)(ctx);
  const choice = selectExtractBackend(ctx.config, env);
  requireKeys(choice, env);
  const guard = {
    allowPrivate: allowPrivateUrls(ctx.config),
    lookup: deps.lookup,
    isBlockedAddress: deps.isBlockedAddress,
  };
  let pages: PageResult[];
  if (choice.name === "local") {
    pages = await Promise.all(
      urls.map((url) => {
        ctx.progress(`Fetching ${url}`);
        return fetchPage(url, {
          ...guard,
          timeoutMs: deps.timeoutMs,
          maxBytes: deps.maxBytes,
          signal: ctx.signal,
        });
      }),
    );
  } else {
    // The service fetches the pages, but the model must not reach internal hosts through it either.
    const checked = await Promise.all(
      urls.map(async (url): Promise<PageResult | undefined> => {
        try {
          await checkUrl(url, guard);
          return undefined;
        } catch (error) {
          const message = error instanceof WebFetchError ? error.message : String(error);
          return { url, title: "", content: "", error: message };
        }
      }),
    );
    const allowed = urls.filter((_url, i) => checked[i] === undefined);
    ctx.progress(`Extracting ${allowed.length} page(s) through ${choice.name}`);
    const fetched = await extractViaService(choice.name, allowed, env, ctx.signal);
    let next = 0;
    pages = checked.map(
      (refused) => refused ?? fetched[next++] ?? { url: "", title: "", content: "", error: "missing" },
    );
  }
  const limit = args.char_limit ?? Math.min(DEFAULT_PAGE_CHARS, Math.floor(ANSWER_CHARS / urls.length));
  const results = await Promise.all(
    pages.map(async (page): Promise<ExtractedPage> => {
      if (page.error || !page.content) return page;
      const condensed = await condense(
        { url: page.final_url ?? page.url, title: page.title, content: page.content, limit },
        { config: ctx.config, env, home: ctx.home, signal: ctx.signal, progress: (m) => ctx.progress(m) },
      );
      const out: ExtractedPage = { ...page, content: condensed.content };
      if (condensed.summarized) out.summarized = true;
      if (condensed.truncated) out.truncated = true;
      if (condensed.original_chars !== undefined) out.original_chars = condensed.original_chars;
      const notes = [page.note, condensed.note].filter(Boolean);
      if (notes.length > 0) out.note = notes.join(" ");
      return out;
    }),
  );
  const answer = { results, backend: choice.name };
  fitAnswer(answer, outputBudget(ctx.config));
  return answer;
}

/** The tool-output cap in bytes (`limits.tool_output.max_bytes`), less a margin. */
function outputBudget(config: Readonly<Record<string, unknown>>): number {
  const limits = config["limits"] as { tool_output?: { max_bytes?: unknown } } | undefined;
  const max = limits?.tool_output?.max_bytes;
  return (typeof max === "number" && max > 0 ? max : 50_000) - ANSWER_MARGIN_BYTES;
}

/**
 * Shortens page contents (the longest most) until the serialised answer fits `budget` bytes, so
 * the registry never has to cut the JSON itself. Wide characters and escapes make bytes exceed
 * characters, which the per-page character limits cannot foresee.
 */
function fitAnswer(answer: WebExtractResponse, budget: number): void {
  const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
  for (let round = 0; round < 4; round++) {
    const excess = bytes(answer) - budget;
    if (excess <= 0) return;
    const pages = answer.results.filter((p) => p.content);
    const total = pages.reduce((sum, p) => sum + bytes(p.content), 0);
    if (total === 0) return;
    for (const page of pages) {
      const size = bytes(page.content);
      const keep = Math.max(0, (size - (excess * size) / total - 64) / size);
      const before = page.content.length;
      page.content = cutAt(page.content, Math.floor(before * keep));
      page.truncated = true;
      page.original_chars ??= before;
      if (!page.note?.includes("tool-output limit")) {
        page.note = `${page.note ? `${page.note} ` : ""}Cut further to fit the tool-output limit (limits.tool_output.max_bytes).`;
      }
    }
  }
}

export function createWebExtractTool(deps: WebExtractDeps = {}) {
  return defineTool({
    name: "web_extract",
    toolset: "web",
    description,
    parameters,
    parallelSafe: true,
    sideEffectFree: true,
    emoji: "📄",
    handler: (args, ctx) => webExtract(args, ctx, deps),
  });
}

export const webExtractTool = createWebExtractTool();
