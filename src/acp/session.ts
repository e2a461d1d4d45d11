/**
 * One editor session: a `ChatSession` (recorded in state.db with source `acp`) and the bridge from
 * its agent's events to ACP `session/update` notifications: streamed answer and thought chunks,
 * each tool call with its kind, title, locations, live output and, for edits, the diff read from
 * the files before and after. Dangerous-command approvals and clarify questions become
 * `session/request_permission` requests; `cancel()` interrupts the turn through the agent's abort
 * path (a running command's process group is stopped).
 */
import { readFileSync, statSync } from "node:fs";
import type {
  ContentBlock,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionConfigOption,
  SessionUpdate,
  StopReason,
} from "@agentclientprotocol/sdk";
import type { ApprovalPromptOptions } from "../agent/approval-policy.js";
import type { ChatSession } from "../agent/chat-session.js";
import type { AgentEvent } from "../agent/events.js";
import { patchTool } from "../tools/file/patch.js";
import { writeFileTool } from "../tools/file/write-file.js";
import type { McpManager } from "../tools/mcp/manager.js";
import type { ApprovalDecision, ApprovalRequest, ClarifyRequest } from "../tools/types.js";
import { processRedactor } from "../util/redact.js";
import { StreamTextRedactor } from "../util/redact-stream.js";
import {
  approvalDecision,
  approvalOptions,
  approvalToolCall,
  clarifyAnswer,
  clarifyOptions,
  clarifyToolCall,
  FREE_TEXT_CLARIFY,
} from "./permissions.js";
import { promptInput } from "./prompt-input.js";
import {
  endContent,
  endStatus,
  type FileChange,
  outputContent,
  startContent,
  toolKind,
  toolLocations,
  toolTitle,
} from "./tool-updates.js";

/** What a session needs of the editor's connection. */
export interface AcpPeer {
  /** Sends one `session/update` notification. */
  update(sessionId: string, update: SessionUpdate): Promise<void>;
  /** Sends `session/request_permission`; aborting `signal` withdraws the question. */
  requestPermission(
    params: RequestPermissionRequest,
    signal: AbortSignal,
  ): Promise<RequestPermissionResponse>;
}

/** Largest file whose before/after text is read for a diff; bigger files show the tool's result. */
const MAX_DIFF_BYTES = 1024 * 1024;

interface RunningCall {
  name: string;
  args: Record<string, unknown>;
  /** Text of each edited file before the call (`null`: absent); undefined when unreadable. */
  before?: Map<string, string | null>;
  output: string;
}

export class AcpSession {
  private chat: ChatSession | undefined;
  /** Updates go out one after another, in the order the agent produced them. */
  private outbox: Promise<void> = Promise.resolve();
  private readonly calls = new Map<string, RunningCall>();
  /** Aborted by `cancel()`: withdraws this turn's open permission requests. */
  private turn: AbortController | undefined;
  private cancelled = false;
  private permissionSeq = 0;
  private readonly modelChoices: string[];
  /**
   * Streamed text passes a redactor that holds back a tail which could be the start of a secret,
   * so a key cut between two chunks is still caught (each frame alone would not show it whole).
   */
  private answer = new StreamTextRedactor(processRedactor());
  private thinking = new StreamTextRedactor(processRedactor());

  /** The id the editor knows the session by (the conversation's first id; compression may move the recording). */
  private sessionId = "";

  constructor(
    readonly cwd: string,
    private readonly peer: AcpPeer,
    private readonly options: {
      /** MCP servers the editor passed for this session, ended with it. */
      mcp?: McpManager;
      /** Models offered in the editor's model selector (the current one is added). */
      models?: readonly string[];
      onError?: (message: string) => void;
    } = {},
  ) {
    this.modelChoices = [...(options.models ?? [])];
  }

  /** Binds the conversation (created after this object, since its prompts call back into it). */
  attach(chat: ChatSession): void {
    this.chat = chat;
    this.sessionId = chat.id;
  }

  get id(): string {
    return this.sessionId;
  }

  get session(): ChatSession {
    if (!this.chat) throw new Error("The ACP session has no conversation attached.");
    return this.chat;
  }

  get running(): boolean {
    return this.turn !== undefined;
  }

  /** The model selector the editor shows (ACP session config option, category `model`). */
  configOptions(): SessionConfigOption[] {
    const current = this.session.model;
    const models = this.modelChoices.includes(current) ? this.modelChoices : [current, ...this.modelChoices];
    return [
      {
        id: "model",
        name: "Model",
        category: "model",
        type: "select",
        currentValue: current,
        options: models.map((m) => ({ value: m, name: m })),
      },
    ];
  }

