/**
 * What the Telegram emulator (telegram-emulator.ts) keeps: its chats, what the bot sent, stored
 * files, the calls made and the failures queued, and the bookkeeping shared by its Bot API
 * methods (telegram-emulator-methods.ts), its update feed (telegram-emulator-updates.ts) and its
 * user-side clients (telegram-emulator-client.ts).
 */
import { EventEmitter } from "node:events";
import type { ClientContext } from "./telegram-emulator-client.js";
import type { BotApiError, BotMessage, EmulatorCore, StoredFile, TgChat } from "./telegram-emulator-types.js";
import { badRequest, type Params } from "./telegram-emulator-wire.js";

/** The bot's own user, as getMe and the bot's messages show it. */
export interface BotUser {
  id: number;
  is_bot: true;
  first_name: string;
  username: string;
}

export interface EmulatorState extends ClientContext {
  bot: BotUser;
  /** Emits "change" whenever something a waiter or a long poll looks at changed. */
  changes: EventEmitter;
  chats: Map<string, TgChat>;
  files: Map<string, StoredFile>;
  callLog: Array<{ method: string; params: Params }>;
  failures: Map<string, BotApiError[]>;
  answers: Array<{ callback_query_id: string; text?: string; show_alert?: boolean }>;
  actions: Array<{ chat_id: string; action: string; message_thread_id?: number }>;
  /** Callback query ids handed to the bot (only those may be answered). */
  issuedQueries: Set<string>;
  /** The update kind (`edited_message`, ...) of a carrier sent with `sendUpdate`. */
  updateKinds: WeakMap<object, string>;
  commands: Array<{ command: string; description: string }>;
  allowedUpdates: string[] | undefined;
  /** The getUpdates call waiting now, if any, and how many are waiting. */
  poll: { finish: (conflict: boolean) => void } | undefined;
  pollCount: number;
  chatCounter: number;
  wake(): void;
  chatFor(chatId: unknown): TgChat;
  findSent(chatId: unknown, messageId: unknown): BotMessage | undefined;
  checkReply(chatId: unknown, params: Params): void;
  /** Stores a message the bot sent with `method` and answers it as the Bot API returns it. */
  record(method: string, params: Params, extra: Partial<BotMessage>): Record<string, unknown>;
}

export function createEmulatorState(core: EmulatorCore, token: string, bot: BotUser): EmulatorState {
  const changes = new EventEmitter();
  changes.setMaxListeners(0);
  let fileCounter = 0;
  // Injections go one at a time: telegram-test-api bumps its message and callback counters after
  // an await, so two concurrent ones would share an id.
  let injectQueue: Promise<unknown> = Promise.resolve();

  const state: EmulatorState = {
    token,
    core,
    bot,
    changes,
    chats: new Map(),
    sent: [],
    files: new Map(),
    callLog: [],
    failures: new Map(),
    answers: [],
    actions: [],
    issuedQueries: new Set(),
    updateKinds: new WeakMap(),
    commands: [],
    allowedUpdates: undefined,
    poll: undefined,
    pollCount: 0,
    chatCounter: 0,
    wake() {
      changes.emit("change");
    },
    serial<T>(task: () => Promise<T>): Promise<T> {
      const run = injectQueue.then(task);
      injectQueue = run.catch(() => undefined);
      return run;
    },
    storeFile(bytes, fileName, mimeType, kind) {
      fileCounter += 1;
      const ext = /\.[A-Za-z0-9]{1,8}$/.exec(fileName ?? "")?.[0] ?? (kind === "photos" ? ".jpg" : "");
      const file: StoredFile = {
        fileId: `FILE${fileCounter}-${Math.random().toString(36).slice(2, 10)}`,
        uniqueId: `U${fileCounter}`,
        path: `${kind}/file_${fileCounter}${ext}`,
        bytes,
        fileName,
        mimeType,
        size: bytes.length,
      };
      state.files.set(file.fileId, file);
      return file;
    },
    chatFor(chatId) {
      const chat = state.chats.get(String(chatId));
      if (!chat) throw badRequest("chat not found");
      return chat;
    },
    botMessageObject(m) {
      return {
        message_id: m.message_id,
        from: bot,
        chat: state.chats.get(m.chat_id) ?? { id: Number(m.chat_id), type: "private" },
        date: m.date,
        ...(m.text !== undefined ? { text: m.text } : {}),
        ...(m.caption !== undefined ? { caption: m.caption } : {}),
        ...(m.reply_markup ? { reply_markup: m.reply_markup } : {}),
      };
    },
    findSent(chatId, messageId) {
      return state.sent.find((m) => m.chat_id === String(chatId) && m.message_id === Number(messageId));
    },
    checkReply(chatId, params) {
      const reply = params.reply_parameters as {
        message_id?: unknown;
        allow_sending_without_reply?: unknown;
      };
      if (!reply) return;
      const id = Number(reply.message_id);
      if (!messageExists(chatId, id) && reply.allow_sending_without_reply !== true) {
        throw badRequest("message to be replied not found");
      }
    },
    record(method, params, extra) {
      const chat = state.chatFor(params.chat_id);
      const stored = core.addBotMessage({ ...params, chat_id: chat.id }, token);
      const message: BotMessage = {
        method,
        message_id: stored.message_id,
        chat_id: String(chat.id),
        parse_mode: params.parse_mode as string | undefined,
        reply_markup: params.reply_markup as BotMessage["reply_markup"],
        message_thread_id:
          params.message_thread_id === undefined ? undefined : Number(params.message_thread_id),
        reply_parameters: params.reply_parameters as BotMessage["reply_parameters"],
        edits: 0,
        date: Math.floor(Date.now() / 1000),
        ...extra,
      };
      state.sent.push(message);
      state.wake();
      return {
        ...state.botMessageObject(message),
        ...(message.message_thread_id
          ? { message_thread_id: message.message_thread_id, is_topic_message: true }
          : {}),
      };
    },
  };

  function messageExists(chatId: unknown, messageId: number): boolean {
    if (state.findSent(chatId, messageId)) return true;
    return core.storage.userMessages.some(
      (u) =>
        u.messageId === messageId &&
        String((u.message?.chat as { id?: unknown } | undefined)?.id) === String(chatId),
    );
  }

  return state;
}
