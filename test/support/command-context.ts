/**
 * A fake surface for slash-command handlers: a scripted session, a recorded reply stream and a
 * plain `Paint`, so a handler is tested the way either surface would run it.
 */
import type { AgentRun } from "../../src/agent/agent.js";
import { PendingInputs } from "../../src/cli/tui/busy.js";
import {
  type ChatActions,
  type CommandContext,
  createCommandRegistry,
  type Paint,
  type RunnableSession,
  type SurfaceFacts,
} from "../../src/commands/index.js";
import { defaultConfig } from "../../src/config/defaults.js";
import { type SessionRecord, SessionStoreError, type SessionSummary } from "../../src/state/types.js";
import { createToolRuntime } from "../../src/tools/runtime.js";

export const registry = createCommandRegistry();

export const plainPaint: Paint = {
  bold: (t) => t,
  dim: (t) => t,
  red: (t) => t,
  green: (t) => t,
  yellow: (t) => t,
  cyan: (t) => t,
};

export function summary(
  id: string,
  title: string | null,
  source = "cli",
  userId: string | null = null,
): SessionSummary {
  return {
    id,
    title,
    source,
    userId,
    preview: `about ${id}`,
    lastActiveAt: 100,
    messageCount: 2,
  } as SessionSummary;
}

export type FakeSession = RunnableSession & { calls: string[] };

export function fakeSession(overrides: Partial<RunnableSession> = {}): FakeSession {
  const calls: string[] = [];
  const agent = {
    yolo: false,
    cwd: "/work",
    home: "/nonexistent-home",
    config: defaultConfig(),
    messages: [],
    toolNames: async () => ["terminal", "read_file"],
  };
  const session: FakeSession = {
    calls,
    id: "s-current",
    currentTitle: async () => null,
    resumed: false,
    model: "fake-model",
    provider: "custom",
    running: false,
    agent,
    toolRuntime: createToolRuntime(),
    loadRecord: async () => null,
    run: () => ({}) as AgentRun,
    interrupt: () => calls.push("interrupt"),
    steer: (t) => calls.push(`steer:${t}`),
    newSession: async (t) => {
      calls.push(`new:${t ?? ""}`);
    },
    resume: async (ref) => {
      calls.push(`resume:${ref}`);
      return { id: ref, title: null } as SessionRecord;
    },
    branch: async (name) => ({ id: "s-fork", title: name ?? null }) as SessionRecord,
    undo: async (turns = 1) => ({ removed: turns * 2, userText: "earlier question" }),
    retryText: async () => "again please",
    setTitle: async (title) => {
      if (title === "taken") throw new SessionStoreError("title_taken", 'The title "taken" is already used.');
      return { id: "s-current", title } as SessionRecord;
    },
    setModel: async (m) => {
      calls.push(`model:${m}`);
    },
    personality: undefined,
    setPersonality: async (name) => {
      calls.push(`personality:${name}`);
    },
    setToolsets: async (toolsets) => {
      calls.push(`toolsets:${toolsets.join(",")}`);
    },
    compress: async (focus) => {
      calls.push(`compress:${focus ?? ""}`);
      return { status: "compressed", tokensBefore: 9000, tokensAfter: 2500 };
    },
    skillMessage: async (name, request) =>
      name === "deploy" ? `[Skill deploy] ${request ?? ""}` : undefined,
    listSessions: async () => [
      summary("s-current", "now"),
      summary("s-old", "old work"),
      summary("s-older", null),
      summary("s-tg", "telegram chat", "telegram", "100"),
      summary("s-tg-other", "someone else's chat", "telegram", "200"),
      summary("s-tg-unowned", "recorded without a user", "telegram"),
    ],
    usageReport: async () => ({
      model: "fake-model",
      usage: { inputTokens: 10, outputTokens: 5 },
      apiCalls: 1,
      costUsd: null,
      contextTokens: 15,
      contextLength: null,
    }),
    contextReport: () => ({ model: "fake-model", contextTokens: 15, contextLength: null }),
    ...overrides,
  };
  return session;
}

export interface FakeContextOptions {
  session?: FakeSession;
  /** Answers `ask` returns, in order (null: cancelled). */
  answers?: Array<string | null>;
  surface?: Partial<SurfaceFacts>;
  running?: boolean;
  chat?: ChatActions;
}

export function fakeContext(options: FakeContextOptions = {}) {
  const session = options.session ?? fakeSession();
  const answers = [...(options.answers ?? [])];
  const printed: string[] = [];
  const sent: string[] = [];
  const exits: number[] = [];
  const events: string[] = [];
  const surface: SurfaceFacts = { kind: "repl", platform: "cli", isAdmin: true, ...options.surface };
  const ctx: CommandContext & { running: boolean } = {
    surface,
    session,
    paint: plainPaint,
    reply: (...lines) => printed.push(...lines),
    ask: async (lines, prompt) => {
      printed.push(...lines, prompt);
      return answers.shift() ?? null;
    },
    running: options.running ?? false,
    turnSeconds: null,
    settings: { toolProgress: "all", busyMode: "interrupt", yolo: false },
    queue: new PendingInputs(),
    send: (t) => sent.push(t),
    stop: () => session.interrupt(),
    newSession: async (title) => {
      events.push("newSession");
      await session.newSession(title);
    },
    exit: (c) => exits.push(c),
    sessionChanged: () => events.push("sessionChanged"),
    registry,
    toolsets: ["hermes-cli"],
    ...(options.chat ? { chat: options.chat } : {}),
    now: () => 1000,
  };
  return { ctx, printed, sent, exits, events, session };
}
