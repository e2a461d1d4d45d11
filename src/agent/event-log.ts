/**
 * The agent's side of the log files: one listener on the agent's event stream that turns events
 * into log lines (component `agent`). Surfaces attach it through `ChatSession`'s `logger` option;
 * nothing in the loop calls the logger itself.
 *
 * At INFO: session start (model, provider, tool count), each tool call (name, duration, ok; the
 * error for a failed one), approvals with their reason and decision, subagents, compression and
 * the end of each turn. Warnings (retries, fallbacks, cut-off replies) at WARNING, provider and
 * turn errors at ERROR, so both reach errors.log. Argument previews, model calls and usage only
 * at DEBUG. Streamed text and message contents are never logged.
 */
import type { Logger } from "../util/log.js";
import type { AgentEvent, AgentEventListener } from "./events.js";
import { previewArgs } from "./tool-display.js";

export interface EventLogOptions {
  /** The session the listener starts in (switched on `compression`). */
  sessionId: string;
  /** The provider's name for the session-start line. */
  provider?: string | undefined;
}

/** Text of a failed tool's result, for the log: the `error` field of a JSON result, else the text. */
function failureText(result: string): string {
  try {
    const parsed = JSON.parse(result) as unknown;
    if (parsed && typeof parsed === "object" && typeof (parsed as { error?: unknown }).error === "string")
      return (parsed as { error: string }).error;
  } catch {
    // Not JSON: the text itself.
  }
  return result;
}

/** A listener that writes one line per meaningful event to `logger` (see the module comment). */
export function agentEventLogger(logger: Logger, options: EventLogOptions): AgentEventListener {
  let log = logger.child({ component: "agent", sessionId: options.sessionId });
  return (event: AgentEvent) => {
    switch (event.type) {
      case "session_start":
        log.info("session start", {
          model: event.model,
          provider: options.provider || undefined,
          tools: event.tools.length,
        });
        break;
      case "turn_start":
        log.debug("model call", { iteration: event.iteration });
        break;
      case "tool_start":
        if (log.enabled("DEBUG"))
          log.debug("tool start", {
            tool: event.name,
            call: event.callId,
            parent: event.parentCallId,
            args: previewArgs(event.name, event.args, 10_000),
          });
        break;
      case "tool_end":
        log.info("tool call", {
          tool: event.name,
          call: event.callId,
          parent: event.parentCallId,
          ms: event.durationMs,
          ok: event.ok,
          error: event.ok ? undefined : failureText(event.result),
        });
        break;
      case "approval": {
        const extras = {
          tool: event.name,
          call: event.callId,
          reason: event.reason,
          decision: event.decision,
          denial: event.denial,
          waited_ms: event.waitedMs,
          command: event.command,
        };
        if (event.decision === "deny") log.warning("approval denied", extras);
        else log.info("approval granted", extras);
        break;
      }
      case "subagent":
        if (event.state === "progress") break;
        log.info(`subagent ${event.state}`, {
          call: event.callId,
          index: event.index,
          status: event.state === "end" ? event.detail : undefined,
          ms: event.durationMs,
          iterations: event.iterations,
        });
        break;
      case "compression":
        log.info("compression", {
          tokens_before: event.tokensBefore,
          tokens_after: event.tokensAfter,
          child_session: event.childSessionId,
        });
        log = log.child({ sessionId: event.childSessionId });
        break;
      case "usage":
        log.debug("usage", {
          input_tokens: event.usage.inputTokens,
          output_tokens: event.usage.outputTokens,
          cache_read_tokens: event.usage.cacheReadTokens,
        });
        break;
      case "warning":
        log.warning(event.message);
        break;
      case "retry":
        log.warning(event.message, {
          reason: event.reason,
          status: event.status,
          delay_ms: event.delayMs,
          attempt: event.attempt,
          attempts: event.attempts,
        });
        break;
      case "error":
        log.error(event.message);
        break;
      case "done":
        log.info("turn end", {
          reason: event.reason,
          iterations: event.iterations,
          input_tokens: event.usage.inputTokens,
          output_tokens: event.usage.outputTokens,
        });
        break;
      default:
        break;
    }
  };
}
