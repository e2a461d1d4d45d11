/**
 * Signal adapter over signal-cli's daemon in HTTP mode (`signal-cli -a +1… daemon --http
 * 127.0.0.1:8080`): events arrive as server-sent events from `GET /api/v1/events`, everything else
 * is JSON-RPC 2.0 on `POST /api/v1/rpc` (`send`, `sendTyping`, `sendReaction`, `getAttachment`).
 *
 * Reconnects: a dropped event stream is reopened with backoff and the `Last-Event-ID` of the last
 * event read, so the daemon replays what was missed; when it cannot (an id it no longer knows, so
 * it replays its whole buffer) messages already handled are recognised by sender and timestamp and
 * dropped. An event stream that goes quiet for two minutes is checked against `/api/v1/check` and
 * reopened when the daemon does not answer.
 *
 * Signal has no buttons (approvals are answered by replying yes/no) and caps how often a message
 * may be edited, so replies are not streamed by edits.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import { envFlag } from "../../state/gateway/allowlist.js";
import { handOver, stringSetting, uploadSize, withAttachments } from "./adapter-kit.js";
import { FeedDelivery, feedIdOf } from "./feed-delivery.js";
import { errorText, extensionFor, mediaKindOf, mimeFor } from "./media-files.js";
import { markdownToSignal, type SignalText, splitSignalText, styleString } from "./signal-format.js";
import {
  parseSignalMessageId,
  type SignalAttachmentRef,
  signalGating,
  signalInbound,
  signalMessageId,
} from "./signal-inbound.js";
import { SseParser } from "./signal-sse.js";
import {
  type AdapterContext,
  type AdapterHandlers,
  type DeliveryReceipt,
  type InboundMedia,
  type InboundMessage,
  type OutboundTarget,
  type PlatformAdapter,
  PlatformError,
  type ReclaimedUpdate,
  type SendOptions,
} from "./types.js";

export const SIGNAL_DEFAULT_HTTP_URL = "http://127.0.0.1:8080";
const MAX_MESSAGE_LENGTH = 8000;
const MAX_ATTACHMENT_BYTES = 100 * 1024 * 1024;
const RPC_TIMEOUT_MS = 30_000;
const RETRY_INITIAL_MS = 1000;
const RETRY_MAX_MS = 60_000;
const STALE_AFTER_MS = 120_000;
const SEEN_LIMIT = 2000;
/** A `Last-Event-ID` no daemon handed out: signal-cli answers it with its whole event buffer. */
const REPLAY_ALL = "0";
/** Several instances: replayed events older than this are not handed on (their ids may be pruned). */
const REPLAY_MAX_AGE_MS = 24 * 60 * 60 * 1000;

const describe = errorText;

/** Settings for tests and embedders; the environment and `signal:` config give the rest. */
export interface SignalAdapterOptions {
  /** First reconnect delay in ms (default 1000, doubled up to a minute, with jitter). */
  retryInitialMs?: number;
}

