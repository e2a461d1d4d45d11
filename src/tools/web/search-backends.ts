/**
 * One function per search service, each speaking that service's own request and response shapes
 * and returning the common `{title, url, snippet}` list. Base URLs can be overridden by
 * environment variables (self-hosted instances, proxies, tests).
 */
import {
  type ApiRequest,
  BackendError,
  callApi,
  callJsonApi,
  joinUrl,
  record,
  records,
  statusError,
  str,
} from "./api-client.js";
import { loadLinkedom } from "./lazy-modules.js";
import { type Env, envValue } from "./web-env.js";

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export interface SearchCall {
  query: string;
  limit: number;
  env: Env;
  signal: AbortSignal | undefined;
}

export type SearchBackendName = "firecrawl" | "tavily" | "exa" | "brave" | "searxng" | "duckduckgo";

const SNIPPET_CHARS = 400;

export const DEFAULT_URLS = {
  firecrawl: "https://api.firecrawl.dev",
  tavily: "https://api.tavily.com",
  exa: "https://api.exa.ai",
  brave: "https://api.search.brave.com",
  duckduckgo: "https://html.duckduckgo.com/html/",
} as const;

/** Removes tags and decodes the common entities of an HTML fragment; collapses whitespace. */
export function plainText(html: string): string {
  return html
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos|nbsp|#39);/gi, (_m, entity: string) => {
      const e = entity.toLowerCase();
      if (e.startsWith("#x")) return String.fromCodePoint(Number.parseInt(e.slice(2), 16));
      if (e.startsWith("#")) return String.fromCodePoint(Number.parseInt(e.slice(1), 10));
      return { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " }[e] ?? "";
    })
    .replace(/\s+/g, " ")
    .trim();
}

function clip(text: string): string {
  return text.length > SNIPPET_CHARS ? `${text.slice(0, SNIPPET_CHARS - 1)}…` : text;
}

function result(title: unknown, url: unknown, snippet: unknown): SearchResult | undefined {
  const link = str(url);
  if (!link) return undefined;
  return {
    title: plainText(str(title) ?? "") || link,
    url: link,
    snippet: clip(plainText(str(snippet) ?? "")),
  };
}

function collect(items: (SearchResult | undefined)[], limit: number): SearchResult[] {
  return items.filter((r): r is SearchResult => r !== undefined).slice(0, limit);
}

function expectObject(backend: string, value: unknown): Record<string, unknown> {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new BackendError(backend, `${backend} answered with an unexpected JSON shape.`);
  }
  return value as Record<string, unknown>;
}

/** Firecrawl `/v2/search` (falls back to `/v1/search` on self-hosted versions without v2). */
async function firecrawl(call: SearchCall): Promise<SearchResult[]> {
  const base = envValue(call.env, "FIRECRAWL_API_URL") ?? DEFAULT_URLS.firecrawl;
  const key = envValue(call.env, "FIRECRAWL_API_KEY");
  const request: ApiRequest = {
    json: { query: call.query, limit: call.limit },
    headers: key ? { authorization: `Bearer ${key}` } : {},
    signal: call.signal,
    keyName: "FIRECRAWL_API_KEY",
  };
  let response = await callApi("Firecrawl", joinUrl(base, "/v2/search"), request);
  if (response.status === 404) response = await callApi("Firecrawl", joinUrl(base, "/v1/search"), request);
  if (response.status < 200 || response.status >= 300) {
    throw statusError("Firecrawl", response.status, response.text, "FIRECRAWL_API_KEY");
  }
  let body: Record<string, unknown>;
  try {
    body = expectObject("Firecrawl", JSON.parse(response.text));
  } catch (error) {
    if (error instanceof BackendError) throw error;
    throw new BackendError(
      "Firecrawl",
      `Firecrawl answered with something other than JSON (HTTP ${response.status}).`,
    );
  }
  if (body["success"] === false) {
    throw new BackendError(
      "Firecrawl",
      `Firecrawl search failed: ${str(body["error"]) ?? "no reason given"}`,
    );
  }
  // v2 puts web results under data.web; v1 returns data as the list itself.
  const data = body["data"];
  const items = Array.isArray(data) ? records(data) : records(record(data)["web"]);
  return collect(
    items.map((r) => result(r["title"], r["url"], r["description"] ?? r["snippet"] ?? r["markdown"])),
    call.limit,
  );
}

/** Tavily `POST /search` (key both as bearer token and `api_key`, which older proxies expect). */
async function tavily(call: SearchCall): Promise<SearchResult[]> {
  const key = envValue(call.env, "TAVILY_API_KEY") ?? "";
  const base = envValue(call.env, "TAVILY_API_URL") ?? DEFAULT_URLS.tavily;
  const body = expectObject(
    "Tavily",
    await callJsonApi("Tavily", joinUrl(base, "/search"), {
      json: {
        api_key: key,
        query: call.query,
        max_results: call.limit,
        search_depth: "basic",
        include_answer: false,
        include_raw_content: false,
        include_images: false,
      },
      headers: { authorization: `Bearer ${key}` },
      signal: call.signal,
      keyName: "TAVILY_API_KEY",
    }),
  );
  return collect(
    records(body["results"]).map((r) => result(r["title"], r["url"], r["content"])),
    call.limit,
  );
}

