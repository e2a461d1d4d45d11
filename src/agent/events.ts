/**
 * The one typed event stream every consumer reads: the CLI renderer, session persistence, the
 * gateway, ACP and the API server. Events arrive in order; `done` is always last.
 */
import type { FailoverReason } from "../ai/error-types.js";
import type { FinishReason, Message, Usage } from "../ai/types.js";
import type { ApprovalDecision } from "../tools/types.js";

export type StopReason = "completed" | "max_turns" | "interrupted" | "error" | "guardrail";

export type AgentEvent =
  /**
   * The session's frozen state is ready (first turn only): the exact system prompt and tool names
   * every request of this session will carry. Session persistence creates its row here.
   */
  | { type: "session_start"; sessionId: string; model: string; systemPrompt: string; tools: string[] }
  /** A model call starts. `iteration` counts model calls in this user turn, from 1. */
  | { type: "turn_start"; iteration: number }
  | { type: "text_delta"; text: string }
  /**
   * The model call's current attempt failed (dropped, stalled, errored) after streaming `text`
   * (possibly "", when only tool-call fragments came): that text is not the answer. The call is
   * retried or the turn fails next. A consumer that showed the text must mark it as abandoned or
   * take it back; one that held it drops it.
   */
  | { type: "stream_discarded"; text: string; reason: string }
  | { type: "reasoning_delta"; text: string }
  /**
   * A tool call starts. `parentCallId` marks a nested call made by another tool (a script of
   * `execute_code`): shown and logged, never part of the model's context.
   */
  | {
      type: "tool_start";
      callId: string;
      name: string;
      args: Record<string, unknown>;
      parentCallId?: string;
    }
  | { type: "tool_progress"; callId: string; name: string; message: string }
  /**
   * Output a running command printed (the terminal tool), redacted, in whole lines (`\n` or `\r`
   * ended, the ending kept), for a surface to show live. Never part of the model's context: the
   * tool's result carries the output the model reads.
   */
  | { type: "tool_output"; callId: string; name: string; text: string }
  /**
   * Tool call `callId` asked to run a dangerous action and got `decision` (from the user, an
   * earlier "session"/"always" answer, the allowlist, yolo, or "deny" when no one could be asked)
   * after `waitedMs`. `reason` says why it needed approval; `denial`, why the policy refused it
   * (timed out, smart mode, nobody to ask...). For logs and audit; not shown.
   */
  | {
      type: "approval";
      callId: string;
      name: string;
      command: string;
      reason: string;
      decision: ApprovalDecision;
      denial?: string;
      waitedMs: number;
    }
  | {
      type: "tool_end";
      callId: string;
      name: string;
      parentCallId?: string;
      ok: boolean;
      /** What the model sees. */
      result: string;
      durationMs: number;
    }
  /**
   * A message was appended to the conversation (user, assistant or tool): persist it.
   * `withResults`: an assistant message whose tool calls change nothing outside the session; it may
   * be stored with their results, in one commit, once they are all in (still before the next step).
   */
  | { type: "message"; message: Message; withResults?: true }
  /**
   * Token usage of one model call. `billing` is set when a fallback provider answered, so the
   * usage is priced as that provider's model rather than the session's.
   */
  | {
      type: "usage";
      usage: Usage;
      total: Usage;
      billing?: { model: string; provider?: string; baseUrl?: string };
    }
  | { type: "turn_end"; iteration: number; finishReason: FinishReason }
  | { type: "warning"; message: string }
  /**
   * A failed model call will be repeated after `delayMs`: said before the wait starts, so the user
   * always sees why nothing happens. `message` is the line to show ("rate limited by openrouter
   * (429); retrying in 1.6 s (attempt 2 of 4)"); `attempt` is the attempt about to be made, of
   * `attempts` this failure may get. Surfaces show it even when they hide warnings.
   */
  | {
      type: "retry";
      message: string;
      reason: FailoverReason;
      delayMs: number;
      attempt: number;
      attempts: number;
      status?: number;
      provider?: string;
    }
  /**
   * The conversation was compressed: it continues as a child session (`parent_session_id` =
   * `sessionId`) holding `messages`, the compressed history. The parent keeps every message.
   */
  | {
      type: "compression";
      sessionId: string;
      childSessionId: string;
      messages: Message[];
      tokensBefore: number;
      tokensAfter: number;
    }
  /**
   * A subagent of `delegate_task` call `callId` started, moved on (`detail`: the tool it runs, or
   * "thinking") or ended (`detail`: its status). Child events themselves stay in the child.
   */
  | {
      type: "subagent";
      callId: string;
      index: number;
      goal: string;
      state: "start" | "progress" | "end";
      detail: string;
      durationMs?: number;
      iterations?: number;
    }
  | { type: "error"; message: string }
  | {
      type: "done";
      reason: StopReason;
      /** The final assistant text ("" when the turn ended without one). */
      text: string;
      iterations: number;
      usage: Usage;
    };

/**
 * A consumer of a turn's events, called synchronously as each happens. One that stores what it sees
 * (the session recorder) returns a promise for that work: the turn's `result` settles only after
 * every such promise has, so what a finished turn said is in the store when the caller looks.
 */
export type AgentEventListener = (event: AgentEvent) => unknown;
