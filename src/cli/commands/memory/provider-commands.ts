/**
 * `hermes memory status|setup|off|reset`: the logic, apart from argument parsing (memory.ts).
 * Results go to stdout, questions and warnings to stderr. Secrets are never printed: keys show
 * masked, and the one typed at setup goes to `<home>/.env` (mode 0600), not to honcho.json.
 */

import { userInfo } from "node:os";
import { createInterface } from "node:readline/promises";
import type { HermesConfig } from "../../../config/defaults.js";
import { loadEnvFile, setEnvVar } from "../../../config/env-file.js";
import { loadConfig } from "../../../config/load.js";
import { setConfigValue } from "../../../config/write.js";
import {
  honchoHostKey,
  profileOfHome,
  writeHonchoHostSettings,
} from "../../../knowledge/memory/providers/honcho/config.js";
import {
  configuredProviderName,
  MEMORY_PROVIDERS,
  selectMemoryProvider,
} from "../../../knowledge/memory/providers/registry.js";
import type { ProviderStatus } from "../../../knowledge/memory/providers/types.js";
import { MemoryStore } from "../../../knowledge/memory/store.js";
import type { MemoryTarget } from "../../../knowledge/memory/types.js";
import { knowledgeStores } from "../../../knowledge/stores.js";
import { atomicWriteFile } from "../../../util/atomic-write.js";
import { withFileLock } from "../../../util/file-lock.js";
import { CliFailure } from "../../command.js";
import type { CliIo } from "../../io.js";
import { withHomeKnowledge } from "../home-knowledge.js";

function loadHome(
  home: string,
  io: CliIo,
): { config: HermesConfig; env: Record<string, string | undefined> } {
  const { env } = loadEnvFile(home, io.env);
  const loaded = loadConfig({ home, env });
  for (const warning of loaded.warnings) io.err(`hermes memory: warning: ${warning}`);
  return { config: loaded.config, env };
}

export interface MemoryStatusReport {
  builtin: {
    memory_enabled: boolean;
    user_profile_enabled: boolean;
    memory: { entries: number; path: string };
    user: { entries: number; path: string };
  };
  /** `memory.provider` as written ("" for built-in only). */
  provider: string;
  /** The provider's own status; absent with none configured or an unknown name. */
  status?: ProviderStatus;
  /** Why the configured name is not usable, when it is not. */
  problem?: string;
}

/**
 * What `hermes memory status` reports: the home's built-in stores (MEMORY.md / USER.md, or the
 * shared database's entries on a postgres home, where `path` names the database) and the
 * provider's settings; no network beyond that database.
 */
export async function memoryStatus(home: string, io: CliIo): Promise<MemoryStatusReport> {
  const { config, env } = loadHome(home, io);
  const files = MemoryStore.forHome(home, config.memory);
  const counts = await withHomeKnowledge(home, io.env, async (backend) => {
    const store = knowledgeStores(home).memory(config.memory);
    const count = async (target: MemoryTarget) => {
      try {
        return (await store.entries(target)).length;
      } catch {
        return 0;
      }
    };
    const where = (target: MemoryTarget) =>
      backend ? `${backend.label} (${target === "memory" ? "MEMORY" : "USER"})` : files.path(target);
    return {
      memory: { entries: await count("memory"), path: where("memory") },
      user: { entries: await count("user"), path: where("user") },
    };
  });
  const report: MemoryStatusReport = {
    builtin: {
      memory_enabled: config.memory.memory_enabled !== false,
      user_profile_enabled: config.memory.user_profile_enabled !== false,
      ...counts,
    },
    provider: configuredProviderName(config.memory),
  };
  const selection = selectMemoryProvider(config.memory, { home, env });
  if (selection.kind === "unknown") report.problem = selection.message;
  if (selection.kind === "selected") report.status = selection.provider.status();
  return report;
}

