/**
 * `hermes status [--all] [--deep]`: what this home is set up with, at a glance. Keys are shown
 * masked (first and last four characters). `--all` lists every key Hermes knows, set or not, and
 * every chat platform; `--deep` also asks each configured provider for its model list and checks
 * state.db, as `hermes doctor` does. Exit 0; with `--deep`, 1 when a deep check failed.
 */
import { existsSync } from "node:fs";
import { loadEnvFile } from "../../config/env-file.js";
import { configPath, envPath } from "../../config/home.js";
import { hermesVersion } from "../../util/version.js";
import { defineCommand } from "../command.js";
import { stateDbChecks } from "../doctor/checks-home.js";
import { providerChecks } from "../doctor/checks-remote.js";
import {
  cronFact,
  gatewayFact,
  keyFacts,
  loadForReport,
  loginFacts,
  maskKey,
  modelFact,
  platformFacts,
  skillCount,
  terminalFact,
} from "../doctor/facts.js";
import { renderDoctor } from "../doctor/render.js";

interface StatusFlags {
  all?: boolean;
  deep?: boolean;
}

export const statusCommand = defineCommand({
  name: "status",
  description: "what this home is set up with: model, keys, logins, backend, platforms, gateway, jobs",
  needs: "home",
  parse: (cmd) =>
    cmd
      .option("--all", "list every known key and platform, set or not")
      .option("--deep", "also probe each configured provider and check state.db"),
  run: async (ctx, flags: StatusFlags) => {
    const { home } = ctx;
    const { config, env, configError } = loadForReport(home, ctx.io.env);
    const mark = (ok: boolean): string => (ok ? "✓" : "✗");
    const out: string[] = [];
    const section = (title: string): void => {
      if (out.length > 0) out.push("");
      out.push(ctx.io.color ? `\x1b[1m${title}\x1b[0m` : title);
    };
    const row = (label: string, value: string, width = 16): void => {
      out.push(`  ${label.padEnd(width)} ${value}`);
    };

    section("Environment");
    row("Hermes", hermesVersion());
    row("Node.js", `v${process.versions.node}`);
    row("Home", ctx.profile ? `${home} (profile ${ctx.profile})` : home);
    row(
      "config.yaml",
      configError
        ? `✗ does not load, defaults shown: ${configError}`
        : existsSync(configPath(home))
          ? "✓ exists"
          : "✗ not found (built-in defaults)",
    );
    row(".env", existsSync(envPath(home)) ? "✓ exists" : "✗ not found");

    section("Model");
    const model = modelFact(config, env, home);
    row("Model", model.model);
    row("Provider", model.provider);
    if (model.baseUrl) row("Endpoint", model.baseUrl);
    if (model.auth) row("Auth", model.auth);
    for (const [label, value] of model.extra ?? []) row(label, value);
    if (model.error) row("Problem", `✗ ${model.error} (run: hermes setup)`);

    section("API keys");
    const fromFile = new Set(loadEnvFile(home, ctx.io.env).loaded);
    const keys = keyFacts(env, fromFile, home).filter((k) => flags.all || k.value !== undefined);
    if (keys.length === 0) out.push("  (none set)");
    // One column for every name shown (ALIBABA_CODING_PLAN_API_KEY is longer than most).
    const keyWidth = Math.max(24, ...keys.map((k) => k.name.length));
    for (const key of keys) {
      const shown = key.value === undefined ? "(not set)" : maskKey(key.value);
      const where = key.shellOnly ? "  (shell only, not in .env)" : "";
      row(key.name, `${mark(key.value !== undefined)} ${shown}${where}`, keyWidth);
    }

    section("Logins (auth.json)");
    const { logins, error } = loginFacts(home);
    if (error) out.push(`  ✗ ${error}`);
    else if (logins.length === 0) out.push("  (none)");
    for (const login of logins) {
      const kinds = login.oauth > 0 ? `, ${login.oauth} OAuth` : "";
      row(login.provider, `✓ ${login.entries} credential${login.entries === 1 ? "" : "s"}${kinds}`);
    }

    section("Terminal");
    row("Backend", terminalFact(config));

    section("Messaging platforms");
    const platforms = platformFacts(env).filter((p) => flags.all || p.set);
    if (platforms.length === 0) out.push("  (none configured)");
    for (const platform of platforms) {
      row(platform.name, platform.set ? `✓ ${platform.token} set` : `✗ ${platform.token} not set`);
    }

    section("Services");
    row("Gateway", gatewayFact(home));
    row("Cron jobs", cronFact(home));
    row("Skills", String(skillCount(home)));

    let failed = false;
    if (flags.deep) {
      const lines = [...(await providerChecks(config, env, home)), ...(await stateDbChecks(home))];
      failed = lines.some((line) => line.status === "fail");
      out.push("", renderDoctor(lines, { color: ctx.io.color }).trimEnd());
    }
    ctx.io.out(out.join("\n"));
    return failed ? 1 : 0;
  },
});
