/**
 * The chat side of the shared slash commands (`src/commands/`): how a conversation in a chat
 * becomes a `CommandContext` (markdown paint, one message per reply, a question answered by the
 * next message), the pending questions per conversation, and the platforms' command menu. The
 * router supplies the conversation's state and actions; the commands themselves live below.
 */
import type { ChatSession } from "../../agent/chat-session.js";
import {
  type ChatActions,
  type CommandContext,
  type CommandRegistry,
  type CommandSettings,
  createCommandRegistry,
  type DispatchOutcome,
  type MessageQueue,
  type Paint,
  type VoiceControl,
} from "../../commands/index.js";
import { pluginCommands } from "../../commands/plugin-commands.js";
import { setEnvVar } from "../../config/env-file.js";
import { platformEnvPrefix } from "../../state/gateway/allowlist.js";
import type { McpManager } from "../../tools/mcp/manager.js";
import type { ChatTier } from "../auth/admin.js";
import type { BotCommand, InboundMessage, MessageSource } from "../platforms/types.js";

export type BusyMode = "interrupt" | "queue" | "steer";

const section = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** `display.platforms.<p>.busy_input_mode`, else `display.busy_input_mode` (default interrupt). */
export function busyModeOf(config: Record<string, unknown>, platform: string): BusyMode {
  const display = section(config["display"]);
  const raw =
    section(section(display["platforms"])[platform])["busy_input_mode"] ?? display["busy_input_mode"];
  const mode = String(raw ?? "interrupt").toLowerCase();
  return mode === "queue" || mode === "steer" ? mode : "interrupt";
}

/**
 * The registry every chat dispatches through, built when this module loads: before the gateway
 * loads plugins, so their commands join it through `addPluginChatCommands`.
 */
export const chatCommands: CommandRegistry = createCommandRegistry();

/**
 * Adds the commands plugins registered since `chatCommands` was built (call once plugins loaded,
 * before the platforms publish their menus). A name a built-in command holds stays built-in.
 */
export function addPluginChatCommands(): void {
  for (const command of pluginCommands()) chatCommands.addIfFree(command);
}

/** Telegram's menu (and any platform's command list): what the chat surface offers. */
export function chatCommandMenu(): BotCommand[] {
  return chatCommands.menu();
}

/** One entry of a Slack app manifest's `features.slash_commands`. */
export interface SlackSlashCommand {
  command: string;
  description: string;
  usage_hint?: string;
  should_escape: boolean;
  /** HTTP mode only: where Slack posts the command (Socket Mode needs none). */
  url?: string;
}

/**
 * The `features.slash_commands` of the Slack app manifest, from the registry: upstream's one
 * `/hermes` command whose first word is any chat command, and with `each` every chat command
 * under its own name as well. `url`: the Events URL, for an app in HTTP mode.
 */
export function slackSlashCommands(options: { each?: boolean; url?: string } = {}): SlackSlashCommand[] {
  const at = options.url ? { url: options.url } : {};
  const commands = chatCommands.all("chat");
  const hint = commands.map((c) => c.name).join(" | ");
  const list: SlackSlashCommand[] = [
    {
      command: "/hermes",
      description: "Run a Hermes command (/hermes help lists them)",
      usage_hint: hint.length > 1000 ? `${hint.slice(0, 999)}…` : hint,
      should_escape: false,
      ...at,
    },
  ];
  if (options.each) {
    for (const c of commands) {
      list.push({
        command: `/${c.name}`.slice(0, 32),
        description: c.description.charAt(0).toUpperCase() + c.description.slice(1),
        ...(c.args ? { usage_hint: c.args } : {}),
        should_escape: false,
        ...at,
      });
    }
  }
  return list;
}

/** Markdown for the chat: bold stays bold, colours and dimming have no meaning there. */
export const chatPaint: Paint = {
  bold: (t) => (t.trim() ? `**${t}**` : t),
  dim: (t) => t,
  red: (t) => t,
  green: (t) => t,
  yellow: (t) => t,
  cyan: (t) => t,
  table: (rows) => rows.map(([k, v]) => `**${k}:** ${v}`),
};

/**
 * Questions a command asked and the next message in the conversation answers (`/resume` with no
 * argument). One per conversation; a new question, a command or the timeout cancels the old one.
 */
export class ChatQuestions {
  private readonly pending = new Map<string, { resolve: (answer: string | null) => void }>();

  constructor(private readonly timeoutMs: number) {}

  has(key: string): boolean {
    return this.pending.has(key);
  }

