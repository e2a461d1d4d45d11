/**
 * Slash commands typed in the dashboard's chat box run through the shared command registry
 * (`src/commands/`), as a chat surface (platform `dashboard`, the home's owner, so admin): each
 * reply becomes a `command` event of markdown, a message a command sends (`/retry`, `/<skill>`,
 * `/queue`) runs as a turn after it in the same stream, and a command that replaces the session
 * (`/new`, `/resume`, `/branch`, `/undo`) re-keys the conversation and says so with a `session`
 * event. A command that asks a follow-up question gets no answer here (the question is shown; give
 * the argument on the command line instead).
 */
import {
  type CommandContext,
  type CommandRegistry,
  type CommandSettings,
  createCommandRegistry,
  dispatchInput,
  type Paint,
} from "../commands/index.js";
import type { Conversation } from "./api-chat-conversation.js";
import type { EventSink } from "./http.js";

let registry: CommandRegistry | undefined;

function commands(): CommandRegistry {
  registry ??= createCommandRegistry();
  return registry;
}

/** Markdown, as in the chats: bold stays bold, colours mean nothing in the page. */
const markdownPaint: Paint = {
  bold: (t) => (t.trim() ? `**${t}**` : t),
  dim: (t) => t,
  red: (t) => t,
  green: (t) => t,
  yellow: (t) => t,
  cyan: (t) => t,
  table: (rows) => rows.map(([k, v]) => `**${k}:** ${v}`),
};

/** Whether `text` is a slash command (or `/<skill>`) rather than a message for the model. */
export function isCommandInput(text: string): boolean {
  return commands().parse(text, "chat").kind !== "message";
}

/**
 * Runs the command `text` in `conversation`; returns the messages it asked to send (run them as
 * turns next, in order).
 */
export async function runChatCommand(
  conversation: Conversation,
  text: string,
  sink: EventSink,
  options: { toolsets: readonly string[]; settings: CommandSettings },
): Promise<string[]> {
  const sends: string[] = [];
  const session = conversation.session;
  let before = session.id;
  const changed = async (): Promise<void> => {
    conversation.sessionChanged(before);
    if (conversation.id === before) return;
    const id = conversation.id;
    before = id;
    const record = await conversation.session.loadRecord();
    sink.send("session", {
      session_id: id,
      title: record?.title ?? null,
      // A new session has no stored row (nor transcript) until its first message.
      stored: record !== null,
    });
  };
  const ctx: CommandContext = {
    surface: { kind: "chat", platform: "dashboard", isAdmin: true, chatType: "dm", userId: "dashboard" },
    session,
    paint: markdownPaint,
    reply: (...lines) => {
      const out = lines.join("\n");
      if (out.trim()) sink.send("command", { text: out });
    },
    ask: async (lines, prompt) => {
      sink.send("command", {
        text: [...lines, "", `${prompt} (answer by repeating the command with the choice after it)`].join(
          "\n",
        ),
      });
      return null;
    },
    get running() {
      return session.running;
    },
    turnSeconds: null,
    settings: options.settings,
    queue: {
      list: () => [...conversation.queued],
      enqueue: (message) => conversation.queued.push(message),
      clear: () => conversation.queued.splice(0).length,
    },
    send: (message) => {
      sends.push(message);
    },
    stop: () => {
      void conversation.stop();
    },
    newSession: async (title) => {
      await session.newSession(title);
      await changed();
    },
    sessionChanged: () => {
      void changed();
    },
    registry: commands(),
    toolsets: options.toolsets,
    chat: {
      answerApproval: () => false,
      setHome: () => {
        throw new Error(
          "The dashboard is not a chat platform: run /sethome in the chat that should be home.",
        );
      },
    },
    now: () => Date.now() / 1000,
  };
  await dispatchInput(commands(), text, ctx);
  await changed();
  return sends;
}
