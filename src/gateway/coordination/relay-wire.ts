/**
 * A chat message as it crosses to another instance (`chat.input`, `chat.action`): plain JSON, with
 * the files a user sent carried inside it (no instance reads another's disk). The receiving
 * instance writes them into its own media cache before the message reaches its router.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type { InboundAction, InboundMedia, InboundMessage, MessageSource } from "../platforms/types.js";

/** Files larger than this are not carried; the message says the file stayed behind. */
export const MAX_RELAYED_FILE_BYTES = 25 * 1024 * 1024;

export interface WireMedia {
  kind: InboundMedia["kind"];
  mimeType?: string | undefined;
  fileName?: string | undefined;
  /** base64 of the file; absent when it was too large or unreadable (`missing` says why). */
  data?: string;
  missing?: string;
}

export interface WireMessage {
  source: MessageSource;
  text: string;
  messageId?: string | undefined;
  mentioned?: boolean | undefined;
  media?: WireMedia[];
}

export interface ChatInputPayload {
  key: string;
  platform: string;
  message: WireMessage;
  /** How many times it was forwarded already (a bound against ping-pong between instances). */
  hops: number;
  /** Answered with a `chat.receipt` carrying it, so the sender knows the message arrived. */
  id?: string;
}

export interface ChatActionPayload {
  key: string;
  platform: string;
  source: MessageSource;
  data: string;
  messageId?: string | undefined;
}

/** The message as JSON, its files read in (each up to `MAX_RELAYED_FILE_BYTES`). */
export async function toWire(message: InboundMessage): Promise<WireMessage> {
  const wire: WireMessage = {
    source: { ...message.source },
    text: message.text,
    ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
    ...(message.mentioned !== undefined ? { mentioned: message.mentioned } : {}),
  };
  if (message.media?.length) {
    wire.media = [];
    for (const media of message.media) {
      const head = {
        kind: media.kind,
        ...(media.mimeType ? { mimeType: media.mimeType } : {}),
        ...(media.fileName ? { fileName: media.fileName } : {}),
      };
      try {
        const size = (await stat(media.path)).size;
        if (size > MAX_RELAYED_FILE_BYTES) {
          wire.media.push({ ...head, missing: `it is ${size} bytes, over the relay's limit` });
          continue;
        }
        wire.media.push({ ...head, data: (await readFile(media.path)).toString("base64") });
      } catch (error) {
        wire.media.push({ ...head, missing: error instanceof Error ? error.message : String(error) });
      }
    }
  }
  return wire;
}

/**
 * The message back, its files written under `mediaDir` with fresh names. A file that could not be
 * carried becomes a line in the text, so the agent knows it was sent.
 */
export async function fromWire(wire: WireMessage, mediaDir: string): Promise<InboundMessage> {
  const message: InboundMessage = {
    source: { ...wire.source },
    text: typeof wire.text === "string" ? wire.text : "",
    ...(wire.messageId !== undefined ? { messageId: wire.messageId } : {}),
    ...(wire.mentioned !== undefined ? { mentioned: wire.mentioned } : {}),
  };
  const notes: string[] = [];
  const media: InboundMedia[] = [];
  for (const item of wire.media ?? []) {
    if (typeof item.data !== "string") {
      notes.push(
        `[A ${item.kind}${item.fileName ? ` (${item.fileName})` : ""} was not carried over: ${item.missing ?? "unknown reason"}]`,
      );
      continue;
    }
    await mkdir(mediaDir, { recursive: true });
    const name = `relay-${randomBytes(6).toString("hex")}-${basename(item.fileName ?? item.kind).replace(/[^\w.-]/g, "_")}`;
    const path = join(mediaDir, name);
    await writeFile(path, Buffer.from(item.data, "base64"), { mode: 0o600 });
    media.push({
      kind: item.kind,
      path,
      ...(item.mimeType ? { mimeType: item.mimeType } : {}),
      ...(item.fileName ? { fileName: item.fileName } : {}),
    });
  }
  if (media.length) message.media = media;
  if (notes.length) message.text = [message.text, ...notes].filter(Boolean).join("\n");
  return message;
}

/** A button press as JSON (its `acknowledge` stays with the instance that received it). */
export function actionToWire(key: string, platform: string, action: InboundAction): ChatActionPayload {
  return {
    key,
    platform,
    source: { ...action.source },
    data: action.data,
    ...(action.messageId !== undefined ? { messageId: action.messageId } : {}),
  };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Whether a received payload has the shape of a forwarded chat message. */
export function isChatInput(value: unknown): value is ChatInputPayload {
  return (
    isObject(value) &&
    typeof value["key"] === "string" &&
    typeof value["platform"] === "string" &&
    typeof value["hops"] === "number" &&
    isObject(value["message"]) &&
    isObject(value["message"]["source"]) &&
    typeof value["message"]["source"]["chatId"] === "string" &&
    typeof value["message"]["source"]["userId"] === "string"
  );
}

export function isChatAction(value: unknown): value is ChatActionPayload {
  return (
    isObject(value) &&
    typeof value["key"] === "string" &&
    typeof value["platform"] === "string" &&
    typeof value["data"] === "string" &&
    isObject(value["source"]) &&
    typeof value["source"]["userId"] === "string"
  );
}
