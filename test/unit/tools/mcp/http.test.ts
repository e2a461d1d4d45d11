// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings hold literal config ${VAR} syntax
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type McpManager, startMcpServers } from "../../../../src/tools/mcp/manager.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import { freePort } from "../../../support/free-port.js";
import { type HttpEverything, startEverythingHttp } from "../../../support/mcp-servers.js";
import { makeToolContext } from "../../../support/tool-context.js";

let streamable: HttpEverything;
let sse: HttpEverything;
beforeAll(async () => {
  [streamable, sse] = await Promise.all([startEverythingHttp("streamableHttp"), startEverythingHttp("sse")]);
});
afterAll(async () => {
  await Promise.all([streamable?.close(), sse?.close()]);
});

const managers: McpManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.close()));
});

function start(config: unknown, env: Record<string, string> = {}) {
  const registry = new ToolRegistry();
  const warnings: string[] = [];
  const manager = startMcpServers({ config, registry, env, onWarning: (w) => warnings.push(w) });
  managers.push(manager);
  return { manager, registry, warnings };
}

describe("MCP over HTTP with mcp-server-everything", () => {
  it("speaks Streamable HTTP to a server that has it", async () => {
    const { manager, registry, warnings } = start({ web: { url: `${streamable.origin}/mcp` } });
    await manager.ready;
    expect(warnings).toEqual([]);
    expect(manager.status()[0]).toMatchObject({ state: "connected", transport: "http" });
    expect(await registry.execute("mcp_web_echo", { message: "over http" }, makeToolContext())).toEqual({
      content: "Echo: over http",
      ok: true,
    });
  });

  it("falls back to SSE when the server does not speak Streamable HTTP", async () => {
    const { manager, registry, warnings } = start({ legacy: { url: `${sse.origin}/sse` } });
    await manager.ready;
    expect(warnings).toEqual([]);
    expect(manager.status()[0]).toMatchObject({ state: "connected", transport: "sse" });
    expect((await registry.execute("mcp_legacy_get_sum", { a: 40, b: 2 }, makeToolContext())).content).toBe(
      "The sum of 40 and 2 is 42.",
    );
  });

  it("reports a refused connection once and carries on with the other servers", async () => {
    const port = await freePort();
    const { manager, registry, warnings } = start({
      gone: { url: `http://127.0.0.1:${port}/mcp` },
      web: { url: `${streamable.origin}/mcp` },
    });
    await manager.ready;
    expect(warnings).toEqual([
      `MCP server "gone" failed to start: connection refused at http://127.0.0.1:${port}/mcp; is the server running? (mcp_servers.gone.url); continuing without it`,
    ]);
    expect(registry.has("mcp_web_echo")).toBe(true);
  });
});

describe("HTTP headers", () => {
  let seen: IncomingHttpHeaders[] = [];
  let url = "";
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(401, { "content-type": "text/plain" }).end("no");
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("sends configured headers with ${VAR} expanded, and explains a refusal", async () => {
    seen = [];
    const { manager, warnings } = start(
      { private: { url, headers: { Authorization: "Bearer ${MCP_TOKEN}", "X-Team": "core" } } },
      { MCP_TOKEN: "tok-123" },
    );
    await manager.ready;
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]?.["authorization"]).toBe("Bearer tok-123");
    expect(seen[0]?.["x-team"]).toBe("core");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/MCP server "private" failed to start: .*401/);
  });
});
