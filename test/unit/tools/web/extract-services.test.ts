import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import { createWebExtractTool, type WebExtractResponse } from "../../../../src/tools/web/extract.js";
import type { LookupFn } from "../../../../src/tools/web/url-guard.js";
import { makeToolContext } from "../../../support/tool-context.js";
import { type LocalServer, sendJson, startServer } from "./http-fixture.js";

const servers: LocalServer[] = [];
async function serve(...args: Parameters<typeof startServer>): Promise<LocalServer> {
  const server = await startServer(...args);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** Every page host in these tests is public; nothing asks the real DNS. */
const lookup: LookupFn = async () => [{ address: "93.184.216.34", family: 4 }];

async function extract(
  args: Record<string, unknown>,
  env: Record<string, string>,
  options: { web?: Record<string, unknown>; allowPrivate?: boolean } = {},
) {
  const config = { ...defaultConfig(), web: options.web ?? {} } as Record<string, unknown> &
    ReturnType<typeof defaultConfig>;
  config.security = { ...config.security, allow_private_urls: options.allowPrivate ?? false };
  const registry = new ToolRegistry();
  registry.register(createWebExtractTool({ env: (ctx) => ctx.env, lookup }));
  const outcome = await registry.execute("web_extract", args, makeToolContext({ env, config }));
  return { outcome, parsed: JSON.parse(outcome.content) as WebExtractResponse };
}

describe("web_extract through Firecrawl", () => {
  it("scrapes each URL with POST /v2/scrape and reports a page's own HTTP error", async () => {
    const firecrawl = await serve((req, res) => {
      if (req.url !== "/v2/scrape") return sendJson(res, 404, { success: false, error: "Not found" });
      const { url } = JSON.parse(req.body) as { url: string };
      if (url.endsWith("/gone")) {
        return sendJson(res, 200, {
          success: true,
          data: {
            markdown: "",
            metadata: { title: "404", sourceURL: url, url, statusCode: 404, error: "Not Found" },
          },
        });
      }
      sendJson(res, 200, {
        success: true,
        data: {
          markdown: "# Owl care\n\nFeed owls mice, not seeds.",
          metadata: {
            title: "Owl care",
            sourceURL: url,
            url: `${url}?ref=canonical`,
            statusCode: 200,
            contentType: "text/html",
          },
        },
      });
    });
    const { outcome, parsed } = await extract(
      { urls: ["https://owls.example/care", "https://owls.example/gone"] },
      { FIRECRAWL_API_KEY: "fc-key", FIRECRAWL_API_URL: firecrawl.url },
    );
    expect(outcome.ok).toBe(true);
    expect(parsed.backend).toBe("firecrawl");
    expect(parsed.results[0]).toMatchObject({
      url: "https://owls.example/care",
      final_url: "https://owls.example/care?ref=canonical",
      title: "Owl care",
      content: "# Owl care\n\nFeed owls mice, not seeds.",
    });
    expect(parsed.results[1]?.error).toBe(
      "The server answered HTTP 404 for https://owls.example/gone (via Firecrawl).",
    );
    const bodies = firecrawl.requests.map((r) => JSON.parse(r.body) as Record<string, unknown>);
    expect(bodies).toContainEqual({
      url: "https://owls.example/care",
      formats: ["markdown"],
      onlyMainContent: true,
    });
    expect(firecrawl.requests[0]?.headers.authorization).toBe("Bearer fc-key");
  });
});

describe("web_extract through Tavily", () => {
  it("sends every URL in one POST /extract and keeps the order asked", async () => {
    const tavily = await serve((req, res) => {
      if (req.url !== "/extract") return sendJson(res, 404, {});
      sendJson(res, 200, {
        results: [
          { url: "https://owls.example/b/", raw_content: "# Snowy owl\n\nWhite and diurnal.", images: [] },
          { url: "https://owls.example/a", raw_content: "Barn owls screech.", images: [] },
        ],
        failed_results: [{ url: "https://owls.example/c", error: "Failed to fetch url" }],
        response_time: 0.9,
      });
    });
    const { parsed } = await extract(
      { urls: ["https://owls.example/a", "https://owls.example/b", "https://owls.example/c"] },
      { TAVILY_API_KEY: "tvly-key", TAVILY_API_URL: tavily.url },
    );
    expect(parsed.backend).toBe("tavily");
    expect(parsed.results.map((r) => [r.url, r.content, r.error])).toEqual([
      ["https://owls.example/a", "Barn owls screech.", undefined],
      ["https://owls.example/b", "# Snowy owl\n\nWhite and diurnal.", undefined],
      ["https://owls.example/c", "", "Tavily could not extract it: Failed to fetch url"],
    ]);
    expect(parsed.results[1]?.title).toBe("Snowy owl");
    expect(tavily.requests).toHaveLength(1);
    const sent = JSON.parse(tavily.requests[0]?.body ?? "{}") as Record<string, unknown>;
    expect(sent).toMatchObject({
      urls: ["https://owls.example/a", "https://owls.example/b", "https://owls.example/c"],
    });
    expect(tavily.requests[0]?.headers.authorization).toBe("Bearer tvly-key");
  });

  it("refuses an internal URL before handing anything to the service", async () => {
    const tavily = await serve((_req, res) =>
      sendJson(res, 200, {
        results: [{ url: "https://owls.example/a", raw_content: "public page" }],
        failed_results: [],
      }),
    );
    const { parsed } = await extract(
      { urls: ["http://169.254.169.254/latest/meta-data/", "https://owls.example/a"] },
      { TAVILY_API_KEY: "k", TAVILY_API_URL: tavily.url },
      { web: { extract_backend: "tavily" } },
    );
    expect(parsed.results[0]?.error).toContain("security.allow_private_urls");
    expect(parsed.results[1]?.content).toBe("public page");
    expect(JSON.parse(tavily.requests[0]?.body ?? "{}")).toMatchObject({ urls: ["https://owls.example/a"] });
  });

  it("a rejected key becomes each URL's error, naming the variable", async () => {
    const tavily = await serve((_req, res) =>
      sendJson(res, 401, { detail: { error: "Unauthorized: missing or invalid API key." } }),
    );
    const { outcome, parsed } = await extract(
      { urls: ["https://owls.example/a", "https://owls.example/b"] },
      { TAVILY_API_KEY: "wrong", TAVILY_API_URL: tavily.url },
    );
    expect(outcome.ok).toBe(true);
    for (const page of parsed.results) {
      expect(page.error).toMatch(/^Tavily refused the request \(HTTP 401\).*Check TAVILY_API_KEY\.$/);
    }
  });

  it("long service content is cut like local content", async () => {
    const long = Array.from({ length: 400 }, (_v, i) => `Line ${i} about owls and their habits.`).join("\n");
    const tavily = await serve((_req, res) =>
      sendJson(res, 200, { results: [{ url: "https://owls.example/long", raw_content: long }] }),
    );
    const { parsed } = await extract(
      { urls: ["https://owls.example/long"], char_limit: 1000 },
      { TAVILY_API_KEY: "k", TAVILY_API_URL: tavily.url },
    );
    expect(parsed.results[0]?.truncated).toBe(true);
    expect(parsed.results[0]?.original_chars).toBe(long.length);
    expect(parsed.results[0]?.content.length).toBeLessThanOrEqual(1000);
  });
});

describe("web_extract through Exa", () => {
  it("asks POST /contents with x-api-key and reports per-URL statuses", async () => {
    const exa = await serve((req, res) => {
      if (req.url !== "/contents") return sendJson(res, 404, {});
      sendJson(res, 200, {
        requestId: "r1",
        results: [
          {
            id: "https://owls.example/a",
            url: "https://owls.example/a",
            title: "Owl A",
            text: "Owls of the world.",
          },
        ],
        statuses: [
          { id: "https://owls.example/a", status: "success" },
          {
            id: "https://owls.example/b",
            status: "error",
            error: { tag: "CRAWL_NOT_FOUND", httpStatusCode: 404 },
          },
        ],
      });
    });
    const { parsed } = await extract(
      { urls: ["https://owls.example/a", "https://owls.example/b"] },
      { EXA_API_KEY: "exa-key", EXA_API_URL: exa.url },
      { web: { extract_backend: "exa" } },
    );
    expect(parsed.backend).toBe("exa");
    expect(parsed.results[0]).toMatchObject({ title: "Owl A", content: "Owls of the world." });
    expect(parsed.results[1]?.error).toBe("Exa could not fetch it: CRAWL_NOT_FOUND (HTTP 404)");
    expect(exa.requests[0]?.headers["x-api-key"]).toBe("exa-key");
    expect(JSON.parse(exa.requests[0]?.body ?? "{}")).toEqual({
      urls: ["https://owls.example/a", "https://owls.example/b"],
      text: true,
    });
  });

  it("a configured service without its key is a clear tool error", async () => {
    const { outcome } = await extract(
      { urls: ["https://owls.example/a"] },
      {},
      { web: { extract_backend: "exa" } },
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toContain("web.extract_backend selects exa, but EXA_API_KEY is not set");
  });
});
