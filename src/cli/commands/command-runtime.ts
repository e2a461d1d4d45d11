/**
 * The provider a command that runs agents without a chat uses (`batch`, `rl serve`,
 * `trajectories compress`): its `-m`/`--provider`/`--base-url` flags over config and env, and
 * "no provider" as a usage error (exit 2) that says how to set one up.
 */
import type { ResolvedRuntime } from "../../ai/resolve.js";
import type { HermesConfig } from "../../config/defaults.js";
import { CliFailure } from "../command.js";

export async function commandRuntime(
  flags: { model?: string; provider?: string; baseUrl?: string },
  context: { config: HermesConfig; env: Record<string, string | undefined>; home: string },
): Promise<ResolvedRuntime> {
  const { resolveRuntime, NoProviderError } = await import("../../ai/resolve.js");
  try {
    return resolveRuntime({
      flags: {
        ...(flags.model ? { model: flags.model } : {}),
        ...(flags.provider ? { provider: flags.provider } : {}),
        ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
      },
      config: context.config,
      env: context.env,
      home: context.home,
    });
  } catch (error) {
    if (error instanceof NoProviderError) throw new CliFailure(error.message, 2);
    throw error;
  }
}