  /** Switches the model from the next turn on (an id, `provider:model` or an alias). */
  async setModel(model: string): Promise<void> {
    if (this.running) throw new Error("The model cannot change while a turn runs; cancel it or wait.");
    await this.session.setModel(model);
    if (!this.modelChoices.includes(this.session.model)) this.modelChoices.push(this.session.model);
  }

  /** Runs one prompt turn to its end; resolves with the ACP stop reason once every update was sent. */
  async prompt(blocks: readonly ContentBlock[]): Promise<StopReason> {
    if (this.turn) throw new Error("A prompt is already running in this session; cancel it or wait.");
    const chat = this.session;
    const input = promptInput(blocks);
    const turn = new AbortController();
    this.turn = turn;
    this.cancelled = false;
    for (const line of input.skipped) this.thought(`Left out of the prompt: ${line}.`);
    const off = chat.agent.on((event) => this.onEvent(event));
    try {
      const run = chat.run(input.content);
      for await (const _event of run) {
        // Events are handled synchronously by the listener (edits need the file before the tool runs).
      }
      const result = await run.result;
      if (result.reason === "error") this.message(`\n\nThe turn failed: ${result.error ?? "unknown error"}`);
      this.flushText();
      await this.outbox;
      if (this.cancelled || result.reason === "interrupted") return "cancelled";
      if (result.reason === "max_turns") return "max_turn_requests";
      return "end_turn";
    } finally {
      off();
      this.turn = undefined;
      for (const id of this.calls.keys()) {
        this.send({ sessionUpdate: "tool_call_update", toolCallId: id, status: "failed" });
      }
      this.calls.clear();
      await this.outbox;
    }
  }

  /** Stops the running turn (its model call, running command and open questions); no-op when idle. */
  cancel(): void {
    if (!this.turn) return;
    this.cancelled = true;
    this.turn.abort();
    this.session.interrupt();
  }

  /** Replays updates (session/load) before the load response. */
  async replay(updates: readonly SessionUpdate[]): Promise<void> {
    for (const update of updates) this.send(update);
    await this.outbox;
  }

  /** Asks the editor about a dangerous command; fails closed. */
  async askApproval(request: ApprovalRequest, options: ApprovalPromptOptions): Promise<ApprovalDecision> {
    const offered = approvalOptions(request);
    const outcome = await this.ask(
      { sessionId: this.id, toolCall: approvalToolCall(this.nextPermissionId(), request), options: offered },
      options.signal,
    );
    return outcome ? approvalDecision(outcome.outcome, offered) : "deny";
  }

  /** Asks a clarify question with choices as a permission request; free text cannot be asked. */
  async askClarify(request: ClarifyRequest): Promise<string> {
    const choices = request.choices ?? [];
    if (choices.length === 0) return FREE_TEXT_CLARIFY;
    const outcome = await this.ask(
      {
        sessionId: this.id,
        toolCall: clarifyToolCall(this.nextPermissionId(), request.question),
        options: clarifyOptions(choices),
      },
      undefined,
    );
    return clarifyAnswer(outcome?.outcome ?? { outcome: "cancelled" }, choices);
  }

  /** Ends the conversation (kept in state.db) and the editor's MCP servers for it. */
  async close(reason = "acp_closed"): Promise<void> {
    this.cancel();
    await this.chat?.close(reason).catch(() => undefined);
    await this.options.mcp?.close().catch(() => undefined);
  }

