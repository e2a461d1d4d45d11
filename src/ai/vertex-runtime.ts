/**
 * Vertex AI's settings and base URL for a resolved runtime (resolve.ts), with vertex.ts's one-line
 * configuration problems raised as `NoProviderError`, a configuration error (exit 2).
 */
import { homedir } from "node:os";
import type { HermesConfig } from "../config/defaults.js";
import { processRedactor } from "../util/redact.js";
import { NoProviderError } from "./no-provider.js";
import {
  resolveVertexBaseUrl,
  resolveVertexSettings,
  VertexConfigError,
  type VertexSettings,
} from "./vertex.js";

type Env = Readonly<Record<string, string | undefined>>;

/** Vertex's settings for this run. */
export function vertexSettings(config: HermesConfig, env: Env): VertexSettings {
  try {
    return resolveVertexSettings({ env, config, homedir: homedir(), redactor: processRedactor() });
  } catch (error) {
    if (error instanceof VertexConfigError) throw new NoProviderError(error.message);
    throw error;
  }
}

/** Where this run's requests go: the project's endpoint for the model's wire, or an explicit URL. */
export function vertexRuntimeUrl(
  settings: VertexSettings,
  env: Env,
  explicit: string | undefined,
  model: string,
): string {
  try {
    return resolveVertexBaseUrl(settings, env, explicit, model);
  } catch (error) {
    if (error instanceof VertexConfigError) throw new NoProviderError(error.message);
    throw error;
  }
}
