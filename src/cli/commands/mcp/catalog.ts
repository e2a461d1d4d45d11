/**
 * `hermes mcp catalog` (the built-in list of well-known servers) and `hermes mcp install ID`
 * (also `hermes mcp add NAME --preset ID`): writes the server's entry, asks for its arguments and
 * keys on a terminal, and keeps keys in `.env` with `${VAR}` in config.yaml.
 */
import { setEnvVar } from "../../../config/env-file.js";
import { loadConfig } from "../../../config/load.js";
import {
  type CatalogEntry,
  catalogServerEntry,
  findCatalogEntry,
  MCP_CATALOG,
} from "../../../tools/mcp/catalog.js";
import { SERVER_NAME_PATTERN } from "../../../tools/mcp/config.js";
import { CliFailure } from "../../command.js";
import type { CliIo } from "../../io.js";
import { writeMcpServer } from "./config-file.js";

export interface CatalogContext {
  home: string;
  env: Record<string, string | undefined>;
  io: CliIo;
}

export function mcpCatalog(ctx: CatalogContext, flags: { json?: boolean }): number {
  if (flags.json) {
    ctx.io.out(JSON.stringify(MCP_CATALOG, null, 2));
    return 0;
  }
  const width = Math.max(...MCP_CATALOG.map((e) => e.id.length));
  for (const entry of MCP_CATALOG) {
    const keys = entry.env?.length ? ` [needs ${entry.env.map((v) => v.name).join(", ")}]` : "";
    ctx.io.out(`${entry.id.padEnd(width)}  ${entry.description}${keys}`);
  }
  ctx.io.err("Install one with: hermes mcp install ID [--name NAME]");
  return 0;
}

export interface InstallFlags {
  name?: string;
  arg?: string[];
  env?: string[];
  force?: boolean;
}

export async function mcpInstall(ctx: CatalogContext, id: string, flags: InstallFlags): Promise<number> {
  const { io } = ctx;
  const entry = findCatalogEntry(id);
  if (!entry) {
    throw new CliFailure(
      `no catalog server "${id}". Known: ${MCP_CATALOG.map((e) => e.id).join(", ")} (hermes mcp catalog).`,
      2,
    );
  }
  const name = flags.name ?? entry.id;
  if (!SERVER_NAME_PATTERN.test(name)) {
    throw new CliFailure(`invalid server name "${name}": letters, digits, _ or - (48 at most).`, 2);
  }
  const existing = loadConfig({ home: ctx.home, env: ctx.env }).config["mcp_servers"];
  if (existing && typeof existing === "object" && name in existing && !flags.force) {
    throw new CliFailure(`an MCP server named "${name}" is already configured; use --force to replace it.`);
  }
  const given = parseEnvFlags(flags.env ?? []);
  const unknown = Object.keys(given).filter((key) => !entry.env?.some((v) => v.name === key));
  if (unknown.length > 0) {
    throw new CliFailure(
      `${entry.id} does not use ${unknown.join(", ")}; it takes ${entry.env?.map((v) => v.name).join(", ") || "no variables"}.`,
      2,
    );
  }
  const interactive = io.stdin.isTTY === true && (io.stderr as NodeJS.WriteStream).isTTY === true;
  const prompter = interactive ? (await import("../../setup/prompter.js")).terminalPrompter(io) : undefined;
  try {
    const params: (string | undefined)[] = [];
    for (const [i, param] of (entry.params ?? []).entries()) {
      const value = flags.arg?.[i];
      const fallback = param.fallback?.replace("{cwd}", process.cwd());
      params.push(value ?? (prompter ? await prompter.ask(param.prompt, fallback) : undefined));
    }
    const missing: string[] = [];
    for (const variable of entry.env ?? []) {
      let value = given[variable.name];
      if (value === undefined && !ctx.env[variable.name] && prompter) {
        value = variable.secret
          ? await prompter.secret(`${variable.prompt} (${variable.name})`)
          : await prompter.ask(`${variable.prompt} (${variable.name})`);
      }
      if (value) setEnvVar(ctx.home, variable.name, value);
      else if (!ctx.env[variable.name] && !variable.optional) missing.push(variable.name);
    }
    const server = catalogServerEntry(entry, { params, cwd: process.cwd() });
    const path = writeMcpServer(ctx.home, name, server);
    io.out(
      `Installed MCP server "${name}" (${entry.id}): ${[server["command"], ...(server["args"] as string[])].join(" ")}`,
    );
    io.err(`Written to ${path}; it needs ${entry.requires}.`);
    for (const variable of missing) {
      io.err(`note: set ${variable} before using it: hermes config set ${variable} VALUE (kept in .env)`);
    }
    io.err(`Check it with: hermes mcp test ${name}`);
    return 0;
  } finally {
    prompter?.close();
  }
}

/** `KEY=VALUE` items; throws a usage error for anything else. */
function parseEnvFlags(items: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const at = item.indexOf("=");
    if (at <= 0) throw new CliFailure(`--env expects KEY=VALUE, got "${item}".`, 2);
    out[item.slice(0, at).trim()] = item.slice(at + 1);
  }
  return out;
}

export type { CatalogEntry };