export async function statusCommand(home: string, flags: { json?: boolean }, io: CliIo): Promise<number> {
  const report = await memoryStatus(home, io);
  if (flags.json) {
    io.out(JSON.stringify(report, null, 2));
    return 0;
  }
  const on = (b: boolean) => (b ? "on" : "off");
  const b = report.builtin;
  const lines = [
    "Built-in memory (always on):",
    `  MEMORY.md   ${on(b.memory_enabled).padEnd(4)} ${b.memory.entries} entries  ${b.memory.path}`,
    `  USER.md     ${on(b.user_profile_enabled).padEnd(4)} ${b.user.entries} entries  ${b.user.path}`,
  ];
  if (!report.provider) {
    lines.push("Provider: none (built-in only). Add one with: hermes memory setup honcho");
  } else if (report.problem) {
    lines.push(`Provider: ${report.provider}: ${report.problem}`);
  } else if (report.status) {
    lines.push(`Provider: ${report.status.provider}: ${report.status.detail}`);
    for (const [key, value] of Object.entries(report.status.settings ?? {})) {
      lines.push(`  ${key.padEnd(17)} ${value}`);
    }
  }
  io.out(lines.join("\n"));
  return 0;
}

export interface SetupFlags {
  nonInteractive?: boolean;
  apiKey?: string;
  baseUrl?: string;
  workspace?: string;
  peerName?: string;
  aiPeer?: string;
  recallMode?: string;
}

const RECALL_MODES = ["hybrid", "context", "tools"];

async function askLine(io: CliIo, question: string, fallback?: string): Promise<string> {
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    const answer = (await rl.question(`${question}${fallback ? ` [${fallback}]` : ""}: `)).trim();
    return answer || fallback || "";
  } finally {
    rl.close();
  }
}

function defaultPeerName(): string | undefined {
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined;
  }
}

/**
 * `hermes memory setup [provider]`: writes the provider's settings and `memory.provider`. Without
 * a terminal (or with --non-interactive) every value comes from flags and defaults; on a terminal
 * missing values are asked. Exit 2 for an unknown provider or nothing to ask with.
 */
export async function setupCommand(
  home: string,
  providerArg: string | undefined,
  flags: SetupFlags,
  io: CliIo,
): Promise<number> {
  const interactive = !flags.nonInteractive && io.stdin.isTTY === true;
  const known = MEMORY_PROVIDERS.map((p) => p.name);
  let name = providerArg?.trim().toLowerCase();
  if (!name) {
    if (!interactive) {
      throw new CliFailure(
        `name the provider: hermes memory setup <${known.join("|")}> --non-interactive ... (or "none" for built-in only)`,
        2,
      );
    }
    for (const p of MEMORY_PROVIDERS) io.err(`  ${p.name.padEnd(8)} ${p.description}`);
    name = (await askLine(io, `Provider (${[...known, "none"].join(", ")})`, known[0])).toLowerCase();
  }
  if (name === "none" || name === "builtin") return offCommand(home, io);
  if (!known.includes(name)) {
    throw new CliFailure(`unknown memory provider "${name}"; known: ${known.join(", ")}`, 2);
  }
  if (flags.recallMode && !RECALL_MODES.includes(flags.recallMode)) {
    throw new CliFailure(
      `--recall-mode expects one of ${RECALL_MODES.join(", ")}, got "${flags.recallMode}"`,
      2,
    );
  }
  const { env } = loadHome(home, io);
  const values = { ...flags };
  if (interactive) {
    if (values.apiKey === undefined && values.baseUrl === undefined) {
      io.err("Get an API key at https://app.honcho.dev (leave it empty for a self-hosted Honcho).");
      const key = await askLine(
        io,
        env["HONCHO_API_KEY"] ? "API key (empty keeps the one in .env)" : "API key",
      );
      if (key) values.apiKey = key;
      else if (!env["HONCHO_API_KEY"])
        values.baseUrl = await askLine(io, "Base URL of your Honcho", "http://localhost:8000");
    }
    values.peerName ??= await askLine(
      io,
      "Your name as Honcho should know you (user peer)",
      defaultPeerName(),
    );
  }
  values.peerName ??= defaultPeerName();
  const host = honchoHostKey(env, profileOfHome(home));
  const patch: Record<string, unknown> = {};
  if (values.baseUrl) patch["baseUrl"] = values.baseUrl;
  if (values.workspace) patch["workspace"] = values.workspace;
  if (values.peerName) patch["peerName"] = values.peerName;
  if (values.aiPeer) patch["aiPeer"] = values.aiPeer;
  if (values.recallMode) patch["recallMode"] = values.recallMode;
  // Setup means "use it": a host block switched off earlier is switched back on.
  patch["enabled"] = true;
  const file = writeHonchoHostSettings(home, host, patch);
  io.err(`Saved Honcho settings for host "${host}" to ${file}`);
  if (values.apiKey) {
    const envFile = setEnvVar(home, "HONCHO_API_KEY", values.apiKey);
    io.err(`Saved HONCHO_API_KEY to ${envFile}`);
  }
  setConfigValue(home, "memory.provider", name);
  const report = await memoryStatus(home, io);
  io.out(`Memory provider: ${name}: ${report.status?.detail ?? "configured"}`);
  io.out("New sessions use it; a running chat keeps what it started with.");
  return 0;
}

