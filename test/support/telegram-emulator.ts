/**
 * A Telegram Bot API emulator on a free loopback port, for tests that drive a real bot client
 * (grammy) end to end.
 *
 *   const tg = await startTelegramEmulator();
 *   const alice = tg.client({ userId: 42, username: "alice" });          // a DM with the bot
 *   await alice.sendText("hello");                                        // the bot's getUpdates sees it
 *   const reply = await tg.waitForBotMessage((m) => m.chat_id === "42");  // what the bot sent
 *   await alice.press(reply, "approve");                                  // an inline button
 *   await tg.stop();
 *
 * Built on `telegram-test-api` (its update store, user-side message store and routes), wrapped by
 * our own HTTP server because the package lacks what a real bot needs. Added here, speaking the
 * real Bot API shapes (`{ok, result}` / `{ok: false, error_code, description, parameters}` with the
 * HTTP status set to the error code):
 *
 * - token check on every `/bot<token>/...` call: any other token gets 401 Unauthorized;
 * - `getMe` with the configured bot; `getUpdates` with long polling (`timeout`), `offset`
 *   confirmation, `limit`, `allowed_updates`, and 409 Conflict for a poll superseded by another;
 * - `sendMessage` / `editMessageText` that validate `parse_mode: "HTML"` as Telegram does
 *   ("can't parse entities"), the 4096-character limit, unknown chats, reply targets,
 *   "message is not modified", and `callback_data` over 64 bytes;
 * - `sendPhoto`, `sendDocument`, `sendVoice`, `sendAudio`, `sendVideo` (multipart uploads,
 *   `attach://` references, or a known file_id), `getFile` and the `/file/bot<token>/<path>`
 *   download route (20 MB getFile limit, 50 MB upload limit);
 * - `answerCallbackQuery` (unknown query ids refused), `sendChatAction`, `setMyCommands`,
 *   `getMyCommands`, `deleteMyCommands`;
 * - `failNext(method, error)` to make the next call of a method fail with a given Bot API error
 *   (429 with `retry_after`, 5xx during polling, ...).
 *
 * deleteWebhook, setWebhook, deleteMessage and editMessageReplyMarkup go to telegram-test-api's own
 * routes; any other method answers 404 Not Found, as Telegram does.
 */
import { EventEmitter } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { TelegramServer } from "telegram-test-api/lib/telegramServer.js";
import { makeClient } from "./telegram-emulator-client.js";

import {
  type BotApiError,
  type BotMessage,
  CHAT_ACTIONS,
  DELEGATED_METHODS,
  type EmulatorCore,
  type EmulatorOptions,
  MAX_CAPTION,
  MAX_DOWNLOAD,
  MAX_TEXT,
  MEDIA_FIELD,
  type StoredFile,
  type StoredUpdate,
  type TelegramEmulator,
  type TgChat,
  type TgUser,
} from "./telegram-emulator-types.js";
import {
  ApiError,
  badRequest,
  checkMarkup,
  checkText,
  type Params,
  readParams,
  sendJson,
  type Upload,
} from "./telegram-emulator-wire.js";

export type {
  BotApiError,
  BotFile,
  BotMessage,
  ClientOptions,
  EmulatorClient,
  EmulatorOptions,
  InlineButton,
  SentUserMessage,
  TelegramEmulator,
  TgChat,
  TgUser,
  UserFileOptions,
} from "./telegram-emulator-types.js";

export { parseTelegramHtml } from "./telegram-emulator-wire.js";

