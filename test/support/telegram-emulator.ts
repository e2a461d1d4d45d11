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
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { TelegramServer } from "telegram-test-api/lib/telegramServer.js";
import { makeClient } from "./telegram-emulator-client.js";
import { handleMethod, OWN_METHODS } from "./telegram-emulator-methods.js";
import { createEmulatorState } from "./telegram-emulator-state.js";
import {
  DELEGATED_METHODS,
  type EmulatorCore,
  type EmulatorOptions,
  type TelegramEmulator,
  type TgChat,
  type TgUser,
} from "./telegram-emulator-types.js";
import { pendingUpdates } from "./telegram-emulator-updates.js";
import { ApiError, type Params, readParams, sendJson } from "./telegram-emulator-wire.js";

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

/** telegram-test-api's events for what a user sent (each wakes waiters and long polls). */
const CORE_EVENTS = ["AddedUserMessage", "AddedUserCommand", "AddedUserCallbackQuery"];

/** Starts the emulator on 127.0.0.1 and a free port. */
export async function startTelegramEmulator(options: EmulatorOptions = {}): Promise<TelegramEmulator> {
  const token = options.token ?? "123456789:TEST-hermes-telegram-emulator-token";
  const bot = {
    id: options.botId ?? 7000001,
    is_bot: true as const,
    first_name: "Hermes Test",
    username: options.botUsername ?? "hermes_test_bot",
  };
  const server = new TelegramServer({ host: "127.0.0.1", port: 1, storeTimeout: 3600 });
  const core = server as unknown as EmulatorCore;
  const state = createEmulatorState(core, token, bot);
  for (const event of CORE_EVENTS) core.on(event, state.wake);
  const { chats, sent, files, callLog, failures, answers, actions } = state;

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
      const result = await handleMethod(state, method, params, uploads, res);
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
        state.chatCounter += 1;
        chat = {
          id: opts.chat.id ?? -(1000000000000 + state.chatCounter),
          type: opts.chat.type,
          title: opts.chat.title ?? `Test ${opts.chat.type} ${state.chatCounter}`,
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
      return makeClient(state, user, chat);
    },
    sendUpdate(update) {
      return state.serial(async () => {
        const [kind, body] = Object.entries(update)[0] ?? [];
        if (!kind) throw new Error("sendUpdate needs an object such as { edited_message: {...} }");
        const carrier = { ...((body ?? {}) as Params), botToken: token };
        state.updateKinds.set(carrier, kind);
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
    commands: () => [...state.commands],
    calls: (method) =>
      callLog.filter((c) => method === undefined || c.method.toLowerCase() === method.toLowerCase()),
    pendingUpdates: () => pendingUpdates(state, undefined).length,
    activePolls: () => state.pollCount,
    failNext(method, error) {
      const key = method.toLowerCase();
      failures.set(key, [...(failures.get(key) ?? []), error]);
    },
    addFile(bytes, fileOptions = {}) {
      const file = state.storeFile(bytes, fileOptions.fileName, fileOptions.mimeType, "documents");
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
            state.changes.off("change", done);
            resolve();
          };
          const timer = setTimeout(done, 25);
          state.changes.on("change", done);
        });
      }
    },
    async stop() {
      state.poll?.finish(false);
      for (const event of CORE_EVENTS) core.off(event, state.wake);
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };

  return emulator;
}
