/**
 * What commands need from the home: the home path (profile), the environment with `.env`
 * underneath it, and the effective config; loading the config registers the home's secrets with
 * the redactor (cli/secrets.ts). Failures are thrown (ProfileNameError, ConfigError); the command
 * wrapper (cli/command.ts) turns them into one clear line and exit 2.
 */
import type { HermesConfig } from "../config/defaults.js";
import { loadEnvFile } from "../config/env-file.js";
import { resolveActiveHome } from "../config/home.js";
import { loadConfig } from "../config/load.js";
import { protectSecrets } from "./secrets.js";

/**
 * The home for `profile` (`-p NAME`), else HERMES_HOME, else the sticky profile of
 * `~/.hermes/active_profile` (`hermes profile use`), else ~/.hermes. Throws ProfileNameError, or
 * ProfileError when the sticky profile is gone.
 */
export function homeFor(env: Record<string, string | undefined>, profile: string | undefined): string {
  return resolveActiveHome({ env, ...(profile ? { profile } : {}) });
}

export interface HomeConfig {
  /** The process environment with the home's `.env` underneath it. */
  env: Record<string, string | undefined>;
  config: HermesConfig;
  /** Problems in config.yaml that did not stop it loading, for the user to see. */
  warnings: string[];
}

/** Loads `.env` and `config.yaml` of `home` and protects their secrets. Throws ConfigError. */
export function loadHomeConfig(home: string, processEnv: Record<string, string | undefined>): HomeConfig {
  const { env } = loadEnvFile(home, processEnv);
  const loaded = loadConfig({ home, env });
  // Before anything is printed: a warning that quotes a value must not show a key either.
  protectSecrets({ home, env, config: loaded.config });
  return { env, config: loaded.config, warnings: loaded.warnings };
}
