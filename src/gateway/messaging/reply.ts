/**
 * The visible side of one running turn in a chat: the typing indicator, tool-progress lines and
 * the answer streamed by editing one message (where the platform can edit), then the final
 * delivery (silence tokens, attachments, chunking).
 */
import { parseToolProgress, previewArgs, type ToolProgress, toolEmoji } from "../../agent/tool-display.js";
import { redactText } from "../../util/redact.js";
import type { OutboundTarget, PlatformAdapter } from "../platforms/types.js";
import { chunkMarkdown, extractMedia, isSilent } from "./output.js";
import { redactGrowingText } from "./redact-growing.js";

export interface StreamSettings {
  enabled: boolean;
  /** Seconds between edits. */
  editInterval: number;
  /** Characters before the first message is sent. */
  bufferThreshold: number;
  cursor: string;
}

const section = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** Platforms that stream unless told otherwise (Hermes streams on Telegram by default). */
const STREAM_BY_DEFAULT = new Set(["telegram"]);

/** Streaming settings for a platform: `display.platforms.<p>.streaming`, else `streaming.enabled`, else the platform's default. */
export function streamSettings(config: Record<string, unknown>, platform: string): StreamSettings {
  const streaming = section(config["streaming"]);
  const perPlatform = section(section(section(config["display"])["platforms"])[platform]);
  const flag = perPlatform["streaming"] ?? streaming["enabled"];
  const interval = Number(streaming["edit_interval"]);
  const threshold = Number(streaming["buffer_threshold"]);
  return {
    enabled: typeof flag === "boolean" ? flag : STREAM_BY_DEFAULT.has(platform),
    editInterval: Number.isFinite(interval) && interval > 0 ? interval : 0.8,
    bufferThreshold: Number.isFinite(threshold) && threshold >= 0 ? threshold : 24,
    cursor: typeof streaming["cursor"] === "string" ? streaming["cursor"] : " ▉",
  };
}

/** `display.platforms.<p>.tool_progress`, else `display.tool_progress`. */
export function toolProgressLevel(config: Record<string, unknown>, platform: string): ToolProgress {
  const display = section(config["display"]);
  const perPlatform = section(section(display["platforms"])[platform]);
  return parseToolProgress(perPlatform["tool_progress"] ?? display["tool_progress"], "all");
}

/** Could `text` still grow into a silence token? Then it must not be streamed yet. */
function maybeSilent(text: string): boolean {
  const t = text.trim().toUpperCase();
  return ["[SILENT]", "SILENT", "NO_REPLY", "[NO_REPLY]"].some(
    (token) => token.startsWith(t) || t.startsWith(token),
  );
}

/** What a streamed message says once its text was withdrawn, until the retry's text replaces it. */
const RETRYING = "↻ The answer broke off; retrying…";

export class ReplyView {
  private typingTimer: ReturnType<typeof setInterval> | undefined;
  private progressLines: string[] = [];
  private progressId: string | undefined;
  private progressDirty = false;
  private progressTimer: ReturnType<typeof setTimeout> | undefined;
  private lastTool: string | undefined;
  /** The streamed text of the current segment, and the message showing it. */
  private segment = "";
  private segmentId: string | undefined;
  private shown = "";
  private editTimer: ReturnType<typeof setTimeout> | undefined;
  private lastEdit = 0;
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** The message this turn answers; the first message sent replies to it (then it is spent). */
  private replyTo: string | undefined;

  constructor(
    private readonly adapter: PlatformAdapter,
    private readonly target: OutboundTarget,
    private readonly options: {
      stream: StreamSettings;
      progress: ToolProgress;
      onError: (message: string) => void;
      /** Reply to this message with the first message sent (group chats). */
      replyTo?: string | undefined;
      /** Speaks the answer after its text (`/voice`); gets the redacted text without attachments. */
      voice?: ((text: string) => Promise<void>) | undefined;
    },
  ) {
    this.replyTo = options.replyTo;
  }

  /** Where a new message goes: the first one replies to the user's message. */
  private sendTarget(): OutboundTarget {
    if (!this.replyTo) return this.target;
    const target = { ...this.target, replyTo: this.replyTo };
    this.replyTo = undefined;
    return target;
  }

