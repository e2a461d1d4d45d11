/**
 * One conversation of the dashboard's chat: a `ChatSession` (source `dashboard`, or a stored
 * session resumed by id) kept open between turns, so its shell and background processes live on as
 * in the REPL. A turn's agent events go to the browser as server-sent events; streamed text passes
 * a stream redactor (a secret split over two deltas is still caught) and every frame the
 * dashboard's JSON redactor.
 *
 * Approvals: the approval policy asks `prompt` (only after yolo, `approvals.mode`, earlier answers
 * and `command_allowlist` had their say, as in the terminal). The question goes into the running
 * turn's stream with an id and the choices the terminal offers (a protected path: once or deny) and
 * waits for `answer`; `approvals.timeout`, Stop, or the browser going away deny it. With no stream
 * to ask in, the answer is deny.
 */
import { randomBytes } from "node:crypto";
import type { ApprovalPrompt } from "../agent/approval-policy.js";
import type { ChatSession } from "../agent/chat-session.js";
import type { AgentEvent } from "../agent/events.js";
import type { ApprovalDecision, ApprovalRequest, ClarifyRequest } from "../tools/types.js";
import { processRedactor } from "../util/redact.js";
import { StreamTextRedactor } from "../util/redact-stream.js";
import { ApiError, type EventSink } from "./http.js";

export const APPROVAL_CHOICES: readonly ApprovalDecision[] = ["once", "session", "always", "deny"];

/** A tool's result as shown in the page (the model's copy is not cut). */
const RESULT_PREVIEW_CHARS = 4000;
/** How long a `clarify` question waits for the browser before the model is told nobody answered. */
export const CLARIFY_TIMEOUT_MS = 10 * 60_000;
/** What the model reads when its question was not answered (timeout, Stop, the page closed). */
export const CLARIFY_UNANSWERED =
  "(The user did not answer the question. Proceed with your best judgement and say what you assumed.)";
/** Longest answer to a `clarify` question (characters). */
const MAX_ANSWER_CHARS = 20_000;

interface PendingApproval {
  id: string;
  request: ApprovalRequest;
  choices: readonly ApprovalDecision[];
  answer(decision: ApprovalDecision, by: string): void;
}

export class Conversation {
  private current: ChatSession | undefined;
  private sink: EventSink | null = null;
  private pending: PendingApproval | undefined;
  private question: { id: string; answer(text: string | null, by: string): void } | undefined;
  private turn: Promise<void> | undefined;
  /** Claimed synchronously by a request, before anything is awaited, so a second one sees it. */
  busy = false;
  lastUsed = Date.now();
  /** Messages `/queue` put aside: they run, in order, after the turn in the same stream. */
  readonly queued: string[] = [];

  /** @param rekey told when the session id changes (compression, `/new`, `/resume`, `/branch`). */
  constructor(private readonly rekey: (from: string, to: string) => void) {}

  attach(session: ChatSession): void {
    this.current = session;
  }

  get session(): ChatSession {
    if (!this.current) throw new Error("the conversation's session is not open yet");
    return this.current;
  }

  get id(): string {
    return this.session.id;
  }

  /** The pending approval's id, or undefined. */
  get pendingApproval(): string | undefined {
    return this.pending?.id;
  }

  /** Re-reads the session id after something may have replaced the session. */
  sessionChanged(previous: string): void {
    const now = this.session.id;
    if (now !== previous) this.rekey(previous, now);
  }

