/**
 * Gathers every doctor check in the order they are shown, and runs the safe repairs of `--fix`.
 * The config is loaded once here; when it does not load, the checks that need it are skipped
 * with a line saying so (the config line already says why).
 */
import type { HermesConfig } from "../../config/defaults.js";
import { loadEnvFile } from "../../config/env-file.js";
import { loadConfig } from "../../config/load.js";
import { databaseChecks } from "./checks-database.js";
import { configChecks, folderChecks, permissionChecks, sqliteChecks, stateDbChecks } from "./checks-home.js";
import { gatewayChecks, mcpChecks, providerChecks } from "./checks-remote.js";
import { nodeCheck, programChecks, terminalChecks } from "./checks-system.js";
import { type DoctorLine, guarded } from "./types.js";

export interface DoctorInput {
  home: string;
  cwd: string;
  /** The process environment; the home's `.env` is read under it here. */
  processEnv: Record<string, string | undefined>;
  /** Injected by tests for the provider probes. */
  fetch?: typeof fetch;
}

export async function gatherChecks(input: DoctorInput): Promise<DoctorLine[]> {
  const { home } = input;
  const { env } = loadEnvFile(home, input.processEnv);
  const lines: DoctorLine[] = [];
  lines.push(...(await guarded("Config", "config.yaml", () => configChecks(home, env))));
  let config: HermesConfig | undefined;
  try {
    config = loadConfig({ home, env }).config;
  } catch {
    config = undefined;
  }
  lines.push(...(await guarded("Home", "permissions", () => permissionChecks(home))));
  lines.push(...(await guarded("Home", "folders", () => folderChecks(home))));
  lines.push(...(await guarded("Home", "state.db", () => stateDbChecks(home))));
  lines.push(nodeCheck());
  lines.push(...(await guarded("System", "SQLite", () => sqliteChecks())));
  if (config === undefined) {
    lines.push({
      group: "Providers",
      name: "skipped",
      status: "fail",
      detail:
        "config.yaml does not load, so providers, the terminal backend, MCP servers and gateway tokens were not checked",
      fix: "Fix config.yaml (see above), then run hermes doctor again.",
    });
    return lines;
  }
  const loaded = config;
  lines.push(...(await guarded("Database", "PostgreSQL", () => databaseChecks(loaded, env))));
  lines.push(...(await guarded("System", "programs", () => programChecks(loaded, env))));
  const [terminal, providers, mcp] = await Promise.all([
    guarded("Terminal", "terminal backend", () => terminalChecks(home, input.cwd, loaded, env)),
    guarded("Providers", "providers", () =>
      providerChecks(loaded, env, home, input.fetch ? { fetch: input.fetch } : {}),
    ),
    guarded("MCP servers", "MCP", () => mcpChecks(loaded, env, home)),
  ]);
  lines.push(...terminal, ...providers, ...mcp);
  lines.push(...(await guarded("Gateway", "tokens", () => gatewayChecks(loaded, env))));
  return lines;
}

export interface RepairOutcome {
  line: DoctorLine;
  ok: boolean;
  /** What the repair did, or why it failed. */
  message: string;
}

/** Runs the repair of every line that has a problem and a repair. Never throws. */
export async function runRepairs(lines: readonly DoctorLine[]): Promise<RepairOutcome[]> {
  const outcomes: RepairOutcome[] = [];
  for (const line of lines) {
    if (line.status === "ok" || !line.repair) continue;
    try {
      outcomes.push({ line, ok: true, message: await line.repair() });
    } catch (error) {
      outcomes.push({ line, ok: false, message: error instanceof Error ? error.message : String(error) });
    }
  }
  return outcomes;
}
