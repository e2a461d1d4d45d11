import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseMcpServer } from "../../../../src/tools/mcp/config.js";
import { type McpManager, startMcpServers } from "../../../../src/tools/mcp/manager.js";
import { loginMcpServer, logoutMcpServer, McpLoginError } from "../../../../src/tools/mcp/oauth.js";
import { McpTokenStore, tokenFileStem } from "../../../../src/tools/mcp/oauth-store.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import { type FakeMcpOAuth, startFakeMcpOAuth } from "../../../support/fake-mcp-oauth.js";
import { makeToolContext } from "../../../support/tool-context.js";

let fake: FakeMcpOAuth;
beforeAll(async () => {
  fake = await startFakeMcpOAuth();
});
afterAll(async () => {
  await fake.close();
});
const managers: McpManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.close()));
});

function entry(extra: Record<string, unknown> = {}) {
  return { url: fake.url, auth: "oauth", oauth: { timeout: 20 }, connect_timeout: 20, ...extra };
}

function oauthOf(extra: Record<string, unknown> = {}) {
  const server = parseMcpServer("api", entry(extra));
  if (server.transport !== "http" || !server.oauth) throw new Error("expected an oauth server");
  return server.oauth;
}

/** Plays the browser: opens the URL and follows the redirects back to the loopback listener. */
function browser(seen: { pages: string[] }) {
  return (url: string) => {
    void fetch(url).then(async (response) => {
      seen.pages.push(`${response.status} ${await response.text()}`);
    });
  };
}

async function login(home: string, extra: Record<string, unknown> = {}, pages: string[] = []) {
  await loginMcpServer({
    server: "api",
    url: fake.url,
    oauth: oauthOf(extra),
    home,
    showUrl: browser({ pages }),
  });
  return pages;
}

async function connect(home: string) {
  const registry = new ToolRegistry();
  const manager = startMcpServers({ config: { api: entry() }, registry, env: {}, home });
  managers.push(manager);
  await manager.ready;
  const whoami = async () => (await registry.execute("mcp_api_whoami", {}, makeToolContext())).content;
  return { manager, whoami };
}

describe("MCP OAuth against a loopback authorization server", () => {
  it("refuses to connect before a login, saying which command to run", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-oauth-"));
    const { manager } = await connect(home);
    const [status] = manager.status();
    expect(status?.state).toBe("failed");
    expect(status?.error).toContain("run hermes mcp login api");
    expect(fake.counts.authorizations).toBe(0);
  });

  it("logs in with registration and PKCE, stores tokens 0600, and connects with them", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-oauth-"));
    const before = { ...fake.counts };
    const pages = await login(home);
    expect(fake.counts.registrations).toBe(before.registrations + 1);
    expect(fake.counts.codeExchanges).toBe(before.codeExchanges + 1);
    await expect.poll(() => pages[0]).toMatch(/^200 .*Signed in/);

    const store = new McpTokenStore(home, "api");
    expect(statSync(store.tokensPath).mode & 0o777).toBe(0o600);
    expect(statSync(store.clientPath).mode & 0o777).toBe(0o600);
    expect(statSync(store.dir).mode & 0o777).toBe(0o700);
    const saved = JSON.parse(readFileSync(store.tokensPath, "utf8")) as Record<string, unknown>;
    expect(saved).toMatchObject({ token_type: "bearer", access_token: fake.issued.at(-1) });
    expect(saved["expires_at"]).toBeGreaterThan(Date.now() / 1000);
    expect(saved["refresh_token"]).toMatch(/^rt_/);

    const { manager, whoami } = await connect(home);
    expect(manager.status()[0]?.state).toBe("connected");
    expect(await whoami()).toBe(`token ${fake.issued.length}`);
  });

  it("refreshes an expired token (at connect and mid-session) and keeps working", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-oauth-"));
    await login(home);
    fake.expireAll();
    const refreshes = fake.counts.refreshes;
    const { manager, whoami } = await connect(home);
    expect(manager.status()[0]?.state).toBe("connected");
    expect(fake.counts.refreshes).toBe(refreshes + 1);
    const stored = new McpTokenStore(home, "api").readTokens();
    expect(stored?.tokens.access_token).toBe(fake.issued.at(-1));

    fake.expireAll();
    expect(await whoami()).toBe(`token ${fake.issued.length}`);
    expect(fake.counts.refreshes).toBe(refreshes + 2);
  });

  it("a revoked token ends in a clear message naming hermes mcp login", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-oauth-"));
    await login(home);
    const { whoami } = await connect(home);
    fake.revokeAll();
    const authorizations = fake.counts.authorizations;
    const answer = (JSON.parse(await whoami()) as { error: string }).error;
    expect(answer).toContain('MCP server "api" needs you to sign in (OAuth): run hermes mcp login api');
    // No browser flow was started behind the user's back.
    expect(fake.counts.authorizations).toBe(authorizations);
    // A stale token file is not kept around.
    expect(new McpTokenStore(home, "api").readTokens()).toBeUndefined();
  });

  it("a refused login keeps the tokens stored before and says what the server answered", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-oauth-"));
    await login(home);
    const before = readFileSync(new McpTokenStore(home, "api").tokensPath, "utf8");
    fake.denyNext();
    const failure = await login(home).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpLoginError);
    expect((failure as Error).message).toContain("access_denied: the user said no");
    expect(readFileSync(new McpTokenStore(home, "api").tokensPath, "utf8")).toBe(before);
  });

  it("ignores a redirect that does not carry its state (a forged callback) and still finishes", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-oauth-"));
    const pages: string[] = [];
    const exchanges = fake.counts.codeExchanges;
    await loginMcpServer({
      server: "api",
      url: fake.url,
      oauth: oauthOf(),
      home,
      showUrl: (url) => {
        const redirect = new URL(new URL(url).searchParams.get("redirect_uri") ?? "");
        const forged = new URL(redirect);
        forged.searchParams.set("code", "attacker-code");
        forged.searchParams.set("state", "not-ours");
        void fetch(forged)
          .then(async (r) => pages.push(`${r.status} ${await r.text()}`))
          .then(() => browser({ pages })(url));
      },
    });
    expect(pages[0]).toMatch(/^400 .*does not belong/);
    expect(fake.counts.codeExchanges).toBe(exchanges + 1);
  });

  it("times out when the browser never comes back, naming oauth.timeout", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-oauth-"));
    const failure = await loginMcpServer({
      server: "api",
      url: fake.url,
      oauth: { ...oauthOf(), timeoutMs: 200 },
      home,
      showUrl: () => undefined,
    }).catch((error: unknown) => error);
    expect((failure as Error).message).toMatch(/no answer from the browser within 0 s \(oauth.timeout\)/);
  });

  it("logout removes tokens and the registration; a name cannot leave mcp-tokens/", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-oauth-"));
    await login(home);
    expect(logoutMcpServer(home, "api")).toBe(true);
    expect(logoutMcpServer(home, "api")).toBe(false);
    expect(tokenFileStem("../../etc/passwd")).toBe("etc_passwd");
    expect(tokenFileStem("a/b")).toBe("a_b");
    expect(tokenFileStem("...")).toBe("default");
  });

  it("reads a corrupt token file as no login", () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-oauth-"));
    const store = new McpTokenStore(home, "api");
    store.writeTokens({ access_token: "a", token_type: "bearer", expires_in: 10 });
    writeFileSync(store.tokensPath, "{not json");
    expect(store.readTokens()).toBeUndefined();
  });
});
