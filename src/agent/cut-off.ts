/**
 * Tool calls the model did not finish writing. A response that ended on the output token limit
 * (`finish_reason: length`, Anthropic/Bedrock `max_tokens`, Responses `incomplete`) or a call whose
 * arguments only parse after closing a string or bracket left open is cut off: acting on it would
 * run a shortened command or write a shortened file. Such calls are never executed; the model gets
 * a tool result that says so and how to retry. Pure: no I/O.
 */
import type { FinishReason } from "../ai/types.js";

/** Why a call is not run; undefined when it may run. */
export type CutOff = "output-limit" | "unterminated-arguments";

/**
 * Whether a call is cut off: every call of a response that ended on the output limit (even one
 * whose JSON looks whole: the model had not finished the plan it belongs to), and any call whose
 * arguments were only parseable after closing what was left open.
 */
export function cutOffReason(finish: FinishReason, argumentsTruncated: boolean): CutOff | undefined {
  if (finish === "length") return "output-limit";
  if (argumentsTruncated) return "unterminated-arguments";
  return undefined;
}

/** The error the model reads instead of the tool's result. `rawLength`: characters of arguments received. */
export function cutOffMessage(name: string, reason: CutOff, rawLength: number): string {
  const why =
    reason === "output-limit"
      ? `Not run: your response hit the output token limit before it was complete, so this ${name} call (${rawLength} characters of arguments received) may be cut short.`
      : `Not run: the arguments of this ${name} call end in the middle of a value (${rawLength} characters received, an unterminated string or bracket), so they were cut off.`;
  return `${why} Nothing was executed or written. Retry with smaller arguments: write a large file in parts (write_file with the first part, then patch or append the rest in further calls), and split long commands or scripts.`;
}

/** One line for the user when a response's calls were refused as cut off. */
export function cutOffWarning(count: number, reason: CutOff): string {
  const calls = count === 1 ? "1 tool call was" : `${count} tool calls were`;
  return reason === "output-limit"
    ? `The model's reply hit its output token limit; ${calls} not run and the model was asked to retry in smaller parts.`
    : `${calls[0]?.toUpperCase()}${calls.slice(1)} cut off mid-arguments and not run; the model was asked to retry in smaller parts.`;
}