/** Starts the emulator on 127.0.0.1 and a free port. */
export async function startTelegramEmulator(options: EmulatorOptions = {}): Promise<TelegramEmulator> {
  const token = options.token ?? "123456789:TEST-hermes-telegram-emulator-token";
  const bot = {
    id: options.botId ?? 7000001,
    is_bot: true,
    first_name: "Hermes Test",
    username: options.botUsername ?? "hermes_test_bot",
  };
  const server = new TelegramServer({ host: "127.0.0.1", port: 1, storeTimeout: 3600 });
  const core = server as unknown as EmulatorCore;
  const changes = new EventEmitter();
  changes.setMaxListeners(0);

  const chats = new Map<string, TgChat>();
  const sent: BotMessage[] = [];
  const files = new Map<string, StoredFile>();
  const callLog: Array<{ method: string; params: Params }> = [];
  const failures = new Map<string, BotApiError[]>();
  const answers: Array<{ callback_query_id: string; text?: string; show_alert?: boolean }> = [];
  const actions: Array<{ chat_id: string; action: string; message_thread_id?: number }> = [];
  const issuedQueries = new Set<string>();
  const updateKinds = new WeakMap<object, string>();
  let commands: Array<{ command: string; description: string }> = [];
  let allowedUpdates: string[] | undefined;
  let fileCounter = 0;
  let chatCounter = 0;
  let poll: { finish: (conflict: boolean) => void } | undefined;
  let pollCount = 0;

  const wake = (): void => {
    changes.emit("change");
  };
  for (const event of ["AddedUserMessage", "AddedUserCommand", "AddedUserCallbackQuery"]) {
    core.on(event, wake);
  }

  // Injections go one at a time: telegram-test-api bumps its message and callback counters after
  // an await, so two concurrent ones would share an id.
  let injectQueue: Promise<unknown> = Promise.resolve();
  const serial = <T>(task: () => Promise<T>): Promise<T> => {
    const run = injectQueue.then(task);
    injectQueue = run.catch(() => undefined);
    return run;
  };

  function storeFile(
    bytes: Buffer,
    fileName: string | undefined,
    mimeType: string | undefined,
    kind: string,
  ) {
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
    files.set(file.fileId, file);
    return file;
  }

  function chatFor(chatId: unknown): TgChat {
    const chat = chats.get(String(chatId));
    if (!chat) throw badRequest("chat not found");
    return chat;
  }

  function botMessageObject(m: BotMessage): Record<string, unknown> {
    return {
      message_id: m.message_id,
      from: bot,
      chat: chats.get(m.chat_id) ?? { id: Number(m.chat_id), type: "private" },
      date: m.date,
      ...(m.text !== undefined ? { text: m.text } : {}),
      ...(m.caption !== undefined ? { caption: m.caption } : {}),
      ...(m.reply_markup ? { reply_markup: m.reply_markup } : {}),
    };
  }

  function findSent(chatId: unknown, messageId: unknown): BotMessage | undefined {
    return sent.find((m) => m.chat_id === String(chatId) && m.message_id === Number(messageId));
  }

  function messageExists(chatId: unknown, messageId: number): boolean {
    if (findSent(chatId, messageId)) return true;
    return core.storage.userMessages.some(
      (u) =>
        u.messageId === messageId &&
        String((u.message?.chat as { id?: unknown } | undefined)?.id) === String(chatId),
    );
  }

  function checkReply(chatId: unknown, params: Params): void {
    const reply = params.reply_parameters as { message_id?: unknown; allow_sending_without_reply?: unknown };
    if (!reply) return;
    const id = Number(reply.message_id);
    if (!messageExists(chatId, id) && reply.allow_sending_without_reply !== true) {
      throw badRequest("message to be replied not found");
    }
  }

  function record(method: string, params: Params, extra: Partial<BotMessage>): Record<string, unknown> {
    const chat = chatFor(params.chat_id);
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
    sent.push(message);
    wake();
    return {
      ...botMessageObject(message),
      ...(message.message_thread_id
        ? { message_thread_id: message.message_thread_id, is_topic_message: true }
        : {}),
    };
  }

  function formatUpdate(u: StoredUpdate): Record<string, unknown> {
    if (u.callbackQuery) {
      const id = String(u.callbackId);
      issuedQueries.add(id);
      const q = u.callbackQuery;
      return {
        update_id: u.updateId,
        callback_query: { id, from: q.from, message: q.message, chat_instance: "1", data: q.data },
      };
    }
    const { botToken: _token, ...body } = u.message ?? {};
    const kind = updateKinds.get(u.message ?? {});
    if (kind !== undefined) return { update_id: u.updateId, [kind]: body };
    return { update_id: u.updateId, message: { ...body, message_id: u.messageId } };
  }

  function updateKind(u: StoredUpdate): string {
    return u.callbackQuery ? "callback_query" : (updateKinds.get(u.message ?? {}) ?? "message");
  }

  function pending(offset: number | undefined): StoredUpdate[] {
    return core.storage.userMessages
      .filter((u) => u.botToken === token && !u.isRead && (offset === undefined || u.updateId >= offset))
      .sort((a, b) => a.updateId - b.updateId);
  }

  function confirm(offset: number | undefined): void {
    for (const u of core.storage.userMessages) {
      if (u.botToken !== token) continue;
      if (offset !== undefined && u.updateId < offset) u.isRead = true;
      // Telegram never delivers update types the bot opted out of.
      if (allowedUpdates && allowedUpdates.length > 0 && !allowedUpdates.includes(updateKind(u)))
        u.isRead = true;
    }
  }

  async function getUpdates(params: Params, res: ServerResponse): Promise<unknown> {
    if (Array.isArray(params.allowed_updates)) allowedUpdates = params.allowed_updates as string[];
    const offset = params.offset === undefined ? undefined : Number(params.offset);
    const limit = Math.min(Math.max(Number(params.limit ?? 100) || 100, 1), 100);
    const timeout = Math.max(Number(params.timeout ?? 0) || 0, 0);
    poll?.finish(true);
    poll = undefined;
    confirm(offset);
    if (pending(offset).length === 0 && timeout > 0) {
      const conflict = await new Promise<boolean>((resolve) => {
        pollCount += 1;
        const finish = (isConflict: boolean): void => {
          clearTimeout(timer);
          changes.off("change", onChange);
          res.off("close", onClose);
          if (poll?.finish === finish) poll = undefined;
          pollCount -= 1;
          resolve(isConflict);
        };
        const onChange = (): void => {
          confirm(offset);
          if (pending(offset).length > 0) finish(false);
        };
        const onClose = (): void => finish(false);
        const timer = setTimeout(() => finish(false), timeout * 1000);
        changes.on("change", onChange);
        res.on("close", onClose);
        poll = { finish };
      });
      if (conflict) {
        throw new ApiError(
          409,
          "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running",
        );
      }
    }
    return pending(offset).slice(0, limit).map(formatUpdate);
  }

  function sendMessage(params: Params): unknown {
    chatFor(params.chat_id);
    const text = String(params.text ?? "");
    checkText(text, params.parse_mode, MAX_TEXT, "message");
    checkMarkup(params.reply_markup);
    checkReply(params.chat_id, params);
    return record("sendMessage", params, { text });
  }

  function editMessageText(params: Params): unknown {
    const message = findSent(params.chat_id, params.message_id);
    if (!message) throw badRequest("message to edit not found");
    const text = String(params.text ?? "");
    checkText(text, params.parse_mode, MAX_TEXT, "message");
    const markup = checkMarkup(params.reply_markup);
    if (
      text === message.text &&
      params.parse_mode === message.parse_mode &&
      JSON.stringify(markup) === JSON.stringify(message.reply_markup)
    ) {
      throw badRequest(
        "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
      );
    }
    message.text = text;
    message.parse_mode = params.parse_mode as string | undefined;
    message.reply_markup = markup;
    message.edits += 1;
    wake();
    return { ...botMessageObject(message), edit_date: Math.floor(Date.now() / 1000) };
  }

  function sendMedia(method: string, params: Params, uploads: Map<string, Upload>): unknown {
    const field = MEDIA_FIELD[method.toLowerCase()] ?? "document";
    chatFor(params.chat_id);
    const value = params[field];
    let file: StoredFile | undefined;
    if (typeof value === "string" && value.startsWith("attach://")) {
      const upload = uploads.get(value.slice("attach://".length));
      if (!upload) throw badRequest(`there is no ${field} in the request`);
      file =
        upload.data.length === 0
          ? undefined
          : storeFile(upload.data, upload.filename, undefined, `${field}s`);
      if (!file) throw badRequest("file must be non-empty");
    } else if (uploads.has(field)) {
      const upload = uploads.get(field) as Upload;
      if (upload.data.length === 0) throw badRequest("file must be non-empty");
      file = storeFile(upload.data, upload.filename, undefined, `${field}s`);
    } else if (typeof value === "string" && files.has(value)) {
      file = files.get(value);
    } else if (value === undefined) {
      throw badRequest(`there is no ${field} in the request`);
    } else {
      throw badRequest("wrong file identifier/HTTP URL specified");
    }
    if (!file) throw badRequest(`there is no ${field} in the request`);
    const caption = params.caption === undefined ? undefined : String(params.caption);
    if (caption !== undefined) checkText(caption, params.parse_mode, MAX_CAPTION, "caption");
    checkMarkup(params.reply_markup);
    checkReply(params.chat_id, params);
    const result = record(method, params, {
      caption,
      file: { fileId: file.fileId, fileName: file.fileName, mimeType: file.mimeType, bytes: file.bytes },
    });
    const described = { file_id: file.fileId, file_unique_id: file.uniqueId, file_size: file.size };
    const named = { ...described, ...(file.fileName ? { file_name: file.fileName } : {}) };
    const media: Record<string, unknown> = {
      photo: [{ ...described, width: 1280, height: 720 }],
      document: named,
      voice: { ...described, duration: 1 },
      audio: { ...named, duration: 1 },
      video: { ...named, width: 1280, height: 720, duration: 1 },
    };
    return { ...result, [field]: media[field] };
  }

  function setMyCommands(params: Params): unknown {
    const list = params.commands;
    if (!Array.isArray(list)) throw badRequest('parameter "commands" is required');
    if (list.length > 100) throw badRequest("too many commands");
    for (const c of list as Array<{ command?: unknown; description?: unknown }>) {
      if (typeof c.command !== "string" || !/^[a-z0-9_]{1,32}$/.test(c.command)) {
        throw badRequest("BOT_COMMAND_INVALID");
      }
      if (typeof c.description !== "string" || c.description.length < 1 || c.description.length > 256) {
        throw badRequest("BOT_COMMAND_DESCRIPTION_INVALID");
      }
    }
    commands = (list as Array<{ command: string; description: string }>).map((c) => ({
      command: c.command,
      description: c.description,
    }));
    return true;
  }

  function handleMethod(method: string, params: Params, uploads: Map<string, Upload>, res: ServerResponse) {
    switch (method.toLowerCase()) {
      case "getme":
        return {
          ...bot,
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        };
      case "getupdates":
        return getUpdates(params, res);
      case "sendmessage":
        return sendMessage(params);
      case "editmessagetext":
        return editMessageText(params);
      case "answercallbackquery": {
        const id = String(params.callback_query_id ?? "");
        if (!issuedQueries.has(id)) {
          throw badRequest("query is too old and response timeout expired or query ID is invalid");
        }
        answers.push({
          callback_query_id: id,
          ...(params.text !== undefined ? { text: String(params.text) } : {}),
          ...(params.show_alert !== undefined ? { show_alert: Boolean(params.show_alert) } : {}),
        });
        wake();
        return true;
      }
      case "sendchataction": {
        chatFor(params.chat_id);
        if (!CHAT_ACTIONS.has(String(params.action))) throw badRequest("wrong parameter action in request");
        actions.push({
          chat_id: String(params.chat_id),
          action: String(params.action),
          ...(params.message_thread_id !== undefined
            ? { message_thread_id: Number(params.message_thread_id) }
            : {}),
        });
        wake();
        return true;
      }
      case "setmycommands":
        return setMyCommands(params);
      case "getmycommands":
        return commands;
      case "deletemycommands":
        commands = [];
        return true;
      case "getfile": {
        const file = files.get(String(params.file_id ?? ""));
        if (!file) throw badRequest("invalid file_id");
        if (file.size > MAX_DOWNLOAD) throw badRequest("file is too big");
        return {
          file_id: file.fileId,
          file_unique_id: file.uniqueId,
          ...(file.unsized ? {} : { file_size: file.size }),
          file_path: file.path,
        };
      }
      default:
        if (MEDIA_FIELD[method.toLowerCase()]) return sendMedia(method, params, uploads);
        return undefined;
    }
  }

  const OWN_METHODS = new Set([
    ..."getme getupdates sendmessage editmessagetext answercallbackquery sendchataction".split(" "),
    ..."setmycommands getmycommands deletemycommands getfile".split(" "),
    ...Object.keys(MEDIA_FIELD),
  ]);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const fileRoute = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (fileRoute) {
      const file = [...files.values()].find((f) => f.path === decodeURIComponent(fileRoute[2] ?? ""));
      if (decodeURIComponent(fileRoute[1] ?? "") !== token || !file) {
        sendJson(res, 404, { ok: false, error_code: 404, description: "Not Found" });
        return;
      }
      if (file.unsized) {
        res.writeHead(200, { "content-type": "application/octet-stream" });
        for (let at = 0; at < file.bytes.length; at += 1024) res.write(file.bytes.subarray(at, at + 1024));
        res.end();
        return;
      }
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": file.bytes.length });
      res.end(file.bytes);
      return;
    }
    const botRoute = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (botRoute && decodeURIComponent(botRoute[1] ?? "") !== token) {
      sendJson(res, 401, { ok: false, error_code: 401, description: "Unauthorized" });
      return;
    }
    const method = botRoute?.[2] ?? "";
    if (!botRoute || !OWN_METHODS.has(method.toLowerCase())) {
      // telegram-test-api's own routes; any other method is unknown to Telegram too.
      if (!botRoute || DELEGATED_METHODS.has(method.toLowerCase())) core.webServer(req, res);
      else sendJson(res, 404, { ok: false, error_code: 404, description: "Not Found" });
      return;
    }
    try {
      const { params, uploads } = await readParams(req, url);
      callLog.push({ method, params });
      const queued = failures.get(method.toLowerCase());
      const failure = queued?.shift();
      if (failure) throw new ApiError(failure.error_code, failure.description, failure.retry_after);
      const result = await handleMethod(method, params, uploads, res);
      if (!res.writableEnded && !res.destroyed) sendJson(res, 200, { ok: true, result });
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError(500, `Internal Server Error: ${String(err)}`);
      if (res.writableEnded || res.destroyed) return;
      sendJson(res, e.code, {
        ok: false,
        error_code: e.code,
        description: e.description,
        ...(e.retryAfter !== undefined ? { parameters: { retry_after: e.retryAfter } } : {}),
      });
    }
  }

  const http = createServer((req, res) => {
    void handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (http.address() as AddressInfo).port;
  const apiRoot = `http://127.0.0.1:${port}`;
  core.config.apiURL = apiRoot; // so server.getClient(token) talks to this port too

  const emulator: TelegramEmulator = {
    apiRoot,
    token,
    bot,
    server,
    client(opts = {}) {
      const user: TgUser = {
        id: opts.userId ?? 1001,
        is_bot: false,
        first_name: opts.firstName ?? opts.username ?? "Test",
        ...(opts.username ? { username: opts.username } : {}),
      };
      let chat: TgChat;
      if (opts.chat) {
        chatCounter += 1;
        chat = {
          id: opts.chat.id ?? -(1000000000000 + chatCounter),
          type: opts.chat.type,
          title: opts.chat.title ?? `Test ${opts.chat.type} ${chatCounter}`,
          ...(opts.chat.isForum ? { is_forum: true as const } : {}),
        };
      } else {
        chat = {
          id: user.id,
          type: "private",
          first_name: user.first_name,
          ...(user.username ? { username: user.username } : {}),
        };
      }
      chats.set(String(chat.id), chat);
      return makeClient({ token, core, serial, storeFile, sent, botMessageObject }, user, chat);
    },
    sendUpdate(update) {
      return serial(async () => {
        const [kind, body] = Object.entries(update)[0] ?? [];
        if (!kind) throw new Error("sendUpdate needs an object such as { edited_message: {...} }");
        const carrier = { ...((body ?? {}) as Params), botToken: token };
        updateKinds.set(carrier, kind);
        await core.addUserMessage(carrier);
        const stored = core.storage.userMessages.find((u) => u.message === carrier);
        return stored?.updateId ?? -1;
      });
    },
    botMessages(chatId) {
      return sent.filter((m) => chatId === undefined || m.chat_id === String(chatId));
    },
    waitForBotMessage(predicate = () => true, timeoutMs = 15_000) {
      return emulator.waitFor(() => sent.find(predicate), {
        timeoutMs,
        what: "a bot message matching the test",
      });
    },
    nextBotMessage(chatId) {
      const start = sent.length;
      return (timeoutMs = 15_000) =>
        emulator.waitFor(
          () => sent.slice(start).find((m) => chatId === undefined || m.chat_id === String(chatId)),
          { timeoutMs, what: `the next bot message${chatId === undefined ? "" : ` to chat ${chatId}`}` },
        );
    },
    callbackAnswers: () => [...answers],
    chatActions: () => [...actions],
    commands: () => [...commands],
    calls: (method) =>
      callLog.filter((c) => method === undefined || c.method.toLowerCase() === method.toLowerCase()),
    pendingUpdates: () => pending(undefined).length,
    activePolls: () => pollCount,
    failNext(method, error) {
      const key = method.toLowerCase();
      failures.set(key, [...(failures.get(key) ?? []), error]);
    },
    addFile(bytes, fileOptions = {}) {
      const file = storeFile(bytes, fileOptions.fileName, fileOptions.mimeType, "documents");
      if (fileOptions.declaredSize !== undefined) file.size = fileOptions.declaredSize;
      return file.fileId;
    },
    async waitFor(probe, waitOptions = {}) {
      const timeoutMs = waitOptions.timeoutMs ?? 15_000;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = probe();
        if (value !== undefined && value !== false) return value as Exclude<typeof value, false | undefined>;
        if (Date.now() > deadline) {
          const seen = sent
            .map((m) => `${m.method} #${m.message_id}: ${m.text ?? m.caption ?? ""}`)
            .join("\n");
          throw new Error(
            `timed out after ${timeoutMs} ms waiting for ${waitOptions.what ?? "a condition"}; bot sent:\n${seen}`,
          );
        }
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(timer);
            changes.off("change", done);
            resolve();
          };
          const timer = setTimeout(done, 25);
          changes.on("change", done);
        });
      }
    },
    async stop() {
      poll?.finish(false);
      for (const event of ["AddedUserMessage", "AddedUserCommand", "AddedUserCallbackQuery"]) {
        core.off(event, wake);
      }
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };

  return emulator;
}
