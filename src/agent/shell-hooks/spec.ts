/**
 * The `hooks:` section of config.yaml, read into shell-hook specs (upstream Hermes's layout):
 *
 *   hooks:
 *     pre_tool_call:
 *       - matcher: "terminal"          # a regex on the tool name (tool events only)
 *         command: ~/.hermes/hooks/guard.sh
 *         timeout: 10                  # seconds, 1..300, default 60
 *         fail_closed: true            # pre_tool_call only: a failing hook blocks
 *
 * Malformed entries are skipped with a warning that names them; reading never throws, so a broken
 * hook never stops an agent from starting. Pure.
 */

import { editDistance } from "../../util/edit-distance.js";
import { HOOK_EVENTS, type HookEventName } from "../hooks.js";

export const DEFAULT_TIMEOUT_SECONDS = 60;
export const MAX_TIMEOUT_SECONDS = 300;

/** Events whose `block` answer is honoured: exit code 2 and `fail_closed` mean something only here. */
export const BLOCKING_EVENTS: ReadonlySet<HookEventName> = new Set(["pre_tool_call"]);
/** Events about one tool call, where `matcher` applies. */
export const TOOL_EVENTS: ReadonlySet<HookEventName> = new Set(["pre_tool_call", "post_tool_call"]);

/**
 * The events a shell hook may attach to: what the hook bus fires, less `transform_tool_result`, whose
 * replacement string has no field in the shell hooks' JSON reply (upstream refuses such events
 * loudly rather than registering a hook whose answer is dropped).
 */
export const SHELL_HOOK_EVENTS: readonly HookEventName[] = HOOK_EVENTS.filter(
  (e) => e !== "transform_tool_result",
);

/** Upstream events this version does not fire yet: a hook on them is kept out with a warning. */
const UPSTREAM_ONLY_EVENTS = new Set([
  "transform_terminal_output",
  "transform_llm_output",
  "on_stream_start",
  "on_stream_delta",
  "on_stream_end",
  "on_interim_message",
  "pre_verify",
  "pre_api_request",
  "api_request_error",
  "pre_auxiliary_call",
  "post_auxiliary_call",
  "on_session_finalize",
  "on_session_reset",
  "gateway_platform_event",
  "pre_command",
  "pre_gateway_dispatch",
  "pre_approval_request",
  "post_approval_response",
]);

/** Sub-sections upstream keeps under `hooks:` that are not events. */
const RESERVED_KEYS = new Set(["output_spill", "outbound"]);

export interface ShellHookSpec {
  event: HookEventName;
  /** The command as written (trimmed): the allowlist's key together with the event. */
  command: string;
  /** The regex as written; undefined matches every tool. */
  matcher?: string;
  timeoutSeconds: number;
  /** Only ever true for `pre_tool_call`. */
  failClosed: boolean;
  /** Position in `hooks.<event>`, for messages (`hooks.pre_tool_call[1]`). */
  index: number;
}

export interface ParsedHooks {
  specs: ShellHookSpec[];
  warnings: string[];
}

/** Reads `hooks:`; anything but a mapping gives no hooks (and a warning unless it is absent). */
export function parseShellHooks(section: unknown): ParsedHooks {
  const specs: ShellHookSpec[] = [];
  const warnings: string[] = [];
  if (section === undefined || section === null) return { specs, warnings };
  if (typeof section !== "object" || Array.isArray(section)) {
    warnings.push(`hooks: must be a mapping of event names to lists of hooks; got ${typeName(section)}.`);
    return { specs, warnings };
  }
  for (const [name, entries] of Object.entries(section as Record<string, unknown>)) {
    if (RESERVED_KEYS.has(name)) continue;
    if (name === "transform_tool_result") {
      warnings.push(
        "hooks.transform_tool_result: a shell hook cannot replace a tool's result (its JSON reply has no field for it); use a plugin. Skipped.",
      );
      continue;
    }
    if (UPSTREAM_ONLY_EVENTS.has(name)) {
      warnings.push(`hooks.${name}: this version of Hermes does not fire ${name}; the hook is skipped.`);
      continue;
    }
    if (!(SHELL_HOOK_EVENTS as readonly string[]).includes(name)) {
      const guess = closest(name, SHELL_HOOK_EVENTS);
      warnings.push(
        `hooks.${name}: unknown hook event${guess ? `; did you mean ${guess}?` : ` (valid: ${SHELL_HOOK_EVENTS.join(", ")})`}. Skipped.`,
      );
      continue;
    }
    if (entries === null || entries === undefined) continue;
    if (!Array.isArray(entries)) {
      warnings.push(
        `hooks.${name} must be a list of hooks ({command, matcher, timeout}); got ${typeName(entries)}.`,
      );
      continue;
    }
    entries.forEach((raw, index) => {
      const spec = parseEntry(name as HookEventName, index, raw, warnings);
      if (spec) specs.push(spec);
    });
  }
  return { specs, warnings };
}