  /** What the approval policy calls to ask the browser (see the file comment). */
  readonly prompt: ApprovalPrompt = (request, options) =>
    new Promise<ApprovalDecision>((resolve) => {
      const sink = this.sink;
      if (!sink || sink.signal.aborted || options.signal.aborted) {
        resolve("deny");
        return;
      }
      this.pending?.answer("deny", "superseded");
      const id = randomBytes(8).toString("hex");
      const choices = request.protectedPath === true ? (["once", "deny"] as const) : APPROVAL_CHOICES;
      const withdrawn = () =>
        entry.answer("deny", String(options.signal.reason).includes("timeout") ? "timeout" : "stopped");
      const entry: PendingApproval = {
        id,
        request,
        choices,
        answer: (decision, by) => {
          if (this.pending !== entry) return;
          this.pending = undefined;
          options.signal.removeEventListener("abort", withdrawn);
          sink.signal.removeEventListener("abort", withdrawn);
          sink.send("approval_resolved", { id, decision, by });
          resolve(decision);
        },
      };
      this.pending = entry;
      options.signal.addEventListener("abort", withdrawn, { once: true });
      sink.signal.addEventListener("abort", withdrawn, { once: true });
      // After the turn's events already queued (the tool line this question belongs to).
      setImmediate(() => {
        if (this.pending !== entry) return;
        sink.send("approval", {
          id,
          command: request.command,
          reason: request.reason,
          protected_path: request.protectedPath === true,
          choices,
          timeout_s: Math.round(options.timeoutMs / 1000),
        });
      });
    });

  /**
   * Answers the pending approval `id`: 404 when none with that id waits in this conversation, 422
   * for a choice it does not offer (a protected path takes only once or deny, as in the terminal).
   */
  answer(id: string, decision: ApprovalDecision): void {
    const pending = this.pending;
    if (!pending || pending.id !== id) {
      throw new ApiError(404, `no pending approval ${JSON.stringify(id)} in this conversation`);
    }
    if (!pending.choices.includes(decision)) {
      throw new ApiError(
        422,
        `this action touches a protected path: it can be approved once or denied, never "${decision}"`,
      );
    }
    pending.answer(decision, "dashboard");
  }

  /**
   * What the `clarify` tool calls: the question (with its suggested answers) goes into the running
   * turn's stream and waits for `reply`; after `CLARIFY_TIMEOUT_MS`, Stop or a closed page the
   * model is told nobody answered.
   */
  readonly clarify = (request: ClarifyRequest): Promise<string> =>
    new Promise<string>((resolve) => {
      const sink = this.sink;
      if (!sink || sink.signal.aborted) {
        resolve(CLARIFY_UNANSWERED);
        return;
      }
      this.question?.answer(null, "superseded");
      const id = randomBytes(8).toString("hex");
      const gone = () => entry.answer(null, "stopped");
      const timer = setTimeout(() => entry.answer(null, "timeout"), CLARIFY_TIMEOUT_MS);
      timer.unref?.();
      const entry = {
        id,
        answer: (text: string | null, by: string) => {
          if (this.question !== entry) return;
          this.question = undefined;
          clearTimeout(timer);
          sink.signal.removeEventListener("abort", gone);
          sink.send("clarify_resolved", { id, answer: text, by });
          resolve(text ?? CLARIFY_UNANSWERED);
        },
      };
      this.question = entry;
      sink.signal.addEventListener("abort", gone, { once: true });
      setImmediate(() => {
        if (this.question !== entry) return;
        sink.send("clarify", {
          id,
          question: request.question,
          choices: (request.choices ?? []).slice(0, 4),
        });
      });
    });

  /** Answers the pending question `id` (404 when none with that id waits here). */
  reply(id: string, text: string): void {
    if (!this.question || this.question.id !== id) {
      throw new ApiError(404, `no pending question ${JSON.stringify(id)} in this conversation`);
    }
    if (text.length > MAX_ANSWER_CHARS)
      throw new ApiError(413, `the answer is over ${MAX_ANSWER_CHARS} characters`);
    this.question.answer(text, "dashboard");
  }

  /** Stops the running turn the way Ctrl+C does (running commands' process groups are killed). */
  async stop(waitMs = 5000): Promise<boolean> {
    if (!this.turn) return false;
    this.pending?.answer("deny", "stopped");
    this.question?.answer(null, "stopped");
    this.session.interrupt();
    await Promise.race([this.turn, new Promise((resolve) => setTimeout(resolve, waitMs).unref())]);
    return true;
  }

