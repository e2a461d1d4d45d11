/**
 * The contract between slash-command handlers and the surfaces that run them (the REPL in
 * `cli/`, the chat platforms in `gateway/`). A handler is written once against `CommandContext`
 * and never learns which surface it runs on except through `ctx.surface`; each surface adapts
 * its own state to this interface. Nothing here may import from `cli/` or `gateway/`.
 *
 * Rules a handler follows:
 * - It speaks only through `ctx.reply` (and `ctx.ask` for a choice), painting with `ctx.paint`,
 *   so the REPL shows colours and a chat shows markdown from the same code.
 * - It changes the conversation only through `ctx.session` and the context's own actions
 *   (`newSession`, `send`, `stop`, `queue`); after replacing the session's agent (resume, branch,
 *   undo, model) it calls `ctx.sessionChanged()` so the surface re-applies its settings and
 *   remembers where the conversation now lives.
 * - It may throw: the dispatcher shows the error's message to the user, nothing else happens.
 * - The registry decides before `run` is called whether it may run here (surface, busy, admin).
 */

import type { AgentRun, CompressionReport } from "../agent/agent.js";
import type { UsageReport } from "../agent/chat-session.js";
import type { ToolProgress } from "../agent/tool-display.js";
import type { Message } from "../ai/types.js";
import type { HermesConfig } from "../config/defaults.js";
import type { SessionRecord, SessionSummary } from "../state/types.js";
import type { McpManager } from "../tools/mcp/manager.js";
import type { ApprovalDecision, DelegationResult, ToolRuntime } from "../tools/types.js";

export type { UsageReport };

/** Where a command runs: the interactive terminal or a chat platform (Telegram, Slack, Discord…). */
export type Surface = "repl" | "chat";

/** `/help` groups, in the order it lists them (as upstream's registry groups them). */
export type CommandGroup = "Session" | "Turn" | "Settings" | "Info" | "Exit";

/**
 * The conversation a command acts on: the part of `ChatSession` handlers rely on, written out so
 * tests hand in a fake. `ChatSession` satisfies it structurally.
 */
export interface CommandSession {
  readonly id: string;
  /** The stored title (null: none, or nothing recorded yet). */
  currentTitle(): Promise<string | null>;
  readonly model: string;
  readonly provider: string;
  /** The endpoint the model is called at, when the session resolved one (`/model --global`). */
  readonly baseUrl?: string | undefined;
  /** Replaced after newSession/resume/branch/undo/setModel. */
  readonly agent: {
    yolo: boolean;
    readonly cwd: string;
    readonly home: string;
    readonly config: HermesConfig;
    readonly messages: readonly Message[];
    toolNames(): Promise<string[]>;
    /**
     * `/background PROMPT`: starts a separate agent on `prompt` (agent/subagents/background.ts);
     * `onDone` gets its result. Absent where background work is not available.
     */
    background?(
      prompt: string,
      onDone: (result: DelegationResult) => void,
    ): Promise<{ id: string; sessionId: string }>;
  };
  loadRecord(): Promise<SessionRecord | null>;
  interrupt(): void;
  steer(text: string): void;
  newSession(title?: string): Promise<void>;
  resume(ref: string): Promise<SessionRecord>;
  branch(name?: string): Promise<SessionRecord>;
  undo(turns?: number): Promise<{ removed: number; userText: string | null }>;
  retryText(): Promise<string | null>;
  setTitle(title: string | null): Promise<SessionRecord>;
  /**
   * Switches the model. `baseUrl` is the endpoint for a `provider:model` switch when the provider
   * has none configured (asked in the REPL for azure-foundry).
   */
  setModel(model: string, options?: { baseUrl?: string }): Promise<void>;
  /** The personality asked for this session; undefined means `display.personality`. */
  readonly personality: string | undefined;
  setPersonality(name: string): Promise<void>;
  /** The toolsets offered now (undefined: `config.toolsets`). */
  readonly toolsets?: readonly string[] | undefined;
  /** Other toolsets from the next turn on; the system prompt is rebuilt (one prompt-cache miss). */
  setToolsets(toolsets: readonly string[]): Promise<void>;
  /** Compresses the conversation now (`/compress [focus TOPIC]`). */
  compress(focus?: string): Promise<CompressionReport>;
  /** The message `/<skill-name> [request]` sends, or undefined when no such skill exists. */
  skillMessage(name: string, request?: string): Promise<string | undefined>;
  listSessions(limit?: number): Promise<SessionSummary[]>;
  usageReport(): Promise<UsageReport>;
  /** The model and how full its context is (no store read): what a reply's footer shows. */
  contextReport(): Pick<UsageReport, "model" | "contextTokens" | "contextLength">;
  /** The tools' shared resources (the task's browser, shells). */
  readonly toolRuntime: ToolRuntime;
}

