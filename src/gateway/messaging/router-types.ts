/** The router's shapes: what it is given, what it asks the runner for, and what it keeps per chat. */
import type { ApprovalPrompt } from "../../agent/approval-policy.js";
import type { ChatSession } from "../../agent/chat-session.js";
import type { CommandSettings } from "../../commands/index.js";
import type { HermesConfig } from "../../config/defaults.js";
import type { PairingRecords } from "../../state/gateway/pairing.js";
import type { ChatSessionIndex } from "../../state/gateway/session-index.js";
import type { ChatSettingsRecords } from "../../state/gateway/shared-approvals.js";
import type { McpManager } from "../../tools/mcp/manager.js";
import type { Logger } from "../../util/log.js";
import type { InboundAction, InboundMessage, MessageSource, PlatformAdapter } from "../platforms/types.js";
import type { RouterObserver } from "./observer.js";

/** What the runner needs to open a conversation's agent session. */
export interface OpenConversation {
  platform: string;
  source: MessageSource;
  key: string;
  /** Continue this stored session. */
  resume?: string;
  /** Seeds the tools' per-session state (`cron.origin`). */
  toolState: Record<string, unknown>;
  onApproval: ApprovalPrompt;
}

export interface RouterOptions {
  home: string;
  config: HermesConfig;
  /** The gateway's environment; `/sethome` updates it in place as well as `.env`. */
  env: Record<string, string | undefined>;
  /** The environment each authorization decides with (allowlists kept current with `.env`); default `env`. */
  authEnv?: () => Readonly<Record<string, string | undefined>>;
  profile?: string | undefined;
  adapters: ReadonlyMap<string, PlatformAdapter>;
  pairing: PairingRecords;
  /** The chat → session index; default `sessions/sessions.json` of `home`. */
  index?: ChatSessionIndex;
  openSession: (request: OpenConversation) => Promise<ChatSession>;
  /** Problems, one line each (stderr of `hermes gateway run`). */
  log?: (line: string) => void;
  /**
   * The home's log files: messages in and out (chat id, sizes; message text only at DEBUG),
   * pairing, commands and problems, as `gateway.<platform>` (gateway.log, errors.log).
   */
  logger?: Logger;
  now?: () => Date;
  /** Idle conversations whose agent stays cached (default 256); the least recent beyond it are closed. */
  maxCachedAgents?: number;
  /** The toolsets a platform's agents use (`/toolsets` marks them). */
  toolsets?: (platform: string) => readonly string[];
  /** The gateway's MCP servers, for `/reload-mcp`; absent when none are configured. */
  mcp?: () => Promise<McpManager>;
  /** Restarts the gateway (`/restart`); absent where it cannot restart itself. */
  restart?: () => void;
  /** Told about messages, turns and approvals (the control socket's events and status). */
  observer?: RouterObserver;
  /** Several instances (`coordination/chat-relay.ts`): a chat's turns run on one at a time. */
  relay?: TurnRelay;
  /** Several instances: each chat's `/verbose` and `/yolo`, shared through the database. */
  chatSettings?: ChatSettingsRecords;
}

/** Where a chat's turns run when several gateway instances share the work (`ChatRelay`). */
/** A message's place in its chat's routing order across instances (chat-relay.ts `enter`). */
export interface RouteTicket {
  /** Resolves once the messages before it were admitted here or received by the chat's holder. */
  readonly turn: Promise<void>;
  /** This message is routed (or dropped): the next one may go. Idempotent. */
  done(): void;
}

export interface TurnRelay {
  /** A message's place in its chat's routing order, taken as it arrives (before any await). */
  enter?(key: string): RouteTicket;
  /** Before a message is handled: a release function, or null when it went to the chat's instance. */
  admit(key: string, message: InboundMessage, ticket?: RouteTicket): Promise<(() => void) | null>;
  /** Before turns run: a release function, or null when the queued messages went to the chat's instance. */
  hold(key: string, queue: InboundMessage[]): Promise<(() => void) | null>;
  /** A button press not answered here: true when it went to the chat's instance. */
  forwardAction(key: string, platform: string, action: InboundAction): Promise<boolean>;
  /**
   * Fenced claims: for turns about to run, the adapter their output goes out on (each call waits
   * for a valid claim) and the claim's loss, which calls `stop` (chat-relay.ts).
   */
  fence?(
    key: string,
    adapter: PlatformAdapter,
    stop: () => void,
  ): { adapter: PlatformAdapter; lost: AbortSignal };
}

/** One chat's (or one user's in a chat) conversation, as the router keeps it. */
export interface Conversation {
  key: string;
  platform: string;
  source: MessageSource;
  chat?: ChatSession;
  /** A turn is running; new messages wait in `queue` (or interrupt it, per `display.busy_input_mode`). */
  busy: boolean;
  queue: InboundMessage[];
  lastActive: Date;
  /** Set by /new while busy: the next turn starts a fresh session. */
  fresh: boolean;
  /** Set by /stop: the running turn's partial answer is not delivered. */
  stopped: boolean;
  /** The agent being opened (so a command and a turn never open two). */
  opening?: Promise<ChatSession>;
  /** What /verbose and /yolo changed in this conversation (from config until then). */
  settings?: CommandSettings;
  /** A slash command still at work (`/tools` reconnecting MCP servers): the next turn waits for it. */
  commanding?: Promise<unknown>;
  /** The gateway is stopping and cut this conversation's turn off: its chat is told, not answered. */
  cutOff?: boolean;
}
