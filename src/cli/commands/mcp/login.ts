/**
 * `hermes mcp login NAME` and `hermes mcp logout NAME`: the OAuth sign-in of an `auth: oauth`
 * server. Login prints the authorization URL (and opens it when a desktop browser is there),
 * waits on a loopback listener for the redirect, stores the tokens under `<home>/mcp-tokens/`,
 * then connects once to show it works. Progress on stderr, the result line on stdout.
 */
import { spawn } from "node:child_process";
import { loadConfig } from "../../../config/load.js";
import { parseMcpServer } from "../../../tools/mcp/config.js";
import { startMcpServers } from "../../../tools/mcp/manager.js";
import { loginMcpServer, logoutMcpServer, McpLoginError } from "../../../tools/mcp/oauth.js";
import { McpTokenStore } from "../../../tools/mcp/oauth-store.js";
import { tlsFetch } from "../../../tools/mcp/tls.js";
import { ToolRegistry } from "../../../tools/registry.js";
import { CliFailure } from "../../command.js";
import type { CliIo } from "../../io.js";

export interface McpAuthContext {
  home: string;
  env: Record<string, string | undefined>;
  io: CliIo;
}

function serverEntry(ctx: McpAuthContext, name: string): unknown {
  const servers = loadConfig({ home: ctx.home, env: ctx.env }).config["mcp_servers"];
  const record = servers && typeof servers === "object" ? (servers as Record<string, unknown>) : {};
  if (!(name in record)) {
    const names = Object.keys(record);
    throw new CliFailure(
      `no MCP server named "${name}" in config.yaml.${names.length > 0 ? ` Configured: ${names.join(", ")}.` : ""}`,
    );
  }
  return record[name];
}

export async function mcpLogin(
  ctx: McpAuthContext,
  name: string,
  flags: { browser?: boolean },
): Promise<number> {
  const { io } = ctx;
  const server = parseMcpServer(name, serverEntry(ctx, name), ctx.env);
  if (server.transport !== "http") {
    throw new CliFailure(`"${name}" is a local (command) server; OAuth sign-in is for url servers.`, 2);
  }
  if (!server.oauth) {
    throw new CliFailure(
      `mcp_servers.${name} does not use OAuth. Add it with: hermes config set mcp_servers.${name}.auth oauth`,
      2,
    );
  }
  const abort = new AbortController();
  const onSigint = () => abort.abort();
  process.once("SIGINT", onSigint);
  try {
    io.err(`Signing in to "${name}" (${server.url})…`);
    await loginMcpServer({
      server: name,
      url: server.url,
      oauth: server.oauth,
      home: ctx.home,
      ...(server.tls ? { fetchFn: tlsFetch(name, server.tls) } : {}),
      signal: abort.signal,
      showUrl: (url) => {
        io.err(`Open this URL in a browser to sign in:\n\n  ${url}\n`);
        const opened = flags.browser !== false && openBrowser(url, ctx.env);
        io.err(
          opened
            ? "(opened in your browser; waiting for it to come back)"
            : `Waiting for the browser to come back to this machine (at most ${Math.round(server.oauth!.timeoutMs / 1000)} s)…`,
        );
      },
    });
  } catch (error) {
    if (error instanceof McpLoginError) throw new CliFailure(`sign-in to "${name}" failed: ${error.message}`);
    throw error;
  } finally {
    process.off("SIGINT", onSigint);
  }
  const store = new McpTokenStore(ctx.home, name);
  io.err(`Tokens saved to ${store.tokensPath}`);
  // Connect once: a sign-in that the server then refuses is better found now than mid-chat.
  const registry = new ToolRegistry();
  const manager = startMcpServers({
    config: { [name]: { ...(serverEntry(ctx, name) as Record<string, unknown>), enabled: true } },
    registry,
    env: ctx.env,
    home: ctx.home,
  });
  try {
    await manager.ready;
    const status = manager.status()[0];
    if (status?.state !== "connected") {
      throw new CliFailure(
        `signed in, but "${name}" still did not connect: ${status?.error ?? "unknown error"}`,
      );
    }
    io.out(
      `✓ Signed in to "${name}"; ${status.tools.length} tool${status.tools.length === 1 ? "" : "s"} available`,
    );
    return 0;
  } finally {
    await manager.close();
  }
}

export function mcpLogout(ctx: McpAuthContext, name: string): number {
  if (logoutMcpServer(ctx.home, name)) {
    ctx.io.out(`Signed out of "${name}": its tokens and client registration were removed.`);
  } else {
    ctx.io.out(`No stored sign-in for "${name}".`);
  }
  return 0;
}

/**
 * Opens `url` in the desktop browser when there is one (not over SSH, a display on Linux); the
 * URL is one argument to the opener, never shell text. Returns whether an opener was started.
 */
export function openBrowser(url: string, env: Record<string, string | undefined>): boolean {
  if (!/^https?:\/\//i.test(url)) return false;
  if (env["SSH_CLIENT"] || env["SSH_TTY"] || env["HERMES_NO_BROWSER"]) return false;
  const opener =
    process.platform === "darwin"
      ? "open"
      : process.platform === "linux" && (env["DISPLAY"] || env["WAYLAND_DISPLAY"])
        ? "xdg-open"
        : undefined;
  if (!opener) return false;
  try {
    const child = spawn(opener, [url], { detached: true, stdio: "ignore" });
    child.on("error", () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}
