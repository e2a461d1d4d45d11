/** What the model reads for a batch of chat messages: their text, media notes and voice transcripts. */
import type { HermesConfig } from "../../config/defaults.js";
import type { InboundMessage, MessageSource } from "../platforms/types.js";

/**
 * The batch as one user turn. In a shared conversation each message is labelled with its sender;
 * media are named with where they were saved; voice notes get a transcript when `transcribe` gives one.
 */
export async function batchInput(
  batch: readonly InboundMessage[],
  shared: boolean,
  transcribe: (path: string) => Promise<string | undefined>,
): Promise<string> {
  const messages: string[] = [];
  for (const m of batch) {
    const parts: string[] = [];
    const text = m.text.trim();
    if (text) parts.push(shared ? `[${m.source.userName ?? m.source.userId}] ${text}` : text);
    for (const media of m.media ?? []) {
      const what = media.kind === "voice" ? "a voice note" : `a ${media.kind}`;
      parts.push(
        `[The user sent ${what}${media.fileName ? ` (${media.fileName})` : ""}, saved at ${media.path}]`,
      );
      if (media.kind === "voice" || media.kind === "audio") {
        const heard = await transcribe(media.path);
        if (heard) parts.push(`[Transcript: ${heard}]`);
      }
    }
    if (parts.length) messages.push(parts.join("\n"));
  }
  return messages.join("\n\n");
}

/** Speech to text for a voice note (`stt.*`); undefined when none is configured or it fails. */
export async function transcribeVoice(
  path: string,
  options: { config: HermesConfig; env: Readonly<Record<string, string | undefined>>; home: string },
  log: (line: string) => void,
): Promise<string | undefined> {
  const stt = options.config["stt"];
  if (stt && typeof stt === "object" && (stt as Record<string, unknown>)["enabled"] === false)
    return undefined;
  try {
    const { transcribeAudio } = await import("../../tools/media/transcribe.js");
    const result = await transcribeAudio(path, options);
    return result.text.trim() || undefined;
  } catch (error) {
    log(`voice note not transcribed: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/** Whether several people share a conversation (a group without per-user sessions, or a thread). */
export function sharedConversation(source: MessageSource, config: HermesConfig): boolean {
  if (source.chatType === "dm") return false;
  if (source.threadId && config["thread_sessions_per_user"] !== true) return true;
  return config["group_sessions_per_user"] === false;
}
