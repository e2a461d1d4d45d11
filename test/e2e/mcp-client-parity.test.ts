/**
 * MCP client parity through the built CLI: OAuth sign-in (`hermes mcp login`) against a loopback
 * authorization server in front of a real MCP server, a chat using the stored token and the
 * message after it is revoked; sampling answered through the fake LLM (and refused when off); the
 * catalog's `hermes mcp install` keeping keys out of config.yaml.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, spawnHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { type FakeMcpOAuth, startFakeMcpOAuth } from "../support/fake-mcp-oauth.js";
import { TEST_SERVER } from "../support/mcp-servers.js";

const llm = useFakeLlm();
let fake: FakeMcpOAuth;
beforeAll(async () => {
  fake = await startFakeMcpOAuth();
});
afterAll(async () => {
  await fake.close();
});

type ChatBody = { messages: Array<{ role: string; content: unknown }> };
const toolResult = (request: number): string => {
  const messages = (llm.chatRequests[request]?.body as ChatBody | undefined)?.messages ?? [];
  return String(messages.filter((m) => m.role === "tool").at(-1)?.content ?? "");
};

describe("hermes mcp login with OAuth", () => {
  it("signs in through the browser step, stores the token 0600, and a chat uses it; a revoked one says what to run", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const added = await runHermes(["mcp", "add", "api", "--url", fake.url, "--auth", "oauth"], { home, cwd });
    expect(added.code).toBe(0);
    expect(added.stderr).toContain("Sign in with: hermes mcp login api");

    const login = spawnHermes(["mcp", "login", "api"], { home, cwd, env: { DISPLAY: "" } });
    // Play the browser: take the printed URL and follow it back to the loopback listener.
    await expect.poll(() => login.output().stderr, { timeout: 20_000 }).toMatch(/\n {2}http:\/\/\S+\n/);
    const url = /\n {2}(http:\/\/\S+)\n/.exec(login.output().stderr)?.[1] ?? "";
    const page = await fetch(url);
    expect(await page.text()).toContain("Signed in");
    const done = await login.exited;
    expect(done.stderr).not.toContain("opened in your browser");
    expect(done.stdout).toMatch(/✓ Signed in to "api"; 1 tool available/);
    expect(done.code).toBe(0);
    const tokens = join(home, "mcp-tokens", "api.json");
    expect(statSync(tokens).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(tokens, "utf8")).access_token).toBe(fake.issued.at(-1));

    llm.enqueue(reply().toolCall("mcp_api_whoami", {}), reply().text("done"));
    const chat = await runHermes(["-z", "who am I?"], { home, cwd });
    expect(chat.stderr).toBe("");
    expect(chat.stdout).toBe("done\n");
    expect(toolResult(1)).toBe(`token ${fake.issued.length}`);

    fake.revokeAll();
    llm.enqueue(reply().text("no tools today"));
    const after = await runHermes(["-z", "who am I?"], { home, cwd });
    expect(after.stderr).toContain('MCP server "api" needs you to sign in (OAuth): run hermes mcp login api');
    expect(after.stdout).toBe("no tools today\n");
    expect(after.code).toBe(0);

    const logout = await runHermes(["mcp", "logout", "api"], { home, cwd });
    expect(logout.stdout).toContain('Signed out of "api"');
  });

  it("refuses login for a server without auth: oauth, with the command that adds it", async () => {
    const { home, cwd } = tempHome(
      fakeProviderConfig(llm.url, `mcp_servers:\n  plain:\n    url: ${fake.url}\n`),
    );
    const result = await runHermes(["mcp", "login", "plain"], { home, cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("hermes config set mcp_servers.plain.auth oauth");
  });
});

describe("MCP sampling through the built CLI", () => {
  const serverYaml = (extra = "") =>
    `mcp_servers:\n  t:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(TEST_SERVER)}]\n${extra}`;

  it("answers a server's sampling request with the session's model", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url, serverYaml()));
    llm.enqueue(
      reply().toolCall("mcp_t_ask_model", { prompt: "What is six times seven?" }),
      reply().text("42"),
      reply().text("The server's model says 42."),
    );
    const result = await runHermes(["-z", "ask the server"], { home, cwd });
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("The server's model says 42.\n");
    const sampling = llm.chatRequests[1]?.body as ChatBody & { tools?: unknown };
    expect(sampling.messages.at(-1)).toEqual({ role: "user", content: "What is six times seven?" });
    expect(sampling.tools).toBeUndefined();
    expect(toolResult(2)).toBe("model fake-model said: 42");
  });

  it("refuses when the server's sampling is turned off; the model is not asked", async () => {
    const { home, cwd } = tempHome(
      fakeProviderConfig(llm.url, serverYaml("    sampling:\n      enabled: false\n")),
    );
    llm.enqueue(reply().toolCall("mcp_t_ask_model", { prompt: "spend tokens" }), reply().text("refused"));
    const result = await runHermes(["-z", "ask the server"], { home, cwd });
    expect(result.stdout).toBe("refused\n");
    expect(llm.chatRequests).toHaveLength(2);
    expect(toolResult(1)).toContain('sampling is turned off for MCP server "t"');
  });
});

describe("hermes mcp catalog and install", () => {
  it("lists the catalog and installs a server with its key kept in .env", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const catalog = await runHermes(["mcp", "catalog"], { home, cwd });
    expect(catalog.stdout).toMatch(/^filesystem\s+Read, write and search files/m);
    expect(catalog.stdout).toMatch(/^github\s+.*\[needs GITHUB_PERSONAL_ACCESS_TOKEN\]/m);

    const secret = "ghp_exampleexampleexample1234";
    const installed = await runHermes(
      ["mcp", "install", "github", "--env", `GITHUB_PERSONAL_ACCESS_TOKEN=${secret}`],
      { home, cwd },
    );
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain(
      'Installed MCP server "github" (github): npx -y @modelcontextprotocol/server-github',
    );
    const config = readFileSync(join(home, "config.yaml"), "utf8");
    expect(config).not.toContain(secret);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal reference written to config.yaml
    expect(config).toContain("${GITHUB_PERSONAL_ACCESS_TOKEN}");
    expect(readFileSync(join(home, ".env"), "utf8")).toContain(secret);
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);

    const fs = await runHermes(["mcp", "add", "docs", "--preset", "filesystem", "--", "/srv/docs"], {
      home,
      cwd,
    });
    expect(fs.code).toBe(0);
    const list = await runHermes(["mcp", "list", "--json"], { home, cwd });
    const servers = (JSON.parse(list.stdout) as { servers: Array<{ name: string; args?: string[] }> })
      .servers;
    expect(servers.find((s) => s.name === "docs")?.args).toEqual([
      "-y",
      "@modelcontextprotocol/server-filesystem",
      "/srv/docs",
    ]);

    const unknown = await runHermes(["mcp", "install", "nope"], { home, cwd });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Known: filesystem, everything, fetch, github");
  });
});
