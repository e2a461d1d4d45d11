/**
 * Tool-loop guardrails: notice a model stuck repeating itself. Three signals, each with a warning
 * threshold and an opt-in hard stop (config `tool_loop_guardrails`):
 *  - exact failure: the same tool with the same arguments failed N times (a success of that call
 *    starts it again);
 *  - same-tool failure: one tool failed N times in a row, whatever the arguments;
 *  - idempotent no progress: a read-only tool returned the same result for the same arguments N
 *    times in a row (JSON results compared canonicalised, so key order and spacing do not hide it).
 * A failure is what the model would call one: the tool erred, what it ran failed (a non-zero exit
 * code, a timeout: `ToolOutcome.failed`), or the result is a JSON object with an `error`. A success
 * ends the failure streaks of that tool. Counts live for one user turn ({@link ToolLoopGuard.startTurn}).
 */
import { createHash } from "node:crypto";
import type { GuardrailCounts } from "../config/defaults.js";

export interface GuardrailSettings {
  warningsEnabled: boolean;
  hardStopEnabled: boolean;
  warnAfter: GuardrailCounts;
  hardStopAfter: GuardrailCounts;
}

export interface GuardrailVerdict {
  /** A note to append to the tool result so the model changes course. */
  warning?: string;
  /** Set when a hard stop threshold was reached: the turn must end. */
  stop?: string;
}

/** One finished tool call, as the guard sees it. */
export interface GuardedCall {
  name: string;
  args: Record<string, unknown>;
  /** False when the tool itself erred (invalid arguments, a thrown error, an `{"error"}` value). */
  ok: boolean;
  /** True when the tool worked but what it ran failed (a non-zero exit code, a timeout). */
  failed?: boolean | undefined;
  result: string;
  readOnly: boolean;
}

export class ToolLoopGuard {
  private readonly exactFailures = new Map<string, number>();
  private readonly toolFailureStreak = new Map<string, number>();
  /**
   * The last result of each read-only call and how many times in a row it came back. The result
   * is the string the conversation holds anyway; its canonical hash is worked out only once the
   * same call comes back with a different string (most calls are never repeated).
   */
  private readonly sameResultStreak = new Map<string, { result: string; hash?: string; count: number }>();

  constructor(private readonly settings: GuardrailSettings) {}

  /**
   * Forgets every count: a new user message is a new task, and a command that failed while the
   * user was fixing something by hand must not count against the next request.
   */
  startTurn(): void {
    this.exactFailures.clear();
    this.toolFailureStreak.clear();
    this.sameResultStreak.clear();
  }

  /** A guard configured from the `tool_loop_guardrails` section of config.yaml. */
  static fromConfig(section: {
    warnings_enabled: boolean;
    hard_stop_enabled: boolean;
    warn_after: GuardrailCounts;
    hard_stop_after: GuardrailCounts;
  }): ToolLoopGuard {
    return new ToolLoopGuard({
      warningsEnabled: section.warnings_enabled,
      hardStopEnabled: section.hard_stop_enabled,
      warnAfter: section.warn_after,
      hardStopAfter: section.hard_stop_after,
    });
  }

  record(call: GuardedCall): GuardrailVerdict {
    const argsKey = `${call.name}:${stableStringify(call.args)}`;
    const signals: Array<{ kind: keyof GuardrailCounts; count: number; text: string }> = [];
    const failed = isFailure(call);

    if (failed) {
      const exact = (this.exactFailures.get(argsKey) ?? 0) + 1;
      this.exactFailures.set(argsKey, exact);
      signals.push({
        kind: "exact_failure",
        count: exact,
        text: `${call.name} has failed ${exact} times with these exact arguments. Do not repeat it; change the arguments or the approach.`,
      });
      const streak = (this.toolFailureStreak.get(call.name) ?? 0) + 1;
      this.toolFailureStreak.set(call.name, streak);
      signals.push({
        kind: "same_tool_failure",
        count: streak,
        text: `${call.name} has failed ${streak} times in a row. Step back and try a different approach or tool.`,
      });
    } else {
      // A success ends the tool's failure streak, and the count of this exact call (a flaky test
      // that passed is not a loop). Other failing arguments keep their counts: running `ls`
      // between two identical failing commands does not make the second one new.
      this.toolFailureStreak.delete(call.name);
      this.exactFailures.delete(argsKey);
    }

    if (call.readOnly && !failed) {
      const prev = this.sameResultStreak.get(argsKey);
      let count = 1;
      let hash: string | undefined;
      if (prev) {
        if (prev.result === call.result) count = prev.count + 1;
        else {
          prev.hash ??= resultHash(prev.result);
          hash = resultHash(call.result);
          if (hash === prev.hash) count = prev.count + 1;
        }
      }
      this.sameResultStreak.set(argsKey, { result: call.result, ...(hash ? { hash } : {}), count });
      signals.push({
        kind: "idempotent_no_progress",
        count,
        text: `${call.name} returned the same result ${count} times for the same arguments; repeating it will not make progress.`,
      });
    }

    const verdict: GuardrailVerdict = {};
    for (const s of signals) {
      if (this.settings.hardStopEnabled && s.count >= this.settings.hardStopAfter[s.kind]) {
        verdict.stop = `Stopped by tool-loop guardrail (${s.kind.replaceAll("_", " ")}): ${s.text}`;
        return verdict;
      }
    }
    if (this.settings.warningsEnabled) {
      const hits = signals.filter((s) => s.count >= this.settings.warnAfter[s.kind]);
      if (hits.length > 0) verdict.warning = `[guardrail] ${hits.map((h) => h.text).join(" ")}`;
    }
    return verdict;
  }
}

/** JSON with sorted object keys, so argument order does not change the identity of a call. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(",")}}`;
}

/** Whether a finished call counts as a failure (see the module comment). */
export function isFailure(call: Pick<GuardedCall, "ok" | "failed" | "result">): boolean {
  if (!call.ok || call.failed === true) return true;
  // Without the word (spelt out, or with an escape in it) no JSON object holds an `error` key.
  if (!call.result.includes('"error"') && !call.result.includes("\\u")) return false;
  const parsed = parseJson(call.result);
  if (parsed === undefined || parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
    return false;
  const error = (parsed as Record<string, unknown>)["error"];
  // `"error": null` / `false` / `""` is how some tools say "no error".
  return error !== undefined && error !== null && error !== false && error !== "";
}

/** The hash a result is compared by for no-progress detection (of its canonical text). */
function resultHash(result: string): string {
  return createHash("sha1").update(canonicalResult(result)).digest("hex");
}

/**
 * The text a result is compared by for no-progress detection: JSON re-serialised with sorted keys
 * and no whitespace, so a tool that reorders keys or pretty-prints differently is still "the same".
 */
export function canonicalResult(result: string): string {
  const parsed = parseJson(result);
  return parsed === undefined ? result : stableStringify(parsed);
}

function parseJson(text: string): unknown {
  const trimmed = text.trim();
  if (!(trimmed.startsWith("{") || trimmed.startsWith("["))) return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}
