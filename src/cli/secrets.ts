/**
 * What every surface started from the command line does first (the one-shot and the REPL, the
 * gateway, the API server, cron, `mcp serve`, `sessions export`): register the home's secrets with
 * the process-wide redactor and, when redaction is on, redact everything this process prints on
 * stdout and stderr, whoever writes it.
 */
import { loadEnvFile } from "../config/env-file.js";
import { registerKnownSecrets } from "../config/known-secrets.js";
import { loadConfig } from "../config/load.js";
import { processRedactor } from "../util/redact.js";
import { redactStreamWrites } from "../util/redact-stream.js";

export interface SecretSources {
  home: string;
  /** The environment with `.env` merged under it. */
  env: Readonly<Record<string, string | undefined>>;
  /** The effective config (`security.redact_secrets`, secret-looking values); undefined when it failed to load. */
  config: unknown;
}

/** Registers the secrets and wraps stdout/stderr once (skipped while redaction is off). */
export function protectSecrets(sources: SecretSources, options: { streams?: boolean } = {}): void {
  const redactor = processRedactor();
  registerKnownSecrets({ home: sources.home, env: sources.env, config: sources.config, redactor });
  if (!redactor.enabled || options.streams === false) return;
  redactStreamWrites(process.stdout, redactor);
  redactStreamWrites(process.stderr, redactor);
}

/**
 * For commands that do not load the home otherwise (`sessions export`): reads `.env` and
 * config.yaml and registers their secrets, without wrapping the streams. A broken config.yaml
 * still lets the environment's secrets count.
 */
export function registerHomeSecrets(
  home: string,
  realEnv: Readonly<Record<string, string | undefined>>,
): void {
  let env: Readonly<Record<string, string | undefined>> = realEnv;
  let config: unknown;
  try {
    env = loadEnvFile(home, realEnv).env;
    config = loadConfig({ home, env }).config;
  } catch {
    // Reported by the commands that use the config; redaction keeps what it could read.
  }
  registerKnownSecrets({ home, env, config, redactor: processRedactor() });
}
