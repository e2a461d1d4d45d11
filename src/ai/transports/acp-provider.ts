/**
 * The `copilot-acp` provider's transport: each model call is one ACP session on the long-lived
 * Copilot CLI process (acp-process.ts). The conversation and Hermes's tool schemas go in as one
 * prompt (acp-prompt.ts); the agent's answer streams back as text and thought deltas, and the tool
 * calls it writes are returned to Hermes's loop, which runs them with its own tools under its own
 * approval, redaction and interrupt rules. The agent's own permission requests are refused.
 *
 * An interrupt cancels the turn (`session/cancel`); an agent that has not stopped within the grace
 * period is killed with its process group, and the next call starts a new one. An agent that dies
 * mid-call fails the call with what it printed; the next call starts it again.
 */
import { createHash } from "node:crypto";
import type { NewSessionResponse, PromptRequest, SessionConfigOption } from "@agentclientprotocol/sdk";
import { EventStream } from "../../util/event-stream.js";
import {
  type ChatRequest,
  type FinishReason,
  ProviderError,
  type StreamEvent,
  type Transport,
} from "../types.js";
import { type AcpLaunch, acpChildEnv } from "./acp-launch.js";
import { AcpAgentProcess, type SessionUpdate, seconds } from "./acp-process.js";
import { acpPromptBlocks, ToolCallTextSplitter } from "./acp-prompt.js";
import { StallWatchdog } from "./stall.js";
import { abortError } from "./wire-failure.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The model id that means "whatever the Copilot CLI's session uses": nothing is selected. */
export const COPILOT_ACP_SESSION_MODEL = "copilot-acp";

export interface AcpTransportOptions {
  /** The program and arguments (acp-launch.ts `copilotAcpLaunch`). */
  launch: AcpLaunch;
  /** Hermes's environment; the child gets it without Hermes's secrets. */
  env: Env;
  /** The directory the agent runs in and its sessions are opened for; default the process's. */
  cwd?: string | undefined;
  /** Where errors say the request went (`acp://copilot`). */
  baseUrl?: string | undefined;
  /** How long the agent may take to answer `initialize`; default 60 s. */
  startTimeoutMs?: number | undefined;
  /** How long a cancelled turn may take to end before the agent is killed; default 3 s. */
  cancelGraceMs?: number | undefined;
  /**
   * An answer that sends nothing this long (`agent.stream_stall_timeout`) is cut as stalled and the
   * agent killed; 0 never. Default 60 s.
   */
  stallTimeoutMs?: number | undefined;
  /** The process to use (tests); default one shared per program, arguments and directory. */
  process?: AcpAgentProcess | undefined;
  /** Told about each permission the agent asked for and was refused. */
  onRefused?: ((what: string) => void) | undefined;
}

const shared = new Map<string, AcpAgentProcess>();

/**
 * One agent process per program, arguments, directory and environment for the whole Hermes
 * process, so the main model, a fallback and side tasks reuse it instead of starting one each.
 */
export function sharedAcpProcess(options: AcpTransportOptions): AcpAgentProcess {
  const cwd = options.cwd ?? process.cwd();
  const key = createHash("sha256")
    .update(JSON.stringify([options.launch.command, options.launch.args, cwd, acpChildEnv(options.env)]))
    .digest("hex");
  let found = shared.get(key);
  if (!found) {
    found = new AcpAgentProcess({
      launch: options.launch,
      cwd,
      env: options.env,
      startTimeoutMs: options.startTimeoutMs ?? 60_000,
      onRefused: options.onRefused,
    });
    shared.set(key, found);
  }
  return found;
}

export function createAcpTransport(options: AcpTransportOptions): Transport {
  const proc = options.process ?? sharedAcpProcess(options);
  const baseUrl = options.baseUrl ?? "acp://copilot";
  const cwd = options.cwd ?? process.cwd();
  const grace = options.cancelGraceMs ?? 3_000;
  const stallMs = options.stallTimeoutMs ?? 60_000;
  return {
    apiMode: "chat_completions",
    stream(request, signal) {
      return runCall({ proc, baseUrl, cwd, grace, stallMs }, request, signal);
    },
  };
}

interface CallContext {
  proc: AcpAgentProcess;
  baseUrl: string;
  cwd: string;
  grace: number;
  stallMs: number;
}

