/**
 * The gateway's live state as the control socket reports it: platforms and their connection state,
 * running turns, and the event log. The runner tells it about platforms; the router (as its
 * `RouterObserver`) about messages, turns and approvals. Pure bookkeeping: no I/O.
 */
import type { PlatformStatus, RunningTurn } from "../../state/gateway-control.js";
import type { ApprovalDecision } from "../../tools/types.js";
import type { PendingApproval } from "../messaging/approvals.js";
import type { ObservedChat, ObservedDetails, RouterObserver } from "../messaging/observer.js";
import { GatewayEventLog } from "./events.js";

export class GatewayControlState implements RouterObserver {
  readonly events: GatewayEventLog;
  readonly startedAt: Date;
  private readonly platforms = new Map<string, PlatformStatus>();
  private readonly turns = new Map<string, RunningTurn>();
  /** The stored session each conversation last talked in (a turn's `session_id`). */
  private readonly sessionIds = new Map<string, string>();

  constructor(
    private readonly now: () => Date = () => new Date(),
    capacity?: number,
  ) {
    this.events = new GatewayEventLog(capacity, now);
    this.startedAt = now();
  }

  platformUp(name: string): void {
    this.platforms.set(name, { name, state: "connected", since: this.now().toISOString() });
    this.events.push("platform_up", { platform: name });
  }

  platformFailed(name: string, error: string): void {
    this.platforms.set(name, { name, state: "failed", error, since: this.now().toISOString() });
    this.events.push("platform_down", { platform: name, error });
  }

  platformDown(name: string): void {
    this.platforms.set(name, { name, state: "disconnected", since: this.now().toISOString() });
    this.events.push("platform_down", { platform: name });
  }

  platformList(): PlatformStatus[] {
    return [...this.platforms.values()];
  }

  runningTurns(): RunningTurn[] {
    return [...this.turns.values()];
  }

  message(direction: "in" | "out", chat: ObservedChat, text: string, details: ObservedDetails): void {
    if (details.sessionKey && details.sessionId) {
      this.sessionIds.set(details.sessionKey, details.sessionId);
      const turn = this.turns.get(details.sessionKey);
      if (turn) turn.session_id = details.sessionId;
    }
    this.events.push("message", {
      ...(details.sessionKey ? { session_key: details.sessionKey } : {}),
      platform: chat.platform,
      direction,
      role: direction === "in" ? "user" : "assistant",
      chat_id: chat.chatId,
      ...(chat.threadId ? { thread_id: chat.threadId } : {}),
      ...(direction === "in" && chat.userId ? { user_id: chat.userId } : {}),
      ...(details.sessionId ? { session_id: details.sessionId } : {}),
      ...(details.messageId ? { message_id: details.messageId } : {}),
      ...(details.via ? { via: details.via } : {}),
      content: text,
    });
  }

  turn(sessionKey: string, chat: ObservedChat, running: boolean): void {
    if (!running) {
      this.turns.delete(sessionKey);
      return;
    }
    this.turns.set(sessionKey, {
      session_key: sessionKey,
      session_id: this.sessionIds.get(sessionKey) ?? null,
      platform: chat.platform,
      chat_id: chat.chatId,
      started_at: this.now().toISOString(),
    });
  }

  requested(approval: PendingApproval): void {
    this.events.push("approval_requested", approvalFields(approval));
  }

  resolved(approval: PendingApproval, decision: ApprovalDecision, by: string): void {
    this.events.push("approval_resolved", {
      session_key: approval.sessionKey,
      platform: approval.platform,
      chat_id: approval.chatId,
      approval_id: approval.id,
      decision,
      by,
    });
  }
}

/** A pending approval as the socket and its events show it. */
export function approvalFields(approval: PendingApproval) {
  return {
    id: approval.id,
    approval_id: approval.id,
    session_key: approval.sessionKey,
    platform: approval.platform,
    chat_id: approval.chatId,
    user_id: approval.userId,
    command: approval.request.command,
    reason: approval.request.reason,
    protected_path: approval.request.protectedPath === true,
    created_at: approval.createdAt.toISOString(),
    expires_at: approval.expiresAt.toISOString(),
  };
}
