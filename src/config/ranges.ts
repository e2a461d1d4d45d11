/**
 * Value checks the type rules of the merge cannot express: numbers that must be in a range.
 * A bad value is a {@link ConfigError} naming the key and the value, so `hermes` exits 2 at
 * start-up instead of running with a guard that can never (or always) fire.
 */
import type { HermesConfig } from "./defaults.js";
import { ConfigError, type ConfigErrorDetails } from "./errors.js";
import type { YamlPath } from "./yaml-doc.js";

const GUARDRAIL_THRESHOLDS = ["warn_after", "hard_stop_after"] as const;
const GUARDRAIL_SIGNALS = ["exact_failure", "same_tool_failure", "idempotent_no_progress"] as const;

/** Throws {@link ConfigError} for the first out-of-range value; `locate` gives its file and line. */
export function checkRanges(
  config: HermesConfig,
  locate: (path: YamlPath) => ConfigErrorDetails = () => ({}),
): void {
  const section = config.tool_loop_guardrails;
  for (const threshold of GUARDRAIL_THRESHOLDS) {
    for (const signal of GUARDRAIL_SIGNALS) {
      const value: unknown = section[threshold]?.[signal];
      // A count of 0 or less would fire on the first call (or never mean anything): an error,
      // not a silent clamp. Turn a signal off with warnings_enabled / hard_stop_enabled instead.
      if (typeof value === "number" && Number.isInteger(value) && value >= 1) continue;
      const path = ["tool_loop_guardrails", threshold, signal];
      const key = path.join(".");
      throw new ConfigError(
        `${key} must be a whole number of at least 1, got ${JSON.stringify(value)}. Use ${threshold === "warn_after" ? "tool_loop_guardrails.warnings_enabled: false" : "tool_loop_guardrails.hard_stop_enabled: false"} to turn it off.`,
        { ...locate(path), key },
      );
    }
  }
}
