/** The user side of the Telegram emulator (test/support/telegram-emulator.ts). */

import type {
  BotMessage,
  EmulatorClient,
  EmulatorCore,
  SentUserMessage,
  StoredFile,
  TgChat,
  TgUser,
  UserFileOptions,
} from "./telegram-emulator-types.js";
import { entitiesFor, type Params } from "./telegram-emulator-wire.js";

/** What a user-side client needs of the emulator it belongs to. */
export interface ClientContext {
  token: string;
  core: EmulatorCore;
  serial: <T>(task: () => Promise<T>) => Promise<T>;
  storeFile(
    bytes: Buffer,
    fileName: string | undefined,
    mimeType: string | undefined,
    kind: string,
  ): StoredFile;
  sent: BotMessage[];
  botMessageObject(m: BotMessage): Record<string, unknown>;
}

/** A user in `chat` who sends the bot messages, files and button presses (see TelegramEmulator.client). */
export function makeClient(ctx: ClientContext, user: TgUser, chat: TgChat): EmulatorClient {
  const { token, core, serial, storeFile, sent, botMessageObject } = ctx;
  const base = (): Params => ({
    botToken: token,
    date: Math.floor(Date.now() / 1000),
    ...(chat.type === "channel" ? { sender_chat: chat } : { from: user }),
    chat,
  });
  const threadFields = (threadId: number | undefined): Params => {
    if (threadId === undefined) return {};
    const fields: Params = { message_thread_id: threadId, is_topic_message: true };
    // In a forum every topic message replies to the topic's creation message.
    fields.reply_to_message = {
      message_id: threadId,
      from: user,
      chat,
      date: Math.floor(Date.now() / 1000),
      forum_topic_created: { name: "Topic", icon_color: 7322096 },
    };
    return fields;
  };
  const inject = (message: Params): Promise<SentUserMessage> =>
    serial(async () => {
      await core.addUserMessage(message);
      const stored = core.storage.userMessages.find((u) => u.message === message);
      if (!stored) throw new Error("telegram-test-api did not store the message");
      const { botToken: _token, ...body } = message;
      return { message_id: stored.messageId, update_id: stored.updateId, message: body };
    });
  const fileMessage = (field: string, bytes: Buffer, o: UserFileOptions): Promise<SentUserMessage> => {
    const file = storeFile(bytes, o.fileName, o.mimeType, field === "photo" ? "photos" : `${field}s`);
    if (o.declaredSize !== undefined) file.size = o.declaredSize;
    if (o.omitSize) file.unsized = true;
    const size = o.omitSize ? {} : { file_size: file.size };
    const described = { file_id: file.fileId, file_unique_id: file.uniqueId, ...size };
    let media: unknown;
    if (field === "photo") {
      const thumb = storeFile(Buffer.from("thumbnail"), undefined, undefined, "photos");
      media = [
        { file_id: thumb.fileId, file_unique_id: thumb.uniqueId, file_size: 9, width: 90, height: 51 },
        { ...described, width: 1280, height: 720 },
      ];
    } else {
      media = {
        ...described,
        ...(o.fileName ? { file_name: o.fileName } : {}),
        ...(o.mimeType ? { mime_type: o.mimeType } : {}),
        ...(field === "voice" ? { duration: 1 } : {}),
      };
    }
    return inject({
      ...base(),
      ...threadFields(o.threadId),
      [field]: media,
      ...(o.caption !== undefined ? { caption: o.caption, caption_entities: entitiesFor(o.caption) } : {}),
    });
  };
  return {
    user,
    chat,
    sendText(text, o = {}) {
      const entities = entitiesFor(text);
      let reply: Params = threadFields(o.threadId);
      if (o.replyTo !== undefined) {
        const target =
          typeof o.replyTo === "number" ? sent.find((m) => m.message_id === o.replyTo) : o.replyTo;
        reply = {
          ...reply,
          reply_to_message: target
            ? botMessageObject(target)
            : { message_id: o.replyTo, from: user, chat, date: Math.floor(Date.now() / 1000), text: "" },
        };
      }
      return inject({
        ...base(),
        text,
        ...(entities.length > 0 ? { entities } : {}),
        ...reply,
        ...(o.extra ?? {}),
      });
    },
    sendPhoto: (bytes, o = {}) => fileMessage("photo", bytes, o),
    sendDocument: (bytes, o = {}) => fileMessage("document", bytes, o),
    sendVoice: (bytes, o = {}) => fileMessage("voice", bytes, { mimeType: "audio/ogg", ...o }),
    sendRaw: (fields) => inject({ ...base(), ...fields }),
    press(message, data) {
      const buttons = (message.reply_markup?.inline_keyboard ?? []).flat();
      if (!buttons.some((b) => b.callback_data === data)) {
        throw new Error(`message ${message.message_id} has no inline button with callback_data "${data}"`);
      }
      const query = { botToken: token, date: Math.floor(Date.now() / 1000), from: user, data };
      return serial(async () => {
        const withMessage = { ...query, message: botMessageObject(message) };
        await core.addUserCallback(withMessage);
        const stored = core.storage.userMessages.find((u) => u.callbackQuery === withMessage);
        return String(stored?.callbackId ?? "");
      });
    },
  };
}
