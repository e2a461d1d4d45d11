import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import { selectExtractBackend, selectSearchBackend } from "../../../../src/tools/web/backend-select.js";
import { createWebSearchTool, type WebSearchResponse } from "../../../../src/tools/web/search.js";
import { resolveWebEnv } from "../../../../src/tools/web/web-env.js";
import { makeToolContext } from "../../../support/tool-context.js";
import { closedPort, type LocalServer, sendJson, startServer } from "./http-fixture.js";

const servers: LocalServer[] = [];
async function serve(...args: Parameters<typeof startServer>): Promise<LocalServer> {
  const server = await startServer(...args);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

// The tool reads only the context's env here, so a developer's real keys never take part.
const tool = createWebSearchTool({ env: (ctx) => ctx.env });

function context(env: Record<string, string>, web: Record<string, unknown> = {}) {
  const config = { ...defaultConfig(), web } as unknown as Record<string, unknown>;
  return makeToolContext({ env, config });
}

async function search(
  env: Record<string, string>,
  args: { query: string; limit?: number },
  web: Record<string, unknown> = {},
): Promise<WebSearchResponse> {
  return (await tool.handler(args, context(env, web))) as WebSearchResponse;
}

/** What the model sees: the registry's serialised outcome. */
async function run(
  env: Record<string, string>,
  args: Record<string, unknown>,
  web: Record<string, unknown> = {},
) {
  const registry = new ToolRegistry();
  registry.register(tool);
  return registry.execute("web_search", args, context(env, web));
}

const DDG_PAGE = `<!DOCTYPE html>
<html><head><title>owls at DuckDuckGo</title></head><body>
<div class="serp__results"><div id="links" class="results">
  <div class="result results_links results_links_deep result--ad ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="https://duckduckgo.com/y.js?ad_domain=owlshop.example&amp;ad_provider=bing">Buy Owls Now</a></h2>
      <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=owlshop.example">Cheap owls.</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fen.wikipedia.org%2Fwiki%2FOwl&amp;rut=abc123">Owl - <b>Wikipedia</b></a>
      </h2>
      <div class="result__extras"><div class="result__extras__url">
        <a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fen.wikipedia.org%2Fwiki%2FOwl&amp;rut=abc123">en.wikipedia.org/wiki/Owl</a>
      </div></div>
      <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fen.wikipedia.org%2Fwiki%2FOwl&amp;rut=abc123"><b>Owls</b> are birds from the order Strigiformes &amp; include about 200 species.</a>
      <div class="clear"></div>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.audubon.org%2Fnews%2Fowls%3Fa%3D1%26b%3D2&amp;rut=def">Owls | Audubon</a></h2>
      <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.audubon.org%2Fnews%2Fowls">Learn about owls.</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fowls.example.org%2F&amp;rut=ghi">Third owl page</a></h2>
      <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fowls.example.org%2F">More owls.</a>
    </div>
  </div>
</div></div></body></html>`;

describe("web_search with DuckDuckGo (no key)", () => {
  it("parses the HTML results, unwraps redirect links and skips ads", async () => {
    const ddg = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=UTF-8" });
      res.end(DDG_PAGE);
    });
    const out = await search(
      { DUCKDUCKGO_HTML_URL: `${ddg.url}/html/` },
      { query: "owls & birds", limit: 2 },
    );
    expect(out.backend).toBe("duckduckgo");
    expect(out.results).toEqual([
      {
        title: "Owl - Wikipedia",
        url: "https://en.wikipedia.org/wiki/Owl",
        snippet: "Owls are birds from the order Strigiformes & include about 200 species.",
      },
      {
        title: "Owls | Audubon",
        url: "https://www.audubon.org/news/owls?a=1&b=2",
        snippet: "Learn about owls.",
      },
    ]);
    const sent = new URL(ddg.requests[0]?.url ?? "", ddg.url);
    expect(sent.pathname).toBe("/html/");
    expect(sent.searchParams.get("q")).toBe("owls & birds");
  });

  it("reports DuckDuckGo's bot check as a rate limit with what to do", async () => {
    const ddg = await serve((_req, res) => {
      res.writeHead(202, { "content-type": "text/html" });
      res.end(
        '<html><body><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div></body></html>',
      );
    });
    const outcome = await run({ DUCKDUCKGO_HTML_URL: `${ddg.url}/html/` }, { query: "owls" });
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatch(/DuckDuckGo refused the request as automated/);
    expect(outcome.error).toContain("TAVILY_API_KEY");
  });
});

