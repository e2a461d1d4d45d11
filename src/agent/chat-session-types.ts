/**
 * The public types of `ChatSession` (chat-session.ts): how one is opened, and its usage report.
 */
import type { CostStatus } from "../ai/pricing.js";
import type { Usage } from "../ai/types.js";
import type { SessionSource, SessionStore } from "../state/types.js";
import type { Logger } from "../util/log.js";
import type { AIAgentOptions } from "./agent-types.js";
import type { MemoryHook } from "./memory-provider-hook.js";

export interface ChatSessionOptions
  extends Omit<AIAgentOptions, "sessionId" | "messages" | "systemPrompt" | "runtime" | "memory"> {
  /** Where sessions are recorded; `null` or absent keeps the conversation in memory only. */
  store?: SessionStore | null;
  /** Default `cli`. */
  source?: SessionSource;
  /**
   * The chat user the conversation belongs to (recorded as `sessions.user_id`): a chat's
   * `/sessions` and `/resume` offer only that user's sessions.
   */
  userId?: string;
  /** `-r`: a session id, id prefix or title. */
  resume?: string;
  /** `-c`: the latest session of this source, or the latest of a title's lineage. */
  continueLast?: boolean | string;
  /** Title for a new session. */
  title?: string;
  /**
   * The id of a new session (without `resume`/`continueLast`): a server that told the client the id
   * before the turn started (the API server) names it. The row is created when the session starts,
   * as for any new session; the caller makes sure no stored session has the id.
   */
  newSessionId?: string;
  /** Recording problems (a locked or full database): reported, never fatal to the conversation. */
  onWarning?: (message: string) => void;
  /**
   * After the first exchange of a new untitled session, ask the auxiliary model
   * (`auxiliary.title_generation`) for a title in the background. For interactive surfaces; a
   * one-shot run would have to wait for it.
   */
  autoTitle?: boolean;
  /** The memory provider: default, config.yaml's `memory.provider` (when on); `false`: none. */
  memory?: MemoryHook | false;
  /**
   * The home's log files: each agent of this conversation gets one event listener writing to it
   * (see agent/event-log.ts), and session ends and recording problems are logged. Absent: no logs.
   */
  logger?: Logger;
  /** One line after a background review saved something (with `display.memory_notifications` on). */
  onLearned?: (line: string) => void;
  /** Hold due background reviews until `releaseReviews()` (the gateway: once the reply is sent). */
  holdReviews?: boolean;
}

export interface UsageReport {
  model: string;
  usage: Usage;
  apiCalls: number;
  /** USD so far (recorded sessions: across resumes); null when no price is known. */
  costUsd: number | null;
  /**
   * How `costUsd` was arrived at: `estimated` from list prices, `included` (not billed per token:
   * a subscription or a local model), `unknown` (some usage had no known price, so a non-null
   * `costUsd` is a floor), `actual`; null before any usage.
   */
  costStatus?: CostStatus | null;
  /** Tokens in the last request (prompt plus reply): how full the context is. */
  contextTokens: number;
  contextLength: number | null;
}
