/**
 * When the router is done with a message from a shared update feed (`InboundMessage.receipt`,
 * several instances over PostgreSQL): the point is the end of the turn that answers it, not the
 * moment its text is stored, because an instance killed mid-turn leaves the user without an
 * answer, and the feed's next holder must hand the message on again then. A message answered
 * without a turn (refused, a command, an approval reply, passed to the instance running its
 * chat) is done when the router returns from it; one waiting in a chat's queue is done with the
 * turn that reads it.
 */
import type { ChatSession } from "../../agent/chat-session.js";
import { type Message, messageText } from "../../ai/types.js";
import type { InboundMessage } from "../platforms/types.js";
import type { Conversation } from "./router-types.js";

/** The router finished with these messages. */
export function settle(messages: Iterable<InboundMessage>): void {
  for (const message of messages) void message.receipt?.done();
}

/** How long an answer waits for its messages to be recorded done before it is sent anyway. */
const RECORD_WAIT_MS = 2_000;

/**
 * The turn's answer is stored: its messages are done, recorded before the answer is sent, so an
 * instance killed once the user has the answer never has the message handed on again.
 */
export async function settleAnswered(batch: readonly InboundMessage[]): Promise<void> {
  const recorded = batch.flatMap((m) => (m.receipt ? [m.receipt.done()] : []));
  if (recorded.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(recorded),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, RECORD_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
}

/** `work` (the router's handling of `message`), then done, unless it waits in a chat's queue for a turn. */
export function settledAfter(
  work: Promise<void>,
  message: InboundMessage,
  conversations: ReadonlyMap<string, Conversation>,
): Promise<void> {
  if (!message.receipt) return work;
  return work.finally(() => {
    for (const conv of conversations.values()) if (conv.queue.includes(message)) return;
    void message.receipt?.done();
  });
}

/**
 * The messages the next turn reads, taken out of `queue`: all of them, except that messages handed
 * on again (their instance died mid-turn) at its head run on their own first, as they would have
 * there: their stored copy is then the session's last user turn, taken back and answered once, and
 * the user gets that answer before the one to what they wrote since.
 */
export function nextBatch(queue: InboundMessage[]): InboundMessage[] {
  const firstFresh = queue.findIndex((m) => !m.receipt?.redelivered);
  return queue.splice(0, firstFresh > 0 ? firstFresh : queue.length);
}

const finalAnswer = (m: Message) =>
  m.role === "assistant" && !m.tool_calls?.length && messageText(m).trim() !== "";

/**
 * A message handed on again because the instance that took it died before its turn ended: that
 * instance may have stored the message, and part of its turn, in the session already. When the
 * session's last user turn carries the message's text and has no answer yet, it is taken back
 * (`undo`: hidden, not deleted) and the turn runs again, so the message is answered once and shows
 * once in the history. When that turn has its answer stored, the dead instance finished it and
 * nothing runs again: answers `"answered"`. Otherwise (it never reached the session) `"run"`.
 */
export async function resumeRedelivered(
  chat: ChatSession,
  batch: readonly InboundMessage[],
): Promise<"run" | "answered"> {
  const again = batch.filter((m) => m.receipt?.redelivered);
  if (again.length === 0) return "run";
  const messages = chat.agent.messages;
  let lastUser = messages.length - 1;
  while (lastUser >= 0 && messages[lastUser]?.role !== "user") lastUser--;
  const stored = lastUser >= 0 ? messageText(messages[lastUser]!) : undefined;
  if (stored === undefined || !again.every((m) => stored.includes(m.text.trim()))) return "run";
  if (messages.slice(lastUser + 1).some(finalAnswer)) return "answered";
  await chat.undo(1);
  return "run";
}
