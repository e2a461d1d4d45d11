/**
 * Session persistence as a consumer of the agent's event stream: a new session's row (with the
 * system prompt frozen at `session_start`) is written in one transaction with its first message,
 * and every message is written as the agent appends it, so a crash mid-turn loses at most the
 * message in flight. The one exception: a reply whose tool calls all change nothing outside the
 * session (`withResults`) is held and written with their results in one transaction (a crash
 * while they run loses only reads, redone on resume). Each usage report is priced at the model the
 * session runs now and added to the row's cost.
 *
 * The store is asynchronous: the events that write are handled one after another on a chain, so
 * writes land in the order the events happened whatever the backend, and the listener returns the
 * chain's promise (the agent's turn result waits for it, see event-listeners.ts). With SQLite each
 * write is in the file a microtask after its event, before the turn goes on to any I/O.
 */
import { INTERRUPTED_TOOL_RESULT } from "../ai/history-repair.js";
import { estimateUsageCost, type PricingOverrides } from "../ai/pricing.js";
import type { Message } from "../ai/types.js";
import {
  type NewSession,
  type SessionSource,
  type SessionStore,
  SessionStoreError,
  type UsageDelta,
} from "../state/types.js";
import { onProcessExit } from "../util/exit-reaper.js";
import { gitInfo } from "../util/git-info.js";
import type { AgentEvent } from "./events.js";

export interface RecorderOptions {
  store: SessionStore;
  source: SessionSource;
  cwd: string;
  /** Title for a new row; a title already taken is dropped with a warning, never an error. */
  title?: string;
  parentSessionId?: string;
  userId?: string;
  billingProvider?: string;
  billingBaseUrl?: string;
  /** config.yaml `pricing:` entries (parsed), preferred to the built-in catalog. */
  pricing?: PricingOverrides;
  /** Told once per distinct failure (a full disk, a locked file); recording continues to try. */
  onError?: (message: string) => void;
}

