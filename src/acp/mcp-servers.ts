/**
 * The MCP servers an editor hands a session (`session/new` `mcpServers`) as config.yaml's
 * `mcp_servers` entries, merged over the configured ones (an editor's server of the same name
 * replaces the configured one for that session). Pure.
 */
import type { McpServer } from "@agentclientprotocol/sdk";

/** `mcp_servers` for a session: the configured servers, then the editor's. */
export function sessionMcpServers(
  configured: unknown,
  fromEditor: readonly McpServer[],
): Record<string, unknown> {
  const out: Record<string, unknown> =
    typeof configured === "object" && configured !== null && !Array.isArray(configured)
      ? { ...(configured as Record<string, unknown>) }
      : {};
  for (const server of fromEditor) {
    if ("type" in server && (server.type === "http" || server.type === "sse")) {
      out[server.name] = {
        url: server.url,
        headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])),
      };
    } else if ("command" in server) {
      out[server.name] = {
        command: server.command,
        args: [...server.args],
        env: Object.fromEntries(server.env.map((v) => [v.name, v.value])),
      };
    }
  }
  return out;
}
