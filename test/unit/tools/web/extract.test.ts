import iconv from "iconv-lite";
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import {
  createWebExtractTool,
  type WebExtractDeps,
  type WebExtractResponse,
} from "../../../../src/tools/web/extract.js";
import { isPrivateAddress, type LookupFn } from "../../../../src/tools/web/url-guard.js";
import { type FakeLlm, httpError, reply, startFakeLlm } from "../../../support/fake-llm.js";
import { makeToolContext } from "../../../support/tool-context.js";
import { closedPort, type LocalServer, startServer } from "./http-fixture.js";

const servers: LocalServer[] = [];
let llm: FakeLlm | undefined;
async function serve(...args: Parameters<typeof startServer>): Promise<LocalServer> {
  const server = await startServer(...args);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await llm?.close();
  llm = undefined;
});

interface Options {
  allowPrivate?: boolean;
  config?: Record<string, unknown>;
  deps?: WebExtractDeps;
}

/** Runs web_extract as the model would, through the registry; the context's env is the whole environment. */
async function extract(args: Record<string, unknown>, options: Options = {}) {
  const config = { ...defaultConfig(), ...options.config } as Record<string, unknown> &
    ReturnType<typeof defaultConfig>;
  config.security = { ...config.security, allow_private_urls: options.allowPrivate ?? true };
  const registry = new ToolRegistry();
  registry.register(createWebExtractTool({ env: (ctx) => ctx.env, ...options.deps }));
  const outcome = await registry.execute("web_extract", args, makeToolContext({ env: {}, config }));
  const parsed = JSON.parse(outcome.content) as WebExtractResponse & { error?: string };
  return { outcome, parsed, page: parsed.results?.[0] };
}

