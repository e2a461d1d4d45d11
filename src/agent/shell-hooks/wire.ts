/**
 * The shell hooks' wire format, as upstream Hermes speaks it (so hook scripts written for it, or
 * for Claude Code's hooks, work unchanged):
 *
 * - stdin: `{hook_event_name, tool_name, tool_input, session_id, cwd, profile, extra}`, where
 *   `extra` holds every other payload field (`task_id`, `platform`, `model`, `tool_call_id`,
 *   `result`, `user_message`...).
 * - stdout (optional JSON): for `pre_tool_call`, `{"action": "block", "message"}` or Claude Code's
 *   `{"decision": "block", "reason"}`, and `{"action": "modify", "args"}` /
 *   `{"decision": "modify", "tool_input"}`; for the other events `{"context": "..."}` (used by
 *   `pre_llm_call`, ignored by observers).
 * - exit code 2 on `pre_tool_call` blocks even without JSON, with stderr as the reason.
 *
 * Pure: `evaluateRun` turns what the process did into the hook's answer plus what to log.
 */
import type { HookEventName } from "../hooks.js";
import type { HookRun } from "./run.js";
import { BLOCKING_EVENTS, type ShellHookSpec } from "./spec.js";

export const DEFAULT_BLOCK_MESSAGE = "Blocked by shell hook.";
/** Exit code meaning "block this call" (Claude Code and Cursor use the same). */
export const BLOCK_EXIT_CODE = 2;
const STDERR_LIMIT = 400;

/** Payload fields lifted to the top level; the rest go under `extra`. */
const TOP_LEVEL = new Set(["tool_name", "args", "session_id", "cwd"]);

/** The JSON a hook reads on stdin for `event` fired with `payload`. */
export function hookStdin(
  event: HookEventName,
  payload: Readonly<Record<string, unknown>>,
  profile: string,
): string {
  const args = payload["args"];
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(payload)) if (!TOP_LEVEL.has(key)) extra[key] = value;
  return JSON.stringify({
    hook_event_name: event,
    tool_name: typeof payload["tool_name"] === "string" ? payload["tool_name"] : null,
    tool_input: typeof args === "object" && args !== null && !Array.isArray(args) ? args : null,
    session_id: typeof payload["session_id"] === "string" ? payload["session_id"] : "",
    cwd: typeof payload["cwd"] === "string" ? payload["cwd"] : "",
    profile,
    extra,
  });
}

/** What one hook run contributes. */
export type HookAnswer =
  | { kind: "block"; message: string }
  | { kind: "modify"; args: Record<string, unknown> }
  | { kind: "context"; context: string }
  | undefined;

export interface Evaluation {
  answer: HookAnswer;
  /** Warnings for the log (a failure, a timeout, unreadable output). */
  warnings: string[];
}

/**
 * Upstream's rules: a hook that did not run or timed out contributes nothing (a `fail_closed`
 * `pre_tool_call` hook blocks instead); exit 2 on `pre_tool_call` blocks (reason from its JSON,
 * else stderr, else a default); any other non-zero exit is logged and its stdout still read;
 * unreadable stdout from a `fail_closed` hook blocks.
 */
export function evaluateRun(spec: ShellHookSpec, run: HookRun): Evaluation {
  const warnings: string[] = [];
  const blocking = BLOCKING_EVENTS.has(spec.event);
  const failClosed = spec.failClosed && blocking;
  const failed =
    run.error ?? (run.timedOut ? `timed out after ${spec.timeoutSeconds} s and was killed` : undefined);
  if (failed) {
    warnings.push(`${failed}`);
    return {
      answer: failClosed
        ? { kind: "block", message: `the hook ${spec.command} failed closed: ${failed}` }
        : undefined,
      warnings,
    };
  }
  const stderr = run.stderr.trim().slice(0, STDERR_LIMIT);
  const stdout = run.stdout.trim();
  if (run.code === BLOCK_EXIT_CODE && blocking) {
    const parsed = parseReply(spec.event, stdout);
    if (parsed?.kind === "block") return { answer: parsed, warnings };
    return { answer: { kind: "block", message: stderr || DEFAULT_BLOCK_MESSAGE }, warnings };
  }
  if (run.code !== 0) warnings.push(`exited ${run.code}${stderr ? `: ${stderr}` : ""}`);
  if (!stdout) return { answer: undefined, warnings };
  const json = parseJsonObject(stdout);
  if (!json) {
    warnings.push(`its output is not a JSON object: ${stdout.slice(0, 200)}`);
    return {
      answer: failClosed
        ? {
            kind: "block",
            message: `the hook ${spec.command} failed closed: its output is not a JSON object`,
          }
        : undefined,
      warnings,
    };
  }
  return { answer: replyFrom(spec.event, json), warnings };
}

/** Reads a hook's stdout as its answer to `event` (undefined: nothing usable). */
export function parseReply(event: HookEventName, stdout: string): HookAnswer {
  const json = parseJsonObject(stdout.trim());
  return json ? replyFrom(event, json) : undefined;
}

function replyFrom(event: HookEventName, data: Record<string, unknown>): HookAnswer {
  if (event === "pre_tool_call") {
    // Hermes's `action` first, then Claude Code's `decision`.
    if (data["action"] === "block")
      return { kind: "block", message: message(data["message"], data["reason"]) };
    if (data["decision"] === "block")
      return { kind: "block", message: message(data["reason"], data["message"]) };
    if (data["action"] === "modify" && isRecord(data["args"])) return { kind: "modify", args: data["args"] };
    if (data["decision"] === "modify" && isRecord(data["tool_input"]))
      return { kind: "modify", args: data["tool_input"] };
    return undefined;
  }
  const context = data["context"];
  return typeof context === "string" && context.trim() ? { kind: "context", context } : undefined;
}

function message(primary: unknown, secondary: unknown): string {
  const raw = (typeof primary === "string" && primary) || (typeof secondary === "string" && secondary);
  return raw || DEFAULT_BLOCK_MESSAGE;
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  if (!text) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
