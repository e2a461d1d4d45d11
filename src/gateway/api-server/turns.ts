/**
 * One agent turn for one API request: a `ChatSession` opened on a stored session (a new one seeded
 * with the request's earlier messages, or the one the client names), run once, then closed. Turns
 * of the same session are serialised; turns of different sessions run side by side.
 */

import type { RunResult } from "../../agent/agent.js";
import type { ApprovalPrompt } from "../../agent/approval-policy.js";
import type { ChatSession, ChatSessionOptions } from "../../agent/chat-session.js";
import type { AgentEvent } from "../../agent/events.js";
import type { ContentPart, Message } from "../../ai/types.js";
import type { ChatClaim } from "../../state/coordination.js";
import { type SessionStore, SessionStoreError } from "../../state/types.js";
import { newSessionId } from "../../util/session-id.js";
import { claimGate, fenceParts } from "../coordination/chat-fence.js";
import { ApiError } from "./http.js";

export const API_SERVER_SOURCE = "api_server";

/** What one request asks of the agent. */
export interface TurnRequest {
  /** The new user input (the last user message of the request). */
  input: string | ContentPart[];
  /** Messages before the input: seed a new session, or are appended to a continued one. */
  history: Message[];
  /** Client system prompt (system/developer messages, `instructions`), layered on Hermes's own. */
  systemPrompt?: string;
  /** Continue this stored session instead of starting a new one. */
  sessionId?: string;
  /** Aborts when the client goes away: the running turn is interrupted. */
  signal: AbortSignal;
  /** Called once the session is open and before the model is called (start streaming here). */
  onStart?: (sessionId: string) => void;
  onEvent?: (event: AgentEvent) => void;
  /** Asks the client about a dangerous command (the Runs API); absent: such commands are denied. */
  onApproval?: ApprovalPrompt;
}

export interface TurnOutcome {
  /** The session the turn was recorded in (it changes when compression continued it). */
  sessionId: string;
  result: RunResult;
}

export interface TurnDeps {
  /**
   * Several instances: claims a stored session across them for the turn (waiting while another
   * instance runs it) and resolves with the claim; absent with one instance. The turn writes,
   * runs tools and asks only while the claim holds, and is interrupted once it is lost.
   */
  exclusive?: (sessionId: string, signal: AbortSignal) => Promise<ChatClaim>;
  /** Counts the turn from its request until it ends (`hermes gateway status` shows the count). */
  trackTurn?: () => () => void;
  store: SessionStore;
  /** Options every session of this server shares (config, provider, toolsets, platform…). */
  sessionOptions: ChatSessionOptions;
  openSession: (options: ChatSessionOptions) => Promise<ChatSession>;
  cwd: string;
}

/** Runs turns; owns the per-session locks. */
export class TurnRunner {
  private readonly locks = new Map<string, Promise<unknown>>();
  /** Ids given to new sessions whose row the session recorder has not written yet. */
  private readonly claimed = new Set<string>();

  constructor(private readonly deps: TurnDeps) {}

  /**
   * Runs one turn. Throws `ApiError` 404 when `sessionId` names no stored session (before
   * `onStart`); a failing model is not thrown: it comes back as `result.reason === "error"`.
   */
  async run(request: TurnRequest): Promise<TurnOutcome> {
    const ended = this.deps.trackTurn?.();
    try {
      return await this.runTracked(request);
    } finally {
      ended?.();
    }
  }

  private async runTracked(request: TurnRequest): Promise<TurnOutcome> {
    if (request.sessionId) {
      const named = request.sessionId;
      const exclusive = this.deps.exclusive;
      if (!exclusive) return this.withLock(named, () => this.execute(named, request));
      return this.withLock(named, async () => {
        const claim = await exclusive(named, request.signal);
        return this.execute(named, request, false, claim).finally(() => claim.release());
      });
    }
    // Held in memory from now until the turn ends, so no concurrent request picks the same id.
    const id = await this.claimFreshId();
    try {
      if (request.history.length > 0) {
        // The earlier messages need the row first.
        await this.deps.store.createSession({ id, source: API_SERVER_SOURCE, cwd: this.deps.cwd });
        return await this.withLock(id, () => this.execute(id, request));
      }
      // A new conversation: the session recorder creates the row with its model and system prompt
      // when the turn starts (one write where a row made here took three).
      return await this.withLock(id, () => this.execute(id, request, true));
    } finally {
      this.claimed.delete(id);
    }
  }