  /** Runs one turn for `input`, streaming its events to `sink`; resolves when the turn ended. */
  async runTurn(input: string, sink: EventSink): Promise<void> {
    const session = this.session;
    let text = new StreamTextRedactor(processRedactor());
    let thinking = new StreamTextRedactor(processRedactor());
    const flush = () => {
      const thought = thinking.end();
      if (thought) sink.send("reasoning", { text: thought });
      const said = text.end();
      if (said) sink.send("text", { text: said });
    };
    const stop = () => session.interrupt();
    this.sink = sink;
    let finished!: () => void;
    this.turn = new Promise<void>((resolve) => {
      finished = resolve;
    });
    try {
      const run = session.run(input);
      if (sink.signal.aborted) stop();
      else sink.signal.addEventListener("abort", stop, { once: true });
      for await (const event of run) {
        switch (event.type) {
          case "text_delta": {
            const out = text.push(event.text);
            if (out) sink.send("text", { text: out });
            break;
          }
          case "reasoning_delta": {
            const out = thinking.push(event.text);
            if (out) sink.send("reasoning", { text: out });
            break;
          }
          case "stream_discarded":
            // The attempt's text was not the answer: what was held back is dropped with it.
            text = new StreamTextRedactor(processRedactor());
            thinking = new StreamTextRedactor(processRedactor());
            sink.send("discard", { reason: event.reason });
            break;
          case "compression": {
            const previous = event.sessionId;
            this.sessionChanged(previous);
            sink.send("session", { session_id: session.id, compressed_from: previous });
            break;
          }
          case "error":
            flush();
            sink.send("error", { message: event.message });
            break;
          case "done":
            flush();
            sink.send("done", {
              reason: event.reason,
              text: event.text,
              session_id: session.id,
              usage: { input_tokens: event.usage.inputTokens, output_tokens: event.usage.outputTokens },
            });
            break;
          default:
            forwardTool(event, sink, flush);
        }
      }
      await run.result;
    } finally {
      sink.signal.removeEventListener("abort", stop);
      this.pending?.answer("deny", "stopped");
      this.question?.answer(null, "stopped");
      this.sink = null;
      this.turn = undefined;
      finished();
    }
  }
}

/** Tool lines and notices: everything the page shows besides the answer itself. */
function forwardTool(event: AgentEvent, sink: EventSink, flush: () => void): void {
  switch (event.type) {
    case "tool_start":
      flush();
      sink.send("tool_start", {
        call_id: event.callId,
        name: event.name,
        preview: preview(event.args),
        ...(event.parentCallId ? { parent_call_id: event.parentCallId } : {}),
      });
      break;
    case "tool_progress":
      sink.send("tool_progress", { call_id: event.callId, name: event.name, message: event.message });
      break;
    case "tool_output":
      sink.send("tool_output", { call_id: event.callId, text: event.text });
      break;
    case "tool_end":
      sink.send("tool_end", {
        call_id: event.callId,
        name: event.name,
        ok: event.ok,
        duration_ms: Math.round(event.durationMs),
        result:
          event.result.length > RESULT_PREVIEW_CHARS
            ? `${event.result.slice(0, RESULT_PREVIEW_CHARS)}… (${event.result.length - RESULT_PREVIEW_CHARS} more characters)`
            : event.result,
      });
      break;
    case "subagent":
      sink.send("tool_progress", {
        call_id: event.callId,
        name: "delegate_task",
        message: `#${event.index + 1} ${event.goal.slice(0, 80)}: ${event.state === "end" ? `ended (${event.detail})` : event.detail}`,
      });
      break;
    case "retry":
      sink.send("notice", { level: "retry", message: event.message });
      break;
    case "warning":
      sink.send("notice", { level: "warning", message: event.message });
      break;
    default:
      break;
  }
}

/** The main argument of a tool call, on one line and shortened, for its progress line. */
function preview(args: Record<string, unknown>): string {
  for (const key of ["command", "path", "query", "url", "pattern", "name", "goal", "code"]) {
    const value = args?.[key];
    if (typeof value === "string" && value.trim()) {
      const line = value.replace(/\s+/g, " ").trim();
      return line.length > 160 ? `${line.slice(0, 157)}...` : line;
    }
  }
  return "";
}