describe("web_search with keyed services", () => {
  it("Tavily: POST /search with the key, content as snippet", async () => {
    const tavily = await serve((req, res) => {
      if (req.method !== "POST" || req.url !== "/search") return sendJson(res, 404, { detail: "not found" });
      sendJson(res, 200, {
        query: "owls",
        answer: null,
        images: [],
        results: [
          {
            title: "Owl facts",
            url: "https://owls.example/facts",
            content: "Owls hunt at night.",
            score: 0.9,
            raw_content: null,
          },
          {
            title: "Barn owl",
            url: "https://owls.example/barn",
            content: "Barn owls screech.",
            score: 0.8,
            raw_content: null,
          },
        ],
        response_time: 0.42,
      });
    });
    const out = await search(
      { TAVILY_API_KEY: "tvly-test", TAVILY_API_URL: tavily.url },
      { query: "owls", limit: 3 },
    );
    expect(out).toEqual({
      backend: "tavily",
      results: [
        { title: "Owl facts", url: "https://owls.example/facts", snippet: "Owls hunt at night." },
        { title: "Barn owl", url: "https://owls.example/barn", snippet: "Barn owls screech." },
      ],
    });
    const request = tavily.requests[0];
    expect(request?.headers.authorization).toBe("Bearer tvly-test");
    expect(JSON.parse(request?.body ?? "{}")).toMatchObject({
      query: "owls",
      max_results: 3,
      api_key: "tvly-test",
    });
  });

  it("Exa: POST /search with x-api-key, highlights as snippet", async () => {
    const exa = await serve((req, res) => {
      if (req.url !== "/search") return sendJson(res, 404, {});
      sendJson(res, 200, {
        requestId: "req-1",
        resolvedSearchType: "neural",
        results: [
          {
            id: "https://owls.example/a",
            url: "https://owls.example/a",
            title: "Owl anatomy",
            publishedDate: "2024-01-01T00:00:00.000Z",
            author: null,
            highlights: ["Owls have fixed eyes.", "They turn their heads 270 degrees."],
            highlightScores: [0.5, 0.4],
          },
        ],
      });
    });
    const out = await search({ EXA_API_KEY: "exa-key", EXA_API_URL: exa.url }, { query: "owl anatomy" });
    expect(out.backend).toBe("exa");
    expect(out.results[0]).toEqual({
      title: "Owl anatomy",
      url: "https://owls.example/a",
      snippet: "Owls have fixed eyes. … They turn their heads 270 degrees.",
    });
    expect(exa.requests[0]?.headers["x-api-key"]).toBe("exa-key");
    expect(JSON.parse(exa.requests[0]?.body ?? "{}")).toMatchObject({ query: "owl anatomy", numResults: 5 });
  });

  it("Brave: GET /res/v1/web/search with the subscription token, markup removed", async () => {
    const brave = await serve((req, res) => {
      if (!req.url.startsWith("/res/v1/web/search")) return sendJson(res, 404, {});
      sendJson(res, 200, {
        type: "search",
        query: { original: "owls" },
        web: {
          type: "search",
          results: [
            {
              type: "search_result",
              title: "All about <strong>owls</strong>",
              url: "https://owls.example/all",
              description: "<strong>Owls</strong> are &quot;nocturnal&quot; raptors.",
              language: "en",
            },
          ],
        },
      });
    });
    const out = await search(
      { BRAVE_SEARCH_API_KEY: "brave-key", BRAVE_SEARCH_API_URL: brave.url },
      { query: "owls", limit: 4 },
    );
    expect(out).toEqual({
      backend: "brave",
      results: [
        {
          title: "All about owls",
          url: "https://owls.example/all",
          snippet: 'Owls are "nocturnal" raptors.',
        },
      ],
    });
    const sent = new URL(brave.requests[0]?.url ?? "", brave.url);
    expect(sent.searchParams.get("q")).toBe("owls");
    expect(sent.searchParams.get("count")).toBe("4");
    expect(brave.requests[0]?.headers["x-subscription-token"]).toBe("brave-key");
  });

  it("Firecrawl: POST /v2/search with a bearer key, data.web as results", async () => {
    const firecrawl = await serve((req, res) => {
      if (req.url !== "/v2/search") return sendJson(res, 404, { success: false, error: "Not found" });
      sendJson(res, 200, {
        success: true,
        data: {
          web: [
            { url: "https://owls.example/fc", title: "Firecrawl owl", description: "An owl.", position: 1 },
          ],
        },
      });
    });
    const out = await search(
      { FIRECRAWL_API_KEY: "fc-key", FIRECRAWL_API_URL: firecrawl.url },
      { query: "owls" },
    );
    expect(out).toEqual({
      backend: "firecrawl",
      results: [{ title: "Firecrawl owl", url: "https://owls.example/fc", snippet: "An owl." }],
    });
    expect(firecrawl.requests[0]?.headers.authorization).toBe("Bearer fc-key");
    expect(JSON.parse(firecrawl.requests[0]?.body ?? "{}")).toEqual({ query: "owls", limit: 5 });
  });

  it("Firecrawl: a self-hosted instance without v2 is asked on /v1/search (no key needed)", async () => {
    const firecrawl = await serve((req, res) => {
      if (req.url !== "/v1/search") return sendJson(res, 404, { error: "Cannot POST" });
      sendJson(res, 200, {
        success: true,
        data: [{ url: "https://owls.example/v1", title: "v1 owl", description: "Old API." }],
      });
    });
    const out = await search({ FIRECRAWL_API_URL: firecrawl.url }, { query: "owls" });
    expect(out.results).toEqual([{ title: "v1 owl", url: "https://owls.example/v1", snippet: "Old API." }]);
    expect(firecrawl.requests.map((r) => r.url)).toEqual(["/v2/search", "/v1/search"]);
    expect(firecrawl.requests[1]?.headers.authorization).toBeUndefined();
  });

  it("SearXNG: GET /search?format=json", async () => {
    const searx = await serve((req, res) => {
      sendJson(res, 200, {
        query: "owls",
        number_of_results: 0,
        results: [
          {
            url: "https://owls.example/sx",
            title: "SearX owl",
            content: "Found by SearXNG.",
            engine: "bing",
          },
        ],
        answers: [],
        suggestions: [],
      });
      void req;
    });
    const out = await search({ SEARXNG_URL: `${searx.url}/` }, { query: "owls" });
    expect(out).toEqual({
      backend: "searxng",
      results: [{ title: "SearX owl", url: "https://owls.example/sx", snippet: "Found by SearXNG." }],
    });
    const sent = new URL(searx.requests[0]?.url ?? "", searx.url);
    expect(sent.pathname).toBe("/search");
    expect(sent.searchParams.get("format")).toBe("json");
  });

  it("SearXNG without JSON enabled: says how to enable it", async () => {
    const searx = await serve((_req, res) =>
      res.writeHead(403, { "content-type": "text/html" }).end("<h1>403 Forbidden</h1>"),
    );
    const outcome = await run({ SEARXNG_URL: searx.url }, { query: "owls" });
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toContain("search.formats");
  });
});