/** A one-page PDF with the given lines of text, written by hand (Helvetica, uncompressed stream). */
function makePdf(lines: string[], title = "Owl Report"): Buffer {
  const text = lines.map((line, i) => `${i === 0 ? "" : "0 -16 Td "}(${line}) Tj`).join(" ");
  const stream = `BT /F1 12 Tf 72 720 Td ${text} ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${Buffer.byteLength(stream)} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    `<< /Title (${title}) >>`,
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out));
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out);
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  out += offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("");
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info 6 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

const ARTICLE = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Night Hunters | Bird Weekly</title></head>
<body>
  <div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience. <button>Accept all cookies</button></div>
  <header><nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/shop">Shop</a></nav></header>
  <main>
    <article>
      <h1>How Owls Hunt at Night</h1>
      <p class="byline">By Ada Fowler</p>
      <p>Owls locate prey in complete darkness by sound alone. Their facial discs funnel sound toward
      asymmetric ear openings, which lets them judge height as well as direction.</p>
      <p>The barn owl can catch a mouse under snow. Its feathers have soft fringes that silence the air
      flowing over the wing, so the prey hears nothing until it is too late.</p>
      <h2>Eyes built for low light</h2>
      <p>Owl eyes are tubes rather than spheres, packed with rod cells. They cannot move in their
      sockets, which is why owls turn their heads up to 270 degrees. Read the <a href="/studies/eyes">full study</a>.</p>
    </article>
  </main>
  <aside class="sidebar"><h3>Trending</h3><ul><li>Ten best bird feeders</li></ul></aside>
  <footer><p>Copyright 2024 Bird Weekly Media. All rights reserved.</p><a href="/privacy">Privacy policy</a></footer>
</body></html>`;

describe("web_extract (local)", () => {
  it("turns an article into clean markdown without navigation, cookie banner or footer", async () => {
    const site = await serve((_req, res) =>
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ARTICLE),
    );
    const { outcome, parsed, page } = await extract({ urls: [`${site.url}/articles/owls`] });
    expect(outcome.ok).toBe(true);
    expect(parsed.backend).toBe("local");
    expect(page?.title).toMatch(/Night Hunters|How Owls Hunt at Night/);
    expect(page?.content).toMatch(/^# .+\n\nURL: http:\/\/127\.0\.0\.1:\d+\/articles\/owls\n/);
    expect(page?.content).toContain("Owls locate prey in complete darkness by sound alone.");
    expect(page?.content).toContain("## Eyes built for low light");
    expect(page?.content).toContain(`[full study](${site.url}/studies/eyes)`);
    for (const boilerplate of [
      "Accept all cookies",
      "About us",
      "All rights reserved",
      "Ten best bird feeders",
    ]) {
      expect(page?.content).not.toContain(boilerplate);
    }
    expect(page?.error).toBeUndefined();
  });

  it("falls back to the whole body when there is no article", async () => {
    const site = await serve((_req, res) =>
      res
        .writeHead(200, { "content-type": "text/html" })
        .end(
          "<html><head><title>List</title></head><body><ul><li>Item one</li><li>Item two</li></ul></body></html>",
        ),
    );
    const { page } = await extract({ urls: [`${site.url}/list`] });
    expect(page?.title).toBe("List");
    expect(page?.content).toContain("- Item one");
    expect(page?.content).toContain("- Item two");
  });

  it("reads the text of a PDF", async () => {
    const pdf = makePdf(["Barn owls live on every continent", "except Antarctica."]);
    const site = await serve((_req, res) =>
      res.writeHead(200, { "content-type": "application/pdf" }).end(pdf),
    );
    const { page } = await extract({ urls: [`${site.url}/report.pdf`] });
    expect(page?.error).toBeUndefined();
    expect(page?.title).toBe("Owl Report");
    expect(page?.content).toContain("Barn owls live on every continent");
    expect(page?.content).toContain("except Antarctica.");
  });

  it("recognises a PDF by its magic number when the type is wrong", async () => {
    const pdf = makePdf(["Served as octet-stream"]);
    const site = await serve((_req, res) =>
      res.writeHead(200, { "content-type": "application/octet-stream" }).end(pdf),
    );
    const { page } = await extract({ urls: [`${site.url}/download?id=7`] });
    expect(page?.content).toContain("Served as octet-stream");
  });

  it("decodes windows-1252 from the header and Shift_JIS from a meta tag", async () => {
    const western = iconv.encode(
      "<html><head><title>Caf\u00e9</title></head><body><p>\u201cCr\u00e8me br\u00fbl\u00e9e\u201d costs \u20ac5 \u2014 a bargain.</p></body></html>",
      "windows-1252",
    );
    const japanese = iconv.encode(
      '<html><head><meta charset="Shift_JIS"><title>\u30d5\u30af\u30ed\u30a6</title></head><body><p>\u30d5\u30af\u30ed\u30a6\u306f\u591c\u884c\u6027\u306e\u9ce5\u3067\u3059\u3002</p></body></html>',
      "shift_jis",
    );
    const site = await serve((req, res) => {
      if (req.url === "/western")
        res.writeHead(200, { "content-type": "text/html; charset=windows-1252" }).end(western);
      else res.writeHead(200, { "content-type": "text/html" }).end(japanese);
    });
    const { parsed } = await extract({ urls: [`${site.url}/western`, `${site.url}/japanese`] });
    expect(parsed.results[0]?.content).toContain(
      "\u201cCr\u00e8me br\u00fbl\u00e9e\u201d costs \u20ac5 \u2014 a bargain.",
    );
    expect(parsed.results[1]?.title).toBe("\u30d5\u30af\u30ed\u30a6");
    expect(parsed.results[1]?.content).toContain(
      "\u30d5\u30af\u30ed\u30a6\u306f\u591c\u884c\u6027\u306e\u9ce5\u3067\u3059\u3002",
    );
  });

  it("passes plain text and JSON through", async () => {
    const site = await serve((req, res) => {
      if (req.url === "/notes.txt")
        res.writeHead(200, { "content-type": "text/plain" }).end("line one\nline two\n");
      else res.writeHead(200, { "content-type": "application/json" }).end('{"owls":["barn","snowy"]}');
    });
    const { parsed } = await extract({ urls: [`${site.url}/notes.txt`, `${site.url}/api/owls`] });
    expect(parsed.results[0]?.content).toBe("line one\nline two\n");
    expect(parsed.results[1]?.content).toBe('{"owls":["barn","snowy"]}');
  });

  it("describes binary content instead of returning it", async () => {
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.alloc(3000, 7),
    ]);
    const site = await serve((_req, res) => res.writeHead(200, { "content-type": "image/png" }).end(png));
    const { outcome, page } = await extract({ urls: [`${site.url}/owl.png`] });
    expect(outcome.ok).toBe(true);
    expect(page?.content).toBe("");
    expect(page?.error).toBe(
      "Binary content (image/png, 2.9 KB) was not extracted; web_extract reads HTML pages, PDFs and text.",
    );
  });

  it("reports a 404 for its URL while the other URL succeeds", async () => {
    const site = await serve((req, res) => {
      if (req.url === "/missing")
        res.writeHead(404, { "content-type": "text/html" }).end("<h1>Not here</h1>");
      else res.writeHead(200, { "content-type": "text/plain" }).end("present");
    });
    const { outcome, parsed } = await extract({ urls: [`${site.url}/missing`, `${site.url}/here`] });
    expect(outcome.ok).toBe(true);
    expect(parsed.results[0]?.error).toBe(
      `The server answered HTTP 404 (Not Found) for ${site.url}/missing.`,
    );
    expect(parsed.results[1]).toMatchObject({ url: `${site.url}/here`, content: "present" });
  });

  it("refuses a loopback URL unless security.allow_private_urls is on", async () => {
    const site = await serve((_req, res) =>
      res.writeHead(200, { "content-type": "text/plain" }).end("internal secret"),
    );
    const refused = await extract({ urls: [`${site.url}/admin`] }, { allowPrivate: false });
    expect(refused.page?.content).toBe("");
    expect(refused.page?.error).toContain("security.allow_private_urls");
    expect(site.requests).toHaveLength(0);
    const allowed = await extract({ urls: [`${site.url}/admin`] }, { allowPrivate: true });
    expect(allowed.page?.content).toBe("internal secret");
  });

  it("refuses a redirect from a public site to a private address", async () => {
    const site = await serve((_req, res) =>
      res.writeHead(302, { location: "http://intranet.corp/payroll" }).end(),
    );
    const lookup: LookupFn = async (host) => [
      { address: host === "intranet.corp" ? "192.168.0.10" : "127.0.0.1", family: 4 },
    ];
    const { page } = await extract(
      { urls: [`http://news.example:${site.port}/story`] },
      {
        allowPrivate: false,
        deps: { lookup, isBlockedAddress: (a) => a !== "127.0.0.1" && isPrivateAddress(a) },
      },
    );
    expect(page?.error).toContain("intranet.corp (192.168.0.10)");
    expect(page?.error).toContain("security.allow_private_urls");
    expect(site.requests).toHaveLength(1);
  });

  it("gives up on a page that never finishes loading, within the time limit", async () => {
    const site = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.write("<html><body><p>Still loading");
    });
    const started = Date.now();
    const { outcome, page } = await extract({ urls: [`${site.url}/slow`] }, { deps: { timeoutMs: 500 } });
    expect(outcome.ok).toBe(true);
    expect(page?.error).toMatch(/did not answer completely within 500 ms/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("reports an unreachable host and a name that does not resolve", async () => {
    const port = await closedPort();
    const lookup: LookupFn = async (host) => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    };
    const { parsed } = await extract(
      { urls: [`http://127.0.0.1:${port}/`, "https://no-such-host.invalid/page", "ftp://files.example/x"] },
      { deps: { lookup } },
    );
    expect(parsed.results[0]?.error).toContain("connection refused");
    expect(parsed.results[1]?.error).toContain("Could not resolve host no-such-host.invalid");
    expect(parsed.results[2]?.error).toContain("Only http and https");
  });

  it("refuses more than five URLs before fetching any", async () => {
    const { outcome } = await extract({
      urls: ["a", "b", "c", "d", "e", "f"].map((p) => `https://x.example/${p}`),
    });
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatch(/urls/);
  });
});