  /** Resolves with the next message's text, or null when cancelled or unanswered in time. */
  wait(key: string): Promise<string | null> {
    this.cancel(key);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(key, null), this.timeoutMs);
      timer.unref?.();
      this.pending.set(key, {
        resolve: (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
      });
    });
  }

  /** Hands `text` to the waiting question; false when none waits. */
  answer(key: string, text: string): boolean {
    return this.settle(key, text);
  }

  cancel(key?: string): void {
    for (const k of key === undefined ? [...this.pending.keys()] : [key]) this.settle(k, null);
  }

  private settle(key: string, answer: string | null): boolean {
    const waiting = this.pending.get(key);
    if (!waiting) return false;
    this.pending.delete(key);
    waiting.resolve(answer);
    return true;
  }
}

/** What the router hands over for one command in one conversation. */
export interface ChatCommandParts {
  source: MessageSource;
  tier: ChatTier;
  chat: ChatSession;
  busy: () => boolean;
  settings: CommandSettings;
  queue: MessageQueue;
  say: (text: string) => Promise<void>;
  /** Waits for the conversation's next message (see `ChatQuestions.wait`). */
  nextMessage: () => Promise<string | null>;
  send: (text: string) => void;
  stop: () => void;
  newSession: (title?: string) => Promise<void>;
  sessionChanged: () => void;
  actions: ChatActions;
  toolsets: readonly string[];
  mcp?: (() => Promise<McpManager>) | undefined;
  /** `/voice`: this chat's spoken replies. */
  voice?: VoiceControl | undefined;
  now: () => Date;
}

/**
 * The conversation as a `CommandContext`. Each `reply` is one chat message, sent in call order;
 * `flush` resolves once all of them are out.
 */
export function chatCommandContext(parts: ChatCommandParts): {
  ctx: CommandContext;
  flush: () => Promise<void>;
} {
  let chain = Promise.resolve();
  const post = (text: string) => {
    if (!text.trim()) return;
    chain = chain.then(() => parts.say(text));
  };
  const { source, tier } = parts;
  const ctx: CommandContext = {
    surface: {
      kind: "chat",
      platform: source.platform,
      isAdmin: tier.isAdmin,
      userId: source.userId,
      chatType: source.chatType,
      userAllowedCommands: tier.userAllowedCommands,
    },
    session: parts.chat,
    paint: chatPaint,
    reply: (...lines) => post(lines.join("\n")),
    ask: (lines, prompt) => {
      // Listen before asking: the answer may arrive before the question's send returns.
      const answer = parts.nextMessage();
      post([...lines, "", prompt].join("\n"));
      return answer;
    },
    get running() {
      return parts.busy();
    },
    turnSeconds: null,
    settings: parts.settings,
    queue: parts.queue,
    send: parts.send,
    stop: parts.stop,
    newSession: parts.newSession,
    sessionChanged: parts.sessionChanged,
    registry: chatCommands,
    toolsets: parts.toolsets,
    ...(parts.mcp ? { mcp: parts.mcp } : {}),
    ...(parts.voice ? { voice: parts.voice } : {}),
    chat: parts.actions,
    now: () => parts.now().getTime() / 1000,
  };
  return { ctx, flush: () => chain };
}

/** A conversation's waiting messages as the commands' queue (`/queue`, `/status`). */
export function messageQueue(queue: InboundMessage[], source: MessageSource): MessageQueue {
  return {
    list: () => queue.map((m) => m.text),
    enqueue: (text) => queue.push({ source, text }),
    clear: () => queue.splice(0).length,
  };
}

/** `/sethome`: this chat (and thread) becomes `<PLATFORM>_HOME_CHANNEL`, in `.env` and in `env`. */
export function setHomeChannel(
  home: string,
  env: Record<string, string | undefined>,
  source: MessageSource,
): { variable: string; value: string } {
  const value = source.threadId ? `${source.chatId}:${source.threadId}` : source.chatId;
  const variable = `${platformEnvPrefix(source.platform)}_HOME_CHANNEL`;
  setEnvVar(home, variable, value);
  env[variable] = value;
  return { variable, value };
}

/** The log fields for a dispatched command. */
export function describeOutcome(outcome: DispatchOutcome): { command?: string; outcome: string } {
  switch (outcome.kind) {
    case "command":
      return { command: outcome.command.name, outcome: "ran" };
    case "refused":
      return { command: outcome.command.name, outcome: `refused (${outcome.reason})` };
    case "message":
      return { outcome: "message" };
    default:
      return { command: outcome.name, outcome: outcome.kind };
  }
}