async function* runCall(
  ctx: CallContext,
  request: ChatRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<StreamEvent> {
  if (signal?.aborted) throw abortError(signal);
  const { proc, baseUrl } = ctx;
  let agent: Awaited<ReturnType<AcpAgentProcess["agent"]>>;
  try {
    agent = await proc.agent();
  } catch (error) {
    // Not retried: an agent that cannot be started or never answers will not start on the next try.
    throw new ProviderError(messageOf(error), { baseUrl, cause: error });
  }
  const release = agent.hold();
  const events = new EventStream<StreamEvent>();
  const splitter = new ToolCallTextSplitter();
  let reasoning = "";
  let shown = false;
  let sessionId: string | undefined;
  let stopListening = () => {};
  let cancelled = false;
  let killTimer: NodeJS.Timeout | undefined;

  // A hung agent is cut like a silent stream: the call fails as stalled and the agent is killed.
  const watchdog = new StallWatchdog(ctx.stallMs, () => {
    if (cancelled) return;
    cancelled = true;
    proc.kill();
    events.fail(
      new ProviderError(
        `The Copilot ACP agent sent nothing for ${seconds(ctx.stallMs)} s (agent.stream_stall_timeout); it was stopped`,
        { baseUrl, transport: true, stalled: true, partial: shown },
      ),
    );
  });
  const onUpdate = (update: SessionUpdate) => {
    watchdog.touch();
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      const text = splitter.push(update.content.text);
      if (text) {
        shown = true;
        events.push({ type: "text_delta", text });
      }
    } else if (update.sessionUpdate === "agent_thought_chunk" && update.content.type === "text") {
      reasoning += update.content.text;
      shown = true;
      events.push({ type: "reasoning_delta", text: update.content.text });
    }
  };
  let finished = false;
  /** Stops the turn: `session/cancel`, and the process group killed if it has not ended in time. */
  const cancelTurn = () => {
    cancelled = true;
    if (sessionId) agent.connection.agent.notify("session/cancel", { sessionId }).catch(() => undefined);
    killTimer = setTimeout(() => proc.kill(), ctx.grace);
    killTimer.unref();
  };
  const onAbort = () => {
    if (cancelled || finished) return;
    cancelTurn();
    events.fail(abortError(signal as AbortSignal));
  };
  signal?.addEventListener("abort", onAbort, { once: true });

  const died = agent.exited.then((why) => ({ died: why }));
  const work = async () => {
    const created = await Promise.race([
      agent.connection.agent.request("session/new", { cwd: ctx.cwd, mcpServers: [] }),
      died.then(({ died: why }) => Promise.reject(new Error(why))),
    ]);
    if (typeof created?.sessionId !== "string" || created.sessionId === "") {
      throw new ProviderError("The Copilot ACP agent opened a session without an id", { baseUrl });
    }
    sessionId = created.sessionId;
    stopListening = agent.listen(sessionId, onUpdate);
    if (cancelled) return turnEnded();
    await selectModel(agent.connection, created, request.model, baseUrl);
    watchdog.start();
    const prompt: PromptRequest = {
      sessionId: created.sessionId,
      prompt: acpPromptBlocks(request, agent.init.agentCapabilities?.promptCapabilities?.image === true),
    };
    const outcome = await Promise.race([agent.connection.agent.request("session/prompt", prompt), died]);
    if ("died" in outcome) {
      throw new ProviderError(`The Copilot ACP agent stopped in the middle of an answer: ${outcome.died}`, {
        baseUrl,
        transport: true,
        partial: shown,
      });
    }
    if (cancelled) return turnEnded();
    const known = new Set((request.tools ?? []).map((t) => t.function.name));
    const { calls, rest, content } = splitter.finish(known);
    if (rest) events.push({ type: "text_delta", text: rest });
    calls.forEach((call, index) => {
      events.push({ type: "tool_call", index, call });
    });
    const reason: FinishReason =
      calls.length > 0 ? "tool_calls" : finishReason(outcome.stopReason as string | undefined);
    events.push({
      type: "finish",
      reason,
      message: {
        role: "assistant",
        content: content === "" && calls.length > 0 ? null : content,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
        ...(reasoning ? { reasoning } : {}),
        finish_reason: reason,
      },
    });
    finished = true;
    events.end();
  };
  // A turn that ends within the grace period after a cancel keeps its agent.
  const turnEnded = () => {
    if (killTimer) clearTimeout(killTimer);
  };
  work().catch(async (error: unknown) => {
    if (cancelled) return;
    // The turn is over (or the agent gone): nothing is left to cancel.
    finished = true;
    if (error instanceof ProviderError) return events.fail(error);
    if (isAuthRequired(error)) return events.fail(notLoggedIn(error, baseUrl));
    // The connection closes as the agent's output ends, a moment before the process is seen to
    // exit: wait that moment, so the error says why it ended and what it printed.
    const why = await Promise.race([
      died.then((d) => d.died),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 1000).unref()),
    ]);
    events.fail(
      new ProviderError(
        why
          ? `The Copilot ACP agent stopped in the middle of an answer: ${why}`
          : `Copilot ACP: ${messageOf(error)}`,
        { baseUrl, transport: true, partial: shown, cause: error },
      ),
    );
  });

  try {
    for await (const event of events) yield event;
  } finally {
    watchdog.stop();
    // A consumer that stops reading before the end (not through the signal) stops the turn too.
    if (!finished && !cancelled) cancelTurn();
    signal?.removeEventListener("abort", onAbort);
    stopListening();
    // Each call is its own session (the prompt carries the whole conversation): an agent that can
    // close sessions is told to drop this one, so a long-lived process does not pile them up.
    const closable = agent.init.agentCapabilities?.sessionCapabilities?.close;
    if (sessionId && closable && !cancelled) {
      agent.connection.agent.request("session/close", { sessionId }).catch(() => undefined);
    }
    release();
  }
}

