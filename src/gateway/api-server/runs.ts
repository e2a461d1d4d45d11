/**
 * The Runs API, as Python Hermes serves it: `POST /v1/runs` starts an agent turn in the background
 * and answers 202 `{run_id, status: "started"}` at once; `GET /v1/runs/{id}` polls its status;
 * `GET /v1/runs/{id}/events` streams its lifecycle as SSE `data:` frames (`message.delta`,
 * `tool.started`, `tool.completed`, `reasoning.available`, then `run.completed`, `run.failed` or
 * `run.cancelled`), replaying what happened before the client attached; `POST /v1/runs/{id}/stop`
 * interrupts it. A run holds one of the server's run slots like any other turn.
 *
 * Unlike other API turns (which deny dangerous commands: nobody could answer), a run has a client
 * that follows it, so it asks: the approval policy's rules come first (yolo, `approvals.mode`,
 * session and `command_allowlist` answers), then an `approval.requested` event (with its
 * `approval_id`, the command and why) goes into the run's stream, the status turns
 * `waiting_for_approval`, and the run waits. `POST /v1/runs/{id}/approval` with
 * `{"choice": "once" | "session" | "always" | "deny"}` (upstream's shape; `approval_id` optional)
 * answers it; `approvals.timeout` without an answer denies it, as in chats. Either way an
 * `approval.resolved` event follows. With nothing pending the route answers 409 `approval_not_pending`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RunResult } from "../../agent/agent.js";
import type { ApprovalPrompt } from "../../agent/approval-policy.js";
import type { AgentEvent } from "../../agent/events.js";
import type { ContentPart, Message } from "../../ai/types.js";
import type { ApprovalDecision } from "../../tools/types.js";
import type { RouteContext } from "./context.js";
import { ApiError, randomHex, sendJson, startSse, writeSse, writeSseComment } from "./http.js";
import { readResponsesInput } from "./input.js";

type Json = Record<string, unknown>;

/** Finished runs stay pollable this long (upstream's `_RUN_STATUS_TTL`). */
const FINISHED_TTL_MS = 3600_000;
/** Events kept per run for clients that attach late; past this the oldest deltas are merged. */
const MAX_EVENTS = 5000;
const STOP_WAIT_MS = 5000;

type Terminal = "completed" | "failed" | "cancelled";

interface Run {
  status: Json;
  events: Json[];
  listeners: Set<(event: Json | null) => void>;
  controller: AbortController;
  done: Promise<void>;
  finishedAt?: number;
  /** The approval the run waits for (one at a time: the policy asks one question at a time). */
  pending?: { id: string; answer: (decision: ApprovalDecision, by: string) => void };
}

const CHOICES: readonly ApprovalDecision[] = ["once", "session", "always", "deny"];

export class RunRegistry {
  private readonly runs = new Map<string, Run>();

  constructor(private readonly ctx: RouteContext) {}

  /** Runs not yet finished. */
  get active(): number {
    let n = 0;
    for (const run of this.runs.values()) if (run.finishedAt === undefined) n++;
    return n;
  }

  /** 429 when `gateway.api_server.max_concurrent_runs` runs are going. */
  private checkCapacity(): void {
    const max = this.ctx.load().maxRunning;
    if (this.active >= max) {
      throw new ApiError(
        429,
        `Too many concurrent runs (max ${max}, gateway.api_server.max_concurrent_runs); try again when one finishes.`,
        "rate_limit_exceeded",
        "rate_limit_error",
        { "retry-after": "1" },
      );
    }
  }

  /** `POST /v1/runs`. */
  async start(body: Json, res: ServerResponse): Promise<void> {
    this.sweep();
    this.checkCapacity();
    const input = readResponsesInput(body["input"], body["instructions"]);
    const history = readHistory(body["conversation_history"]) ?? input.history;
    let sessionId = typeof body["session_id"] === "string" ? body["session_id"].trim() : undefined;
    let systemPrompt = input.systemPrompt;
    const previous = body["previous_response_id"];
    if (typeof previous === "string" && previous && !sessionId) {
      const stored = await this.ctx.responses.get(previous);
      if (stored?.sessionId && (await this.ctx.store.getSession(stored.sessionId)))
        sessionId = stored.sessionId;
      if (stored?.instructions && typeof body["instructions"] !== "string") {
        systemPrompt = [stored.instructions, systemPrompt].filter(Boolean).join("\n\n");
      }
    }
    if (sessionId && !/^[\w.:-]{1,128}$/.test(sessionId)) {
      throw new ApiError(
        400,
        `session_id "${sessionId.slice(0, 40)}" is not a session id.`,
        "invalid_session_id",
      );
    }
    if (sessionId && !(await this.ctx.store.getSession(sessionId))) {
      throw new ApiError(
        404,
        `No stored session "${sessionId}" to continue; leave out session_id to start a new one.`,
        "session_not_found",
      );
    }
    // Checked again: other runs may have started while the store answered.
    this.checkCapacity();
    const runId = `run_${randomHex(16)}`;
    const now = Date.now() / 1000;
    const run: Run = {
      status: {
        object: "hermes.run",
        run_id: runId,
        status: "queued",
        created_at: now,
        updated_at: now,
        session_id: sessionId ?? null,
        model: this.ctx.modelName,
      },
      events: [],
      listeners: new Set(),
      controller: new AbortController(),
      done: Promise.resolve(),
    };
    this.runs.set(runId, run);
    run.done = this.execute(runId, run, {
      input: input.input,
      history: sessionId ? [] : history,
      ...(systemPrompt ? { systemPrompt } : {}),
      ...(sessionId ? { sessionId } : {}),
    });
    sendJson(res, 202, { run_id: runId, status: "started" });
  }

