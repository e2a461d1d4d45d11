/**
 * The contract between the gateway and one messaging platform (Telegram, Discord, Slack, ...).
 *
 * An adapter turns the platform's events into `InboundMessage`/`InboundAction` values and carries
 * the gateway's output back: plain sends, edits (streaming), typing, native media and button rows.
 * It knows nothing about agents, sessions or authorization: the router (`../messaging/router.ts`)
 * decides who may talk, which session a message belongs to and what to answer. Adapters convert
 * the agent's markdown into their platform's format themselves (`send`/`edit` take markdown).
 *
 * Adapters never throw from their event handlers: a malformed platform payload is reported through
 * `AdapterHandlers.onError` and dropped.
 */

import type { FeedLedger, ReclaimedUpdate } from "../../state/coordination.js";
import type { WebhookDeliveries } from "../../state/gateway/webhook-deliveries.js";
import type { ChatType } from "../session-key.js";

/** Where a message came from, as every platform can describe it. */
export interface MessageSource {
  /** Platform value as Hermes spells it: `telegram`, `discord`, `slack`. */
  platform: string;
  chatType: ChatType;
  /** Chat, channel or conversation id. */
  chatId: string;
  /** Human name of the chat (group title, channel name), for logs and the prompt. */
  chatName?: string | undefined;
  /** Sender id. */
  userId: string;
  /** Sender handle or display name. */
  userName?: string | undefined;
  /** Forum topic, Discord thread, Slack thread ts. */
  threadId?: string | undefined;
  /** Slack workspace id / Discord guild id. */
  scopeId?: string | undefined;
}

export type MediaKind = "photo" | "document" | "voice" | "audio" | "video";

/** A file a user sent, already downloaded by the adapter into the home's media cache. */
export interface InboundMedia {
  kind: MediaKind;
  /** Absolute local path of the stored copy. */
  path: string;
  mimeType?: string | undefined;
  fileName?: string | undefined;
}

/** One user message. */
export interface InboundMessage {
  source: MessageSource;
  /** The text or caption (empty for a bare photo or voice note). */
  text: string;
  /** The platform's id of this message (reply threading). */
  messageId?: string | undefined;
  media?: InboundMedia[] | undefined;
  /**
   * For group/channel messages: the adapter has already applied mention gating, so a message it
   * passes on is addressed to the bot. `mentioned` records whether it was an explicit mention.
   */
  mentioned?: boolean | undefined;
  /**
   * Several instances: the message came from a shared update feed (`ConnectOptions.feed`) and is
   * handed on again by another instance if this one dies before calling `done`. Absent elsewhere.
   */
  receipt?: DeliveryReceipt | undefined;
}

/** The gateway's side of a feed message's at-least-once delivery (`InboundMessage.receipt`). */
export interface DeliveryReceipt {
  /** Set when the instance that first took the message died before it was done with it. */
  readonly redelivered?: { takenAt: Date; attempts: number } | undefined;
  /**
   * The gateway finished with the message: its turn's answer is stored (it is sent right after),
   * or the turn ended otherwise (failed, stopped), or the message was refused, answered as a
   * command, or passed to the instance running its chat. Idempotent; resolves once recorded (or
   * given up after retries), never rejects.
   */
  done(): Promise<void>;
}

/** A button press on a message the gateway sent (approval buttons). */
export interface InboundAction {
  source: MessageSource;
  /** The `data` of the pressed `Button`. */
  data: string;
  /** The message the button belonged to. */
  messageId?: string | undefined;
  /** Answers the press on platforms that need it (Telegram callback queries); optional toast text. */
  acknowledge?: ((text?: string) => Promise<void>) | undefined;
}

export interface AdapterHandlers {
  onMessage(message: InboundMessage): void;
  onAction(action: InboundAction): void;
  /** A problem the adapter recovered from (malformed payload, failed download); one line. */
  onError(message: string): void;
  /**
   * Whether this sender passes the gateway's allowlists and pairing (as a message from them would);
   * voice channels listen only to those. Absent: nobody is listened to.
   */
  authorized?(source: MessageSource): boolean;
}

/** Where to deliver. */
export interface OutboundTarget {
  chatId: string;
  threadId?: string | undefined;
  /** Reply to this message (platforms with reply threading). */
  replyTo?: string | undefined;
}

export interface Button {
  label: string;
  /** Opaque payload returned in `InboundAction.data` (at most 64 bytes: Telegram's limit). */
  data: string;
  style?: "primary" | "danger" | undefined;
}

export interface SendOptions {
  /** Rows of buttons under the message (platforms with `capabilities.buttons`). */
  buttons?: Button[][] | undefined;
  /** Send the text as is, without markdown conversion (pairing codes, command output). */
  plain?: boolean | undefined;
}

export interface SentMessage {
  messageId: string;
}

export interface OutboundMedia {
  kind: MediaKind;
  /** Absolute local path. */
  path: string;
  caption?: string | undefined;
}