describe("web_extract on long pages", () => {
  const longText = (n: number) =>
    Array.from(
      { length: n },
      (_v, i) => `Paragraph ${i}: owls are fascinating nocturnal raptors with silent flight.`,
    ).join("\n");

  it("summarises a page over char_limit with the auxiliary model and says so", async () => {
    llm = await startFakeLlm();
    llm.enqueue(reply().text("## Summary\n\n- Owls are nocturnal raptors.\n- Their flight is silent."));
    const body = longText(200);
    const site = await serve((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end(body));
    const config = {
      auxiliary: {
        web_extract: { provider: "custom", base_url: llm.url, model: "aux-small", api_key: "aux-key" },
      },
    };
    const { page } = await extract({ urls: [`${site.url}/long.txt`], char_limit: 2000 }, { config });
    expect(page?.content).toBe("## Summary\n\n- Owls are nocturnal raptors.\n- Their flight is silent.");
    expect(page?.summarized).toBe(true);
    expect(page?.original_chars).toBe(body.length);
    expect(page?.note).toContain("auxiliary model (aux-small)");
    expect(page?.note).toContain(body.length.toLocaleString("en-US"));
    const sent = JSON.stringify(llm.chatRequests[0]?.body);
    expect(sent).toContain("Paragraph 199: owls are fascinating");
    expect(llm.chatRequests[0]?.headers.authorization).toBe("Bearer aux-key");
  });

  it("truncates with a note when no auxiliary model is configured", async () => {
    const body = longText(300);
    const site = await serve((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end(body));
    const { page } = await extract({ urls: [`${site.url}/long.txt`], char_limit: 1000 });
    expect(page?.truncated).toBe(true);
    expect(page?.content.length).toBeLessThanOrEqual(1000);
    expect(body.startsWith(page?.content ?? "x")).toBe(true);
    expect(page?.note).toContain("no auxiliary model is configured");
    expect(page?.original_chars).toBe(body.length);
  });

  it("truncates when the auxiliary model fails", async () => {
    llm = await startFakeLlm();
    llm.enqueue(httpError(400, { error: { message: "context too long", type: "invalid_request_error" } }));
    const site = await serve((_req, res) =>
      res.writeHead(200, { "content-type": "text/plain" }).end(longText(100)),
    );
    const config = {
      auxiliary: { web_extract: { provider: "custom", base_url: llm.url, model: "aux", api_key: "k" } },
    };
    const { outcome, page } = await extract({ urls: [`${site.url}/long.txt`], char_limit: 1000 }, { config });
    expect(outcome.ok).toBe(true);
    expect(page?.truncated).toBe(true);
    expect(page?.note).toContain("summarising failed");
  });

  it("cuts an enormous page without sending it to a model", async () => {
    llm = await startFakeLlm();
    const body = "x".repeat(99) + "\n";
    const site = await serve((_req, res) =>
      res.writeHead(200, { "content-type": "text/plain" }).end(body.repeat(6000)),
    );
    const config = {
      auxiliary: { web_extract: { provider: "custom", base_url: llm.url, model: "aux", api_key: "k" } },
    };
    const { page } = await extract({ urls: [`${site.url}/huge.txt`] }, { config });
    expect(page?.truncated).toBe(true);
    expect(page?.original_chars).toBe(600_000);
    expect(page?.content.length).toBeLessThanOrEqual(20_000);
    expect(page?.note).toContain("too large to summarise");
    expect(llm.chatRequests).toHaveLength(0);
  });

  it("keeps a page of wide characters within the tool-output limit", async () => {
    const body = "\u30d5\u30af\u30ed\u30a6\u306f\u591c\u884c\u6027\u3002\n".repeat(1900);
    const site = await serve((_req, res) =>
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end(body),
    );
    const { outcome, page } = await extract({ urls: [`${site.url}/jp.txt`] });
    expect(body.length).toBeLessThan(20_000);
    expect(Buffer.byteLength(body)).toBeGreaterThan(50_000);
    expect(outcome.truncated).toBeUndefined();
    expect(Buffer.byteLength(outcome.content)).toBeLessThanOrEqual(50_000);
    expect(page?.truncated).toBe(true);
    expect(page?.note).toContain("tool-output limit");
    expect(body.startsWith(page?.content ?? "x")).toBe(true);
  });

  it("shares the default budget between several URLs", async () => {
    const body = longText(400);
    const site = await serve((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end(body));
    const urls = [1, 2, 3, 4, 5].map((n) => `${site.url}/page${n}`);
    const { outcome, parsed } = await extract({ urls });
    expect(outcome.truncated).toBeUndefined();
    for (const page of parsed.results) expect(page.content.length).toBeLessThanOrEqual(9000);
  });
});
