/**
 * Builds the `ToolContext` a tool call runs with: the agent's fixed parts (task, home, approvals,
 * shared runtime) plus the call's own (id, signal, progress), nested calls for `execute_code`
 * and, where allowed, delegation.
 */
import type { SessionStore } from "../state/types.js";
import { isApprovalDenied } from "../tools/approval/denial.js";
import type { ToolRegistry } from "../tools/registry.js";
import type {
  AgentNotice,
  ApprovalDecision,
  ApprovalRequest,
  ClarifyRequest,
  DelegationRequest,
  DelegationResult,
  ToolContext,
  ToolOutcome,
  ToolRuntime,
} from "../tools/types.js";
import type { TruncateLimits } from "../util/truncate.js";
import type { AgentEvent } from "./events.js";

/** What every tool call of one agent shares. */
export interface ToolContextBase {
  taskId: string;
  sessionId: string;
  cwd: string;
  home: string;
  config: Readonly<Record<string, unknown>>;
  env: Readonly<Record<string, string | undefined>>;
  /** The unscrubbed environment (API keys), for in-process service calls only. */
  secrets: Readonly<Record<string, string | undefined>>;
  /** `signal`: the call's; aborting it withdraws an open question (a denial). */
  requestApproval(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision>;
  ask?: ((request: ClarifyRequest) => Promise<string>) | undefined;
  session: Map<string, unknown>;
  runtime: ToolRuntime;
  sessionStore?: SessionStore | undefined;
  /** Recorded on writes staged for approval; default foreground. */
  writeOrigin?: "foreground" | "background_review" | "curator" | undefined;
  /** Queues a notice for this agent's next turn (see `NoticeQueue`); absent: none can be delivered. */
  notify?: ((notice: AgentNotice) => void) | undefined;
  /** The secret redactor every event passes; live command output (`tool_output`) goes through it. */
  redact?: ((text: string) => string) | undefined;
  registry: ToolRegistry;
  limits: TruncateLimits;
  /** Present when this agent may start subagents. */
  delegate?:
    | ((
        request: DelegationRequest,
        scope: { signal: AbortSignal; emit: (e: AgentEvent) => void; enabled: readonly string[] },
      ) => Promise<DelegationResult[]>)
    | undefined;
}

/** One call: its id, tool, signal, where its events go, and the session's tools. */
export interface ToolCallScope {
  callId: string;
  name: string;
  signal: AbortSignal;
  emit: (e: AgentEvent) => void;
  enabled: readonly string[];
}

/**
 * The context of one tool call. A top-level call may run nested calls (`callTool`, for
 * `execute_code`): they go through the same registry, approvals and task, limited to the
 * session's tools, are shown as children of the call, and never reach the model's context.
 * Nested calls cannot nest further or delegate.
 */
export function buildToolContext(base: ToolContextBase, scope: ToolCallScope, nested = false): ToolContext {
  const { callId, name, signal, emit, enabled } = scope;
  let count = 0;
  const callTool = async (
    tool: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal } = {},
  ): Promise<ToolOutcome> => {
    if (!enabled.includes(tool)) {
      const message = `Tool "${tool}" is not enabled in this session.`;
      return { content: JSON.stringify({ error: message }), ok: false, error: message };
    }
    const nestedId = `${callId}.${++count}`;
    emit({ type: "tool_start", callId: nestedId, name: tool, args, parentCallId: callId });
    const started = Date.now();
    const nestedSignal = options.signal ? AbortSignal.any([signal, options.signal]) : signal;
    const outcome = await base.registry.execute(
      tool,
      args,
      buildToolContext(base, { callId: nestedId, name: tool, signal: nestedSignal, emit, enabled }, true),
      base.limits,
    );
    emit({
      type: "tool_end",
      callId: nestedId,
      name: tool,
      parentCallId: callId,
      ok: outcome.ok,
      result: outcome.content,
      durationMs: Date.now() - started,
    });
    return outcome;
  };
  const delegateWith = base.delegate;
  const delegate =
    !nested && delegateWith
      ? (request: DelegationRequest) => delegateWith(request, { signal, emit, enabled })
      : undefined;
  return {
    callId,
    enabledTools: enabled,
    ...(nested ? {} : { callTool }),
    ...(delegate ? { delegate } : {}),
    taskId: base.taskId,
    sessionId: base.sessionId,
    cwd: base.cwd,
    home: base.home,
    config: base.config,
    env: base.env,
    secrets: base.secrets,
    signal,
    requestApproval: async (request) => {
      const started = Date.now();
      const report = (decision: ApprovalDecision, denial?: string) =>
        emit({
          type: "approval",
          callId,
          name,
          command: request.command,
          reason: request.reason,
          decision,
          ...(denial === undefined ? {} : { denial }),
          waitedMs: Date.now() - started,
        });
      try {
        const decision = await base.requestApproval(request, signal);
        report(decision);
        return decision;
      } catch (error) {
        // The policy refuses by throwing, so the model reads who refused and why.
        if (isApprovalDenied(error)) report("deny", error.why);
        throw error;
      }
    },
    ...(base.ask ? { ask: base.ask } : {}),
    ...(base.notify ? { notify: base.notify } : {}),
    progress: (message) => emit({ type: "tool_progress", callId, name, message }),
    ...(base.redact
      ? { output: liveOutput(base.redact, (text) => emit({ type: "tool_output", callId, name, text })) }
      : {}),
    session: base.session,
    runtime: base.runtime,
    ...(base.sessionStore ? { sessionStore: base.sessionStore } : {}),
    ...(base.writeOrigin ? { writeOrigin: base.writeOrigin } : {}),
  };
}

/**
 * Live output for one call: chunks are cut at line ends (`\n` or `\r`) and whole lines are
 * redacted before they are emitted, so a secret split across two chunks is still found; a private
 * key block is held until its END line (up to 20,000 characters) so it is redacted as one. A line
 * never ended is not shown (it reaches the model in the tool's result); a very long one is passed
 * on in pieces of 4,000 characters so memory stays bounded.
 */
export function liveOutput(
  redact: (text: string) => string,
  emit: (text: string) => void,
): (chunk: string) => void {
  let partial = "";
  let held = "";
  return (chunk) => {
    partial += chunk;
    const end = Math.max(partial.lastIndexOf("\n"), partial.lastIndexOf("\r"));
    if (end >= 0) {
      held += partial.slice(0, end + 1);
      partial = partial.slice(end + 1);
    }
    if (partial.length > 4000) {
      held += partial;
      partial = "";
    }
    if (held === "" || (openKeyBlock(held) && held.length < 20_000)) return;
    emit(redact(held));
    held = "";
  };
}

/** Whether `text` has a private key's BEGIN line with no END line after it. */
function openKeyBlock(text: string): boolean {
  const last = (re: RegExp) => Math.max(-1, ...[...text.matchAll(re)].map((m) => m.index));
  return last(/-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY/g) > last(/-----END[A-Z0-9 ]{0,40}PRIVATE KEY/g);
}
