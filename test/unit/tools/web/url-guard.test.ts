import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import {
  allowPrivateUrls,
  checkUrl,
  guardedFetch,
  isPrivateAddress,
  type LookupFn,
  UrlBlockedError,
  WebFetchError,
} from "../../../../src/tools/web/url-guard.js";
import { closedPort, type LocalServer, startServer } from "./http-fixture.js";

const servers: LocalServer[] = [];
async function serve(...args: Parameters<typeof startServer>): Promise<LocalServer> {
  const server = await startServer(...args);
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A resolver with a fixed table: no test here asks the real DNS for anything but `localhost`. */
function table(entries: Record<string, string>): LookupFn {
  return async (host) => {
    const address = entries[host];
    if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return [{ address, family: address.includes(":") ? 6 : 4 }];
  };
}

/** Treats 127.0.0.1 as if it were a public address, so a local server can stand in for a public site. */
const loopbackIsPublic = (address: string) => address !== "127.0.0.1" && isPrivateAddress(address);

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

describe("isPrivateAddress", () => {
  it.each([
    ["127.0.0.1", true],
    ["127.8.9.10", true],
    ["10.1.2.3", true],
    ["172.16.0.1", true],
    ["172.31.255.255", true],
    ["172.32.0.1", false],
    ["192.168.1.1", true],
    ["169.254.169.254", true],
    ["100.64.0.1", true],
    ["100.128.0.1", false],
    ["0.0.0.0", true],
    ["224.0.0.1", true],
    ["255.255.255.255", true],
    ["8.8.8.8", false],
    ["93.184.216.34", false],
    ["::1", true],
    ["::", true],
    ["fd12:3456::1", true],
    ["fc00::1", true],
    ["fe80::1%eth0", true],
    ["ff02::1", true],
    ["::ffff:127.0.0.1", true],
    ["::ffff:7f00:1", true],
    ["::ffff:10.0.0.1", true],
    ["::ffff:8.8.8.8", false],
    ["64:ff9b::a9fe:a9fe", true],
    ["2002:c0a8:0101::1", true],
    ["2606:4700:4700::1111", false],
    ["[::1]", true],
    ["not-an-ip", true],
  ])("%s → %s", (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });
});

describe("allowPrivateUrls", () => {
  it("reads security.allow_private_urls, false unless exactly true", () => {
    const config = defaultConfig();
    expect(allowPrivateUrls(config)).toBe(false);
    config.security.allow_private_urls = true;
    expect(allowPrivateUrls(config)).toBe(true);
    expect(allowPrivateUrls({ security: { allow_private_urls: "yes" } })).toBe(false);
    expect(allowPrivateUrls({})).toBe(false);
  });
});

describe("checkUrl", () => {
  it("refuses other schemes and malformed URLs with a clear error", async () => {
    const ftp = await rejection(checkUrl("ftp://example.com/file", { allowPrivate: true }));
    expect(ftp).toBeInstanceOf(WebFetchError);
    expect(ftp.message).toMatch(/Only http and https/);
    const junk = await rejection(checkUrl("not a url", { allowPrivate: true }));
    expect((junk as WebFetchError).code).toBe("invalid_url");
  });

  it("refuses loopback and names the setting that allows it", async () => {
    const error = await rejection(checkUrl("http://127.0.0.1:8080/admin", { allowPrivate: false }));
    expect(error).toBeInstanceOf(UrlBlockedError);
    expect(error.message).toContain("security.allow_private_urls");
    expect(error.message).toContain("127.0.0.1");
    await expect(checkUrl("http://[::1]/", { allowPrivate: false })).rejects.toBeInstanceOf(UrlBlockedError);
    await expect(checkUrl("http://localhost:9/", { allowPrivate: false })).rejects.toBeInstanceOf(
      UrlBlockedError,
    );
  });

  it("allows loopback when the setting is on", async () => {
    const url = await checkUrl("http://127.0.0.1:8080/admin", { allowPrivate: true });
    expect(url.href).toBe("http://127.0.0.1:8080/admin");
  });

  it("refuses a public-looking name that resolves to an internal address", async () => {
    const lookup = table({ "news.example.com": "127.0.0.1", "meta.example.com": "169.254.169.254" });
    await expect(
      checkUrl("https://news.example.com/a", { allowPrivate: false, lookup }),
    ).rejects.toBeInstanceOf(UrlBlockedError);
    const meta = await rejection(checkUrl("http://meta.example.com/", { allowPrivate: false, lookup }));
    expect(meta.message).toContain("meta.example.com (169.254.169.254)");
  });

  it("refuses a name when any one of its addresses is internal", async () => {
    const lookup: LookupFn = async () => [
      { address: "93.184.216.34", family: 4 },
      { address: "10.0.0.7", family: 4 },
    ];
    await expect(checkUrl("https://mixed.example/", { allowPrivate: false, lookup })).rejects.toBeInstanceOf(
      UrlBlockedError,
    );
  });

  it("accepts a public address and reports a name that does not resolve", async () => {
    const lookup = table({ "example.com": "93.184.216.34" });
    const url = await checkUrl("https://example.com/x?y=1", { allowPrivate: false, lookup });
    expect(url.hostname).toBe("example.com");
    const error = await rejection(checkUrl("https://nowhere.invalid/", { allowPrivate: false, lookup }));
    expect((error as WebFetchError).code).toBe("dns");
    expect(error.message).toContain("nowhere.invalid");
  });
});

describe("guardedFetch", () => {
  const base = { timeoutMs: 5000, maxBytes: 1_000_000 };

  it("fetches from a local server when private URLs are allowed", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "x-test": "yes" });
      res.end("hello");
    });
    const result = await guardedFetch(`${server.url}/page`, { ...base, allowPrivate: true });
    expect(result.status).toBe(200);
    expect(result.body.toString()).toBe("hello");
    expect(result.headers.get("x-test")).toBe("yes");
    expect(result.truncated).toBe(false);
    expect(result.url).toBe(`${server.url}/page`);
  });

  it("refuses loopback without the setting and never contacts the server", async () => {
    const server = await serve((_req, res) => res.end("secret"));
    await expect(guardedFetch(`${server.url}/`, { ...base, allowPrivate: false })).rejects.toBeInstanceOf(
      UrlBlockedError,
    );
    expect(server.requests).toHaveLength(0);
  });

  it("refuses a redirect from an allowed host to an internal address", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(302, { location: "http://internal.example/admin" }).end();
    });
    const lookup = table({ "public.example": "127.0.0.1", "internal.example": "10.0.0.5" });
    const error = await rejection(
      guardedFetch(`http://public.example:${server.port}/start`, {
        ...base,
        allowPrivate: false,
        lookup,
        isBlockedAddress: loopbackIsPublic,
      }),
    );
    expect(error).toBeInstanceOf(UrlBlockedError);
    expect(error.message).toContain("internal.example (10.0.0.5)");
    expect(server.requests.map((r) => r.url)).toEqual(["/start"]);
  });

  it("re-checks the address at connect time (a name that changes its answer is refused)", async () => {
    const server = await serve((_req, res) => res.end("should not be read"));
    let calls = 0;
    const lookup: LookupFn = async () => [{ address: calls++ === 0 ? "127.0.0.1" : "10.9.9.9", family: 4 }];
    const error = await rejection(
      guardedFetch(`http://rebind.example:${server.port}/`, {
        ...base,
        allowPrivate: false,
        lookup,
        isBlockedAddress: loopbackIsPublic,
      }),
    );
    expect(error).toBeInstanceOf(UrlBlockedError);
    expect(server.requests).toHaveLength(0);
  });

  it("follows redirects (307 keeps the method, 303 turns it into a GET) and drops credentials across origins", async () => {
    const target = await serve((_req, res) => res.end("arrived"));
    const origin = await serve((req, res) => {
      if (req.url === "/same") res.writeHead(307, { location: "/moved" }).end();
      else if (req.url === "/moved") res.writeHead(303, { location: `${target.url}/final` }).end();
      else res.writeHead(404).end();
    });
    const result = await guardedFetch(`${origin.url}/same`, {
      ...base,
      allowPrivate: true,
      method: "POST",
      body: "a=1",
      headers: { authorization: "Bearer secret", "content-type": "application/x-www-form-urlencoded" },
    });
    expect(result.body.toString()).toBe("arrived");
    expect(result.url).toBe(`${target.url}/final`);
    expect(origin.requests.map((r) => [r.method, r.url])).toEqual([
      ["POST", "/same"],
      ["POST", "/moved"],
    ]);
    expect(origin.requests[1]?.headers.authorization).toBe("Bearer secret");
    const final = target.requests[0];
    expect(final?.method).toBe("GET");
    expect(final?.headers.authorization).toBeUndefined();
    expect(final?.body).toBe("");
  });

  it("gives up after too many redirects", async () => {
    const server = await serve((req, res) => {
      const n = Number(req.url?.slice(1) ?? 0);
      res.writeHead(302, { location: `/${n + 1}` }).end();
    });
    const error = await rejection(
      guardedFetch(`${server.url}/0`, { ...base, allowPrivate: true, maxRedirects: 3 }),
    );
    expect((error as WebFetchError).code).toBe("too_many_redirects");
    expect(server.requests).toHaveLength(4);
  });

  it("times out when the body never finishes", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.write("<html><body>Loading forever");
    });
    const started = Date.now();
    const error = await rejection(
      guardedFetch(`${server.url}/`, { ...base, allowPrivate: true, timeoutMs: 400 }),
    );
    expect((error as WebFetchError).code).toBe("timeout");
    expect(error.message).toMatch(/within 400 ms/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("times out when the server never answers", async () => {
    const server = await serve(() => {});
    const error = await rejection(
      guardedFetch(`${server.url}/`, { ...base, allowPrivate: true, timeoutMs: 300 }),
    );
    expect((error as WebFetchError).code).toBe("timeout");
  });

  it("stops at the byte cap: truncates by default, refuses when asked to", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      for (let i = 0; i < 50; i++) res.write("x".repeat(2048));
      res.end();
    });
    const cut = await guardedFetch(`${server.url}/`, { ...base, allowPrivate: true, maxBytes: 10_000 });
    expect(cut.truncated).toBe(true);
    expect(cut.body.length).toBe(10_000);
    const error = await rejection(
      guardedFetch(`${server.url}/`, { ...base, allowPrivate: true, maxBytes: 10_000, onTooLarge: "error" }),
    );
    expect((error as WebFetchError).code).toBe("too_large");
  });

  it("decodes a gzip body and caps the decoded size", async () => {
    const text = "compressible ".repeat(10_000);
    const server = await serve((_req, res) => {
      res.writeHead(200, { "content-encoding": "gzip", "content-type": "text/plain" });
      res.end(gzipSync(text));
    });
    const whole = await guardedFetch(`${server.url}/`, { ...base, allowPrivate: true });
    expect(whole.body.toString()).toBe(text);
    const cut = await guardedFetch(`${server.url}/`, { ...base, allowPrivate: true, maxBytes: 1000 });
    expect(cut.truncated).toBe(true);
    expect(cut.body.length).toBe(1000);
  });

  it("handles bodiless answers that still name an encoding (204, HEAD)", async () => {
    const server = await serve((_req, res) => {
      res.writeHead(_req.method === "HEAD" ? 200 : 204, {
        "content-encoding": "gzip",
        "content-type": "text/plain",
      });
      res.end();
    });
    const empty = await guardedFetch(`${server.url}/`, { ...base, allowPrivate: true });
    expect([empty.status, empty.body.length]).toEqual([204, 0]);
    const head = await guardedFetch(`${server.url}/`, { ...base, allowPrivate: true, method: "HEAD" });
    expect([head.status, head.body.length]).toEqual([200, 0]);
  });

  it("reports an unreachable server as a network error", async () => {
    const port = await closedPort();
    const error = await rejection(guardedFetch(`http://127.0.0.1:${port}/`, { ...base, allowPrivate: true }));
    expect((error as WebFetchError).code).toBe("network");
    expect(error.message).toContain("connection refused");
  });

  it("stops promptly when the caller's signal aborts", async () => {
    const server = await serve(() => {});
    const controller = new AbortController();
    const pending = guardedFetch(`${server.url}/`, {
      ...base,
      allowPrivate: true,
      signal: controller.signal,
    });
    await new Promise<void>((resolve) => {
      const poll = () => (server.requests.length > 0 ? resolve() : setTimeout(poll, 5));
      poll();
    });
    controller.abort();
    const error = await rejection(pending);
    expect((error as WebFetchError).code).toBe("aborted");
  });
});
