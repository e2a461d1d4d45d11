/**
 * The consolidation reviewer over the auxiliary model chain of task `curator`
 * (`auxiliary.curator` in config.yaml, else the auto chain, else the main model).
 */
import { auxiliaryComplete, resolveAuxiliaryChain } from "../../ai/auxiliary.js";
import { type Env, resolveRuntime } from "../../ai/resolve.js";
import type { HermesConfig } from "../../config/defaults.js";
import type { ConsolidationReviewer } from "./run.js";

/** A reviewer for `config`, or undefined when no model is configured at all (the run says so). */
export function auxiliaryCuratorReviewer(
  config: HermesConfig,
  env: Env,
  home: string,
): ConsolidationReviewer | undefined {
  let main: ReturnType<typeof resolveRuntime>;
  try {
    main = resolveRuntime({ flags: {}, config, env, home });
  } catch {
    return undefined;
  }
  const chain = resolveAuxiliaryChain("curator", { config, env, main, home });
  return async ({ system, user }) => {
    const result = await auxiliaryComplete(chain, [
      { role: "system", content: system },
      { role: "user", content: user },
    ]);
    return { text: result.text, model: result.runtime.model, provider: result.runtime.provider };
  };
}
