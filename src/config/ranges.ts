/**
 * Value checks the type rules of the merge cannot express: numbers that must be in a range.
 * A bad value is a {@link ConfigError} naming the key and the value, so `hermes` exits 2 at
 * start-up instead of running with a guard that can never (or always) fire, and
 * `hermes config set` refuses to write it.
 */
import type { HermesConfig } from "./defaults.js";
import { ConfigError, type ConfigErrorDetails } from "./errors.js";
import type { YamlPath } from "./yaml-doc.js";

const GUARDRAIL_THRESHOLDS = ["warn_after", "hard_stop_after"] as const;
const GUARDRAIL_SIGNALS = ["exact_failure", "same_tool_failure", "idempotent_no_progress"] as const;

/** What is wrong with `value` for the dotted `key`, or undefined when it is in range (or unchecked). */
export function rangeProblem(key: string, value: unknown): string | undefined {
  const [section, threshold, signal, ...more] = key.split(".");
  if (section !== "tool_loop_guardrails" || more.length > 0) return undefined;
  if (!GUARDRAIL_THRESHOLDS.some((t) => t === threshold)) return undefined;
  if (!GUARDRAIL_SIGNALS.some((s) => s === signal)) return undefined;
  // A count of 0 or less would fire on the first call (or never mean anything): an error, not a
  // silent clamp. A signal is turned off with warnings_enabled / hard_stop_enabled instead.
  if (typeof value === "number" && Number.isInteger(value) && value >= 1) return undefined;
  const off = threshold === "warn_after" ? "warnings_enabled" : "hard_stop_enabled";
  return `${key} must be a whole number of at least 1, got ${JSON.stringify(value)}. Use tool_loop_guardrails.${off}: false to turn it off.`;
}

/** Throws {@link ConfigError} for the first out-of-range value; `locate` gives its file and line. */
export function checkRanges(
  config: HermesConfig,
  locate: (path: YamlPath) => ConfigErrorDetails = () => ({}),
): void {
  const section = config.tool_loop_guardrails;
  for (const threshold of GUARDRAIL_THRESHOLDS) {
    for (const signal of GUARDRAIL_SIGNALS) {
      const path = ["tool_loop_guardrails", threshold, signal];
      const key = path.join(".");
      const problem = rangeProblem(key, section[threshold]?.[signal]);
      if (problem) throw new ConfigError(problem, { ...locate(path), key });
    }
  }
}