describe("web_search backend selection", () => {
  const table: [string, Record<string, unknown>, Record<string, string>, string, string][] = [
    ["nothing set", {}, {}, "duckduckgo", "default"],
    [
      "Firecrawl key first",
      {},
      { TAVILY_API_KEY: "t", FIRECRAWL_API_KEY: "f" },
      "firecrawl",
      "FIRECRAWL_API_KEY",
    ],
    ["Firecrawl URL alone", {}, { FIRECRAWL_API_URL: "http://fc.local" }, "firecrawl", "FIRECRAWL_API_URL"],
    ["Tavily before Exa", {}, { EXA_API_KEY: "e", TAVILY_API_KEY: "t" }, "tavily", "TAVILY_API_KEY"],
    ["Exa before Brave", {}, { BRAVE_SEARCH_API_KEY: "b", EXA_API_KEY: "e" }, "exa", "EXA_API_KEY"],
    [
      "Brave before SearXNG",
      {},
      { SEARXNG_URL: "http://sx", BRAVE_SEARCH_API_KEY: "b" },
      "brave",
      "BRAVE_SEARCH_API_KEY",
    ],
    ["SearXNG alone", {}, { SEARXNG_URL: "http://sx" }, "searxng", "SEARXNG_URL"],
    ["blank keys ignored", {}, { TAVILY_API_KEY: "  " }, "duckduckgo", "default"],
    [
      "config wins over keys",
      { search_backend: "Brave" },
      { TAVILY_API_KEY: "t" },
      "brave",
      "web.search_backend",
    ],
    [
      "config can force DuckDuckGo",
      { search_backend: "duckduckgo" },
      { EXA_API_KEY: "e" },
      "duckduckgo",
      "web.search_backend",
    ],
    ["auto means choose", { search_backend: "auto" }, { EXA_API_KEY: "e" }, "exa", "EXA_API_KEY"],
    ["Python's web.backend", { backend: "exa" }, { TAVILY_API_KEY: "t" }, "exa", "web.backend"],
    [
      "unsupported web.backend falls through",
      { backend: "parallel" },
      { TAVILY_API_KEY: "t" },
      "tavily",
      "TAVILY_API_KEY",
    ],
  ];
  it.each(table)("%s", (_name, web, env, name, source) => {
    expect(selectSearchBackend({ web }, env)).toEqual({ name, source });
  });

  it("extraction follows Python Hermes's key order and defaults to local", () => {
    expect(selectExtractBackend({}, {})).toEqual({ name: "local", source: "default" });
    expect(selectExtractBackend({}, { BRAVE_SEARCH_API_KEY: "b" }).name).toBe("local");
    expect(selectExtractBackend({}, { EXA_API_KEY: "e", TAVILY_API_KEY: "t" }).name).toBe("tavily");
    expect(selectExtractBackend({ web: { extract_backend: "local" } }, { FIRECRAWL_API_KEY: "f" }).name).toBe(
      "local",
    );
    expect(selectExtractBackend({ web: { backend: "firecrawl" } }, { EXA_API_KEY: "e" }).name).toBe(
      "firecrawl",
    );
  });

  it("an unknown configured backend is a clear error", async () => {
    const outcome = await run({}, { query: "owls" }, { search_backend: "googol" });
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toContain('web.search_backend: "googol" is not supported');
    expect(outcome.error).toContain("duckduckgo");
  });

  it("a configured backend without its key says which variable is missing", async () => {
    const outcome = await run({}, { query: "owls" }, { search_backend: "brave" });
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toContain("BRAVE_SEARCH_API_KEY is not set");
  });

  it("with two keys set, only the preferred service is asked", async () => {
    const tavily = await serve((_req, res) => sendJson(res, 200, { results: [] }));
    const brave = await serve((_req, res) => sendJson(res, 200, { web: { results: [] } }));
    const out = await search(
      {
        TAVILY_API_KEY: "t",
        TAVILY_API_URL: tavily.url,
        BRAVE_SEARCH_API_KEY: "b",
        BRAVE_SEARCH_API_URL: brave.url,
      },
      { query: "owls" },
    );
    expect(out).toEqual({ backend: "tavily", results: [] });
    expect(tavily.requests).toHaveLength(1);
    expect(brave.requests).toHaveLength(0);
  });
});