/** ACP's "authentication required" (-32000): the CLI has no login to use. */
function isAuthRequired(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === -32000;
}

function notLoggedIn(error: unknown, baseUrl: string): ProviderError {
  return new ProviderError(
    `The Copilot CLI is not logged in (${messageOf(error)}). Run copilot and log in there ` +
      "(Hermes uses the CLI's own login), or set COPILOT_GITHUB_TOKEN.",
    { baseUrl, status: 401, cause: error },
  );
}

function finishReason(stop: string | undefined): FinishReason {
  if (stop === "max_tokens") return "length";
  if (stop === "refusal") return "content_filter";
  return "stop";
}

/**
 * Selects `model` for the session as the agent offers it: the stable `session/set_config_option`
 * on its model option, else the older `session/set_model` of its `models` list. The session
 * default stays for `copilot-acp` (or no model). A model the agent lists no longer, or never did,
 * fails the call as a provider's "model not found" would, naming what it offers.
 */
async function selectModel(
  connection: Awaited<ReturnType<AcpAgentProcess["agent"]>>["connection"],
  created: NewSessionResponse,
  model: string,
  baseUrl: string,
): Promise<void> {
  const wanted = model.trim();
  if (wanted === "" || wanted === COPILOT_ACP_SESSION_MODEL) return;
  const option = created.configOptions?.find((o) => o.category === "model" || o.id === "model");
  if (option) {
    const values = optionValues(option);
    if (!values.includes(wanted)) throw modelNotFound(wanted, values, baseUrl);
    await connection.agent.request("session/set_config_option", {
      sessionId: created.sessionId,
      configId: option.id,
      value: wanted,
    });
    return;
  }
  const legacy = (created as { models?: { availableModels?: Array<{ modelId?: unknown }> } }).models;
  const ids = (legacy?.availableModels ?? [])
    .map((m) => m.modelId)
    .filter((id): id is string => typeof id === "string");
  if (ids.length > 0 && !ids.includes(wanted)) throw modelNotFound(wanted, ids, baseUrl);
  try {
    await connection.agent.request("session/set_model", { sessionId: created.sessionId, modelId: wanted });
  } catch (error) {
    // No model list and no way to set one: this CLI chooses its model itself.
    throw new ProviderError(
      `model ${wanted} not found: the Copilot CLI offers no model choice (${messageOf(error)}). ` +
        `Set model.default to ${COPILOT_ACP_SESSION_MODEL} for the CLI's own choice.`,
      { baseUrl, status: 404, cause: error },
    );
  }
}

/**
 * The models the Copilot CLI offers this account, as a `session/new` states them (its model
 * option, else its older `models` list), after `copilot-acp` (the CLI's own choice). Starts the
 * shared agent when none runs. Throws with the reason when it cannot be started or asked.
 */
export async function listAcpModels(options: AcpTransportOptions & { timeoutMs: number }): Promise<string[]> {
  const proc = options.process ?? sharedAcpProcess({ ...options, startTimeoutMs: options.timeoutMs });
  const agent = await proc.agent();
  const release = agent.hold();
  let timer: NodeJS.Timeout | undefined;
  try {
    const created = await Promise.race([
      agent.connection.agent.request("session/new", { cwd: options.cwd ?? process.cwd(), mcpServers: [] }),
      agent.exited.then((why) => Promise.reject(new Error(`the Copilot ACP agent ended: ${why}`))),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error("the Copilot ACP agent did not open a session in time")),
          options.timeoutMs,
        );
      }),
    ]);
    const option = created.configOptions?.find((o) => o.category === "model" || o.id === "model");
    const legacy = (created as { models?: { availableModels?: Array<{ modelId?: unknown }> } }).models;
    const ids = option
      ? optionValues(option)
      : (legacy?.availableModels ?? [])
          .map((m) => m.modelId)
          .filter((id): id is string => typeof id === "string");
    return [COPILOT_ACP_SESSION_MODEL, ...ids.filter((id) => id !== COPILOT_ACP_SESSION_MODEL)];
  } catch (error) {
    throw isAuthRequired(error) ? notLoggedIn(error, options.baseUrl ?? "acp://copilot") : error;
  } finally {
    if (timer) clearTimeout(timer);
    release();
  }
}

/** The ids the agent's model option offers (flat or grouped). */
export function optionValues(option: SessionConfigOption): string[] {
  if (option.type !== "select") return [];
  const out: string[] = [];
  for (const entry of option.options as unknown[]) {
    const e = entry as { value?: unknown; options?: Array<{ value?: unknown }> };
    if (typeof e.value === "string") out.push(e.value);
    for (const inner of e.options ?? []) if (typeof inner.value === "string") out.push(inner.value);
  }
  return out;
}

function modelNotFound(model: string, offered: readonly string[], baseUrl: string): ProviderError {
  return new ProviderError(
    `model ${model} not found: the Copilot CLI offers ${offered.join(", ") || "no models"}. ` +
      `Set model.default to one of them, or to ${COPILOT_ACP_SESSION_MODEL} for the CLI's own choice.`,
    { baseUrl, status: 404 },
  );
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
