/**
 * A chat's own toggles (`/verbose`'s tool progress, `/yolo`, and `/voice` through
 * `VoiceReplies`) as the router keeps them. They start
 * from config at the chat's first command and live on the conversation. With several instances
 * (a shared `ChatSettingsRecords`, PostgreSQL) they are also read from the database before each
 * command and turn and written after a command changed them, so a chat's setting holds whichever
 * instance takes its next message. The chat relay runs one chat on one instance at a time, and a
 * command's write is awaited before the chat is let go, so the next instance reads it.
 */
import type { ChatSession } from "../../agent/chat-session.js";
import { TOOL_PROGRESS_LEVELS, type ToolProgress } from "../../agent/tool-display.js";
import type { CommandSettings } from "../../commands/index.js";
import type { ChatSettingsRecords } from "../../state/gateway/shared-approvals.js";
import type { MessageSource } from "../platforms/types.js";
import { busyModeOf } from "./commands.js";
import { toolProgressLevel } from "./reply.js";
import type { Conversation } from "./router-types.js";

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** What a save compares: the fields that are shared. */
function stamp(settings: CommandSettings | undefined): string {
  return settings ? `${settings.toolProgress}\u0000${settings.yolo}` : "";
}

export class ChatToggles {
  constructor(
    private readonly config: Record<string, unknown>,
    private readonly records: ChatSettingsRecords | undefined,
    private readonly log: (line: string) => void,
    /** The chat's `/voice` mode, read in the same query (`VoiceReplies`). */
    private readonly voice?: {
      chatKey(source: MessageSource): string;
      apply(source: MessageSource, mode: string | undefined): void;
    },
  ) {}

  private defaults(conv: Conversation, chat: ChatSession): CommandSettings {
    return {
      toolProgress: toolProgressLevel(this.config, conv.platform),
      busyMode: busyModeOf(this.config, conv.platform),
      yolo: chat.agent.yolo,
    };
  }

  /** The settings a command reads and changes (made on first use), with the shared choices applied. */
  async forCommand(
    conv: Conversation,
    chat: ChatSession,
  ): Promise<{ settings: CommandSettings; before: string }> {
    conv.settings ??= this.defaults(conv, chat);
    await this.refresh(conv, chat);
    return { settings: conv.settings, before: stamp(conv.settings) };
  }

  /** Applies what another instance stored for this chat (nothing to do with one instance). */
  async refresh(conv: Conversation, chat: ChatSession): Promise<void> {
    if (!this.records) return;
    let stored: Awaited<ReturnType<ChatSettingsRecords["get"]>>;
    try {
      stored = await this.records.get(conv.key, this.voice?.chatKey(conv.source));
    } catch (error) {
      this.log(
        `${conv.platform}: could not read ${conv.key}'s settings from the database: ${describe(error)}`,
      );
      return;
    }
    if (!stored) return;
    this.voice?.apply(conv.source, stored.voice);
    if (stored.toolProgress === undefined && stored.yolo === undefined) return;
    conv.settings ??= this.defaults(conv, chat);
    const settings = conv.settings;
    if ((TOOL_PROGRESS_LEVELS as readonly string[]).includes(stored.toolProgress ?? ""))
      settings.toolProgress = stored.toolProgress as ToolProgress;
    if (typeof stored.yolo === "boolean") settings.yolo = stored.yolo;
  }

  /**
   * After a command: stores the settings when it changed them. Null when nothing needed saving or
   * it was saved; the problem's text when the change holds on this instance only.
   */
  async save(conv: Conversation, before: string): Promise<string | null> {
    if (!this.records || !conv.settings || stamp(conv.settings) === before) return null;
    try {
      await this.records.set(conv.key, {
        toolProgress: conv.settings.toolProgress,
        yolo: conv.settings.yolo,
      });
      return null;
    } catch (error) {
      const problem = `could not share this chat's setting with the other instances: ${describe(error)}`;
      this.log(`${conv.platform}: ${conv.key}: ${problem}`);
      return problem;
    }
  }
}