/** A `CommandSession` that can also run turns (what the REPL drives). */
export interface RunnableSession extends CommandSession {
  readonly resumed: boolean;
  readonly running: boolean;
  /** A turn for `input`: text, or text and image parts (attached images). */
  run(input: string | Message["content"]): AgentRun;
}

/**
 * How handlers mark up text. The REPL paints ANSI colours (or nothing when colour is off); a chat
 * paints markdown (`**bold**`, no colours). `table` lays out key/value rows: padded columns in a
 * terminal, `**Key:** value` lines in a chat (absent: padded columns).
 */
export interface Paint {
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  table?(rows: ReadonlyArray<readonly [string, string]>): string[];
}

/** Settings the user changes with commands, kept by the surface for the conversation. */
export interface CommandSettings {
  toolProgress: ToolProgress;
  /** What plain text typed during a turn does (`display.busy_input_mode`). */
  busyMode: string;
  yolo: boolean;
  /** The REPL's status line is shown (`/statusbar`); absent on surfaces without one. */
  statusBar?: boolean;
}

/** Messages waiting for the running turn to end (`/queue`). */
export interface MessageQueue {
  list(): string[];
  /** Adds a message; returns how many wait now. */
  enqueue(text: string): number;
  /** Drops everything; returns how many were dropped. */
  clear(): number;
}

/** An image waiting to go with the next message. */
export interface PendingImage {
  /** The file (absolute). */
  readonly path: string;
  /** Bytes that will be sent. */
  readonly bytes: number;
  /** Set when it was shrunk to fit the model's limits. */
  readonly note?: string;
}

/**
 * Images the user attaches for the next message (`/image`, `/paste`); they go with it and are
 * then dropped. Each method throws an Error the user can act on (no such file, not an image, no
 * clipboard tool, the clipboard holds no image).
 */
export interface ImageAttachments {
  /** Reads and queues the image at `path` (relative to the working directory, `~/` allowed). */
  attach(path: string): Promise<PendingImage>;
  /** Saves the clipboard's image under the home and queues it. */
  paste(): Promise<PendingImage>;
  pending(): readonly PendingImage[];
  /** Drops what waits; returns how many were dropped. */
  clear(): number;
}

/** Facts about where and for whom a command runs. */
export interface SurfaceFacts {
  readonly kind: Surface;
  /** `cli` for the REPL; the platform (`telegram`, `slack`, …) in a chat. */
  readonly platform: string;
  /** Whether the user may run admin-only commands (always true in the REPL). */
  readonly isAdmin: boolean;
  /** Admin-only commands a non-admin may still run here (`user_allowed_commands`). */
  readonly userAllowedCommands?: readonly string[];
  readonly userId?: string;
  /** In a chat: `dm`, `group`, `channel` or `thread`. */
  readonly chatType?: string;
}

/** What only a chat can do: answer its pending approval, become the platform's home channel. */
export interface ChatActions {
  /** Answers the pending dangerous-command approval; false when nothing waits. */
  answerApproval(decision: ApprovalDecision): boolean;
  /** Makes this chat the home channel; returns the variable and value written to `.env`. */
  setHome(): { variable: string; value: string };
  /**
   * Restarts the gateway (`/restart`): running turns may finish first (`agent.restart_after_turn_timeout`).
   * Returns the seconds it waits for them, or null when this gateway cannot restart itself.
   */
  restartGateway?(): number | null;
}

