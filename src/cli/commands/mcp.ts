/**
 * `hermes mcp add|remove|list|test|serve`: MCP servers in config.yaml from the command line (and
 * `login|logout` in mcp/login.ts, `catalog|install` in mcp/catalog.ts), and
 * Hermes itself as an MCP server (`serve`, in mcp-serve.ts). Results go
 * to stdout; progress, notes and warnings to stderr. Exit codes: 0 success, 1 the task failed (a
 * server that does not start, an entry that is not there), 2 usage or configuration error.
 */
import { InvalidArgumentError } from "commander";
import pc from "picocolors";
import { loadEnvFile } from "../../config/env-file.js";
import { loadConfig } from "../../config/load.js";
import {
  describeEndpoint,
  McpConfigError,
  type McpServerConfig,
  parseMcpServer,
  parseMcpServers,
  SERVER_NAME_PATTERN,
} from "../../tools/mcp/config.js";
import { startMcpServers } from "../../tools/mcp/manager.js";
import { ToolRegistry } from "../../tools/registry.js";
import { CliFailure, defineCommand, type RunOptions } from "../command.js";
import { renderTable } from "../format/table.js";
import type { CliIo } from "../io.js";
import { removeMcpServer, writeMcpServer } from "./mcp/config-file.js";

export type McpCommandOptions = RunOptions;

interface Ctx {
  home: string;
  env: Record<string, string | undefined>;
  io: CliIo;
}

/** Runs `hermes mcp <argv…>` and returns the exit code. Never throws for expected failures. */
export function runMcpCommand(argv: readonly string[], options: McpCommandOptions = {}): Promise<number> {
  return mcpCommand.run(argv, options);
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function secondsOption(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0)
      throw new InvalidArgumentError(`${flag} expects seconds (a positive number), got "${value}".`);
    return n;
  };
}

interface AddFlags {
  command?: string;
  args?: string[];
  env?: string[];
  url?: string;
  header?: string[];
  timeout?: number;
  connectTimeout?: number;
  include?: string;
  exclude?: string;
  disabled?: boolean;
  force?: boolean;
  preset?: string;
  auth?: string;
}