  private async execute(
    id: string,
    request: TurnRequest,
    fresh = false,
    claim?: ChatClaim,
  ): Promise<TurnOutcome> {
    try {
      return await this.executeHeld(id, request, fresh, claim);
    } catch (error) {
      if (claim?.lost.aborted) throw sessionMoved(id, claim);
      throw error;
    }
  }

  private async executeHeld(
    id: string,
    request: TurnRequest,
    fresh: boolean,
    claim: ChatClaim | undefined,
  ): Promise<TurnOutcome> {
    // Several instances: the session's writes, tool runs and approval prompts pass the claim's gate.
    const fenced = claim
      ? fenceParts(
          {
            store: this.deps.store,
            registry: this.deps.sessionOptions.registry,
            onApproval: request.onApproval,
          },
          claimGate(claim),
          () => claim,
        )
      : undefined;
    const store = fenced?.store ?? this.deps.store;
    if (request.sessionId && !(await store.getSession(id))) {
      throw new ApiError(
        404,
        `No stored session "${id}" to continue. Leave out X-Hermes-Session-Id to start a new one.`,
        "session_not_found",
      );
    }
    if (request.history.length > 0) await store.appendMessages(id, request.history);
    let session: ChatSession;
    try {
      session = await this.deps.openSession({
        ...this.deps.sessionOptions,
        ...(request.systemPrompt ? { ephemeralSystemPrompt: request.systemPrompt } : {}),
        ...(request.onApproval ? { onApproval: request.onApproval } : {}),
        ...fenced,
        ...(fresh ? { newSessionId: id } : { resume: id }),
      });
    } catch (error) {
      if (error instanceof SessionStoreError) throw new ApiError(404, error.message, "session_not_found");
      throw error;
    }
    const interrupt = () => session.interrupt();
    try {
      request.onStart?.(session.id);
      const run = session.agent.run(request.input);
      // A claim lost to another instance stops the turn as a client going away does.
      for (const signal of [request.signal, claim?.lost]) {
        if (signal?.aborted) interrupt();
        else signal?.addEventListener("abort", interrupt, { once: true });
      }
      for await (const event of run) request.onEvent?.(event);
      const result = await run.result;
      if (claim?.lost.aborted) throw sessionMoved(id, claim);
      return { sessionId: session.id, result };
    } finally {
      request.signal.removeEventListener("abort", interrupt);
      claim?.lost.removeEventListener("abort", interrupt);
      await session.close("api_request_done");
    }
  }

  /** A new session id no stored session and no running request has, claimed for the caller. */
  private async claimFreshId(): Promise<string> {
    for (;;) {
      const id = newSessionId();
      if (this.claimed.has(id)) continue;
      this.claimed.add(id);
      if (!(await this.deps.store.getSession(id))) return id;
      this.claimed.delete(id);
    }
  }

  private async withLock<T>(id: string, work: () => Promise<T>): Promise<T> {
    const before = this.locks.get(id) ?? Promise.resolve();
    const mine = before.then(work, work);
    const tail = mine.catch(() => undefined);
    this.locks.set(id, tail);
    try {
      return await mine;
    } finally {
      if (this.locks.get(id) === tail) this.locks.delete(id);
    }
  }
}

/** The answer to a turn whose session another instance took over while it ran: it recorded nothing more. */
function sessionMoved(id: string, claim: ChatClaim): ApiError {
  const why = claim.lost.reason instanceof Error ? ` (${claim.lost.reason.message})` : "";
  return new ApiError(
    409,
    `Session ${id} was taken over by another instance while this turn ran${why}; this turn stopped ` +
      "and recorded nothing more. Send the request again to continue the session there.",
    "session_moved",
  );
}

/** The text of the parts a client sent, for logs and prompts that take text only. */
export function textOf(content: string | ContentPart[]): string {
  if (typeof content === "string") return content;
  return content
    .filter((p): p is Extract<ContentPart, { type: "text" }> => p.type === "text")
    .map((p) => p.text)
    .join("\n");
}
