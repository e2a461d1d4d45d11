/**
 * Where tools that call a service in-process read their keys and endpoints (FIRECRAWL_API_KEY,
 * FAL_KEY, HASS_TOKEN, provider keys for auxiliary calls...). `ToolContext.env` is the subprocess
 * environment with Hermes's secrets scrubbed out, so it cannot serve; `ToolContext.secrets` is the
 * agent's whole environment (the surfaces load `.env` into it). A name the context's `env` defines,
 * even as an empty string, wins: tests pin or blank a key that way.
 */
import type { ToolContext } from "./types.js";

export type Env = Readonly<Record<string, string | undefined>>;

/** `ctx.secrets` (else the process environment) with every name `ctx.env` defines on top. */
export function keyEnv(ctx: Pick<ToolContext, "env" | "secrets">): Env {
  const merged: Record<string, string | undefined> = { ...(ctx.secrets ?? process.env) };
  for (const [name, value] of Object.entries(ctx.env)) {
    if (value !== undefined) merged[name] = value;
  }
  return merged;
}