export interface CommandContext {
  readonly surface: SurfaceFacts;
  /** The conversation's session; in a chat it is opened before a command runs. */
  readonly session: CommandSession;
  readonly paint: Paint;
  /**
   * Tells the user something: lines painted with `paint` (one REPL notice, or one chat message
   * per call, in call order).
   */
  reply(...lines: string[]): void;
  /**
   * Asks for a choice: shows `lines` and `prompt`, resolves with the user's answer (the next line in
   * the REPL, the next message in a chat) or null when they cancel or do not answer in time.
   */
  ask(lines: string[], prompt: string): Promise<string | null>;
  /** A turn is running. */
  readonly running: boolean;
  /** Seconds the running turn has taken, null when idle or unknown. */
  readonly turnSeconds: number | null;
  readonly settings: CommandSettings;
  readonly queue: MessageQueue;
  /** Sends `text` as the user's message (after the running turn when one runs). */
  send(text: string): void;
  /** Interrupts the running turn (and drops what waits, in a chat). */
  stop(): void;
  /** Starts a fresh session, the surface's way (a chat also drops queued messages and approvals). */
  newSession(title?: string): Promise<void>;
  /** Call after the session's agent was replaced (re-applies settings, records where we are). */
  sessionChanged(): void;
  /** Leaves the REPL with this exit code (REPL only). */
  exit?(code: number): void;
  /** Clears the terminal and shows the welcome again (REPL only, `/clear`). */
  clearScreen?(): void;
  /** The commands this surface offers (for `/help`); a `CommandRegistry`. */
  readonly registry: CommandCatalog;
  /** Toolsets this conversation was started with. */
  readonly toolsets: readonly string[];
  /** This conversation's MCP servers (started on first use); absent where MCP is not available. */
  mcp?: () => Promise<McpManager>;
  /** Images for the next message; absent where the surface cannot attach them. */
  readonly attachments?: ImageAttachments;
  /** Chat-only actions; absent in the REPL. */
  readonly chat?: ChatActions;
  /** This surface's voice mode (`/voice`); absent where there is none. See voice-commands.ts. */
  readonly voice?: VoiceControl;
  /** Clock in seconds (injectable for tests). */
  now(): number;
}

/** `/voice` words every surface understands. */
export type VoiceWord = "on" | "off" | "tts" | "status";

/**
 * A surface's voice mode, which `/voice` drives (the REPL's push-to-talk in cli/voice/, spoken
 * replies in a chat in gateway/). `/voice` parses the word and hands it over; the surface acts
 * and answers with the lines to show. It throws an Error the user can act on (no recorder, no
 * speech engine) and the command shows its message.
 */
export interface VoiceControl {
  /** Extra words this surface accepts after `/voice` (offered in completion and usage). */
  readonly extraWords?: readonly string[];
  /** `/voice WORD [rest]`: `word` is lower case, one of `VoiceWord` or `extraWords`. */
  run(word: string, rest: string): string[] | Promise<string[]>;
}

/** What a handler may ask of the registry (kept apart so the registry can import these types). */
export interface CommandCatalog {
  helpLines(
    paint: Pick<Paint, "bold" | "dim">,
    surface?: Surface,
    options?: { locked?: (command: CommandDef) => boolean },
  ): string[];
}

/** One slash command, declared once for every surface. */
export interface CommandDef {
  /** Without the slash, lower case. */
  name: string;
  aliases?: readonly string[];
  /** Shown after the name in help, e.g. `[title]` or `<text>`. */
  args?: string;
  /** One line of help. */
  description: string;
  category: CommandGroup;
  /** Where it is offered (default both). */
  surfaces?: Surface | "both";
  /**
   * May run while a turn is running (default false: the user is told to wait or /stop). A list
   * names the surfaces where it may.
   */
  availableWhileRunning?: boolean | readonly Surface[];
  /** In a chat, only admins may run it (`gateway.admin_users`, `platforms.<p>.extra.allow_admin_from`). */
  adminOnly?: boolean;
  /** Candidates for the argument being typed (`prefix` is what is typed so far). */
  completeArgs?: (prefix: string, context: CommandContext) => string[] | Promise<string[]>;
  run(args: string, context: CommandContext): void | Promise<void>;
}
