/**
 * `hermes dump [--show-keys]`: a plain-text summary of this setup to paste into a bug report.
 * Keys read "set" / "not set"; `--show-keys` shows their first and last four characters, never
 * more. Config values are shown only for a few keys support asks about, and only when they differ
 * from the defaults; fallback providers are listed without their keys.
 */
import { arch, platform, release } from "node:os";
import { defaultConfig } from "../../config/defaults.js";
import { loadEnvFile } from "../../config/env-file.js";
import { getConfigValue } from "../../config/write.js";
import { hermesVersion } from "../../util/version.js";
import { defineCommand } from "../command.js";
import {
  cronFact,
  gatewayFact,
  INTERESTING_KEYS,
  keyFacts,
  loadForReport,
  loginFacts,
  maskKey,
  modelFact,
  platformFacts,
  skillCount,
  terminalFact,
} from "../doctor/facts.js";

export const dumpCommand = defineCommand({
  name: "dump",
  description: "a plain-text setup summary to paste into a bug report (keys redacted)",
  needs: "home",
  parse: (cmd) => cmd.option("--show-keys", "show the first and last 4 characters of each key"),
  run: (ctx, flags: { showKeys?: boolean }) => {
    const { home } = ctx;
    const { config, env, configError } = loadForReport(home, ctx.io.env);
    const model = modelFact(config, env, home);
    const pad = (label: string): string => `${label}:`.padEnd(18);
    const lines = [
      "--- hermes dump ---",
      `${pad("version")}${hermesVersion()}`,
      `${pad("os")}${platform()} ${release()} ${arch()}`,
      `${pad("node")}${process.versions.node}`,
      `${pad("profile")}${ctx.profile ?? "(default)"}`,
      `${pad("hermes_home")}${home}`,
      ...(configError ? [`${pad("config_error")}${configError}`] : []),
      `${pad("model")}${model.model}`,
      `${pad("provider")}${model.provider}${model.error ? `  (${model.error})` : ""}`,
      `${pad("terminal")}${terminalFact(config)}`,
      "",
      "api_keys:",
    ];
    const fromFile = new Set(loadEnvFile(home, ctx.io.env).loaded);
    for (const key of keyFacts(env, fromFile, home)) {
      if (key.value === undefined) continue;
      const shown = flags.showKeys ? maskKey(key.value) : "set";
      lines.push(`  ${key.name.padEnd(24)} ${shown}${key.shellOnly ? " (shell only, not in .env)" : ""}`);
    }
    const { logins } = loginFacts(home);
    for (const login of logins) {
      lines.push(
        `  ${`pool:${login.provider}`.padEnd(24)} ${login.entries} (${login.oauth > 0 ? "oauth" : "api key"})`,
      );
    }
    const mcp = config["mcp_servers"];
    const platforms = platformFacts(env)
      .filter((p) => p.set)
      .map((p) => p.name);
    lines.push(
      "",
      "features:",
      `  toolsets:          ${config.toolsets.join(", ") || "(none)"}`,
      `  mcp_servers:       ${mcp && typeof mcp === "object" ? Object.keys(mcp).length : 0}`,
      `  memory_provider:   ${String(config.memory["provider"] ?? "") || "built-in"}`,
      `  gateway:           ${gatewayFact(home)}`,
      `  platforms:         ${platforms.join(", ") || "none"}`,
      `  cron_jobs:         ${cronFact(home)}`,
      `  skills:            ${skillCount(home)}`,
    );
    const defaults = defaultConfig();
    const overrides = INTERESTING_KEYS.flatMap((key) => {
      const value = getConfigValue(config, key);
      if (value === undefined || JSON.stringify(value) === JSON.stringify(getConfigValue(defaults, key)))
        return [];
      return [`  ${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`];
    });
    const fallbacks = Array.isArray(config.fallback_providers) ? config.fallback_providers : [];
    if (fallbacks.length > 0) {
      const chain = fallbacks.map((entry: unknown) => {
        const e = (entry ?? {}) as Record<string, unknown>;
        return `${String(e["provider"] ?? "?")}:${String(e["model"] ?? "?")}`;
      });
      overrides.push(`  fallback_providers: ${chain.join(" → ")}`);
    }
    if (overrides.length > 0) lines.push("", "config_overrides:", ...overrides);
    lines.push("--- end dump ---");
    ctx.io.out(lines.join("\n"));
    return 0;
  },
});
