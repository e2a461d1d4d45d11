/** A message for a conversation whose turn is still running (`display.busy_input_mode`). */
import type { HermesConfig } from "../../config/defaults.js";
import type { InboundMessage } from "../platforms/types.js";
import { busyModeOf } from "./commands.js";
import type { Conversation } from "./router-types.js";

/**
 * `steer`: plain text joins the running turn; otherwise the message waits in the queue, and in
 * `interrupt` mode the turn is stopped so the queue is read next. `say` answers in the chat.
 */
export async function whileBusy(
  conv: Conversation,
  message: InboundMessage,
  config: HermesConfig,
  say: (text: string) => Promise<void>,
): Promise<void> {
  const mode = busyModeOf(config, conv.platform);
  if (mode === "steer" && conv.chat && !message.media?.length && message.text.trim()) {
    conv.chat.steer(message.text.trim());
    await say("↪️ Noted: I'll take that into account in the current task.");
    return;
  }
  conv.queue.push(message);
  if (mode === "interrupt") {
    conv.chat?.interrupt();
    await say("⚡ Interrupting the current task to read your new message.");
  } else {
    await say("📥 Queued: I'll get to it when the current task is done.");
  }
}
