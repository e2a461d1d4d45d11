/**
 * What slash-command handlers may use. `ReplSession` is the part of `ChatSession` the REPL relies on,
 * written out so tests can hand in a fake; `ChatSession` satisfies it structurally.
 */

import type { AgentRun, CompressionReport } from "../../../agent/agent.js";
import type { UsageReport } from "../../../agent/chat-session.js";
import type { Message } from "../../../ai/types.js";
import type { HermesConfig } from "../../../config/defaults.js";
import type { SessionRecord, SessionSummary } from "../../../state/types.js";
import type { McpManager } from "../../../tools/mcp/manager.js";
import type { ToolRuntime } from "../../../tools/types.js";
import type { BusyInputMode, PendingInputs } from "../busy.js";
import type { Style } from "../style.js";
import type { ToolProgress } from "../tool-line.js";
import type { SlashRegistry } from "./registry.js";

export type ReplUsageReport = UsageReport;

export interface ReplSession {
  readonly id: string;
  readonly title: string | null;
  readonly resumed: boolean;
  readonly model: string;
  readonly provider: string;
  readonly running: boolean;
  /** Replaced after newSession/resume/branch/undo/setModel. */
  readonly agent: {
    yolo: boolean;
    readonly cwd: string;
    readonly home: string;
    readonly config: HermesConfig;
    readonly messages: readonly Message[];
    toolNames(): Promise<string[]>;
  };
  record(): SessionRecord | null;
  run(input: string): AgentRun;
  interrupt(): void;
  steer(text: string): void;
  newSession(title?: string): Promise<void>;
  resume(ref: string): Promise<SessionRecord>;
  branch(name?: string): Promise<SessionRecord>;
  undo(turns?: number): Promise<{ removed: number; userText: string | null }>;
  retryText(): Promise<string | null>;
  setTitle(title: string | null): SessionRecord;
  setModel(model: string): Promise<void>;
  /** The personality asked for this session; undefined means `display.personality`. */
  readonly personality: string | undefined;
  setPersonality(name: string): Promise<void>;
  /** Compresses the conversation now (`/compress [focus TOPIC]`). */
  compress(focus?: string): Promise<CompressionReport>;
  /** The message `/<skill-name> [request]` sends, or undefined when no such skill exists. */
  skillMessage(name: string, request?: string): Promise<string | undefined>;
  listSessions(limit?: number): SessionSummary[];
  usageReport(): ReplUsageReport;
  /** The tools' shared resources (the task's browser, shells). */
  readonly toolRuntime: ToolRuntime;
}

/** Settings the user changes from inside the REPL. */
export interface ReplSettings {
  toolProgress: ToolProgress;
  busyMode: BusyInputMode;
  yolo: boolean;
}

export interface SlashContext {
  session: ReplSession;
  /** Style of the info stream (stderr). */
  style: Style;
  /** Lines for the user (stderr, above the prompt). */
  print(...lines: string[]): void;
  /** Asks on the input line; null when cancelled. */
  ask(lines: string[], prompt: string): Promise<string | null>;
  /** A turn is running. */
  readonly running: boolean;
  /** Seconds the running turn has taken, null when idle. */
  readonly turnSeconds: number | null;
  settings: ReplSettings;
  pending: PendingInputs;
  /** Sends `text` as a user message (queued when a turn is running). */
  send(text: string): void;
  /** Interrupts the running turn. */
  stop(): void;
  /** Leaves the REPL with this exit code. */
  exit(code: number): void;
  /** Call after the session's agent was replaced (re-applies settings, says where we are). */
  sessionChanged(): void;
  registry: SlashRegistry<SlashContext>;
  /** Toolsets this session was started with. */
  toolsets: readonly string[];
  /** This chat's MCP servers (started on first use); absent where MCP is not available. */
  mcp?: () => Promise<McpManager>;
  /** Clock in seconds (injectable for tests). */
  now(): number;
}