/** Creates the Signal adapter; nothing is contacted until `connect` or a send. */
export function createSignalAdapter(
  ctx: AdapterContext,
  options: SignalAdapterOptions = {},
): PlatformAdapter {
  const setting = (key: string) => stringSetting(ctx.settings, key);
  const baseUrl = (ctx.env.SIGNAL_HTTP_URL?.trim() || setting("http_url") || SIGNAL_DEFAULT_HTTP_URL).replace(
    /\/+$/,
    "",
  );
  const account = ctx.env.SIGNAL_ACCOUNT?.trim() || setting("account") || "";
  const gating = signalGating(account, ctx.env, ctx.settings);
  const reactions = ctx.env.SIGNAL_REACTIONS === undefined ? true : envFlag(ctx.env.SIGNAL_REACTIONS);
  const retryInitial = options.retryInitialMs ?? RETRY_INITIAL_MS;

  let handlers: AdapterHandlers | undefined;
  let running: { controller: AbortController; loop: Promise<void> } | undefined;
  let rpcId = 0;
  /** Keys of messages already handed over (sender:timestamp), oldest first. */
  const seen = new Set<string>();
  /** Timestamps of our own sends: their sync copies from linked devices are not messages. */
  const sent = new Set<number>();
  const chains = new Map<string, Promise<void>>();
  /** Several instances: the shared record of events taken (`connect({ feed })`); inert without one. */
  let delivery = new FeedDelivery(undefined, () => undefined);
  const typingFailures = new Map<string, { count: number; until: number }>();
  /** Chats where we show "typing…": the answer clears it at once instead of after Signal's timeout. */
  const typingIn = new Set<string>();

  const report = (message: string): void => {
    try {
      handlers?.onError(message);
    } catch {
      // A failing error handler must not stop the event stream.
    }
  };

  const remember = <T>(set: Set<T>, value: T): void => {
    set.delete(value);
    set.add(value);
    if (set.size > SEEN_LIMIT) set.delete(set.values().next().value as T);
  };

  async function rpc(
    method: string,
    params: Record<string, unknown>,
    timeoutMs = RPC_TIMEOUT_MS,
  ): Promise<unknown> {
    const id = ++rpcId;
    let res: Response;
    try {
      res = await fetch(`${baseUrl}/api/v1/rpc`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", method, params: { account, ...params }, id }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new PlatformError(
        `Signal ${method} failed: could not reach signal-cli at ${baseUrl} (${describe(err)})`,
      );
    }
    const body = (await res.json().catch(() => undefined)) as
      | { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } }
      | undefined;
    if (body?.error) {
      const message =
        typeof body.error.message === "string" ? body.error.message : JSON.stringify(body.error);
      const retry = /rate ?limit/i.test(message) ? retryAfterMs(body.error.data) : undefined;
      throw new PlatformError(`signal-cli refused ${method}: ${message}`, retry);
    }
    if (!res.ok || !body) throw new PlatformError(`signal-cli answered ${method} with HTTP ${res.status}`);
    return body.result;
  }

  function retryAfterMs(data: unknown): number {
    const seconds = Number((data as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds);
    return (Number.isFinite(seconds) && seconds > 0 ? seconds : 5) * 1000;
  }

  /** Group chats are `group:<id>`; `hermes send -t signal:group:<id>` arrives as chat "group" + thread. */
  function routing(target: OutboundTarget): Record<string, unknown> {
    const chat = target.chatId === "group" && target.threadId ? `group:${target.threadId}` : target.chatId;
    if (chat.startsWith("group:")) return { groupId: chat.slice("group:".length) };
    if (!chat) throw new PlatformError("cannot send to Signal without a recipient");
    return { recipient: [chat] };
  }

  const routingKey = (target: OutboundTarget): string => JSON.stringify(routing(target));

  async function stopTyping(target: OutboundTarget): Promise<void> {
    const key = routingKey(target);
    if (!typingIn.delete(key)) return;
    await rpc("sendTyping", { ...routing(target), stop: true }, 10_000).catch(() => undefined);
  }

  /** Throws when signal-cli reports that a recipient did not get the message. */
  function checkResults(result: unknown, what: string): number | undefined {
    const r = (result ?? {}) as { timestamp?: unknown; results?: unknown };
    for (const item of Array.isArray(r.results) ? r.results : []) {
      const type = (item as { type?: unknown }).type;
      if (typeof type === "string" && type !== "SUCCESS") {
        if (type === "RATE_LIMIT_FAILURE") {
          throw new PlatformError(`Signal is rate limiting ${what}`, retryAfterMs(item));
        }
        const hint = type === "UNREGISTERED_FAILURE" ? " (the number is not registered with Signal)" : "";
        throw new PlatformError(`Signal did not deliver ${what}: ${type}${hint}`);
      }
    }
    const ts = typeof r.timestamp === "number" ? r.timestamp : undefined;
    if (ts !== undefined) remember(sent, ts);
    return ts;
  }

  async function sendText(
    target: OutboundTarget,
    body: SignalText,
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    const route = routing(target);
    const quote = parseSignalMessageId(target.replyTo);
    let last: number | undefined;
    const pieces = splitSignalText(body, MAX_MESSAGE_LENGTH);
    for (const [i, piece] of pieces.entries()) {
      const styles = piece.styles.map(styleString);
      const result = await rpc("send", {
        ...route,
        message: piece.text,
        ...(styles.length > 0 ? { textStyle: styles } : {}),
        ...(i === 0 && quote ? { quoteTimestamp: quote.timestamp, quoteAuthor: quote.author } : {}),
        ...(i === 0 ? extra : {}),
      });
      last = checkResults(result, `a message to ${target.chatId}`);
    }
    return last !== undefined ? signalMessageId(last, account) : "";
  }

  function prepare(text: string, plain: boolean | undefined): SignalText {
    const body = plain ? { text, styles: [] } : markdownToSignal(text);
    if (body.text.trim() === "") throw new PlatformError("cannot send an empty message to Signal");
    return body;
  }

  async function download(ref: SignalAttachmentRef, chatId: string): Promise<InboundMedia> {
    const limit = Math.min(ctx.maxInboundMediaBytes, MAX_ATTACHMENT_BYTES);
    if (ref.size !== undefined && ref.size > limit) {
      throw new Error(
        `it is ${ref.size} bytes, over the ${limit}-byte limit (gateway.max_inbound_media_bytes)`,
      );
    }
    const route = chatId.startsWith("group:") ? { groupId: chatId.slice(6) } : { recipient: chatId };
    const result = (await rpc("getAttachment", { id: ref.id, ...route })) as
      | { data?: unknown }
      | string
      | null;
    const data = typeof result === "string" ? result : result?.data;
    if (typeof data !== "string" || data === "") throw new Error("signal-cli returned no data");
    const bytes = Buffer.from(data, "base64");
    if (bytes.length > limit) throw new Error(`it is ${bytes.length} bytes, over the ${limit}-byte limit`);
    const ext =
      extname(ref.fileName ?? "")
        .replace(/[^A-Za-z0-9.]/g, "")
        .slice(0, 10) || extensionFor(ref.contentType);
    await mkdir(ctx.mediaDir, { recursive: true });
    const kind = mediaKindOf(ref.contentType);
    const path = join(
      ctx.mediaDir,
      `signal-${kind}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}${ext}`,
    );
    await writeFile(path, bytes, { mode: 0o600 });
    return { kind, path, mimeType: ref.contentType, fileName: ref.fileName };
  }

  /** Per-chat queue: a message waiting for its attachment must not be overtaken by the next one. */
  function enqueue(chatId: string, task: () => Promise<void>): void {
    const next = (chains.get(chatId) ?? Promise.resolve())
      .then(task)
      .catch((err: unknown) => report(`Signal message handling failed: ${describe(err)}`))
      .finally(() => {
        if (chains.get(chatId) === next) chains.delete(chatId);
      });
    chains.set(chatId, next);
  }

  /**
   * One event from the stream, or (`again`) one a dead instance took and never finished. Several
   * instances: the event is taken in the shared feed under an id made of its sender and timestamp
   * (with the event, to be handed on again), so it is handed on by one instance whatever the
   * stream replays; one read after this instance stopped receiving (a stalled holder's buffer) is
   * given back to the holder.
   */
  function onEvent(
    data: string,
    signal: AbortSignal,
    again?: { id: number; receipt?: DeliveryReceipt },
  ): void {
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      report(`signal-cli sent an event that is not JSON: ${data.slice(0, 80)}`);
      if (again) delivery.settle(again.id);
      return;
    }
    const result = signalInbound(event, gating, (ts) => sent.has(ts));
    if (!result.deliver) {
      if (result.report) report(result.report);
      if (again) delivery.settle(again.id);
      return;
    }
    if (!again && seen.has(result.key)) return; // replayed after a reconnect
    if (!again && delivery.feed && result.timestamp < Date.now() - REPLAY_MAX_AGE_MS) return;
    remember(seen, result.key);
    const { message, attachments } = result;
    const id = again?.id ?? feedIdOf(result.key);
    const feed = delivery;
    enqueue(message.source.chatId, async () => {
      const taken = again ?? (await feed.takeOne(id, event));
      if (!taken) return; // another instance took it
      if (signal.aborted) return feed.release([id]);
      if (taken.receipt) message.receipt = taken.receipt;
      const media: InboundMedia[] = [];
      const notes: string[] = [];
      for (const ref of attachments) {
        try {
          media.push(await download(ref, message.source.chatId));
        } catch (err) {
          if (signal.aborted) return feed.release([id]);
          report(`could not download a Signal attachment from ${message.source.chatId}: ${describe(err)}`);
          notes.push(
            `[an attachment${ref.fileName ? ` (${ref.fileName})` : ""} could not be downloaded: ${describe(err)}]`,
          );
        }
      }
      if (signal.aborted || !handlers) return feed.release([id]);
      handOver(handlers, withAttachments(message, notes, media), report, "Signal message");
    });
  }

  async function streamOnce(parser: SseParser, signal: AbortSignal, onOpen: () => void): Promise<void> {
    const stream = new AbortController();
    const stop = () => stream.abort();
    signal.addEventListener("abort", stop, { once: true });
    let lastActivity = Date.now();
    // A half-open connection shows nothing; a quiet stream is checked against the daemon.
    const watchdog = setInterval(() => {
      if (Date.now() - lastActivity < STALE_AFTER_MS) return;
      fetch(`${baseUrl}/api/v1/check`, { signal: AbortSignal.timeout(10_000) })
        .then((res) => {
          if (res.ok) lastActivity = Date.now();
          else stream.abort();
        })
        .catch(() => stream.abort());
    }, 30_000);
    watchdog.unref?.();
    try {
      const url = `${baseUrl}/api/v1/events?account=${encodeURIComponent(account)}`;
      const res = await fetch(url, {
        headers: {
          accept: "text/event-stream",
          ...(parser.lastEventId ? { "last-event-id": parser.lastEventId } : {}),
        },
        signal: stream.signal,
      });
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status} from ${url}`);
      onOpen();
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        lastActivity = Date.now();
        for (const ev of parser.push(decoder.decode(chunk, { stream: true }))) {
          if (ev.event === "receive" || ev.event === "message") onEvent(ev.data, signal);
        }
      }
      throw new Error("the daemon closed the event stream");
    } finally {
      clearInterval(watchdog);
      signal.removeEventListener("abort", stop);
    }
  }

  /** Reads events until `signal` aborts; `onFirst` once the first stream is open or has failed. */
  async function streamLoop(signal: AbortSignal, onFirst: () => void): Promise<void> {
    let parser = new SseParser();
    // Several instances: the daemon kept what came while no instance listened (the last holder
    // died); an id it does not know makes it replay its whole buffer, and the shared feed drops
    // every event some instance took already.
    if (delivery.feed) parser.lastEventId = REPLAY_ALL;
    let failures = 0;
    while (!signal.aborted) {
      const started = Date.now();
      try {
        await streamOnce(parser, signal, onFirst);
      } catch (err) {
        onFirst();
        if (signal.aborted) break;
        // A stream that ran for a while was healthy: start the backoff again.
        failures = Date.now() - started > 30_000 ? 1 : failures + 1;
        const delay = Math.min(retryInitial * 2 ** (failures - 1), RETRY_MAX_MS) * (1 + Math.random() * 0.2);
        report(`Signal event stream lost (${describe(err)}); reconnecting in ${(delay / 1000).toFixed(1)}s`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          signal.addEventListener(
            "abort",
            () => {
              clearTimeout(timer);
              resolve();
            },
            { once: true },
          );
        });
        // Keep only the position: a half-read event from the broken stream is dropped.
        const position = parser.lastEventId;
        parser = new SseParser();
        parser.lastEventId = position;
      }
    }
  }

  async function check(): Promise<void> {
    if (!account) {
      throw new PlatformError(
        "SIGNAL_ACCOUNT is not set: add SIGNAL_ACCOUNT=+<the bot's number in E.164> to the .env file in your Hermes home",
      );
    }
    let res: Response;
    try {
      res = await fetch(`${baseUrl}/api/v1/check`, { signal: AbortSignal.timeout(10_000) });
    } catch (err) {
      throw new PlatformError(
        `could not reach signal-cli at ${baseUrl} (${describe(err)}): start it with "signal-cli -a ${account} daemon --http 127.0.0.1:8080", or set SIGNAL_HTTP_URL`,
      );
    }
    if (!res.ok)
      throw new PlatformError(`signal-cli at ${baseUrl} failed its health check (HTTP ${res.status})`);
  }

  async function react(message: InboundMessage, emoji: string, remove = false): Promise<void> {
    const id = parseSignalMessageId(message.messageId);
    if (!reactions || !id) return;
    try {
      await rpc("sendReaction", {
        ...routing({ chatId: message.source.chatId }),
        emoji,
        targetAuthor: id.author,
        targetTimestamp: id.timestamp,
        ...(remove ? { remove: true } : {}),
      });
    } catch (err) {
      report(`could not react to a Signal message: ${describe(err)}`);
    }
  }

  const adapter: PlatformAdapter = {
    platform: "signal",
    capabilities: {
      maxMessageLength: MAX_MESSAGE_LENGTH,
      edit: false,
      buttons: false,
      typing: true,
      media: true,
      maxMediaBytes: MAX_ATTACHMENT_BYTES,
    },

    async connect(h, connectOptions) {
      if (running || handlers) return;
      await check();
      handlers = h;
      if (connectOptions?.receive === false) return;
      delivery = new FeedDelivery(connectOptions?.feed, report);
      const controller = new AbortController();
      // Resolves once events flow (or the first attempt failed and retries run in the background),
      // so a message sent right after start-up is not missed.
      let opened: () => void = () => undefined;
      const open = new Promise<void>((resolve) => {
        opened = resolve;
      });
      // Events a dead instance took and never finished are handed on again from here, first.
      const redeliver = (r: ReclaimedUpdate) => {
        const receipt = delivery.receipt(r.id, r);
        onEvent(JSON.stringify(r.payload), controller.signal, receipt ? { id: r.id, receipt } : { id: r.id });
      };
      await delivery.reclaimNow(controller.signal, redeliver);
      running = {
        controller,
        loop: Promise.all([
          streamLoop(controller.signal, opened),
          delivery.reclaiming(controller.signal, redeliver),
        ]).then(
          () => undefined,
          (err: unknown) => report(`Signal events stopped: ${describe(err)}`),
        ),
      };
      await open;
    },

    async disconnect() {
      const current = running;
      running = undefined;
      current?.controller.abort();
      await current?.loop;
      await Promise.allSettled([...chains.values()]);
      handlers = undefined;
    },

    async send(target, text, sendOptions: SendOptions = {}) {
      const body = prepare(text, sendOptions.plain);
      await stopTyping(target);
      return { messageId: await sendText(target, body) };
    },

    async edit(target, messageId, text, sendOptions: SendOptions = {}) {
      // Signal allows a few edits per message; callers that edit once (not streams) may use it.
      const id = parseSignalMessageId(messageId);
      if (!id) throw new PlatformError(`cannot edit Signal message "${messageId}": not a Signal message id`);
      await sendText({ chatId: target.chatId, threadId: target.threadId }, prepare(text, sendOptions.plain), {
        editTimestamp: id.timestamp,
      });
    },

    async typing(target) {
      const key = routingKey(target);
      const failure = typingFailures.get(key);
      if (failure && Date.now() < failure.until) return;
      try {
        await rpc("sendTyping", routing(target), 10_000);
        typingFailures.delete(key);
        typingIn.add(key);
      } catch {
        // Typing is a courtesy: after three failures in a row, back off (16 s, doubling, ≤ 60 s).
        const count = (failure?.count ?? 0) + 1;
        const wait = count >= 3 ? Math.min(60_000, 16_000 * 2 ** (count - 3)) : 0;
        typingFailures.set(key, { count, until: Date.now() + wait });
      }
    },

    async sendMedia(target, media) {
      await uploadSize(media.path, {
        to: "to Signal",
        maxBytes: MAX_ATTACHMENT_BYTES,
        limit: "Signal attachments are limited to 100 MB",
      });
      const name = basename(media.path);
      const mime = mimeFor(name);
      // A data URI works whether or not signal-cli shares this machine's file system.
      const uri = `data:${mime};filename=${encodeURIComponent(name)};base64,${(await readFile(media.path)).toString("base64")}`;
      const caption = media.caption?.trim() ? markdownToSignal(media.caption) : { text: "", styles: [] };
      const result = await rpc("send", {
        ...routing(target),
        message: caption.text,
        ...(caption.styles.length > 0 ? { textStyle: caption.styles.map(styleString) } : {}),
        attachments: [uri],
      });
      await stopTyping(target);
      const ts = checkResults(result, `${name} to ${target.chatId}`);
      return { messageId: ts !== undefined ? signalMessageId(ts, account) : "" };
    },

    async processing(message, state) {
      if (state === "started") return react(message, "👀");
      await react(message, "👀", true);
      await react(message, state === "succeeded" ? "✅" : "❌");
    },
  };
  return adapter;
}
