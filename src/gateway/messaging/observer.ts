/**
 * What the router tells an observer (the control socket's event log and status): messages in from
 * authorized users and answers out, turns starting and ending, approvals asked and answered. The
 * observer must not throw and must not block: it is called on the router's hot path.
 */
import type { ApprovalObserver } from "./approvals.js";

/** Where a message was (an inbound `MessageSource` or an outbound target with its platform). */
export interface ObservedChat {
  platform: string;
  chatId: string;
  threadId?: string | undefined;
  userId?: string | undefined;
}

export interface ObservedDetails {
  /** The conversation; absent for a delivery without one (cron output, `messages.send`). */
  sessionKey?: string | undefined;
  sessionId?: string | undefined;
  messageId?: string | undefined;
  /** How an outbound text left: `deliver` (cron, webhooks, the control socket); absent for answers. */
  via?: string | undefined;
}

export interface RouterObserver extends ApprovalObserver {
  message(direction: "in" | "out", chat: ObservedChat, text: string, details: ObservedDetails): void;
  /** A conversation's turns started (`running`) or it went idle again. */
  turn(sessionKey: string, chat: ObservedChat, running: boolean): void;
}