export const mcpCommand = defineCommand({
  name: "mcp",
  description: "MCP servers whose tools the agent can use (mcp_servers in config.yaml)",
  needs: "home",
  defaultSubcommand: "list",
  open: ({ home, io }): Ctx => ({ home, env: loadEnvFile(home, io.env).env, io }),
  expected: (error) => (error instanceof McpConfigError ? 2 : undefined),
  parse: (root, run) => {
    root
      .command("add")
      .description("add a server: --command CMD [--args ...] for a local one, or --url URL for an HTTP one")
      .argument("<name>", "the server's name (tools are called mcp_<name>_<tool>)")
      .argument("[args...]", "arguments for the command after --, for ones that start with a dash")
      .option("--command <cmd>", "program that starts a stdio server (npx, uvx, a path, ...)")
      .option("--args <args...>", "arguments for the command")
      .option(
        "--env <KEY=VALUE>",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: literal config syntax shown to the user
        "environment variable for the server (repeatable; ${VAR} allowed)",
        collect,
      )
      .option("--url <url>", "Streamable HTTP (or SSE) endpoint of a remote server")
      // biome-ignore lint/suspicious/noTemplateCurlyInString: literal config syntax shown to the user
      .option("--header <Name:Value>", "HTTP header (repeatable; ${VAR} allowed, e.g. for a token)", collect)
      .option("--timeout <s>", "seconds allowed per tool call (default 120)", secondsOption("--timeout"))
      .option(
        "--connect-timeout <s>",
        "seconds allowed to start (default 60)",
        secondsOption("--connect-timeout"),
      )
      .option("--preset <id>", "fill command and args from the catalog (hermes mcp catalog)")
      .option(
        "--auth <kind>",
        "oauth: sign in with hermes mcp login NAME (url servers); header: use --header",
      )
      .option("--include <tools>", "comma-separated server tool names to offer (only these)")
      .option("--exclude <tools>", "comma-separated server tool names never to offer")
      .option("--disabled", "write it with enabled: false")
      .option("-f, --force", "replace a server of the same name")
      .action(
        run(async (ctx, name: string, rest: string[], flags: AddFlags) => {
          if (!flags.preset) return add(ctx, name, rest, flags);
          if (flags.command || flags.url)
            throw new CliFailure("--preset fills the command; leave out --command and --url.", 2);
          const { mcpInstall } = await import("./mcp/catalog.js");
          return mcpInstall(ctx, flags.preset, {
            name,
            ...(rest.length > 0 || flags.args ? { arg: [...(flags.args ?? []), ...rest] } : {}),
            ...(flags.env ? { env: flags.env } : {}),
            ...(flags.force ? { force: true } : {}),
          });
        }),
      );

    root
      .command("login")
      .alias("reauth")
      .description("sign in to an auth: oauth server (browser, then tokens kept in mcp-tokens/)")
      .argument("<name>", "the server's name")
      .option("--no-browser", "print the sign-in URL without opening a browser")
      .action(
        run(async (ctx, name: string, flags: { browser?: boolean }) => {
          const { mcpLogin } = await import("./mcp/login.js");
          return mcpLogin(ctx, name, flags);
        }),
      );

    root
      .command("logout")
      .description("forget an OAuth server's tokens and client registration")
      .argument("<name>", "the server's name")
      .action(
        run(async (ctx, name: string) => {
          const { mcpLogout } = await import("./mcp/login.js");
          return mcpLogout(ctx, name);
        }),
      );

    root
      .command("catalog")
      .description("list the built-in catalog of well-known MCP servers")
      .option("--json", "print JSON")
      .action(
        run(async (ctx, flags: { json?: boolean }) => {
          const { mcpCatalog } = await import("./mcp/catalog.js");
          return mcpCatalog(ctx, flags);
        }),
      );

    root
      .command("install")
      .description("add a server from the catalog (asks for its arguments and keys on a terminal)")
      .argument("<id>", "the catalog name (hermes mcp catalog)")
      .option("--name <name>", "the server's name in config.yaml (default: the catalog name)")
      .option("--arg <value>", "a value for the server's argument, in order (repeatable)", collect)
      .option("--env <KEY=VALUE>", "a key the server needs (repeatable; kept in .env)", collect)
      .option("-f, --force", "replace a server of the same name")
      .action(
        run(async (ctx, id: string, flags: import("./mcp/catalog.js").InstallFlags) => {
          const { mcpInstall } = await import("./mcp/catalog.js");
          return mcpInstall(ctx, id, flags);
        }),
      );

    root
      .command("remove")
      .alias("rm")
      .description("remove a server from config.yaml")
      .argument("<name>", "the server's name")
      .action(run((ctx, name: string) => remove(ctx, name)));

    root
      .command("list")
      .alias("ls")
      .description("list the configured servers")
      .option("--json", "print JSON")
      .action(run((ctx, flags: { json?: boolean }) => list(ctx, flags)));

    root
      .command("test")
      .description("start a server, list its tools and say how long it took")
      .argument("<name>", "the server's name")
      .option("--json", "print JSON")
      .action(run((ctx, name: string, flags: { json?: boolean }) => test(ctx, name, flags)));

    root
      .command("serve")
      .description(
        "run Hermes as an MCP server on stdio for MCP clients: conversations, the running gateway's channels, events and approvals, sends, and hermes_prompt",
      )
      .option("-v, --verbose", "log each failed call to stderr")
      .action(
        run(async (ctx, flags: { verbose?: boolean }) => {
          const { config } = loadConfig({ home: ctx.home, env: ctx.env });
          const { serveMcp } = await import("./mcp-serve.js");
          return serveMcp({
            home: ctx.home,
            config,
            env: ctx.env,
            cwd: process.cwd(),
            ...(flags.verbose ? { verbose: true } : {}),
          });
        }),
      );
  },
});

/** config.yaml's raw `mcp_servers` value (`${VAR}` expanded), as a run would read it. */
function loadServers(ctx: Ctx): unknown {
  const loaded = loadConfig({ home: ctx.home, env: ctx.env });
  return loaded.config["mcp_servers"];
}

