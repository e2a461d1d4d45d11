import { createRequire } from "node:module";
import { basename } from "node:path";
import type { Api, InputFile } from "grammy";
import { FeedDelivery } from "./feed-delivery.js";
import { outboundFileSize } from "./media-files.js";
import { markdownToTelegramHtml, telegramHtmlVisibleText } from "./telegram-format.js";
import {
  CHAT_TYPES,
  type TelegramMediaRef,
  telegramGating,
  telegramInbound,
  topicOf,
  type WireMessage,
  type WireUser,
} from "./telegram-inbound.js";
import { formatBytes, saveTelegramFile } from "./telegram-media.js";
import {
  type AdapterContext,
  type AdapterHandlers,
  type BotCommand,
  type Button,
  type DeliveryReceipt,
  type FeedLedger,
  type InboundMedia,
  type MessageSource,
  type OutboundMedia,
  type OutboundTarget,
  type PlatformAdapter,
  type PlatformCapabilities,
  PlatformError,
  type ReclaimedUpdate,
  type SendOptions,
  type SentMessage,
} from "./types.js";

interface GrammyModule {
  Api: typeof Api;
  InputFile: typeof InputFile;
}

/** grammy types its signals with the `abort-controller` polyfill; Node's own AbortSignal works at run time. */
type GrammySignal = Parameters<Api["getMe"]>[0];
const grammySignal = (signal: AbortSignal): GrammySignal => signal as unknown as GrammySignal;

let grammyModule: GrammyModule | undefined;
function loadGrammy(): GrammyModule {
  if (!grammyModule) {
    const require = createRequire(import.meta.url);
    grammyModule = require("grammy") as GrammyModule;
  }
  return grammyModule;
}

export {
  type TelegramGating,
  type TelegramInbound,
  telegramGating,
  telegramInbound,
  type WireMessage,
} from "./telegram-inbound.js";
export const TELEGRAM_DEFAULT_API_ROOT = "https://api.telegram.org";
const MAX_MESSAGE_LENGTH = 4096;
const MAX_CAPTION_LENGTH = 1024;
const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
/** Telegram refuses larger photos through sendPhoto; they go out as documents instead. */
const MAX_PHOTO_BYTES = 10 * 1024 * 1024;
const MAX_POLL_BACKOFF_MS = 60_000;
interface WireError {
  error_code?: unknown;
  description?: unknown;
  parameters?: { retry_after?: unknown };
  error?: unknown;
  message?: unknown;
}

function errorCode(err: unknown): number | undefined {
  const code = (err as WireError | undefined)?.error_code;
  return typeof code === "number" ? code : undefined;
}

function errorDescription(err: unknown): string {
  const e = err as WireError | undefined;
  if (typeof e?.description === "string") return e.description;
  const cause = e?.error as { message?: unknown; cause?: { code?: unknown } } | undefined;
  if (cause && typeof cause.message === "string") {
    const code = typeof cause.cause?.code === "string" ? ` (${cause.cause.code})` : "";
    return `${cause.message}${code}`;
  }
  return err instanceof Error ? err.message : String(err);
}

function isParseError(err: unknown): boolean {
  return (
    errorCode(err) === 400 &&
    /can't parse entities|can't find end|unsupported start tag/i.test(errorDescription(err))
  );
}

function isNotModified(err: unknown): boolean {
  return errorCode(err) === 400 && /message is not modified/i.test(errorDescription(err));
}

