// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings hold literal config ${VAR} syntax
import { describe, expect, it } from "vitest";
import { hasEnabledMcpServers, parseMcpServer, parseMcpServers } from "../../../../src/tools/mcp/config.js";

describe("mcp_servers parsing", () => {
  it("reads a stdio server with defaults filled in", () => {
    const { servers, errors } = parseMcpServers({
      fs: { command: "npx", args: ["-y", "server-fs", 7], env: { PORT: 3000, DEBUG: true } },
    });
    expect(errors).toEqual([]);
    expect(servers).toEqual([
      {
        name: "fs",
        transport: "stdio",
        command: "npx",
        args: ["-y", "server-fs", "7"],
        env: { PORT: "3000", DEBUG: "true" },
        timeoutMs: 120_000,
        connectTimeoutMs: 60_000,
        enabled: true,
        parallel: false,
        include: [],
        exclude: [],
        resources: true,
        prompts: true,
        sampling: { enabled: true, maxTokensCap: 4096, timeoutMs: 30_000, maxRpm: 10, allowedModels: [] },
      },
    ]);
  });

  it("reads an HTTP server, expanding ${VAR} in headers, and second-valued timeouts", () => {
    const server = parseMcpServer(
      "web",
      {
        url: "https://example.com/mcp",
        headers: { Authorization: "Bearer ${TOKEN}", "X-Fallback": "${UNSET:-none}" },
        timeout: "2.5",
        connect_timeout: 5,
        enabled: "no",
        tools: { exclude: ["delete_all"], prompts: false },
      },
      { TOKEN: "t0k" },
    );
    expect(server).toMatchObject({
      transport: "http",
      url: "https://example.com/mcp",
      headers: { Authorization: "Bearer t0k", "X-Fallback": "none" },
      timeoutMs: 2500,
      connectTimeoutMs: 5000,
      enabled: false,
      exclude: ["delete_all"],
      prompts: false,
      resources: true,
    });
  });

  it.each<[string, unknown, RegExp]>([
    ["neither command nor url", { args: ["x"] }, /mcp_servers\.bad: needs command .* or url/],
    [
      "both command and url",
      { command: "x", url: "http://h/" },
      /mcp_servers\.bad: set either command .* not both/,
    ],
    [
      "not a mapping",
      "npx server",
      /mcp_servers\.bad: expected a mapping with command or url, got "npx server"/,
    ],
    [
      "a bad timeout",
      { command: "x", timeout: "soon" },
      /mcp_servers\.bad\.timeout: expected a positive number of seconds, got "soon"/,
    ],
    [
      "a negative connect timeout",
      { command: "x", connect_timeout: -1 },
      /mcp_servers\.bad\.connect_timeout: expected a positive/,
    ],
    [
      "args that are not a list",
      { command: "x", args: "-y pkg" },
      /mcp_servers\.bad\.args: expected a list, got "-y pkg"/,
    ],
    [
      "an arg that is a mapping",
      { command: "x", args: ["ok", { a: 1 }] },
      /mcp_servers\.bad\.args\.1: expected text, got a mapping/,
    ],
    ["env that is a list", { command: "x", env: ["A=1"] }, /mcp_servers\.bad\.env: expected a mapping/],
    [
      "a url that is not one",
      { url: "example.com/mcp" },
      /mcp_servers\.bad\.url: "example\.com\/mcp" is not a URL/,
    ],
    ["a non-http url", { url: "ftp://example.com/" }, /mcp_servers\.bad\.url: .* must start with http/],
    [
      "enabled that is not a boolean",
      { command: "x", enabled: "maybe" },
      /mcp_servers\.bad\.enabled: expected true or false, got "maybe"/,
    ],
    [
      "tools.include that is not a list",
      { command: "x", tools: { include: "a" } },
      /mcp_servers\.bad\.tools\.include: expected a list/,
    ],
    ["an empty command", { command: "  " }, /mcp_servers\.bad\.command: is empty/],
  ])("reports %s naming the server and key", (_what, entry, message) => {
    const { servers, errors } = parseMcpServers({ bad: entry, good: { command: "ok" } });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(message);
    // One bad entry never hides the others.
    expect(servers.map((s) => s.name)).toEqual(["good"]);
  });

  it("treats a missing or empty section as no servers and a non-mapping as one error", () => {
    expect(parseMcpServers(undefined)).toEqual({ servers: [], errors: [], warnings: [] });
    expect(parseMcpServers(null).servers).toEqual([]);
    expect(parseMcpServers({}).servers).toEqual([]);
    expect(parseMcpServers(["fs"]).errors).toEqual([
      "mcp_servers: expected a mapping of server names to settings, got a list",
    ]);
  });

  it("reads auth: oauth on an HTTP server (details in config-options.test.ts)", () => {
    const parsed = parseMcpServers({ gh: { url: "https://api.example.com/mcp", auth: "oauth" } });
    expect(parsed.warnings).toEqual([]);
    const server = parsed.servers[0];
    expect(server?.transport === "http" && server.oauth?.timeoutMs).toBe(300_000);
  });

  it("knows whether any server is enabled", () => {
    expect(hasEnabledMcpServers(undefined)).toBe(false);
    expect(hasEnabledMcpServers({})).toBe(false);
    expect(hasEnabledMcpServers({ a: { command: "x", enabled: false } })).toBe(false);
    expect(hasEnabledMcpServers({ a: { command: "x", enabled: false }, b: { url: "http://h/" } })).toBe(true);
    // A broken entry counts: starting reports what is wrong with it.
    expect(hasEnabledMcpServers({ a: "oops" })).toBe(true);
  });
});