/** Returns the event listener that records one session (attach it with `agent.on`). */
export function sessionRecorder(options: RecorderOptions): (event: AgentEvent) => Promise<void> | undefined {
  const { store } = options;
  const reported = new Set<string>();
  let sessionId: string | null = null;
  // The frozen prompt, carried over to a child session when compression splits the session.
  let systemPrompt = "";
  // The model usage is priced at: the one this agent announced (a model switch builds a new agent).
  let model = "";
  // A model call counts once, whether or not the provider reported token usage for it.
  let callUncounted = false;

  const guard = async (what: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (error) {
      const message = `Could not ${what} in ${store.path}: ${error instanceof Error ? error.message : String(error)}`;
      if (!reported.has(message)) {
        reported.add(message);
        options.onError?.(message);
      }
    }
  };

  // A new session's row, written with its first message (one commit, not two): see "message".
  let pendingRow: NewSession | undefined;
  /** Creates the row of a new session, dropping a title that is taken (with a warning). */
  const createRow = async (write: (input: NewSession) => Promise<unknown>) => {
    const input = pendingRow;
    if (!input) return;
    pendingRow = undefined;
    try {
      await write(input);
    } catch (error) {
      if (!input.title || !(error instanceof SessionStoreError && error.code === "title_taken")) throw error;
      const { title: _taken, ...untitled } = input;
      await write(untitled);
      options.onError?.(`The title "${input.title}" is taken; the session was saved without one.`);
    }
  };
  /** Writes a new session's row now, before a write that needs it (usage, compression, the end of a turn). */
  const ensureRow = async () => {
    if (pendingRow) await guard("record the session", () => createRow((input) => store.createSession(input)));
  };

  // A usage report waiting for the assistant message of its model call (see "message").
  let pendingUsage: UsageDelta | undefined;
  const flushUsage = async () => {
    const usage = pendingUsage;
    pendingUsage = undefined;
    const id = sessionId;
    if (usage && id) {
      await ensureRow();
      await guard("save token usage", () => store.recordUsage(id, usage));
    }
  };

  // A reply whose tool calls change nothing outside the session (`withResults`), held until every
  // call has its result, then stored with them in one transaction (with its model call's usage).
  let held: Held | undefined;
  const writeHeld = async () => {
    const h = held;
    if (!h) return;
    held = undefined;
    h.unhookExit();
    let saved = false;
    await guard("save a message", async () => {
      await store.appendMessages(h.sessionId, h.messages, h.usage ? { usage: h.usage } : {});
      saved = true;
    });
    if (saved) return;
    // One by one, so each failure is told for what it is and costs only its own message.
    for (const [index, message] of h.messages.entries()) {
      const usage = index === 0 ? h.usage : undefined;
      let one = false;
      await guard("save a message", async () => {
        await store.appendMessage(h.sessionId, message, usage ? { usage } : {});
        one = true;
      });
      if (usage && !one) await guard("save token usage", () => store.recordUsage(h.sessionId, usage));
    }
  };
  /**
   * The process exits while such calls run (SIGTERM, SIGHUP, process.exit): the reply is written
   * now, synchronously for SQLite, before the store closes, with the calls still running answered
   * as interrupted, which is what resuming after the old order (call stored first) would show.
   */
  const writeHeldAtExit = () => {
    const h = held;
    if (!h) return;
    held = undefined;
    const stand = h.messages[0]?.tool_calls?.filter((c) => h.open.has(c.id)) ?? [];
    const messages: Message[] = [
      ...h.messages,
      ...stand.map(
        (c): Message => ({
          role: "tool",
          tool_call_id: c.id,
          name: c.function.name,
          content: INTERRUPTED_TOOL_RESULT,
        }),
      ),
    ];
    store.appendMessages(h.sessionId, messages, h.usage ? { usage: h.usage } : {}).catch(() => undefined);
  };

  // The events that write, handled in order; `tail` settles when the last one has been.
  let tail: Promise<void> = Promise.resolve();
  return (event) => {
    if (!WRITES.has(event.type)) return undefined;
    tail = tail.then(() => handle(event));
    return tail;
  };

  async function handle(event: AgentEvent): Promise<void> {
    if (held) {
      const message = event.type === "message" ? event.message : undefined;
      if (message?.role === "tool" && message.tool_call_id && held.open.has(message.tool_call_id)) {
        held.messages.push(message);
        held.open.delete(message.tool_call_id);
        if (held.open.size === 0) await writeHeld();
        return;
      }
      // The end of the model call that made the reply has nothing left to write (its usage is
      // held with the reply): the tools have not run yet.
      if (event.type === "turn_end" && !pendingUsage && !callUncounted && !pendingRow) return;
      // Anything else (the end of the turn, a compression, a new session): the reply is stored first.
      await writeHeld();
    }
    switch (event.type) {
      case "session_start":
        await guard("record the session", async () => {
          sessionId = event.sessionId;
          model = event.model;
          systemPrompt = event.systemPrompt;
          const existing = await store.getSession(event.sessionId);
          if (existing) {
            // Reopened and updated in one write (one commit per session start, not two).
            const ended = existing.endedAt !== null || existing.endReason !== null;
            await store.updateSession(existing.id, {
              model: event.model,
              ...(existing.systemPrompt === null ? { systemPrompt: event.systemPrompt } : {}),
              ...(ended ? { endedAt: null, endReason: null } : {}),
            });
            return;
          }
          const git = gitInfo(options.cwd);
          const base: NewSession = {
            id: event.sessionId,
            source: options.source,
            model: event.model,
            systemPrompt: event.systemPrompt,
            cwd: options.cwd,
            ...(git?.branch ? { gitBranch: git.branch } : {}),
            ...(git ? { gitRepoRoot: git.root } : {}),
            ...(options.parentSessionId ? { parentSessionId: options.parentSessionId } : {}),
            ...(options.userId ? { userId: options.userId } : {}),
            ...(options.billingProvider ? { billingProvider: options.billingProvider } : {}),
            ...(options.billingBaseUrl ? { billingBaseUrl: options.billingBaseUrl } : {}),
          };
          // Written with the first message (the user's, right after this event) in one transaction.
          pendingRow = options.title ? { ...base, title: options.title } : base;
        });
        return;
      case "compression":
        if (sessionId) {
          const parent = sessionId;
          await ensureRow();
          await guard("continue the compressed session", async () => {
            const parentRow = await store.getSession(parent);
            // One transaction: a crash here leaves the old session whole or the new one complete.
            await store.continueSession(
              parent,
              {
                id: event.childSessionId,
                source: options.source,
                model,
                systemPrompt: parentRow?.systemPrompt ?? systemPrompt,
                cwd: options.cwd,
                parentSessionId: parent,
                ...(options.userId ? { userId: options.userId } : {}),
                ...(options.billingProvider ? { billingProvider: options.billingProvider } : {}),
                ...(options.billingBaseUrl ? { billingBaseUrl: options.billingBaseUrl } : {}),
              },
              event.messages,
              "compression",
            );
            sessionId = event.childSessionId;
          });
        }
        return;
      case "message":
        if (sessionId) {
          const id = sessionId;
          // The model call's usage goes in the message's own transaction (one commit, not two).
          const usage =
            event.message.role === "assistant"
              ? (pendingUsage ??
                (callUncounted ? { inputTokens: 0, outputTokens: 0, apiCalls: 1 } : undefined))
              : undefined;
          const message = event.message;
          const calls = message.tool_calls ?? [];
          if (event.withResults && message.role === "assistant" && calls.length > 0 && !pendingRow) {
            pendingUsage = undefined;
            callUncounted = false;
            held = {
              sessionId: id,
              messages: [message],
              open: new Set(calls.map((c) => c.id)),
              usage,
              unhookExit: onProcessExit(writeHeldAtExit, { early: true }),
            };
            return;
          }
          let saved = false;
          const row = pendingRow;
          if (row) {
            try {
              await createRow((input) => store.startSession(input, message, usage ? { usage } : {}));
              saved = true;
            } catch {
              // Written one after the other below, so each failure is told for what it is.
              pendingRow = row;
              await ensureRow();
            }
          }
          if (!saved)
            await guard("save a message", async () => {
              await store.appendMessage(id, message, usage ? { usage } : {});
              saved = true;
            });
          if (usage) {
            pendingUsage = undefined;
            callUncounted = false;
            if (!saved) await guard("save token usage", () => store.recordUsage(id, usage));
          }
        }
        return;
      case "turn_start":
        await flushUsage();
        callUncounted = true;
        return;
      case "usage":
        if (sessionId) {
          // A second report for the same call: the first one is written on its own.
          await flushUsage();
          const apiCalls = callUncounted ? 1 : 0;
          callUncounted = false;
          // A fallback provider's answer is priced as that provider's model.
          const cost = estimateUsageCost(
            event.usage,
            event.billing
              ? { ...event.billing, overrides: options.pricing }
              : {
                  model,
                  provider: options.billingProvider,
                  baseUrl: options.billingBaseUrl,
                  overrides: options.pricing,
                },
          );
          // Held for the assistant message this call produces; written at turn end without one.
          pendingUsage = {
            ...event.usage,
            apiCalls,
            ...(cost.usd !== null ? { costUsd: cost.usd } : {}),
            costStatus: cost.status,
            ...(cost.source !== "none" ? { costSource: cost.source } : {}),
            ...(cost.pricingVersion ? { pricingVersion: cost.pricingVersion } : {}),
          };
        }
        return;
      case "turn_end":
        await ensureRow();
        await flushUsage();
        if (sessionId && callUncounted) {
          const id = sessionId;
          callUncounted = false;
          await guard("save token usage", () =>
            store.recordUsage(id, { inputTokens: 0, outputTokens: 0, apiCalls: 1 }),
          );
        }
        return;
      case "done":
        // A turn that ended before its first message still leaves the session's row.
        await ensureRow();
        return;
      default:
        return;
    }
  }
}

/** A reply held to be stored with its tool results (see `withResults` on the message event). */
interface Held {
  sessionId: string;
  /** The reply, then the results in, in the order they came. */
  messages: Message[];
  /** Call ids still without a result. */
  open: Set<string>;
  usage: UsageDelta | undefined;
  unhookExit: () => void;
}

/** The events the recorder acts on; the rest (text deltas, tool progress…) pass by untouched. */
const WRITES: ReadonlySet<AgentEvent["type"]> = new Set([
  "session_start",
  "compression",
  "message",
  "turn_start",
  "usage",
  "turn_end",
  "done",
]);