export interface PlatformCapabilities {
  /** Longest text one message may carry (after formatting), e.g. 4096 on Telegram. */
  maxMessageLength: number;
  /** `edit` works: replies can stream by editing one message. */
  edit: boolean;
  /** `SendOptions.buttons` are shown. */
  buttons: boolean;
  /** `typing` shows something. */
  typing: boolean;
  /** `sendMedia` uploads natively. */
  media: boolean;
  /** Largest upload in bytes. */
  maxMediaBytes: number;
}

/** A slash command offered in the platform's command menu. */
export interface BotCommand {
  name: string;
  description: string;
}

export interface ConnectOptions {
  /** Receive events (default true). */
  receive?: boolean;
  /**
   * Shared with the other instances of a gateway over one database: where the platform's update
   * feed stands and which updates were taken already (Telegram's getUpdates). Absent on a lone
   * instance, where the platform's own confirmation is enough.
   */
  feed?: FeedLedger;
}

export type { FeedLedger, ReclaimedUpdate };

export interface PlatformAdapter {
  /** Platform value: `telegram`, `discord`, `slack`. */
  readonly platform: string;
  readonly capabilities: PlatformCapabilities;
  /**
   * Checks the token and starts receiving events. Rejects with a clear message when the token is
   * refused or the service cannot be reached. With `receive: false` (`hermes send`) it only gets
   * ready to send: no polling, socket or listening port, so it never competes with a running gateway.
   */
  connect(handlers: AdapterHandlers, options?: ConnectOptions): Promise<void>;
  /** Stops receiving events and releases connections. Idempotent. */
  disconnect(): Promise<void>;
  /** Sends markdown text (converted to the platform's format). Throws `PlatformError` on failure. */
  send(target: OutboundTarget, text: string, options?: SendOptions): Promise<SentMessage>;
  /** Replaces a sent message's text (and removes its buttons unless given again). */
  edit(target: OutboundTarget, messageId: string, text: string, options?: SendOptions): Promise<void>;
  /** Shows "typing…" for a few seconds; the router repeats it while the agent works. Never throws. */
  typing(target: OutboundTarget): Promise<void>;
  /** Uploads a local file as a native photo, document, voice note, audio or video. */
  sendMedia(target: OutboundTarget, media: OutboundMedia): Promise<SentMessage>;
  /** Publishes the command menu (Telegram's BotCommand list); optional. */
  setCommands?(commands: readonly BotCommand[]): Promise<void>;
  /**
   * The gateway started, finished or failed a turn answering `message` from an authorized user
   * (Signal reacts 👀, then ✅ or ❌, as upstream does); not called for interrupted turns. Optional;
   * never throws.
   */
  processing?(message: InboundMessage, state: ProcessingState): Promise<void>;
  /** Live voice channels (`/voice join|channel|leave`, Discord); absent on other platforms. */
  voiceChannels?: VoiceChannelControl;
}

/** The words `/voice` hands to a platform's voice channels. */
export type VoiceChannelWord = "join" | "channel" | "leave";

/** Speech for a voice channel: the gateway's engine (`tts.*`/`stt.*`), lent to the adapter at `/voice join`. */
export interface VoiceSpeech {
  /** The words spoken in an audio file (the STT provider chain). */
  transcribe(file: string, signal?: AbortSignal): Promise<string>;
  /** Speaks `text` into an Ogg/Opus file at `outputPath` (the TTS provider chain). */
  synthesize(text: string, outputPath: string, signal?: AbortSignal): Promise<void>;
}

/** A platform's live voice channels. */
export interface VoiceChannelControl {
  /** `/voice join|channel|leave` typed by `source`: the lines to answer with. Throws a user-facing Error. */
  run(word: VoiceChannelWord, source: MessageSource, rest: string, speech: VoiceSpeech): Promise<string[]>;
  /**
   * For a voice channel's conversation (a transcript's source): speaks plain text into that
   * channel, resolving once playback has started (or failed: the text channel gets a note).
   * Undefined for any other chat.
   */
  speaker(source: MessageSource): ((text: string) => Promise<void>) | undefined;
}

export type ProcessingState = "started" | "succeeded" | "failed";

/** A platform call that failed; `retryAfterMs` when the platform asked to slow down. */
export class PlatformError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "PlatformError";
  }
}

/** What every adapter factory receives. */
export interface AdapterContext {
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  /** The platform's section of config.yaml (`telegram:`, `discord:`, `slack:`), or `{}`. */
  settings: Readonly<Record<string, unknown>>;
  /** Where inbound files go: `<home>/cache/media` (created on demand). */
  mediaDir: string;
  /** Largest inbound file to download (`gateway.max_inbound_media_bytes`). */
  maxInboundMediaBytes: number;
  /**
   * Inbound ids taken by any instance sharing the database (several instances behind a load
   * balancer): a platform's retry, or its second event for one message, that reached another
   * instance is not handed to the agent again. Absent on one instance (the adapter's memory does).
   */
  deliveries?: WebhookDeliveries;
}
