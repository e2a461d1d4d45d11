/**
 * Extraction through a service (Firecrawl `/v2/scrape`, Tavily `/extract`, Exa `/contents`),
 * each answered in the local extractor's per-URL shape and in the order asked. A service-level
 * failure (bad key, rate limit, outage) becomes every URL's error; a page-level one stays with
 * its URL.
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
import type { PageResult } from "./local-extract.js";
import { DEFAULT_URLS } from "./search-backends.js";
import { type Env, envValue } from "./web-env.js";

export type ExtractService = "firecrawl" | "tavily" | "exa";

interface Call {
  urls: string[];
  env: Env;
  signal: AbortSignal | undefined;
}

/** Loose form of a URL for matching a service's answer to the request (trailing slash, case of host, fragment). */
function urlKey(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.hash = "";
    return parsed.href.replace(/\/+$/, "");
  } catch {
    return url.replace(/\/+$/, "");
  }
}

/** Puts the service's answers in request order; URLs without one get `missing` as their error. */
function inOrder(urls: string[], found: PageResult[], missing: string): PageResult[] {
  const byKey = new Map<string, PageResult>();
  for (const page of found) {
    if (!byKey.has(urlKey(page.url))) byKey.set(urlKey(page.url), page);
  }
  return urls.map((url) => {
    const page = byKey.get(urlKey(url));
    return page ? { ...page, url } : { url, title: "", content: "", error: missing };
  });
}

function titleOf(markdown: string): string {
  return /^#\s+(.+)$/m.exec(markdown)?.[1]?.trim() ?? "";
}

async function firecrawlOne(url: string, call: Call): Promise<PageResult> {
  const base = envValue(call.env, "FIRECRAWL_API_URL") ?? DEFAULT_URLS.firecrawl;
  const key = envValue(call.env, "FIRECRAWL_API_KEY");
  const request: ApiRequest = {
    json: { url, formats: ["markdown"], onlyMainContent: true },
    headers: key ? { authorization: `Bearer ${key}` } : {},
    signal: call.signal,
    keyName: "FIRECRAWL_API_KEY",
  };
  try {
    let response = await callApi("Firecrawl", joinUrl(base, "/v2/scrape"), request);
    // A self-hosted Firecrawl without the v2 API answers 404 for the endpoint itself.
    if (response.status === 404) response = await callApi("Firecrawl", joinUrl(base, "/v1/scrape"), request);
    if (response.status < 200 || response.status >= 300) {
      throw statusError("Firecrawl", response.status, response.text, "FIRECRAWL_API_KEY");
    }
    let body: Record<string, unknown>;
    try {
      body = record(JSON.parse(response.text));
    } catch {
      throw new BackendError("Firecrawl", "Firecrawl answered with something other than JSON.");
    }
    if (body["success"] === false) {
      throw new BackendError(
        "Firecrawl",
        `Firecrawl could not scrape the page: ${str(body["error"]) ?? "no reason given"}`,
      );
    }
    const data = record(body["data"]);
    const metadata = record(data["metadata"]);
    const markdown = str(data["markdown"]) ?? "";
    const finalUrl = str(metadata["url"]) ?? str(metadata["sourceURL"]);
    const page: PageResult = { url, title: str(metadata["title"]) ?? titleOf(markdown), content: markdown };
    if (finalUrl && finalUrl !== url) page.final_url = finalUrl;
    const status = typeof metadata["statusCode"] === "number" ? metadata["statusCode"] : 200;
    if (status >= 400) {
      return {
        ...page,
        content: "",
        error: `The server answered HTTP ${status} for ${url} (via Firecrawl).`,
      };
    }
    if (!markdown) page.error = str(metadata["error"]) ?? "Firecrawl returned no content for this page.";
    return page;
  } catch (error) {
    return { url, title: "", content: "", error: (error as Error).message };
  }
}

async function firecrawl(call: Call): Promise<PageResult[]> {
  return Promise.all(call.urls.map((url) => firecrawlOne(url, call)));
}

async function tavily(call: Call): Promise<PageResult[]> {
  const key = envValue(call.env, "TAVILY_API_KEY") ?? "";
  const base = envValue(call.env, "TAVILY_API_URL") ?? DEFAULT_URLS.tavily;
  const body = record(
    await callJsonApi("Tavily", joinUrl(base, "/extract"), {
      json: {
        api_key: key,
        urls: call.urls,
        format: "markdown",
        extract_depth: "basic",
        include_images: false,
      },
      headers: { authorization: `Bearer ${key}` },
      signal: call.signal,
      keyName: "TAVILY_API_KEY",
    }),
  );
  const found: PageResult[] = [];
  for (const r of records(body["results"])) {
    const url = str(r["url"]);
    if (!url) continue;
    const content = str(r["raw_content"]) ?? str(r["content"]) ?? "";
    found.push({ url, title: str(r["title"]) ?? titleOf(content), content });
  }
  for (const r of records(body["failed_results"])) {
    const url = str(r["url"]);
    if (url)
      found.push({
        url,
        title: "",
        content: "",
        error: `Tavily could not extract it: ${str(r["error"]) ?? "no reason given"}`,
      });
  }
  return inOrder(call.urls, found, "Tavily returned nothing for this URL.");
}

async function exa(call: Call): Promise<PageResult[]> {
  const base = envValue(call.env, "EXA_API_URL") ?? DEFAULT_URLS.exa;
  const body = record(
    await callJsonApi("Exa", joinUrl(base, "/contents"), {
      json: { urls: call.urls, text: true },
      headers: { "x-api-key": envValue(call.env, "EXA_API_KEY") ?? "" },
      signal: call.signal,
      keyName: "EXA_API_KEY",
    }),
  );
  const found: PageResult[] = [];
  for (const r of records(body["results"])) {
    const url = str(r["url"]) ?? str(r["id"]);
    if (url) found.push({ url, title: str(r["title"]) ?? "", content: str(r["text"]) ?? "" });
  }
  for (const s of records(body["statuses"])) {
    const url = str(s["id"]);
    if (!url || s["status"] !== "error") continue;
    const error = record(s["error"]);
    const code = typeof error["httpStatusCode"] === "number" ? ` (HTTP ${error["httpStatusCode"]})` : "";
    found.unshift({
      url,
      title: "",
      content: "",
      error: `Exa could not fetch it: ${str(error["tag"]) ?? "error"}${code}`,
    });
  }
  return inOrder(call.urls, found, "Exa returned nothing for this URL.");
}

const SERVICES: Record<ExtractService, (call: Call) => Promise<PageResult[]>> = { firecrawl, tavily, exa };

/** Extracts `urls` through `service`. Never throws: a failed call becomes each URL's error. */
export async function extractViaService(
  service: ExtractService,
  urls: string[],
  env: Env,
  signal: AbortSignal | undefined,
): Promise<PageResult[]> {
  if (urls.length === 0) return [];
  try {
    return await SERVICES[service]({ urls, env, signal });
  } catch (error) {
    if (signal?.aborted) throw error;
    const message = (error as Error).message ?? String(error);
    return urls.map((url) => ({ url, title: "", content: "", error: message }));
  }
}