  /** Shows "typing…" now and every 4 s until `close`. */
  startTyping(): void {
    if (!this.adapter.capabilities.typing) return;
    const tick = () => void this.adapter.typing(this.target).catch(() => undefined);
    tick();
    this.typingTimer = setInterval(tick, 4000);
    this.typingTimer.unref?.();
  }

  /** A tool call started (top-level calls only; nested ones are not shown in chats). */
  toolStarted(name: string, args: Record<string, unknown>): void {
    this.endSegment();
    const level = this.options.progress;
    if (level === "off") return;
    if (level === "new" && name === this.lastTool) return;
    this.lastTool = name;
    const preview = previewArgs(name, args, level === "verbose" ? 300 : 60);
    this.progressLines.push(`${toolEmoji(name)} ${name}${preview ? `: ${preview}` : ""}`);
    this.progressDirty = true;
    this.scheduleProgress();
  }

  /** A line about the turn itself (a retry's wait), shown with the tool progress unless that is off. */
  notice(line: string): void {
    if (this.options.progress === "off" || this.closed) return;
    this.progressLines.push(line);
    this.progressDirty = true;
    this.scheduleProgress();
  }

  private scheduleProgress(): void {
    if (this.progressTimer || this.closed) return;
    this.progressTimer = setTimeout(() => {
      this.progressTimer = undefined;
      void this.flushProgress();
    }, 400);
    this.progressTimer.unref?.();
  }

