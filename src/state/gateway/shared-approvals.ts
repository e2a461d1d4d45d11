/**
 * What several gateway instances share about approvals and per-chat toggles (PostgreSQL homes).
 * With SQLite there is one gateway and neither store exists: its control socket lists what its own
 * router waits for, and a chat's `/verbose` and `/yolo` live in that process's memory as before.
 *
 * - **Pending approvals**: each instance records the dangerous commands its running turns wait on,
 *   so any instance's control socket, `hermes gateway status`, `hermes mcp serve` and the
 *   dashboard list them all. An answer given away from the chat is recorded on the approval's row
 *   and carried out by the instance whose turn waits on it (it is told at once when the answer came
 *   through another instance, and it checks its rows while any are pending, so nothing depends on
 *   one notification arriving).
 * - **Chat settings**: what `/verbose`, `/yolo` and `/voice` chose in a chat, read before each turn
 *   and command and written after a command changed them, so they hold on whichever instance takes
 *   the chat's next message.
 */
import type { ApprovalAnswer, ApprovalInfo } from "../gateway-control.js";

/** A pending approval as every instance lists it: which instance runs the turn that waits. */
export interface SharedApprovalInfo extends ApprovalInfo {
  instance: string;
}

/** An answer recorded for one of this instance's approvals, to be carried out by it. */
export interface RecordedAnswer {
  id: string;
  decision: ApprovalAnswer;
  by: string;
}

/** Why an answer was refused: the id is unknown or expired, or the decision is not allowed. */
export class ApprovalAnswerError extends Error {
  override name = "ApprovalAnswerError";
}

export interface PendingApprovalRecords {
  /** Records an approval `instance` waits on (its id is unique within the instance). */
  add(instance: string, approval: ApprovalInfo): Promise<void>;
  /** Forgets it (answered, timed out, stopped). Idempotent. */
  remove(instance: string, id: string): Promise<void>;
  /**
   * Every approval a live instance waits on that is neither expired nor answered yet, oldest
   * first. Instances whose heartbeat stopped are left out: their turns are gone.
   */
  list(): Promise<SharedApprovalInfo[]>;
  /**
   * Records `decision` for the approval `id` and names the instance that must carry it out.
   * Throws `ApprovalAnswerError` when no live, unexpired, unanswered approval has that id, or when
   * the approval touches a protected path and the decision is not `deny` (only the chat's user
   * approves those, in the chat).
   */
  answer(id: string, decision: ApprovalAnswer, by: string): Promise<{ instance: string }>;
  /** Answers recorded for `instance`'s approvals and not carried out yet. */
  answers(instance: string): Promise<RecordedAnswer[]>;
  /** Forgets every approval of `instance` (it stops). */
  clear(instance: string): Promise<void>;
}

/** The per-chat toggles as stored: only the fields a command changed, validated on read. */
export interface StoredChatSettings {
  toolProgress?: string;
  yolo?: boolean;
  /** `/voice`'s mode, when `get` was asked for it (kept apart, per `platform:chat_id`). */
  voice?: string;
}

export interface ChatSettingsRecords {
  /**
   * The chat's stored toggles, with its `/voice` mode when `voiceChat` (`platform:chat_id`) is
   * given, in one round trip (read before every turn); undefined when none was ever set.
   */
  get(sessionKey: string, voiceChat?: string): Promise<StoredChatSettings | undefined>;
  set(sessionKey: string, settings: StoredChatSettings): Promise<void>;
  /** `/voice`'s mode of a chat (`platform:chat_id`); undefined when none was chosen there. */
  voiceMode(chat: string): Promise<string | undefined>;
  setVoiceMode(chat: string, mode: string): Promise<void>;
}