function add(ctx: Ctx, name: string, rest: string[], flags: AddFlags): number {
  const { io } = ctx;
  if (!SERVER_NAME_PATTERN.test(name)) {
    throw new CliFailure(
      `invalid server name "${name}": start with a letter or digit, then letters, digits, _ or - (48 at most).`,
      2,
    );
  }
  if (!flags.command === !flags.url) {
    throw new CliFailure("give either --command (a local stdio server) or --url (an HTTP server).", 2);
  }
  const entry: Record<string, unknown> = {};
  if (flags.command) {
    if (flags.auth) throw new CliFailure("--auth is for --url servers.", 2);
    if (flags.header?.length)
      throw new CliFailure("--header is for --url servers; use --env for a command.", 2);
    entry["command"] = flags.command;
    const args = [...(flags.args ?? []), ...rest];
    if (args.length > 0) entry["args"] = args;
    if (flags.env?.length) entry["env"] = pairs(flags.env, "=", "--env", "KEY=VALUE");
  } else {
    if (flags.env?.length || flags.args?.length || rest.length > 0) {
      throw new CliFailure("--args and --env are for --command servers; an HTTP server takes --header.", 2);
    }
    entry["url"] = flags.url;
    if (flags.header?.length) entry["headers"] = pairs(flags.header, ":", "--header", "Name:Value");
    if (flags.auth) entry["auth"] = flags.auth.trim().toLowerCase();
  }
  if (flags.timeout !== undefined) entry["timeout"] = flags.timeout;
  if (flags.connectTimeout !== undefined) entry["connect_timeout"] = flags.connectTimeout;
  if (flags.disabled) entry["enabled"] = false;
  const tools: Record<string, string[]> = {};
  if (flags.include) tools["include"] = splitList(flags.include);
  if (flags.exclude) tools["exclude"] = splitList(flags.exclude);
  if (Object.keys(tools).length > 0) entry["tools"] = tools;
  parseMcpServer(name, entry); // the same checks a run makes, before anything is written

  const existing = loadServers(ctx);
  if (isRecord(existing) && name in existing && !flags.force) {
    throw new CliFailure(`an MCP server named "${name}" is already configured; use --force to replace it.`);
  }
  const path = writeMcpServer(ctx.home, name, entry);
  io.out(`Added MCP server "${name}" (${flags.command ? "stdio" : "http"}) to ${path}`);
  const values = [
    ...Object.values((entry["env"] ?? {}) as object),
    ...Object.values((entry["headers"] ?? {}) as object),
  ];
  if (values.some((v) => typeof v === "string" && v.length > 0 && !v.includes("${"))) {
    io.err(
      "note: values are stored in config.yaml as plain text; keep secrets in .env " +
        // biome-ignore lint/suspicious/noTemplateCurlyInString: literal config syntax shown to the user
        "(hermes config set MY_TOKEN ...) and write ${MY_TOKEN} here instead.",
    );
  }
  io.err(
    entry["auth"] === "oauth"
      ? `Sign in with: hermes mcp login ${name}`
      : `Check it with: hermes mcp test ${name}`,
  );
  return 0;
}

function remove(ctx: Ctx, name: string): number {
  if (!removeMcpServer(ctx.home, name)) {
    const names = Object.keys(asRecord(loadServers(ctx)));
    const known = names.length > 0 ? ` Configured: ${names.join(", ")}.` : "";
    throw new CliFailure(`no MCP server named "${name}" in config.yaml.${known}`);
  }
  ctx.io.out(`Removed MCP server "${name}".`);
  return 0;
}

function list(ctx: Ctx, flags: { json?: boolean }): number {
  const { io } = ctx;
  const parsed = parseMcpServers(loadServers(ctx), ctx.env);
  for (const problem of [...parsed.errors, ...parsed.warnings]) io.err(`hermes mcp: ${problem}`);
  const exit = parsed.errors.length > 0 ? 2 : 0;
  if (flags.json) {
    io.out(JSON.stringify({ servers: parsed.servers.map(serverJson), errors: parsed.errors }, null, 2));
    return exit;
  }
  if (parsed.servers.length === 0) {
    if (parsed.errors.length === 0) {
      io.out("No MCP servers configured. Add one with: hermes mcp add NAME --command CMD [--args ...]");
    }
    return exit;
  }
  const rows = parsed.servers.map((s) => [
    s.name,
    s.transport,
    describeEndpoint(s),
    s.enabled ? "yes" : "no",
    toolFilter(s),
  ]);
  const table = renderTable(
    [
      { header: "name" },
      { header: "transport" },
      { header: "command / url", flex: true },
      { header: "enabled" },
      { header: "tools", max: 40 },
    ],
    rows,
    { ...(io.width ? { width: io.width } : {}), ...(io.color ? { paintHeader: pc.bold } : {}) },
  );
  for (const line of table) io.out(line);
  return exit;
}

