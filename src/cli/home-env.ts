/**
 * Loads what every command needs from the home: the home path (profile), the environment with
 * `.env` underneath it, and the effective config, and registers the home's secrets with the
 * redactor (cli/secrets.ts). Expected failures print one clear line and yield exit code 2.
 */
import type { HermesConfig } from "../config/defaults.js";
import { loadEnvFile } from "../config/env-file.js";
import { ConfigError, ProfileNameError } from "../config/errors.js";
import { resolveHome } from "../config/home.js";
import { loadConfig } from "../config/load.js";
import { protectSecrets } from "./secrets.js";

export interface CliContext {
  home: string;
  env: Record<string, string | undefined>;
  config: HermesConfig;
  warnings: string[];
}

/** The home for `profile`, or an exit code after printing why it is invalid. */
export function homeFor(profile: string | undefined): string | { exitCode: number } {
  try {
    return resolveHome({ env: process.env, ...(profile ? { profile } : {}) });
  } catch (error) {
    if (error instanceof ProfileNameError) {
      process.stderr.write(`hermes: ${error.message}\n`);
      return { exitCode: 2 };
    }
    throw error;
  }
}

export async function loadCliContext(
  profile: string | undefined,
): Promise<CliContext | { exitCode: number }> {
  const home = homeFor(profile);
  if (typeof home !== "string") return home;
  try {
    const { env } = loadEnvFile(home, process.env);
    const loaded = loadConfig({ home, env });
    // Before anything is printed: a warning that quotes a value must not show a key either.
    protectSecrets({ home, env, config: loaded.config });
    for (const warning of loaded.warnings) process.stderr.write(`hermes: warning: ${warning}\n`);
    return { home, env, config: loaded.config, warnings: loaded.warnings };
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(
        `hermes: ${error.message}\nFix the file (hermes config edit) or check it with: hermes config check\n`,
      );
      return { exitCode: 2 };
    }
    throw error;
  }
}