  private async ask(
    params: RequestPermissionRequest,
    signal: AbortSignal | undefined,
  ): Promise<RequestPermissionResponse | undefined> {
    const turn = this.turn?.signal;
    const signals = [signal, turn].filter((s): s is AbortSignal => s !== undefined);
    const combined = signals.length > 0 ? AbortSignal.any(signals) : new AbortController().signal;
    if (combined.aborted) return undefined;
    // The question goes after every update already queued, so the editor has drawn the call.
    await this.outbox;
    try {
      return await this.peer.requestPermission(params, combined);
    } catch (error) {
      this.options.onError?.(
        `permission request failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      return undefined;
    }
  }

  private nextPermissionId(): string {
    this.permissionSeq += 1;
    return `perm-${this.permissionSeq}`;
  }

  private onEvent(event: AgentEvent): void {
    switch (event.type) {
      case "text_delta":
        this.message(event.text);
        return;
      case "reasoning_delta":
        this.thought(event.text);
        return;
      case "stream_discarded":
        if (event.text) this.message(`\n\n[the text above was cut off (${event.reason}); retrying]\n\n`);
        return;
      case "retry":
      case "warning":
        this.thought(`⚠ ${event.message}\n`);
        return;
      case "tool_start":
        if (!event.parentCallId) this.toolStart(event.callId, event.name, event.args);
        return;
      case "tool_output": {
        const call = this.calls.get(event.callId);
        if (!call) return;
        call.output += event.text;
        this.send({
          sessionUpdate: "tool_call_update",
          toolCallId: event.callId,
          content: outputContent(call.args, call.output),
        });
        return;
      }
      case "tool_end":
        if (!event.parentCallId) this.toolEnd(event.callId, event.ok, event.result);
        return;
      default:
    }
  }

  private toolStart(callId: string, name: string, args: Record<string, unknown>): void {
    this.flushText();
    const paths = editedPaths(name, args, this.session.agent.cwd);
    const call: RunningCall = { name, args, output: "" };
    if (paths.length > 0) {
      call.before = new Map();
      for (const path of paths) {
        const text = readText(path);
        if (text !== undefined) call.before.set(path, text);
      }
    }
    this.calls.set(callId, call);
    const locations = toolLocations(
      args,
      paths.length > 0 ? paths : locationPaths(args, this.session.agent.cwd),
    );
    this.send({
      sessionUpdate: "tool_call",
      toolCallId: callId,
      title: toolTitle(name, args),
      kind: toolKind(name),
      status: "in_progress",
      content: startContent(name, args),
      ...(locations.length > 0 ? { locations } : {}),
      rawInput: args,
    });
  }

  private toolEnd(callId: string, ok: boolean, result: string): void {
    const call = this.calls.get(callId);
    if (!call) return;
    this.calls.delete(callId);
    const changes: FileChange[] = [];
    for (const [path, before] of call.before ?? []) {
      const after = readText(path);
      if (after !== undefined) changes.push({ path, before, after });
    }
    this.send({
      sessionUpdate: "tool_call_update",
      toolCallId: callId,
      status: endStatus(ok, result),
      content: endContent(call.name, call.args, result, changes),
    });
  }

  private message(text: string): void {
    this.sendMessage(this.answer.push(text));
  }

  private thought(text: string): void {
    this.sendThought(this.thinking.push(text));
  }

  /** Sends what the redactors held back (before a tool call, and at the end of the turn). */
  private flushText(): void {
    this.sendThought(this.thinking.end());
    this.sendMessage(this.answer.end());
  }

  private sendMessage(text: string): void {
    if (text) this.send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
  }

  private sendThought(text: string): void {
    if (text) this.send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text } });
  }

  private send(update: SessionUpdate): void {
    this.outbox = this.outbox
      .then(() => this.peer.update(this.id, update))
      .catch((error: unknown) => {
        this.options.onError?.(
          `session/update failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      });
  }
}

/** Absolute paths a `write_file` or `patch` call edits (the tools' own path rules); [] for others. */
function editedPaths(name: string, args: Record<string, unknown>, cwd: string): string[] {
  try {
    // biome-ignore lint/suspicious/noExplicitAny: the model's arguments, checked by the tools' own path rules
    if (name === "write_file") return writeFileTool.pathScoped?.(args as any, cwd) ?? [];
    // biome-ignore lint/suspicious/noExplicitAny: as above
    if (name === "patch") return patchTool.pathScoped?.(args as any, cwd) ?? [];
  } catch {
    // Arguments the tool will reject anyway: no diff.
  }
  return [];
}

/** The `path` argument of other tools (read_file, search_files), made absolute. */
function locationPaths(args: Record<string, unknown>, cwd: string): string[] {
  const path = args["path"];
  if (typeof path !== "string" || !path) return [];
  return [path.startsWith("/") ? path : `${cwd.replace(/\/+$/, "")}/${path}`];
}

/** A text file's content; `null` when absent; undefined when too big, binary or unreadable. */
function readText(path: string): string | null | undefined {
  try {
    const stat = statSync(path);
    if (!stat.isFile() || stat.size > MAX_DIFF_BYTES) return undefined;
    const bytes = readFileSync(path);
    if (bytes.includes(0)) return undefined;
    return bytes.toString("utf8");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? null : undefined;
  }
}