function parseEntry(
  event: HookEventName,
  index: number,
  raw: unknown,
  warnings: string[],
): ShellHookSpec | undefined {
  const where = `hooks.${event}[${index}]`;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    warnings.push(`${where} must be a mapping with a command; got ${typeName(raw)}. Skipped.`);
    return undefined;
  }
  const entry = raw as Record<string, unknown>;
  const command = typeof entry["command"] === "string" ? entry["command"].trim() : "";
  if (!command) {
    warnings.push(`${where} has no command. Skipped.`);
    return undefined;
  }
  let matcher: string | undefined;
  const rawMatcher = entry["matcher"];
  if (rawMatcher !== undefined && rawMatcher !== null) {
    if (typeof rawMatcher !== "string") {
      warnings.push(`${where}.matcher must be a string (a regex on the tool name); ignored.`);
    } else if (!TOOL_EVENTS.has(event)) {
      if (rawMatcher.trim())
        warnings.push(`${where}.matcher applies only to pre_tool_call and post_tool_call; ignored.`);
    } else {
      // YAML folding can leave spaces around it; " terminal" would never match.
      matcher = rawMatcher.trim() || undefined;
    }
  }
  let timeoutSeconds = DEFAULT_TIMEOUT_SECONDS;
  const rawTimeout = entry["timeout"];
  if (rawTimeout !== undefined && rawTimeout !== null) {
    const n = typeof rawTimeout === "string" ? Number(rawTimeout.trim()) : rawTimeout;
    if (typeof n !== "number" || !Number.isFinite(n)) {
      warnings.push(
        `${where}.timeout must be a number of seconds, got ${JSON.stringify(rawTimeout)}; using ${DEFAULT_TIMEOUT_SECONDS}.`,
      );
    } else if (n < 1) {
      warnings.push(`${where}.timeout must be at least 1 second; using ${DEFAULT_TIMEOUT_SECONDS}.`);
    } else if (n > MAX_TIMEOUT_SECONDS) {
      warnings.push(
        `${where}.timeout ${n} is over the ${MAX_TIMEOUT_SECONDS} s limit; using ${MAX_TIMEOUT_SECONDS}.`,
      );
      timeoutSeconds = MAX_TIMEOUT_SECONDS;
    } else {
      timeoutSeconds = n;
    }
  }
  // `fail_closed` (upstream's name) wins over `failClosed` (Claude Code's spelling).
  const rawFail = entry["fail_closed"] ?? entry["failClosed"] ?? false;
  let failClosed = false;
  if (typeof rawFail !== "boolean") {
    warnings.push(`${where}.fail_closed must be true or false; the hook fails open.`);
  } else if (rawFail && !BLOCKING_EVENTS.has(event)) {
    warnings.push(`${where}.fail_closed applies only to pre_tool_call; ignored.`);
  } else {
    failClosed = rawFail;
  }
  return { event, command, ...(matcher ? { matcher } : {}), timeoutSeconds, failClosed, index };
}

/**
 * Whether a hook with `matcher` fires for `toolName`: no matcher matches everything; otherwise the
 * regex must match the whole name (Python's `re.fullmatch`), and a regex that does not compile is
 * compared literally.
 */
export function matchesTool(matcher: string | undefined, toolName: string | undefined): boolean {
  if (!matcher) return true;
  if (toolName === undefined) return false;
  let pattern: RegExp;
  try {
    pattern = new RegExp(`^(?:${matcher})$`, "u");
  } catch {
    return toolName === matcher;
  }
  return pattern.test(toolName);
}

/** `"source"` of a spec on the hook bus and in messages. */
export function specLabel(spec: ShellHookSpec): string {
  return `shell hook ${spec.event}[${spec.index}] (${spec.command})`;
}

function closest(name: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const c of candidates) {
    const d = editDistance(name, c);
    if (!best || d < best.d) best = { name: c, d };
  }
  return best && best.d <= Math.max(2, Math.floor(name.length / 3)) ? best.name : undefined;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "a mapping" : `${typeof value} ${JSON.stringify(value)}`;
}