describe("web_search errors name the service", () => {
  const tavilyAnswering = (status: number, body: string, type = "application/json") =>
    serve((_req, res) => res.writeHead(status, { "content-type": type }).end(body));

  it.each([
    [
      401,
      '{"detail":{"error":"Unauthorized: missing or invalid API key."}}',
      /Tavily refused the request \(HTTP 401\): Unauthorized: missing or invalid API key\. Check TAVILY_API_KEY/,
    ],
    [429, '{"detail":{"error":"Rate limit exceeded"}}', /Tavily is rate limiting requests \(HTTP 429\)/],
    [502, "<html>Bad gateway</html>", /Tavily had a server error \(HTTP 502\)\. Try again later/],
    [200, "this is not json", /Tavily answered with something other than JSON/],
  ])("HTTP %s", async (status, body, expected) => {
    const tavily = await tavilyAnswering(status, body);
    const outcome = await run({ TAVILY_API_KEY: "bad", TAVILY_API_URL: tavily.url }, { query: "owls" });
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatch(expected);
    expect(JSON.parse(outcome.content)).toEqual({ error: outcome.error });
  });

  it("an unreachable service", async () => {
    const port = await closedPort();
    const outcome = await run(
      { EXA_API_KEY: "k", EXA_API_URL: `http://127.0.0.1:${port}` },
      { query: "owls" },
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatch(/^Exa could not be reached: .*connection refused/);
  });

  it("an empty query is refused before any request", async () => {
    const outcome = await run({}, { query: "" });
    expect(outcome.ok).toBe(false);
  });
});

describe("resolveWebEnv", () => {
  it("reads keys from the agent's environment under the context's env, which wins even when empty", () => {
    const ctx = makeToolContext({ env: { EXA_API_KEY: "" } });
    const env = resolveWebEnv({
      ...ctx,
      secrets: { TAVILY_API_KEY: "from-agent", EXA_API_KEY: "also-from-agent" },
    });
    expect(env["TAVILY_API_KEY"]).toBe("from-agent");
    expect(env["EXA_API_KEY"]).toBe("");
  });
});