/** `hermes memory off`: built-in memory only; the provider's settings stay for a later setup. */
export function offCommand(home: string, io: CliIo): number {
  const { config } = loadHome(home, io);
  const was = configuredProviderName(config.memory);
  setConfigValue(home, "memory.provider", "");
  io.out(
    was
      ? `Memory provider ${was} is off: built-in memory only (MEMORY.md, USER.md). Its settings are kept; \`hermes memory setup ${was}\` turns it back on.`
      : "No memory provider was on: built-in memory only (MEMORY.md, USER.md).",
  );
  return 0;
}

export type ResetTarget = "all" | "memory" | "user";

/**
 * `hermes memory reset`: erases the built-in stores (as upstream: MEMORY.md and/or USER.md), each
 * under the store's own lock so a running agent's write is not lost half-way; on a postgres home
 * the shared database's entries, under their row lock, for every instance. The provider's remote
 * memory is not touched (say so). `confirm` asks, or fails when nobody can be asked.
 */
export async function resetCommand(
  home: string,
  target: ResetTarget,
  confirm: (question: string) => Promise<boolean>,
  io: CliIo,
): Promise<number> {
  const { config } = loadHome(home, io);
  const files = MemoryStore.forHome(home, config.memory);
  const targets: MemoryTarget[] = target === "all" ? ["memory", "user"] : [target];
  const names = targets.map((t) => (t === "memory" ? "MEMORY.md" : "USER.md")).join(" and ");
  const done = await withHomeKnowledge(home, io.env, async (backend) => {
    const shared = backend ? knowledgeStores(home).memory(config.memory) : undefined;
    const where = backend ? `the shared database ${backend.label}` : files.dir;
    if (!(await confirm(`Erase every entry of ${names} in ${where}?`))) return false;
    for (const t of targets) {
      let before: number;
      if (shared?.clear) before = await shared.clear(t);
      else {
        const path = files.path(t);
        before = files.entries(t).length;
        await withFileLock(path, async () => {
          await atomicWriteFile(path, "").catch((error: NodeJS.ErrnoException) => {
            if (error.code !== "ENOENT") throw error;
          });
        });
      }
      io.out(`Erased ${t === "memory" ? "MEMORY.md" : "USER.md"} (${before} entries).`);
    }
    return true;
  });
  if (!done) {
    io.err("Nothing was erased.");
    return 0;
  }
  const provider = configuredProviderName(config.memory);
  if (provider) io.err(`The ${provider} provider's own memory is not affected.`);
  return 0;
}
