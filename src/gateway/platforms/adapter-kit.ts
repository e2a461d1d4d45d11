/**
 * What several platform adapters did the same way, once: reading a string setting from the
 * platform's config section, checking a file before it is uploaded, typing that must never fail a
 * reply, handing an inbound message to the router without letting a router failure stop the
 * adapter's event loop, work queued per chat, and opening, reading and closing a webhook listener.
 */
import type { IncomingMessage, Server } from "node:http";
import { basename } from "node:path";
import { errorText, outboundFileSize } from "./media-files.js";
import {
  type AdapterContext,
  type AdapterHandlers,
  type InboundMedia,
  type InboundMessage,
  PlatformError,
} from "./types.js";

/**
 * Whether this instance hands an inbound message to the agent: false when an instance sharing the
 * database (this one included) already took `id` on `platform` within the hour. Always true on a
 * lone instance. A database that does not answer lets it through: a reply twice beats none.
 */
export async function firstDelivery(ctx: AdapterContext, platform: string, id: string): Promise<boolean> {
  if (!ctx.deliveries) return true;
  return ctx.deliveries.claim(`platform/${platform}`, id, Date.now()).catch(() => true);
}

/** A setting of the platform's config section as a trimmed, non-empty string; else undefined. */
export function stringSetting(settings: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const value = settings[key];
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

export interface UploadLimit {
  /** How the file goes, in the error: "to Matrix", "by MMS". */
  to: string;
  maxBytes: number;
  /** The limit in words, after "<file> is N bytes; ": "Signal attachments are limited to 100 MB". */
  limit: string;
  /**
   * An empty file is reported as outside the limit ("MMS carries 1 byte to 5 MB") rather than as
   * "the file is empty".
   */
  emptyIsOutOfRange?: boolean;
}

/**
 * The size of a file about to be uploaded; throws a `PlatformError` that names the file when it is
 * missing, not a regular file, empty or larger than the platform takes.
 */
export async function uploadSize(path: string, rule: UploadLimit): Promise<number> {
  const size = await outboundFileSize(path, rule.to);
  if (size === 0 && !rule.emptyIsOutOfRange) {
    throw new PlatformError(`cannot send ${path} ${rule.to}: the file is empty`);
  }
  if (size === 0 || size > rule.maxBytes) {
    throw new PlatformError(`${basename(path)} is ${size} bytes; ${rule.limit}`);
  }
  return size;
}

/** Runs a typing indicator (or another courtesy): a failure is dropped, never a failed reply. */
export async function courtesy(work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch {
    // Typing is a courtesy.
  }
}

/** The message with notes about attachments that could not be fetched, and the ones that were. */
export function withAttachments(
  message: InboundMessage,
  notes: readonly string[],
  media: readonly InboundMedia[],
): InboundMessage {
  return {
    ...message,
    text: [message.text, ...notes].filter(Boolean).join("\n\n"),
    ...(media.length > 0 ? { media: [...media] } : {}),
  };
}

/**
 * Gives the router a message; a throw there is reported ("the gateway failed to handle a
 * <what>: …") and never reaches the adapter's event loop.
 */
export function handOver(
  handlers: AdapterHandlers | undefined,
  message: InboundMessage,
  report: (line: string) => void,
  what: string,
): void {
  try {
    handlers?.onMessage(message);
  } catch (err) {
    report(`the gateway failed to handle a ${what}: ${errorText(err)}`);
  }
}

/** Closes a webhook listener and its open connections; resolves when it has closed. */
export async function closeListener(server: Server | undefined): Promise<void> {
  if (!server) return;
  server.closeAllConnections?.();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * Opens a webhook listener on `host:port`. When it cannot (the port is taken, the address is not
 * ours), rejects with a PlatformError that names the address and the setting to change.
 */
export function listenWebhook(
  server: Server,
  host: string,
  port: number,
  names: { listener: string; portSetting: string },
): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", (err) =>
      reject(
        new PlatformError(
          `the ${names.listener} webhook listener could not open ${host}:${port} (${errorText(err)}): set ${names.portSetting} to a free port`,
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
}

/**
 * Collects a webhook request's body. Past `maxBytes` it calls `tooLarge` once (which answers 413)
 * and drops the request; otherwise `done` gets the whole body at its end.
 */
export function readWebhookBody(
  req: IncomingMessage,
  maxBytes: number,
  tooLarge: () => void,
  done: (raw: Buffer) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) {
      tooLarge();
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on("end", () => {
    if (size <= maxBytes) done(Buffer.concat(chunks));
  });
}

/** Work queued per chat, from `chatQueue`. */
export interface ChatQueue {
  /** Runs `work` after the work queued for `chat` before it. */
  add(chat: string, work: () => Promise<void>): void;
  /** Resolves once everything queued so far has run (for disconnect). */
  idle(): Promise<void>;
}

/**
 * Work run in order per chat (a message waiting for its file is never overtaken by the next one),
 * chats side by side. A failure goes to `failed` and does not stop the chat's later work.
 */
export function chatQueue(failed: (err: unknown) => void): ChatQueue {
  const chains = new Map<string, Promise<void>>();
  return {
    add(chat, work) {
      const next = (chains.get(chat) ?? Promise.resolve())
        .then(work)
        .catch((err: unknown) => failed(err))
        .finally(() => {
          if (chains.get(chat) === next) chains.delete(chat);
        });
      chains.set(chat, next);
    },
    async idle() {
      await Promise.allSettled([...chains.values()]);
    },
  };
}
