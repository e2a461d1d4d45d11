/**
 * The hub's resolution check: a public-looking name that resolves to this machine or the local
 * network is refused before any connection, and the connection is pinned to the checked addresses.
 * Resolvers are injected, so no test touches real DNS.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HubContext } from "../../../../../src/knowledge/skills/hub/adapter.js";
import { httpGet, type LookupFn, pinnedLookup } from "../../../../../src/knowledge/skills/hub/http.js";
import { adapterById } from "../../../../../src/knowledge/skills/hub/router.js";
import { fetchSkill } from "../../../../../src/knowledge/skills/hub/sources.js";
import { SAFE_MD } from "./fixtures-hub.js";
import { startServer, type TestServer } from "./helpers.js";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
  server.routes.set("/SKILL.md", SAFE_MD("pinned"));
});
afterAll(async () => {
  await server.close();
});

const PUBLIC = "93.184.216.34";

/** A resolver answering from a table; an unknown name fails as DNS would. */
function resolver(table: Record<string, string[]>): LookupFn & { asked: string[] } {
  const asked: string[] = [];
  const fn = async (hostname: string) => {
    asked.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return Object.assign(fn, { asked });
}

/** A transport that records every URL it is asked for and answers with `answer`. */
function recordingFetch(answer: (url: string) => Response): typeof fetch & { seen: string[] } {
  const seen: string[] = [];
  const fn = (async (input: URL | string) => {
    seen.push(String(input));
    return answer(String(input));
  }) as typeof fetch;
  return Object.assign(fn, { seen });
}

describe("names that resolve to internal addresses", () => {
  const internal = ["127.0.0.1", "10.1.2.3", "169.254.169.254", "::1", "fd00::1", "::ffff:127.0.0.1"];

  it.each(internal)("refuses a public name resolving to %s before connecting", async (address) => {
    const lookup = resolver({ "skills.example": [address] });
    const transport = recordingFetch(() => new Response("x"));
    await expect(
      httpGet("https://skills.example/SKILL.md", { maxBytes: 100, fetch: transport, guard: { lookup } }),
    ).rejects.toThrow(`skills.example resolves to a private address (${address}); refused.`);
    expect(lookup.asked).toEqual(["skills.example"]);
    expect(transport.seen).toEqual([]);
  });

  it("refuses on the real network path too, and when only one of several addresses is internal", async () => {
    const lookup = resolver({ "mixed.example": [PUBLIC, "192.168.1.10"] });
    await expect(
      httpGet("http://mixed.example/SKILL.md", { maxBytes: 100, guard: { lookup } }),
    ).rejects.toThrow(/mixed\.example resolves to a private address \(192\.168\.1\.10\)/);
  });

  it("refuses a redirect to a name that resolves internally", async () => {
    const lookup = resolver({ "skills.example": [PUBLIC], "intranet.example": ["10.0.0.7"] });
    const transport = recordingFetch((url) =>
      url.includes("skills.example")
        ? new Response(null, { status: 302, headers: { location: "https://intranet.example/secret" } })
        : new Response("leaked"),
    );
    await expect(
      httpGet("https://skills.example/SKILL.md", { maxBytes: 100, fetch: transport, guard: { lookup } }),
    ).rejects.toThrow(/intranet\.example resolves to a private address \(10\.0\.0\.7\)/);
    expect(transport.seen).toEqual(["https://skills.example/SKILL.md"]);
  });

  it("lets a name with only public addresses through", async () => {
    const lookup = resolver({ "skills.example": [PUBLIC, "2606:4700::1"] });
    const transport = recordingFetch(() => new Response("fine"));
    const res = await httpGet("https://skills.example/SKILL.md", {
      maxBytes: 100,
      fetch: transport,
      guard: { lookup },
    });
    expect(res.body.toString()).toBe("fine");
  });
});

describe("pinning the connection to the checked addresses", () => {
  it("connects to the address that was checked, not to a second resolution", async () => {
    // `hub.invalid` resolves nowhere in real DNS: the request can only succeed by connecting to the
    // address the injected resolver gave (the guard's block list is relaxed for the loopback server).
    const lookup = resolver({ "hub.invalid": ["127.0.0.1"] });
    const port = new URL(server.url).port;
    const res = await httpGet(`http://hub.invalid:${port}/SKILL.md`, {
      maxBytes: 10_000,
      guard: { lookup, isBlockedAddress: () => false },
    });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toContain("name: pinned");
    expect(lookup.asked).toEqual(["hub.invalid"]);
  });

  it("a pinned request still times out, and a redirect on the pinned path is checked again", async () => {
    server.routes.set("/hang", () => {});
    server.routes.set("/away", (_req, res) => {
      res.writeHead(302, { location: "http://intranet.invalid/secret" });
      res.end();
    });
    const port = new URL(server.url).port;
    const lookup = resolver({ "hub.invalid": ["127.0.0.1"], "intranet.invalid": ["10.0.0.9"] });
    // Only the test server's own loopback address is let through.
    const guard = { lookup, isBlockedAddress: (a: string) => a !== "127.0.0.1" };
    await expect(
      httpGet(`http://hub.invalid:${port}/hang`, { maxBytes: 10, timeoutMs: 200, guard }),
    ).rejects.toThrow(/no answer within/);
    await expect(httpGet(`http://hub.invalid:${port}/away`, { maxBytes: 10, guard })).rejects.toThrow(
      /intranet\.invalid resolves to a private address \(10\.0\.0\.9\)/,
    );
  });

  it("the socket lookup answers only with the checked addresses, per family", async () => {
    const lookup = pinnedLookup([
      { address: PUBLIC, family: 4 },
      { address: "2606:4700::1", family: 6 },
    ]);
    const ask = (options: { family?: number; all?: boolean }) =>
      new Promise<unknown>((resolve) =>
        lookup(
          "rebind.example",
          options as never,
          ((error: Error | null, address: unknown, family?: number) =>
            resolve(error ? error.message : { address, family })) as never,
        ),
      );
    expect(await ask({})).toEqual({ address: PUBLIC, family: 4 });
    expect(await ask({ family: 6 })).toEqual({ address: "2606:4700::1", family: 6 });
    expect(await ask({ all: true })).toEqual({
      address: [
        { address: PUBLIC, family: 4 },
        { address: "2606:4700::1", family: 6 },
      ],
      family: undefined,
    });
  });
});

describe("who may reach a private address", () => {
  it("a URL from a chat may not, even written literally; the local user typing it may", async () => {
    const url = `${server.url}/SKILL.md`;
    await expect(fetchSkill({ kind: "url", url }, { remoteRequest: true })).rejects.toThrow(
      /private or loopback address; refused/,
    );
    expect((await fetchSkill({ kind: "url", url })).name).toBe("pinned");
  });

  it("a chat's URL naming a host that resolves to loopback is refused", async () => {
    const lookup = resolver({ "evil.example": ["127.0.0.1"] });
    await expect(
      fetchSkill({ kind: "url", url: "https://evil.example/SKILL.md" }, { remoteRequest: true, lookup }),
    ).rejects.toThrow(/evil\.example resolves to a private address \(127\.0\.0\.1\)/);
  });

  it("a configured registry endpoint may be private; a host its index names may not", async () => {
    const transport = recordingFetch((url) => {
      if (url.endsWith("/api/skills"))
        return Response.json({ skills: [{ slug: "site.com/task", name: "task", description: "d" }] });
      if (url.includes("/api/skills/")) return Response.json({ skillMdUrl: "https://cdn.example/task.md" });
      return new Response(SAFE_MD("task"));
    });
    const env = { HERMES_BROWSE_SH_URL: "http://10.9.9.9:8080" };
    const rebinding: HubContext = {
      env,
      fetch: transport,
      lookup: resolver({ "cdn.example": ["127.0.0.1"] }),
    };
    const browse = adapterById("browse-sh");
    await expect(browse?.fetch("browse-sh/site.com/task", rebinding)).rejects.toThrow(
      /cdn\.example resolves to a private address \(127\.0\.0\.1\)/,
    );
    expect(transport.seen.some((u) => u.includes("cdn.example"))).toBe(false);
    const honest: HubContext = { env, fetch: transport, lookup: resolver({ "cdn.example": [PUBLIC] }) };
    const bundle = await browse?.fetch("browse-sh/site.com/task", honest);
    expect(bundle?.files.get("SKILL.md")?.toString()).toContain("name: task");
  });
});