  /** `GET /v1/runs/{id}`. */
  get(runId: string, res: ServerResponse): void {
    sendJson(res, 200, this.find(runId).status);
  }

  /** `GET /v1/runs/{id}/events`: replays the run's events so far, then follows it to the end. */
  async events(runId: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const run = this.find(runId);
    startSse(res);
    for (const event of run.events) writeSse(res, event);
    if (run.finishedAt !== undefined) {
      writeSseComment(res, "stream closed");
      res.end();
      return;
    }
    await new Promise<void>((resolve) => {
      const listener = (event: Json | null) => {
        if (event) {
          writeSse(res, event);
          return;
        }
        writeSseComment(res, "stream closed");
        res.end();
        finish();
      };
      const finish = () => {
        run.listeners.delete(listener);
        resolve();
      };
      run.listeners.add(listener);
      req.once("close", finish);
    });
  }

  /** `POST /v1/runs/{id}/stop`: interrupts the run and waits (up to 5 s) for it to stop. */
  async stop(runId: string, res: ServerResponse): Promise<void> {
    const run = this.find(runId);
    if (run.finishedAt === undefined) {
      this.update(run, "stopping", { last_event: "run.stopping" });
      run.controller.abort();
      await Promise.race([run.done, new Promise((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref())]);
    }
    sendJson(res, 200, { run_id: runId, status: "stopping" });
  }

  /** `POST /v1/runs/{id}/approval`: answers the approval the run waits for. */
  approval(runId: string, body: Json, res: ServerResponse): void {
    const run = this.find(runId);
    const pending = run.pending;
    if (!pending) {
      throw new ApiError(
        409,
        `Run ${runId} has no pending approval (none was asked, or it was answered or timed out).`,
        "approval_not_pending",
      );
    }
    const wanted = body["approval_id"];
    if (wanted !== undefined && wanted !== pending.id) {
      throw new ApiError(
        409,
        `Approval ${String(wanted)} is not the one run ${runId} waits for (${pending.id}).`,
        "approval_not_pending",
      );
    }
    const choice = readChoice(body);
    pending.answer(choice, "client");
    sendJson(res, 200, { run_id: runId, approval_id: pending.id, choice, status: "resolved" });
  }

  /** Settles when every run started so far has finished (the server drains them on close). */
  async settled(): Promise<void> {
    await Promise.all([...this.runs.values()].map((r) => r.done));
  }

  private find(runId: string): Run {
    const run = this.runs.get(runId);
    if (!run) {
      throw new ApiError(
        404,
        `Run not found: ${runId}. Finished runs are kept for an hour.`,
        "run_not_found",
        "invalid_request_error",
      );
    }
    return run;
  }

  private async execute(
    runId: string,
    run: Run,
    turn: { input: string | ContentPart[]; history: Message[]; systemPrompt?: string; sessionId?: string },
  ): Promise<void> {
    const signal = run.controller.signal;
    const toolStarted = new Map<string, number>();
    const push = (event: Json) => this.push(run, { ...event, run_id: runId, timestamp: Date.now() / 1000 });
    let result: RunResult | undefined;
    let sessionId: string | undefined;
    const onApproval: ApprovalPrompt = (request, options) =>
      new Promise<ApprovalDecision>((resolve) => {
        const id = `appr_${randomHex(8)}`;
        const answer = (decision: ApprovalDecision, by: string) => {
          if (run.pending?.id !== id) return;
          run.pending = undefined;
          options.signal.removeEventListener("abort", withdrawn);
          push({ event: "approval.resolved", approval_id: id, choice: decision, by });
          this.update(run, "running", {});
          resolve(decision);
        };
        // The policy withdraws it at `approvals.timeout` or when the run is stopped.
        const withdrawn = () => answer("deny", signal.aborted ? "stopped" : "timeout");
        run.pending = { id, answer };
        options.signal.addEventListener("abort", withdrawn, { once: true });
        push({
          event: "approval.requested",
          approval_id: id,
          command: request.command,
          reason: request.reason,
          choices: request.protectedPath ? ["once", "deny"] : CHOICES,
          timeout: Math.round(options.timeoutMs / 1000),
        });
        this.update(run, "waiting_for_approval", {});
      });
    try {
      const outcome = await this.ctx.withRunSlot(signal, () =>
        this.ctx.turns.run({
          ...turn,
          signal,
          onApproval,
          onStart: (sid) => {
            sessionId = sid;
            this.update(run, "running", { session_id: sid });
          },
          onEvent: (event: AgentEvent) => {
            if (event.type === "text_delta" && event.text)
              push({ event: "message.delta", delta: event.text });
            else if (event.type === "reasoning_delta" && event.text)
              push({ event: "reasoning.available", text: event.text });
            else if (event.type === "tool_start" && !event.parentCallId) {
              toolStarted.set(event.callId, Date.now());
              push({
                event: "tool.started",
                tool: event.name,
                tool_call_id: event.callId,
                preview: preview(event.args),
              });
            } else if (event.type === "tool_end" && toolStarted.delete(event.callId)) {
              push({
                event: "tool.completed",
                tool: event.name,
                tool_call_id: event.callId,
                duration: Math.round(event.durationMs) / 1000,
                error: !event.ok,
              });
            }
          },
        }),
      );
      result = outcome?.result;
      sessionId = outcome?.sessionId ?? sessionId;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.finish(run, "failed", { event: "run.failed", error: message }, { error: message });
      return;
    }
    if (!result || signal.aborted || result.reason === "interrupted") {
      this.finish(run, "cancelled", { event: "run.cancelled" }, {});
      return;
    }
    const usage = {
      input_tokens: result.usage.inputTokens,
      output_tokens: result.usage.outputTokens,
      total_tokens: result.usage.inputTokens + result.usage.outputTokens,
    };
    if (result.reason === "error") {
      const message = result.error ?? "agent run failed";
      this.finish(run, "failed", { event: "run.failed", error: message }, { error: message, usage });
      return;
    }
    this.finish(
      run,
      "completed",
      { event: "run.completed", output: result.text, usage },
      { output: result.text, usage, ...(sessionId ? { session_id: sessionId } : {}) },
    );
  }

  private push(run: Run, event: Json): void {
    run.events.push(event);
    if (run.events.length > MAX_EVENTS) run.events.splice(0, run.events.length - MAX_EVENTS);
    this.update(run, String(run.status["status"]), { last_event: event["event"] });
    for (const listener of run.listeners) listener(event);
  }

  private finish(run: Run, status: Terminal, event: Json, fields: Json): void {
    this.push(run, { ...event, run_id: run.status["run_id"], timestamp: Date.now() / 1000 });
    this.update(run, status, fields);
    run.finishedAt = Date.now();
    for (const listener of [...run.listeners]) listener(null);
  }

  private update(run: Run, status: string, fields: Json): void {
    Object.assign(run.status, fields, { status, updated_at: Date.now() / 1000 });
  }

  private sweep(): void {
    const cutoff = Date.now() - FINISHED_TTL_MS;
    for (const [id, run] of this.runs) {
      if (run.finishedAt !== undefined && run.finishedAt < cutoff) this.runs.delete(id);
    }
  }
}

/** The main argument of a tool call, shortened, for `tool.started`'s `preview`. */
function preview(args: Record<string, unknown>): string | null {
  for (const key of ["command", "path", "query", "url", "pattern", "name"]) {
    const value = args?.[key];
    if (typeof value === "string" && value.trim()) {
      const line = value.replace(/\s+/g, " ").trim();
      return line.length > 80 ? `${line.slice(0, 77)}...` : line;
    }
  }
  return null;
}

/** The client's answer: `choice` (upstream), or `decision`, or `approve: true|false`. */
function readChoice(body: Json): ApprovalDecision {
  const raw = body["choice"] ?? body["decision"];
  if (typeof raw === "string" && CHOICES.includes(raw.trim().toLowerCase() as ApprovalDecision)) {
    return raw.trim().toLowerCase() as ApprovalDecision;
  }
  if (raw === undefined && typeof body["approve"] === "boolean") return body["approve"] ? "once" : "deny";
  throw new ApiError(
    400,
    `"choice" must be one of ${CHOICES.join(", ")}; got ${JSON.stringify(raw ?? null)}.`,
    "invalid_request",
  );
}

/** `conversation_history`: `[{role, content}]` the client keeps itself (text only), or undefined. */
function readHistory(value: unknown): Message[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    throw new ApiError(
      400,
      '"conversation_history" must be an array of {role, content} objects.',
      "invalid_request",
    );
  }
  return value.map((entry, i) => {
    const role = typeof entry === "object" && entry !== null ? (entry as Json)["role"] : undefined;
    const content = typeof entry === "object" && entry !== null ? (entry as Json)["content"] : undefined;
    if ((role !== "user" && role !== "assistant") || typeof content !== "string") {
      throw new ApiError(
        400,
        `conversation_history[${i}] must be {role: "user" | "assistant", content: string}.`,
        "invalid_request",
      );
    }
    return { role, content };
  });
}
