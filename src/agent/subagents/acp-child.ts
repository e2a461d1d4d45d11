/**
 * A `delegate_task` child that is an external Agent Client Protocol agent (`acp_command` /
 * `acp_args`: Claude Code's ACP adapter, Codex, another `hermes acp`...), driven over stdio with
 * the official SDK's client. The task goes in as one prompt; the agent's streamed answer comes back
 * as the child's summary.
 *
 * Safety: the agent is a program the model chose, so its command line is judged exactly as the
 * terminal would judge it (hardline refused, dangerous asked about through the parent's approval
 * policy); it gets the environment without Hermes's provider keys; every permission it asks for
 * (`session/request_permission`) goes through the parent's approval policy (the same prompt,
 * --yolo, approvals.mode, session answers), and anything not approved is rejected. It is offered
 * no file-system or terminal methods. The parent's interrupt, `/agents stop` and
 * `delegation.child_timeout_seconds` cancel its turn, then end its process. While it runs it is
 * listed by `/agents` like any child (what it does now: the tool it reports, a permission it asks
 * for, its answer streaming), and `subagent_start`/`subagent_stop` hooks fire for it.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import type {
  PermissionOption,
  RequestPermissionRequest,
  RequestPermissionResponse,
  StopReason,
} from "@agentclientprotocol/sdk";
import { ApprovalDeniedError } from "../../tools/approval/denial.js";
import { analyseCommand, processContext } from "../../tools/approval/index.js";
import type { DelegationResult, DelegationTask } from "../../tools/types.js";
import { scrubEnv } from "../../util/env-scrub.js";
import { loadAcpSdk } from "../acp-sdk.js";
import type { ApprovalPolicy } from "../approval-policy.js";
import type { DelegationHost, Limits } from "./host.js";
import { taskMessage } from "./host.js";
import { type SubagentKind, subagentRegistry } from "./registry.js";

/** How long a cancelled agent may take to answer its prompt before its process is ended. */
const CANCEL_GRACE_MS = 5_000;

/** The command line as a shell would read it, for the analyser and the approval prompt. */
export function acpCommandLine(command: string, args: readonly string[]): string {
  const quote = (word: string) =>
    /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
  return [command, ...args].map(quote).join(" ");
}

/**
 * Hermes's answer to an external agent's permission request, as the ACP option to select: the
 * parent's policy decides; "once" picks an allow-once option, "session"/"always" an allow-always
 * one (the agent remembers it, nothing is written to Hermes's allowlist), a denial a reject option.
 * Nothing approved (or no option of the needed kind): the request is cancelled, i.e. refused.
 */
export async function answerPermission(
  request: RequestPermissionRequest,
  approvals: ApprovalPolicy,
  agentName: string,
  signal: AbortSignal,
): Promise<RequestPermissionResponse> {
  const title = request.toolCall.title ?? request.toolCall.toolCallId;
  const raw = request.toolCall.rawInput as Record<string, unknown> | undefined;
  const detail = typeof raw?.["command"] === "string" ? (raw["command"] as string) : title;
  const reject = (): RequestPermissionResponse => {
    const option = pickOption(request.options, ["reject_once", "reject_always"]);
    return option
      ? { outcome: { outcome: "selected", optionId: option.optionId } }
      : { outcome: { outcome: "cancelled" } };
  };
  let decision: string;
  try {
    decision = await approvals.request(
      {
        command: detail,
        reason: `the external agent ${agentName} asks permission: ${title}`,
        patternKey: `acp_agent_permission:${agentName}`,
      },
      signal,
    );
  } catch (error) {
    if (error instanceof ApprovalDeniedError) return reject();
    return reject();
  }
  const kinds: PermissionOption["kind"][] =
    decision === "once" ? ["allow_once"] : ["allow_always", "allow_once"];
  const option = pickOption(request.options, kinds);
  return option ? { outcome: { outcome: "selected", optionId: option.optionId } } : reject();
}

function pickOption(
  options: readonly PermissionOption[],
  kinds: readonly PermissionOption["kind"][],
): PermissionOption | undefined {
  for (const kind of kinds) {
    const found = options.find((o) => o.kind === kind);
    if (found) return found;
  }
  return undefined;
}