  private flushProgress(): Promise<unknown> {
    this.chain = this.chain.then(async () => {
      if (!this.progressDirty) return;
      this.progressDirty = false;
      const edit = this.adapter.capabilities.edit;
      const max = this.adapter.capabilities.maxMessageLength - 16;
      let text = this.progressLines.join("\n");
      if (text.length > max) text = `…\n${text.slice(text.length - max)}`;
      try {
        if (edit && this.progressId) {
          await this.adapter.edit(this.target, this.progressId, text, { plain: true });
        } else if (edit) {
          this.progressId = (await this.adapter.send(this.sendTarget(), text, { plain: true })).messageId;
        } else {
          // No edits: one message per batch of new lines.
          const fresh = this.progressLines.splice(0);
          if (fresh.length) await this.adapter.send(this.sendTarget(), fresh.join("\n"), { plain: true });
        }
      } catch (error) {
        this.options.onError(`tool progress: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
    return this.chain;
  }

  /** Streamed answer text. */
  textDelta(delta: string): void {
    if (!this.options.stream.enabled || !this.adapter.capabilities.edit || this.closed) return;
    this.segment += delta;
    if (this.segmentId === undefined) {
      if (this.segment.trim().length < this.options.stream.bufferThreshold || maybeSilent(this.segment))
        return;
    }
    this.scheduleEdit();
  }

  private scheduleEdit(): void {
    if (this.editTimer) return;
    const wait = Math.max(0, this.lastEdit + this.options.stream.editInterval * 1000 - Date.now());
    this.editTimer = setTimeout(() => {
      this.editTimer = undefined;
      void this.pushSegment(true);
    }, wait);
    this.editTimer.unref?.();
  }

  /** Shows the current segment (with the cursor while it is still growing). */
  private pushSegment(growing: boolean): Promise<unknown> {
    // While it grows, a secret may be only half streamed: its start is not shown until it is whole.
    const text = growing ? redactGrowingText(this.segment.trim()) : this.segment.trim();
    this.chain = this.chain.then(async () => {
      const max = this.adapter.capabilities.maxMessageLength - 8;
      if (!text || text.length > max) return; // too long to stream: the final delivery chunks it
      const body = growing ? `${text}${this.options.stream.cursor}` : text;
      if (body === this.shown) return;
      this.lastEdit = Date.now();
      try {
        if (this.segmentId === undefined) {
          this.segmentId = (await this.adapter.send(this.sendTarget(), body)).messageId;
        } else {
          await this.adapter.edit(this.target, this.segmentId, body);
        }
        this.shown = body;
      } catch (error) {
        this.options.onError(`streaming: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
    return this.chain;
  }

  /**
   * The model call's attempt failed after streaming (`stream_discarded`): its text is not the
   * answer. A message already showing it is edited to say the answer is being retried, and the
   * retry's text (or the final answer) replaces that; text not shown yet is dropped.
   */
  discard(): void {
    if (this.closed) return;
    if (this.editTimer) {
      clearTimeout(this.editTimer);
      this.editTimer = undefined;
    }
    this.segment = "";
    // Inside the chain: a send of the fragment may still be in flight.
    this.chain = this.chain.then(async () => {
      if (this.segmentId === undefined || this.shown === RETRYING) return;
      try {
        await this.adapter.edit(this.target, this.segmentId, RETRYING);
        this.shown = RETRYING;
      } catch (error) {
        this.options.onError(`streaming: ${error instanceof Error ? error.message : String(error)}`);
      }
    });
  }

  /** Text before a tool call stays as its own message; the next text starts a new one. */
  private endSegment(): void {
    if (this.editTimer) {
      clearTimeout(this.editTimer);
      this.editTimer = undefined;
    }
    if (this.segmentId !== undefined) void this.pushSegment(false);
    const id = this.segmentId;
    this.chain = this.chain.then(() => {
      if (this.segmentId === id) {
        this.segmentId = undefined;
        this.shown = "";
      }
    });
    this.segment = "";
  }

  /** A new model call began (after tool results). */
  turnStarted(): void {
    if (this.segment) this.endSegment();
  }

  private stopTimers(): void {
    this.closed = true;
    if (this.typingTimer) clearInterval(this.typingTimer);
    if (this.progressTimer) clearTimeout(this.progressTimer);
    if (this.editTimer) clearTimeout(this.editTimer);
    this.typingTimer = this.progressTimer = this.editTimer = undefined;
  }

  /**
   * Delivers the final answer: nothing for a silence token, else the text in chunks (the first
   * replacing the streamed message when there is one), `footer` after it, and each attachment
   * natively.
   */
  async finish(answer: string, footer = ""): Promise<void> {
    this.stopTimers();
    if (this.progressDirty) await this.flushProgress();
    await this.chain;
    // A silent answer stays silent: the footer (display.runtime_footer) never goes out alone.
    if (!answer.trim() || isSilent(answer)) return;
    const { text, media, problems } = extractMedia(answer);
    const notes = problems.map((p) => `⚠️ Could not attach ${p}`);
    // Redacted before it is cut into messages, so a cut never splits a secret past recognition.
    const body = redactText([text, ...notes, footer].filter(Boolean).join("\n\n"));
    const chunks = chunkMarkdown(body, this.adapter.capabilities.maxMessageLength - 32);
    let first = true;
    for (const chunk of chunks) {
      try {
        if (first && this.segmentId !== undefined) {
          if (chunk !== this.shown) await this.adapter.edit(this.target, this.segmentId, chunk);
        } else {
          await this.adapter.send(this.sendTarget(), chunk);
        }
      } catch (error) {
        this.options.onError(`reply: ${error instanceof Error ? error.message : String(error)}`);
      }
      first = false;
    }
    for (const item of media) {
      try {
        if (!this.adapter.capabilities.media) throw new Error("this platform takes no attachments");
        await this.adapter.sendMedia(this.target, item);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        this.options.onError(`attachment ${item.path}: ${reason}`);
        await this.adapter
          .send(this.target, `⚠️ Could not send ${item.path}: ${reason}`, { plain: true })
          .catch(() => undefined);
      }
    }
    // An answer that already carries audio (the text_to_speech tool's) is not spoken twice.
    const spoken = media.some((m) => m.kind === "voice" || m.kind === "audio");
    if (this.options.voice && !spoken) await this.options.voice(redactText(text));
  }

  /** Ends the view without an answer (interrupted, stopped). */
  async abandon(): Promise<void> {
    this.stopTimers();
    if (this.progressDirty) await this.flushProgress();
    if (this.segmentId !== undefined) await this.pushSegment(false);
    await this.chain;
  }
}