export interface TelegramAdapterOptions {
  /** Bot API server root without a trailing slash; wins over `TELEGRAM_API_ROOT`. */
  apiRoot?: string | undefined;
  /** Long-poll duration per getUpdates call (default 30; small in tests so stops are quick). */
  pollingTimeoutSeconds?: number | undefined;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

const DEFAULT_POLLING_TIMEOUT = 30;

/** An update taken from a shared feed: its receipt, and how to give it back unhandled. */
interface Taken {
  receipt?: DeliveryReceipt | undefined;
  giveBack?: () => void;
}

/** Creates the Telegram adapter; nothing is loaded or contacted until `connect` or a send. */
export function createTelegramAdapter(
  ctx: AdapterContext,
  options: TelegramAdapterOptions = {},
): PlatformAdapter {
  const token = ctx.env.TELEGRAM_BOT_TOKEN?.trim() || undefined;
  const apiRoot = (options.apiRoot || ctx.env.TELEGRAM_API_ROOT?.trim() || TELEGRAM_DEFAULT_API_ROOT).replace(
    /\/+$/,
    "",
  );
  const pollingTimeout = Math.max(0, Math.floor(options.pollingTimeoutSeconds ?? DEFAULT_POLLING_TIMEOUT));
  const gating = telegramGating(ctx.settings);
  const capabilities: PlatformCapabilities = {
    maxMessageLength: MAX_MESSAGE_LENGTH,
    edit: true,
    buttons: true,
    typing: true,
    media: true,
    maxMediaBytes: MAX_UPLOAD_BYTES,
  };

  let api: Api | undefined;
  let me: { id: number; username: string } | undefined;
  let session: { controller: AbortController; loop: Promise<void>; handlers: AdapterHandlers } | undefined;
  let offset: number | undefined;
  let connecting: Promise<void> | undefined;
  const chains = new Map<string, Promise<void>>();

  /** Keeps the token out of anything shown to people or written to logs. */
  const redact = (text: string): string => (token ? text.split(token).join("<token>") : text);

  function getApi(): Api {
    if (api) return api;
    if (!token) {
      throw new PlatformError(
        "TELEGRAM_BOT_TOKEN is not set: create a bot with @BotFather and add TELEGRAM_BOT_TOKEN=<token> to the .env file in your Hermes home",
      );
    }
    const grammy = loadGrammy();
    // The client timeout must outlast a long poll; it also bounds sends that hang.
    api = new grammy.Api(token, { apiRoot, timeoutSeconds: Math.max(60, pollingTimeout + 30) });
    return api;
  }

  function toPlatformError(err: unknown, what: string): PlatformError {
    if (err instanceof PlatformError) return err;
    const code = errorCode(err);
    const description = redact(errorDescription(err));
    if (code === 429) {
      const seconds = Number((err as WireError).parameters?.retry_after) || 1;
      return new PlatformError(`Telegram is rate limiting ${what}: retry after ${seconds}s`, seconds * 1000);
    }
    if (code !== undefined) return new PlatformError(`Telegram refused ${what} (${code}: ${description})`);
    return new PlatformError(`Telegram ${what} failed: could not reach ${apiRoot} (${description})`);
  }

  function report(message: string): void {
    try {
      session?.handlers.onError(redact(message));
    } catch {
      // A failing error handler must not take polling down with it.
    }
  }

  function numericId(value: string | undefined, what: string): number | undefined {
    if (value === undefined || value === "") return undefined;
    const n = Number(value);
    if (!Number.isInteger(n)) throw new PlatformError(`Telegram ${what} must be a number, got "${value}"`);
    return n;
  }

  function targetFields(target: OutboundTarget): Record<string, unknown> {
    const thread = numericId(target.threadId, "thread id");
    const reply = numericId(target.replyTo, "reply-to message id");
    return {
      ...(thread !== undefined ? { message_thread_id: thread } : {}),
      ...(reply !== undefined
        ? { reply_parameters: { message_id: reply, allow_sending_without_reply: true } }
        : {}),
    };
  }

  function keyboard(buttons: Button[][] | undefined): Record<string, unknown> {
    if (!buttons || buttons.length === 0) return {};
    const rows = buttons
      .map((row) =>
        row.map((b) => {
          if (Buffer.byteLength(b.data) > 64) {
            throw new PlatformError(
              `button "${b.label}" carries ${Buffer.byteLength(b.data)} bytes of data; Telegram allows 64`,
            );
          }
          return { text: b.label || b.data, callback_data: b.data };
        }),
      )
      .filter((row) => row.length > 0);
    return rows.length > 0 ? { reply_markup: { inline_keyboard: rows } } : {};
  }

  /** The HTML to send, or undefined for plain text; throws when the text cannot fit one message. */
  function prepare(
    text: string,
    plain: boolean | undefined,
    what: string,
    limit: number,
  ): string | undefined {
    const html = plain ? undefined : markdownToTelegramHtml(text);
    const visible = html ? telegramHtmlVisibleText(html) : text;
    if (visible.trim() === "") throw new PlatformError(`cannot send an empty ${what} to Telegram`);
    if (visible.length > limit) {
      throw new PlatformError(
        `the ${what} is ${visible.length} characters after formatting; Telegram allows ${limit}, so split it first`,
      );
    }
    return html || undefined;
  }

  /** Runs `attempt` with HTML, then once more as plain text if Telegram cannot parse the HTML. */
  async function withPlainFallback<T>(
    html: string | undefined,
    attempt: (body: { text?: string; parse_mode?: "HTML" }) => Promise<T>,
    plainText: string,
  ): Promise<T> {
    if (html === undefined) return attempt({ text: plainText });
    try {
      return await attempt({ text: html, parse_mode: "HTML" });
    } catch (err) {
      if (!isParseError(err)) throw err;
      report(`Telegram could not parse the formatted text (${errorDescription(err)}); sent it as plain text`);
      return attempt({ text: plainText });
    }
  }

  async function downloadMedia(ref: TelegramMediaRef, signal: AbortSignal): Promise<InboundMedia> {
    const limit = ctx.maxInboundMediaBytes;
    // Without a size (streaming past the cap) the message cannot say how big the file really is.
    const tooLarge = (size?: number): Error =>
      new Error(
        `it is ${size === undefined ? "" : `${formatBytes(size)}, `}over the ${formatBytes(limit)} limit (gateway.max_inbound_media_bytes)`,
      );
    if (ref.fileSize !== undefined && ref.fileSize > limit) throw tooLarge(ref.fileSize);
    let file: { file_path?: string; file_size?: number };
    try {
      file = await getApi().getFile(ref.fileId, grammySignal(signal));
    } catch (err) {
      throw new Error(redact(errorDescription(err)));
    }
    if (file.file_size !== undefined && file.file_size > limit) throw tooLarge(file.file_size);
    if (!file.file_path) throw new Error("Telegram returned no file path");
    const dest = await saveTelegramFile({
      ...{ ref, filePath: file.file_path, mediaDir: ctx.mediaDir, limit, tooLarge, redact, signal },
      fileUrl: (path) => `${apiRoot}/file/bot${token}/${path}`,
    });
    return { kind: ref.kind, path: dest, mimeType: ref.mimeType, fileName: ref.fileName };
  }

  /** Hands an event to the router; a throwing handler is reported, never allowed to stop polling. */
  function handOver(signal: AbortSignal, what: string, call: (handlers: AdapterHandlers) => void): void {
    if (signal.aborted || !session) return;
    try {
      call(session.handlers);
    } catch (err) {
      report(
        `the gateway failed to handle a Telegram ${what}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  /** Per-chat queue: a message waiting for its download must not be overtaken by the next one. */
  function enqueue(chatId: string, task: () => Promise<void>): void {
    const previous = chains.get(chatId) ?? Promise.resolve();
    const next = previous
      .then(task)
      .catch((err: unknown) => report(`Telegram update handling failed: ${String(err)}`))
      .finally(() => {
        if (chains.get(chatId) === next) chains.delete(chatId);
      });
    chains.set(chatId, next);
  }

  function handleMessage(msg: WireMessage, isChannelPost: boolean, signal: AbortSignal, taken: Taken): void {
    const result = me ? telegramInbound(msg, me, gating, isChannelPost) : undefined;
    if (!result?.deliver) {
      if (result?.report) report(result.report);
      void taken.receipt?.done();
      return;
    }
    const { message, media } = result;
    enqueue(message.source.chatId, async () => {
      if (media) {
        try {
          message.media = [await downloadMedia(media, signal)];
        } catch (err) {
          if (signal.aborted) {
            taken.giveBack?.();
            return;
          }
          const reason = err instanceof Error ? err.message : String(err);
          report(`could not download a Telegram ${media.kind} from chat ${message.source.chatId}: ${reason}`);
          const note = `[the ${media.kind} could not be downloaded: ${reason}]`;
          message.text = message.text ? `${message.text}\n\n${note}` : note;
        }
      }
      if (signal.aborted || !session) {
        taken.giveBack?.();
        return;
      }
      if (taken.receipt) message.receipt = taken.receipt;
      handOver(signal, "message", (h) => h.onMessage(message));
    });
  }

  function handleCallback(query: Record<string, unknown>, signal: AbortSignal): void {
    // A button press is answered at once: not kept for another instance (`dispatch` marks it done).
    const id = typeof query.id === "string" ? query.id : undefined;
    const from = query.from as WireUser | undefined;
    const msg = query.message as WireMessage | undefined;
    if (!id) {
      report("Telegram sent a button press without an id; ignored");
      return;
    }
    const acknowledge = async (text?: string): Promise<void> => {
      try {
        await getApi().answerCallbackQuery(id, text ? { text } : {});
      } catch (err) {
        report(`could not answer a Telegram button press: ${errorDescription(err)}`);
      }
    };
    const data = query.data;
    const chatType = CHAT_TYPES[msg?.chat?.type ?? ""];
    if (
      typeof data !== "string" ||
      typeof msg?.chat?.id !== "number" ||
      !chatType ||
      typeof from?.id !== "number"
    ) {
      // Game buttons and presses on inline-mode messages: stop the client's spinner, nothing more.
      if (typeof data === "string")
        report("Telegram sent a button press without its message or sender; ignored");
      void acknowledge();
      return;
    }
    const source: MessageSource = {
      platform: "telegram",
      chatType,
      chatId: String(msg.chat.id),
      chatName: msg.chat.title,
      userId: String(from.id),
      userName: from.username ?? from.first_name,
      threadId: topicOf(msg),
    };
    handOver(signal, "button press", (h) =>
      h.onAction({ source, data, messageId: String(msg.message_id), acknowledge }),
    );
  }

  /** Hands one update on; `taken` carries its receipt in a shared feed (done once the router is). */
  function dispatch(update: Record<string, unknown>, signal: AbortSignal, taken: Taken = {}): void {
    let message = false;
    try {
      if (update.message && typeof update.message === "object") {
        message = true;
        handleMessage(update.message as WireMessage, false, signal, taken);
      } else if (update.channel_post && typeof update.channel_post === "object") {
        message = true;
        handleMessage(update.channel_post as WireMessage, true, signal, taken);
      } else if (update.callback_query && typeof update.callback_query === "object") {
        handleCallback(update.callback_query as Record<string, unknown>, signal);
      }
      // Edits, reactions, membership changes and other update kinds are not for the agent.
    } catch (err) {
      report(`could not handle Telegram update ${String(update.update_id)}: ${String(err)}`);
      message = false; // nothing reached the router: done with it
    }
    if (!message) void taken.receipt?.done();
  }

  async function pollLoop(signal: AbortSignal, feed: FeedLedger | undefined): Promise<void> {
    let failures = 0;
    const backOff = async (what: string, err: unknown) => {
      failures += 1;
      const retryAfter = Number((err as WireError).parameters?.retry_after) * 1000 || 0;
      const delay = Math.max(retryAfter, Math.min(1000 * 2 ** (failures - 1), MAX_POLL_BACKOFF_MS));
      report(`${what}; retrying in ${delay / 1000}s`);
      await sleep(delay, signal);
    };
    const delivery = new FeedDelivery(feed, report);
    // Several instances: updates a dead poller took and the router never finished come again.
    const redeliver = (r: ReclaimedUpdate) => {
      const update = r.payload as Record<string, unknown>;
      if (!update || typeof update !== "object") return delivery.settle(r.id);
      dispatch(update, signal, {
        receipt: delivery.receipt(r.id, r),
        giveBack: () => delivery.release([r.id]),
      });
    };
    await delivery.reclaimNow(signal, redeliver);
    const reclaimed = delivery.reclaiming(signal, redeliver);
    // Several instances: resume where the last poller (maybe a dead one) left off.
    while (feed && !signal.aborted) {
      try {
        const kept = await feed.resumeAt();
        if (kept !== undefined) offset = Math.max(offset ?? 0, kept);
        break;
      } catch (err) {
        await backOff(`could not read where Telegram polling stopped: ${String(err)}`, err);
      }
    }
    while (!signal.aborted) {
      let updates: unknown[];
      try {
        updates = await getApi().getUpdates(
          {
            ...(offset !== undefined ? { offset } : {}),
            timeout: pollingTimeout,
            allowed_updates: ["message", "channel_post", "callback_query"] as const,
          },
          grammySignal(signal),
        );
        failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        const hint = errorCode(err) === 409 ? " (another process polls this bot, or a webhook is set)" : "";
        await backOff(`Telegram polling failed: ${redact(errorDescription(err))}${hint}`, err);
        continue;
      }
      if (!Array.isArray(updates)) continue;
      const batch = updates.filter((u): u is Record<string, unknown> => !!u && typeof u === "object");
      const ids = batch.map((u) => u.update_id).filter((id): id is number => typeof id === "number");
      let fresh: Set<number> | undefined;
      if (feed && ids.length > 0) {
        // Recorded (with the update itself, to hand it on again if this instance dies before the
        // router is done with it) before any is handed on; unrecorded, the batch is fetched again.
        const kept = delivery.tracking ? new Map(batch.map((u) => [u.update_id as number, u])) : undefined;
        try {
          fresh = new Set(await feed.take(ids, Math.max(offset ?? 0, ...ids.map((id) => id + 1)), kept));
        } catch (err) {
          if (signal.aborted) break;
          await backOff(`could not record Telegram updates as taken: ${String(err)}`, err);
          continue;
        }
      }
      for (const u of batch) {
        if (typeof u.update_id === "number") {
          offset = Math.max(offset ?? 0, u.update_id + 1);
          // Another instance took it already (it fetched it before dying or losing the lease).
          if (fresh && !fresh.has(u.update_id)) continue;
        }
        const id = typeof u.update_id === "number" ? u.update_id : Number.NaN;
        const receipt = fresh?.has(id) ? delivery.receipt(id) : undefined;
        dispatch(u, signal, receipt ? { receipt, giveBack: () => delivery.release([id]) } : {});
      }
    }
    await reclaimed;
  }

  async function sendFile(target: OutboundTarget, media: OutboundMedia): Promise<SentMessage> {
    const size = await outboundFileSize(media.path, "to Telegram");
    if (size > MAX_UPLOAD_BYTES) {
      throw new PlatformError(
        `${basename(media.path)} is ${formatBytes(size)}; Telegram bots can upload at most ${formatBytes(MAX_UPLOAD_BYTES)}`,
      );
    }
    if (size === 0) throw new PlatformError(`cannot send ${media.path} to Telegram: the file is empty`);
    const kind = media.kind === "photo" && size > MAX_PHOTO_BYTES ? "document" : media.kind;
    const caption = media.caption?.trim() ? media.caption : undefined;
    // A caption too long for Telegram's 1024 goes out as its own message after the file.
    let html: string | undefined;
    let captionFits = caption !== undefined;
    if (caption !== undefined) {
      try {
        html = prepare(caption, false, "caption", MAX_CAPTION_LENGTH);
      } catch {
        captionFits = false;
      }
    }
    const apiNow = getApi();
    const { InputFile: FileCtor } = loadGrammy();
    const base = targetFields(target);
    const upload = (body: { text?: string; parse_mode?: "HTML" }): Promise<{ message_id: number }> => {
      const file = new FileCtor(media.path, basename(media.path));
      const other = {
        ...base,
        ...(captionFits && body.text !== undefined ? { caption: body.text } : {}),
        ...(captionFits && body.parse_mode ? { parse_mode: body.parse_mode } : {}),
      };
      switch (kind) {
        case "photo":
          return apiNow.sendPhoto(target.chatId, file, other);
        case "voice":
          return apiNow.sendVoice(target.chatId, file, other);
        case "audio":
          return apiNow.sendAudio(target.chatId, file, other);
        case "video":
          return apiNow.sendVideo(target.chatId, file, other);
        default:
          return apiNow.sendDocument(target.chatId, file, other);
      }
    };
    let sent: { message_id: number };
    try {
      sent = await withPlainFallback(captionFits ? html : undefined, upload, caption ?? "");
    } catch (err) {
      throw toPlatformError(err, `the ${kind} upload ${basename(media.path)}`);
    }
    if (caption !== undefined && !captionFits) {
      await adapter.send({ chatId: target.chatId, threadId: target.threadId }, caption);
    }
    return { messageId: String(sent.message_id) };
  }

  async function start(handlers: AdapterHandlers, receive: boolean, feed?: FeedLedger): Promise<void> {
    let bot: { id: number; username?: string };
    try {
      bot = await getApi().getMe();
    } catch (err) {
      if (err instanceof PlatformError) throw err;
      const code = errorCode(err);
      if (code === 401) {
        throw new PlatformError(
          "Telegram refused TELEGRAM_BOT_TOKEN (401 Unauthorized): check the token @BotFather gave you, or ask it for a new one",
        );
      }
      if (code === 404) {
        throw new PlatformError(
          `Telegram does not recognise TELEGRAM_BOT_TOKEN (404 Not Found at ${apiRoot}): the token looks malformed; copy it again from @BotFather`,
        );
      }
      if (code !== undefined) {
        throw new PlatformError(`Telegram refused getMe (${code}: ${redact(errorDescription(err))})`);
      }
      throw new PlatformError(
        `could not reach the Telegram Bot API at ${apiRoot} (${redact(errorDescription(err))}): check the network, or TELEGRAM_API_ROOT if you run your own Bot API server`,
      );
    }
    me = { id: bot.id, username: bot.username ?? "" };
    const controller = new AbortController();
    session = { controller, handlers, loop: Promise.resolve() };
    // Send-only (`hermes send`): no webhook change and no polling, so a running gateway keeps its updates.
    if (!receive) return;
    try {
      // Long polling and a webhook exclude each other; a stale webhook would make every poll fail.
      await getApi().deleteWebhook({}, grammySignal(controller.signal));
    } catch (err) {
      report(`could not remove the bot's webhook: ${redact(errorDescription(err))}`);
    }
    session.loop = pollLoop(controller.signal, feed).catch((err: unknown) => {
      report(`Telegram polling stopped: ${String(err)}`);
    });
  }

  const adapter: PlatformAdapter = {
    platform: "telegram",
    capabilities,

    connect(handlers, options) {
      if (session) return Promise.resolve();
      connecting ??= start(handlers, options?.receive !== false, options?.feed).finally(() => {
        connecting = undefined;
      });
      return connecting;
    },

    async disconnect() {
      await connecting?.catch(() => undefined);
      const current = session;
      if (!current) return;
      current.controller.abort();
      await current.loop;
      if (session === current) session = undefined;
    },

    async send(target, text, options: SendOptions = {}) {
      const html = prepare(text, options.plain, "message", MAX_MESSAGE_LENGTH);
      const extra = { ...targetFields(target), ...keyboard(options.buttons) };
      try {
        const sent = await withPlainFallback(
          html,
          (body) =>
            getApi().sendMessage(target.chatId, body.text ?? "", {
              ...extra,
              ...(body.parse_mode ? { parse_mode: body.parse_mode } : {}),
            }),
          text,
        );
        return { messageId: String(sent.message_id) };
      } catch (err) {
        throw toPlatformError(err, `a message to chat ${target.chatId}`);
      }
    },

    async edit(target, messageId, text, options: SendOptions = {}) {
      const id = numericId(messageId, "message id");
      if (id === undefined) throw new PlatformError("cannot edit a Telegram message without its id");
      const html = prepare(text, options.plain, "message", MAX_MESSAGE_LENGTH);
      const extra = keyboard(options.buttons);
      try {
        await withPlainFallback(
          html,
          (body) =>
            getApi().editMessageText(target.chatId, id, body.text ?? "", {
              ...extra,
              ...(body.parse_mode ? { parse_mode: body.parse_mode } : {}),
            }),
          text,
        );
      } catch (err) {
        if (isNotModified(err)) return;
        throw toPlatformError(err, `the edit of message ${messageId} in chat ${target.chatId}`);
      }
    },

    async typing(target) {
      try {
        const thread = numericId(target.threadId, "thread id");
        await getApi().sendChatAction(
          target.chatId,
          "typing",
          thread !== undefined ? { message_thread_id: thread } : {},
        );
      } catch {
        // Typing is a courtesy; a failure here must never disturb the reply itself.
      }
    },

    sendMedia: sendFile,

    async setCommands(commands: readonly BotCommand[]) {
      const seen = new Set<string>();
      const valid: Array<{ command: string; description: string }> = [];
      for (const c of commands) {
        const name = c.name.replace(/^\//, "").toLowerCase();
        const description = c.description.trim();
        if (!/^[a-z0-9_]{1,32}$/.test(name) || description === "" || seen.has(name)) continue;
        seen.add(name);
        valid.push({
          command: name,
          description: description.length > 256 ? `${description.slice(0, 255)}…` : description,
        });
        if (valid.length === 100) break;
      }
      try {
        await getApi().setMyCommands(valid);
      } catch (err) {
        throw toPlatformError(err, "the command menu (setMyCommands)");
      }
    },
  };
  return adapter;
}