/** Runs one task in an external ACP agent; never rejects. */
export async function runAcpChild(
  host: DelegationHost,
  spec: { callId: string; index: number; task: DelegationTask; kind?: SubagentKind },
  limits: Limits,
  base: { index: number; id: string; goal: string },
  sessionId: string,
): Promise<DelegationResult> {
  const acp = spec.task.acp;
  const started = Date.now();
  const result = (status: DelegationResult["status"], summary: string, error?: string): DelegationResult => ({
    ...base,
    status,
    summary: cap(summary, limits.maxSummaryChars),
    sessionId,
    iterations: 0,
    durationMs: Date.now() - started,
    ...(error ? { error } : {}),
  });
  if (!acp) return result("failed", "", "No acp_command was given.");
  const line = acpCommandLine(acp.command, acp.args);
  const approvals = host.approvals.child({ autoApprove: limits.autoApprove });

  // The same judgement as a terminal command: hardline never, dangerous only when approved.
  const verdict = analyseCommand(line, processContext(host.cwd, host.env));
  if (verdict.hardline) {
    return result(
      "failed",
      "",
      `Refused to start "${line}" as an ACP agent: ${verdict.reason ?? "never allowed"}.`,
    );
  }
  if (verdict.dangerous) {
    try {
      await approvals.request(
        {
          command: line,
          reason: verdict.reason ?? "dangerous command",
          patternKey: verdict.patternKey ?? line,
          protectedPath: verdict.protectedPath,
        },
        host.signal,
      );
    } catch (error) {
      return result("failed", "", error instanceof Error ? error.message : String(error));
    }
  }

  let child: ChildProcessWithoutNullStreams;
  try {
    child = spawn(acp.command, acp.args, {
      cwd: host.cwd,
      env: scrubEnv(host.env) as NodeJS.ProcessEnv,
      stdio: "pipe",
    });
  } catch (error) {
    return result(
      "failed",
      "",
      `Could not start the ACP agent "${line}": ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString("utf8")).slice(-2000);
  });
  const spawnFailed = new Promise<Error>((resolve) => child.once("error", resolve));
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));

  const registry = subagentRegistry(host.runtime);
  const turn = new AbortController();
  let answer = "";
  let stopped: "interrupted" | "timeout" | undefined;
  const sdk = loadAcpSdk();
  const app = sdk
    .client({ name: "hermes-delegate" })
    .onNotification("session/update", ({ params }) => {
      const update = params.update;
      if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
        if (!answer) registry.progress(base.id, "answering");
        answer += update.content.text;
      } else if (update.sessionUpdate === "tool_call") {
        registry.progress(base.id, update.title);
        host.emit({
          type: "subagent",
          callId: spec.callId,
          index: spec.index,
          goal: base.goal,
          state: "progress",
          detail: update.title,
        });
      }
    })
    .onRequest("session/request_permission", async ({ params }) => {
      registry.progress(base.id, `asking: ${params.toolCall.title ?? "permission"}`);
      const answer = await answerPermission(
        params,
        approvals,
        acp.command,
        AbortSignal.any([turn.signal, host.signal]),
      );
      registry.progress(base.id, "working");
      return answer;
    });
  const connection = app.connect(
    sdk.ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    ),
  );
  let acpSession: string | undefined;
  const cancel = (why: "interrupted" | "timeout") => {
    if (stopped) return;
    stopped = why;
    turn.abort();
    if (acpSession)
      void connection.agent.notify("session/cancel", { sessionId: acpSession }).catch(() => undefined);
    // An agent that does not stop on cancel is ended.
    setTimeout(() => child.kill("SIGTERM"), CANCEL_GRACE_MS).unref();
  };
  const onAbort = () => cancel("interrupted");
  host.signal.addEventListener("abort", onAbort, { once: true });
  registry.add(
    {
      id: base.id,
      kind: spec.kind ?? "child",
      goal: base.goal,
      parentSessionId: host.sessionId,
      sessionId,
      taskId: `acp-${child.pid ?? "?"}`,
      depth: host.depth + 1,
      startedAt: started,
      acp: line,
    },
    () => cancel("interrupted"),
  );
  const hookBase = host.hookInfo && { ...host.hookInfo(), child_session_id: sessionId, goal: base.goal };
  if (hookBase) await host.hooks?.notify("subagent_start", hookBase);
  const timer =
    limits.childTimeoutMs > 0 ? setTimeout(() => cancel("timeout"), limits.childTimeoutMs) : undefined;
  timer?.unref();
  host.emit({
    type: "subagent",
    callId: spec.callId,
    index: spec.index,
    goal: base.goal,
    state: "start",
    detail: `ACP: ${acp.command}`,
  });

  const work = async (): Promise<StopReason> => {
    await connection.agent.request("initialize", {
      protocolVersion: sdk.PROTOCOL_VERSION,
      clientCapabilities: {},
      clientInfo: { name: "hermes", version: "delegate" },
    });
    const created = await connection.agent.request("session/new", { cwd: host.cwd, mcpServers: [] });
    acpSession = created.sessionId;
    if (stopped) return "cancelled";
    const response = await connection.agent.request("session/prompt", {
      sessionId: created.sessionId,
      prompt: [{ type: "text", text: taskMessage(spec.task) }],
    });
    return response.stopReason;
  };

  let out: DelegationResult;
  try {
    const outcome = await Promise.race([
      work().then((stop) => ({ stop })),
      spawnFailed.then((error) => ({ error })),
      exited.then(() => ({ exit: true as const })),
    ]);
    if ("error" in outcome) {
      out = result("failed", "", `Could not start the ACP agent "${line}": ${outcome.error.message}`);
    } else if ("exit" in outcome) {
      out = stopped
        ? result(stopped, answer, stopped === "timeout" ? timeoutNote(limits) : undefined)
        : result(
            "failed",
            answer,
            `The ACP agent "${line}" exited before answering.${stderr ? ` Its last output: ${stderr.trim()}` : ""}`,
          );
    } else if (stopped) {
      out = result(stopped, answer, stopped === "timeout" ? timeoutNote(limits) : undefined);
    } else {
      out = result(
        statusOf(outcome.stop),
        answer,
        outcome.stop === "refusal" ? "The ACP agent refused the task." : undefined,
      );
    }
  } catch (error) {
    out = stopped
      ? result(stopped, answer, stopped === "timeout" ? timeoutNote(limits) : undefined)
      : result(
          "failed",
          answer,
          `The ACP agent "${line}" failed: ${error instanceof Error ? error.message : String(error)}`,
        );
  } finally {
    if (timer) clearTimeout(timer);
    host.signal.removeEventListener("abort", onAbort);
    connection.close();
    child.stdin.end();
    // Its process ends with the task (closing stdin is the polite way; SIGTERM if it lingers).
    const lingering = setTimeout(() => child.kill("SIGTERM"), CANCEL_GRACE_MS);
    lingering.unref();
    await Promise.race([exited, new Promise((r) => setTimeout(r, CANCEL_GRACE_MS + 1000).unref())]);
    clearTimeout(lingering);
  }
  registry.finish(base.id, out.status, 0, Date.now());
  if (hookBase)
    await host.hooks?.notify("subagent_stop", {
      ...hookBase,
      status: out.status,
      summary: out.summary,
      duration_ms: out.durationMs,
    });
  host.emit({
    type: "subagent",
    callId: spec.callId,
    index: spec.index,
    goal: base.goal,
    state: "end",
    detail: out.status,
    durationMs: out.durationMs,
    iterations: 0,
  });
  return out;
}

function statusOf(stop: StopReason): DelegationResult["status"] {
  if (stop === "end_turn") return "completed";
  if (stop === "cancelled") return "interrupted";
  if (stop === "max_turn_requests" || stop === "max_tokens") return "max_iterations";
  return "failed";
}

function timeoutNote(limits: Limits): string {
  return `Stopped after ${Math.round(limits.childTimeoutMs / 1000)} s (delegation.child_timeout_seconds).`;
}

function cap(text: string, max: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= max) return trimmed;
  return `${trimmed.slice(0, max)}\n[summary truncated: ${trimmed.length - max} more characters]`;
}