/** Exa `POST /search` with highlights as the snippet. */
async function exa(call: SearchCall): Promise<SearchResult[]> {
  const base = envValue(call.env, "EXA_API_URL") ?? DEFAULT_URLS.exa;
  const body = expectObject(
    "Exa",
    await callJsonApi("Exa", joinUrl(base, "/search"), {
      json: { query: call.query, numResults: call.limit, type: "auto", contents: { highlights: true } },
      headers: { "x-api-key": envValue(call.env, "EXA_API_KEY") ?? "" },
      signal: call.signal,
      keyName: "EXA_API_KEY",
    }),
  );
  return collect(
    records(body["results"]).map((r) => {
      const highlights = Array.isArray(r["highlights"])
        ? r["highlights"].filter((h) => typeof h === "string")
        : [];
      const text = str(r["text"]);
      const snippet = highlights.length > 0 ? highlights.join(" … ") : (str(r["summary"]) ?? text);
      return result(r["title"], r["url"], snippet);
    }),
    call.limit,
  );
}

/** Brave `GET /res/v1/web/search` (descriptions carry `<strong>` markup, removed here). */
async function brave(call: SearchCall): Promise<SearchResult[]> {
  const base = envValue(call.env, "BRAVE_SEARCH_API_URL") ?? DEFAULT_URLS.brave;
  const url = new URL(joinUrl(base, "/res/v1/web/search"));
  url.searchParams.set("q", call.query);
  url.searchParams.set("count", String(Math.min(call.limit, 20)));
  const body = expectObject(
    "Brave Search",
    await callJsonApi("Brave Search", url.href, {
      headers: { "x-subscription-token": envValue(call.env, "BRAVE_SEARCH_API_KEY") ?? "" },
      signal: call.signal,
      keyName: "BRAVE_SEARCH_API_KEY",
    }),
  );
  return collect(
    records(record(body["web"])["results"]).map((r) => result(r["title"], r["url"], r["description"])),
    call.limit,
  );
}

/** SearXNG `GET /search?format=json` (the instance must list `json` under `search.formats`). */
async function searxng(call: SearchCall): Promise<SearchResult[]> {
  const base = envValue(call.env, "SEARXNG_URL");
  if (!base)
    throw new BackendError("SearXNG", "SEARXNG_URL is not set; set it to your SearXNG instance's address.");
  const url = new URL(joinUrl(base, "/search"));
  url.searchParams.set("q", call.query);
  url.searchParams.set("format", "json");
  const response = await callApi("SearXNG", url.href, { signal: call.signal });
  if (response.status === 403) {
    throw new BackendError(
      "SearXNG",
      "SearXNG refused format=json (HTTP 403). Enable it in the instance's settings.yml: search.formats: [html, json].",
      403,
    );
  }
  if (response.status < 200 || response.status >= 300) {
    throw statusError("SearXNG", response.status, response.text);
  }
  let body: Record<string, unknown>;
  try {
    body = expectObject("SearXNG", JSON.parse(response.text));
  } catch (error) {
    if (error instanceof BackendError) throw error;
    throw new BackendError(
      "SearXNG",
      "SearXNG answered with HTML instead of JSON; check SEARXNG_URL and that search.formats includes json.",
    );
  }
  return collect(
    records(body["results"]).map((r) => result(r["title"], r["url"], r["content"])),
    call.limit,
  );
}

/** The target of a DuckDuckGo result link (`//duckduckgo.com/l/?uddg=<encoded>`); undefined for ads. */
export function unwrapDuckDuckGoLink(href: string, base: string): string | undefined {
  let url: URL;
  try {
    url = new URL(href.startsWith("//") ? `https:${href}` : href, base);
  } catch {
    return undefined;
  }
  if (url.hostname.endsWith("duckduckgo.com")) {
    if (url.pathname === "/l/" || url.pathname === "/l") return url.searchParams.get("uddg") ?? undefined;
    return undefined; // y.js (ads) and other internal links
  }
  return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
}

/** Results of DuckDuckGo's HTML page (no key); ads are skipped. */
export function parseDuckDuckGoHtml(html: string, base: string, limit: number): SearchResult[] {
  const { document } = loadLinkedom().parseHTML(html);
  const out: SearchResult[] = [];
  for (const node of document.querySelectorAll(".result")) {
    if (out.length >= limit) break;
    const className = node.getAttribute("class") ?? "";
    if (/\bresult--ad\b/.test(className)) continue;
    const link = node.querySelector("a.result__a");
    const href = link?.getAttribute("href");
    if (!link || !href) continue;
    const target = unwrapDuckDuckGoLink(href, base);
    if (!target) continue;
    const snippet = node.querySelector(".result__snippet")?.textContent ?? "";
    const item = result(link.textContent ?? "", target, snippet);
    if (item) out.push(item);
  }
  return out;
}

async function duckduckgo(call: SearchCall): Promise<SearchResult[]> {
  const base = envValue(call.env, "DUCKDUCKGO_HTML_URL") ?? DEFAULT_URLS.duckduckgo;
  const url = new URL(base);
  url.searchParams.set("q", call.query);
  const response = await callApi("DuckDuckGo", url.href, {
    headers: { accept: "text/html,application/xhtml+xml" },
    signal: call.signal,
  });
  const blocked = /anomaly-modal|bots use DuckDuckGo too|challenge-form/i.test(response.text);
  if (response.status === 202 || blocked) {
    throw new BackendError(
      "DuckDuckGo",
      "DuckDuckGo refused the request as automated traffic (rate limited). Wait a while, or configure a search " +
        "API (TAVILY_API_KEY, EXA_API_KEY, BRAVE_SEARCH_API_KEY, FIRECRAWL_API_KEY or SEARXNG_URL).",
      response.status,
    );
  }
  if (response.status < 200 || response.status >= 300) {
    throw statusError("DuckDuckGo", response.status, response.text);
  }
  return parseDuckDuckGoHtml(response.text, response.url, call.limit);
}

export const SEARCH_BACKENDS: Record<SearchBackendName, (call: SearchCall) => Promise<SearchResult[]>> = {
  firecrawl,
  tavily,
  exa,
  brave,
  searxng,
  duckduckgo,
};