async function test(ctx: Ctx, name: string, flags: { json?: boolean }): Promise<number> {
  const { io } = ctx;
  const servers = asRecord(loadServers(ctx));
  if (!(name in servers)) {
    const names = Object.keys(servers);
    throw new CliFailure(
      `no MCP server named "${name}" in config.yaml.${names.length > 0 ? ` Configured: ${names.join(", ")}.` : " Add one with: hermes mcp add"}`,
    );
  }
  const server = parseMcpServer(name, servers[name], ctx.env);
  if (!server.enabled) io.err(`note: "${name}" has enabled: false; testing it anyway.`);
  io.err(`Connecting to "${name}" (${describeEndpoint(server)})…`);
  const registry = new ToolRegistry();
  const manager = startMcpServers({
    config: { [name]: { ...asRecord(servers[name]), enabled: true } },
    registry,
    env: ctx.env,
    home: ctx.home,
    onWarning: (message) => {
      if (!message.startsWith(`MCP server "${name}" failed`)) io.err(`hermes mcp: ${message}`);
    },
  });
  try {
    await manager.ready;
    const status = manager.status()[0];
    if (status?.state !== "connected") {
      const reason = status?.error ?? "it did not start";
      if (flags.json)
        io.out(JSON.stringify({ name, ok: false, error: reason, stderr: status?.stderr ?? "" }, null, 2));
      io.err(`✗ "${name}" failed: ${reason}`);
      if (status?.stderr) io.err(`  server output:\n${indent(status.stderr, "    ")}`);
      return 1;
    }
    const tools = status.tools.map((tool) => ({
      name: tool,
      description: firstLine(registry.get(tool)?.description ?? ""),
    }));
    if (flags.json) {
      io.out(
        JSON.stringify(
          {
            name,
            ok: true,
            transport: status.transport,
            connect_ms: status.connectMs,
            server: status.serverInfo,
            tools,
          },
          null,
          2,
        ),
      );
      return 0;
    }
    const info = status.serverInfo ? ` (${status.serverInfo.name} ${status.serverInfo.version})` : "";
    io.out(`✓ Connected to "${name}"${info} over ${status.transport} in ${status.connectMs ?? 0} ms`);
    io.out(`${tools.length} tool${tools.length === 1 ? "" : "s"}:`);
    const width = Math.max(0, ...tools.map((t) => t.name.length));
    for (const tool of tools) io.out(`  ${tool.name.padEnd(width)}  ${tool.description}`.trimEnd());
    return 0;
  } finally {
    await manager.close();
  }
}

function serverJson(server: McpServerConfig): Record<string, unknown> {
  const common = {
    name: server.name,
    transport: server.transport,
    enabled: server.enabled,
    timeout: server.timeoutMs / 1000,
    connect_timeout: server.connectTimeoutMs / 1000,
    include: server.include,
    exclude: server.exclude,
  };
  // Values of env and headers are left out: they often hold tokens.
  return server.transport === "stdio"
    ? { ...common, command: server.command, args: server.args, env: Object.keys(server.env) }
    : { ...common, url: server.url, headers: Object.keys(server.headers) };
}

function toolFilter(server: McpServerConfig): string {
  if (server.include.length > 0) return `only ${server.include.join(", ")}`;
  if (server.exclude.length > 0) return `all but ${server.exclude.join(", ")}`;
  return "all";
}

function pairs(
  items: readonly string[],
  separator: string,
  flag: string,
  shape: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const at = item.indexOf(separator);
    const key = at > 0 ? item.slice(0, at).trim() : "";
    if (!key) throw new CliFailure(`${flag} expects ${shape}, got "${item}".`, 2);
    const value = item.slice(at + 1);
    out[key] = separator === ":" ? value.trim() : value;
  }
  return out;
}

/** A description's first line, cut to 100 characters. */
function firstLine(text: string): string {
  const line = text.trim().split(/\r?\n/)[0]?.trim() ?? "";
  return line.length > 100 ? `${line.slice(0, 99).trimEnd()}…` : line;
}

function splitList(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

function indent(text: string, prefix: string): string {
  return text
    .split(/\r?\n/)
    .map((line) => `${prefix}${line}`)
    .join("\n");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function asRecord(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}
