/**
 * The Telegram emulator's shapes (test/support/telegram-emulator.ts): users, chats, the bot's
 * messages and files as a test reads them, the emulator and its user-side client, the parts of
 * telegram-test-api it drives, and the Bot API limits it enforces.
 */
import type { EventEmitter } from "node:events";
import type { RequestListener } from "node:http";
import type { TelegramServer } from "telegram-test-api/lib/telegramServer.js";

export interface TgUser {
  id: number;
  is_bot: boolean;
  first_name: string;
  username?: string;
}

export interface TgChat {
  id: number;
  type: "private" | "group" | "supergroup" | "channel";
  title?: string;
  username?: string;
  first_name?: string;
  is_forum?: true;
}

export interface InlineButton {
  text: string;
  callback_data?: string;
  url?: string;
}

/** A file the bot uploaded, as the emulator stored it. */
export interface BotFile {
  fileId: string;
  fileName?: string | undefined;
  mimeType?: string | undefined;
  bytes: Buffer;
}

/** One message the bot sent, as it stands now (edits applied). */
export interface BotMessage {
  method: string;
  message_id: number;
  chat_id: string;
  /** The text as sent, markup included (compare with `parse_mode`). */
  text?: string | undefined;
  caption?: string | undefined;
  parse_mode?: string | undefined;
  reply_markup?: { inline_keyboard?: InlineButton[][] } | undefined;
  message_thread_id?: number | undefined;
  reply_parameters?: { message_id: number; allow_sending_without_reply?: boolean } | undefined;
  file?: BotFile | undefined;
  /** How many times editMessageText changed it. */
  edits: number;
  date: number;
}

export interface SentUserMessage {
  message_id: number;
  update_id: number;
  /** The Message object the bot receives. */
  message: Record<string, unknown>;
}

export interface UserFileOptions {
  fileName?: string;
  mimeType?: string;
  caption?: string;
  threadId?: number;
  /** `file_size` to report instead of the real one (a "huge" file without allocating it). */
  declaredSize?: number;
  /**
   * Leave `file_size` out, as Telegram sometimes does; the download then also comes without a
   * Content-Length (chunked), so only a cap applied while streaming can stop an oversized file.
   */
  omitSize?: boolean;
}

export interface EmulatorClient {
  readonly user: TgUser;
  readonly chat: TgChat;
  /** Sends text; `mention` and `bot_command` entities are computed as Telegram does. */
  sendText(
    text: string,
    options?: { replyTo?: BotMessage | number; threadId?: number; extra?: Record<string, unknown> },
  ): Promise<SentUserMessage>;
  sendPhoto(bytes: Buffer, options?: UserFileOptions): Promise<SentUserMessage>;
  sendDocument(bytes: Buffer, options?: UserFileOptions): Promise<SentUserMessage>;
  sendVoice(bytes: Buffer, options?: UserFileOptions): Promise<SentUserMessage>;
  /** A message with arbitrary fields over the usual from/chat/date (stickers, service messages). */
  sendRaw(fields: Record<string, unknown>): Promise<SentUserMessage>;
  /** Presses the inline button with `data` on a bot message; returns the callback query id. */
  press(message: BotMessage, data: string): Promise<string>;
}

export interface ClientOptions {
  userId?: number;
  username?: string;
  firstName?: string;
  /** Omitted: a private chat with the user. */
  chat?: { id?: number; type: "group" | "supergroup" | "channel"; title?: string; isForum?: boolean };
}

export interface BotApiError {
  error_code: number;
  description: string;
  retry_after?: number;
}

export interface TelegramEmulator {
  /** Pass as grammy's `client.apiRoot` (no trailing slash). */
  readonly apiRoot: string;
  readonly token: string;
  readonly bot: TgUser & { username: string };
  /** The wrapped telegram-test-api instance. */
  readonly server: TelegramServer;
  client(options?: ClientOptions): EmulatorClient;
  /** Queues a raw update of any type (`{edited_message: ...}`, `{channel_post: ...}`); returns its id. */
  sendUpdate(update: Record<string, unknown>): Promise<number>;
  botMessages(chatId?: number | string): BotMessage[];
  waitForBotMessage(predicate?: (m: BotMessage) => boolean, timeoutMs?: number): Promise<BotMessage>;
  /**
   * Returns a function that waits for the first bot message sent after this call (to `chatId` if
   * given): `const next = tg.nextBotMessage("42"); await user.sendText("hi"); const reply = await next();`
   */
  nextBotMessage(chatId?: number | string): (timeoutMs?: number) => Promise<BotMessage>;
  callbackAnswers(): Array<{ callback_query_id: string; text?: string; show_alert?: boolean }>;
  chatActions(): Array<{ chat_id: string; action: string; message_thread_id?: number }>;
  commands(): Array<{ command: string; description: string }>;
  /** Every Bot API call the emulator answered, oldest first. */
  calls(method?: string): Array<{ method: string; params: Record<string, unknown> }>;
  /** Updates queued and not yet confirmed by an `offset`. */
  pendingUpdates(): number;
  /** getUpdates requests waiting right now. */
  activePolls(): number;
  /** The next call of `method` fails with this Bot API error. */
  failNext(method: string, error: BotApiError): void;
  /** Registers a file users can send; returns its file_id. */
  addFile(bytes: Buffer, options?: { fileName?: string; mimeType?: string; declaredSize?: number }): string;
  /** Polls `probe` until it returns something other than undefined/false. */
  waitFor<T>(probe: () => T | undefined | false, options?: { timeoutMs?: number; what?: string }): Promise<T>;
  stop(): Promise<void>;
}

export interface EmulatorOptions {
  token?: string;
  botUsername?: string;
  botId?: number;
}

/** The parts of telegram-test-api this wrapper uses (its typings reference a package not installed). */
export interface StoredUpdate {
  updateId: number;
  messageId: number;
  botToken: string;
  isRead: boolean;
  message?: Record<string, unknown>;
  callbackQuery?: Record<string, unknown>;
  callbackId?: number;
}
export interface EmulatorCore extends EventEmitter {
  webServer: RequestListener;
  config: { apiURL: string };
  storage: { userMessages: StoredUpdate[]; botMessages: Array<{ messageId: number; message: unknown }> };
  addBotMessage(message: Record<string, unknown>, token: string): { message_id: number };
  addUserMessage(message: Record<string, unknown>): Promise<void>;
  addUserCallback(query: Record<string, unknown>): Promise<void>;
}

export interface StoredFile {
  /** Served chunked, without Content-Length. */
  unsized?: boolean;
  fileId: string;
  uniqueId: string;
  path: string;
  bytes: Buffer;
  fileName?: string | undefined;
  mimeType?: string | undefined;
  size: number;
}

export const MAX_TEXT = 4096;
export const MAX_CAPTION = 1024;
export const MAX_DOWNLOAD = 20 * 1024 * 1024;
export const CHAT_ACTIONS = new Set([
  ..."typing upload_photo record_video upload_video record_voice upload_voice upload_document".split(" "),
  ..."choose_sticker find_location record_video_note upload_video_note".split(" "),
]);
export const MEDIA_FIELD: Record<string, string> = {
  sendphoto: "photo",
  senddocument: "document",
  sendvoice: "voice",
  sendaudio: "audio",
  sendvideo: "video",
};
export const DELEGATED_METHODS = new Set(
  "deletewebhook setwebhook deletemessage editmessagereplymarkup".split(" "),
);
