/**
 * Runs one background review: a separate `AIAgent` with only the memory and skill tools reads a
 * transcript of the conversation and saves what is worth keeping through the ordinary `memory`
 * and `skill_manage` tools (so their scanning, locking and any write approval apply). It runs on
 * `auxiliary.background_review` (the main model unless set), each request bounded by that task's
 * `timeout`, the whole review by `memory.review_budget_seconds`. Its requests are recorded as a
 * session of its own (source `review`, parent = the reviewed session), so `insights` counts them.
 */
import { resolveAuxiliaryChain } from "../../ai/auxiliary.js";
import type { ResolvedRuntime } from "../../ai/resolve.js";
import type { Message, Transport } from "../../ai/types.js";
import type { HermesConfig } from "../../config/defaults.js";
import type { MemoryTarget } from "../../knowledge/memory/types.js";
import { knowledgeStores } from "../../knowledge/stores.js";
import type { SessionStore } from "../../state/types.js";
import { newSessionId } from "../../util/session-id.js";
import { AIAgent } from "../agent.js";
import type { AgentEvent } from "../events.js";
import { sessionRecorder } from "../session-recorder.js";
import type { ReviewFocus } from "./nudges.js";
import {
  REVIEW_TOOLS,
  type ReviewTrigger,
  renderTranscript,
  reviewSystemPrompt,
  reviewUserMessage,
  type StoredMemory,
} from "./prompt.js";

/** The session source of a review's own session row. */
export const REVIEW_SOURCE = "review";

/** Model calls one review may make (Python Hermes's cap). */
const REVIEW_MAX_ITERATIONS = 16;

/** What the review runs with: the reviewed conversation's home, config and model. */
export interface ReviewHost {
  config: HermesConfig;
  home: string;
  cwd: string;
  env: Record<string, string | undefined>;
  /** The main provider; the review resolves `auxiliary.background_review` against it. */
  resolved?: ResolvedRuntime | undefined;
  /** A ready transport (library use and tests), used with `model` when nothing is resolved. */
  transport?: Transport | undefined;
  /** Provider flags of a library caller that let the agent resolve its own provider. */
  flags?: { provider?: string | undefined; baseUrl?: string | undefined; apiKey?: string | undefined };
  model: string;
  store: SessionStore | null;
}

export interface ReviewRequest {
  focus: ReviewFocus;
  trigger: ReviewTrigger;
  /** The conversation as the reviewed agent held it (copied by the caller). */
  messages: readonly Message[];
  /** The reviewed session: the review's row records it as its parent. */
  parentSessionId: string;
  budgetMs: number;
  /** Aborting it stops the review at once (the process is exiting). */
  signal?: AbortSignal | undefined;
}

/** One write the review made. `pending` when write approval staged it instead of applying it. */
export interface ReviewSave {
  store: MemoryTarget | "skill";
  action: string;
  /** The skill's name for skill writes. */
  name?: string;
  pending?: boolean;
}

export interface ReviewOutcome {
  /** The review's own session id. */
  sessionId: string;
  status: "completed" | "timed_out" | "interrupted" | "failed" | "skipped";
  saved: ReviewSave[];
  /** The reviewer's closing line. */
  text: string;
  error?: string;
  durationMs: number;
}

/** config.yaml's `memory.memory_enabled` / `user_profile_enabled` (on unless false). */
function memoryFlags(config: HermesConfig): { memory: boolean; user: boolean } {
  const m = config.memory as Record<string, unknown>;
  return { memory: m["memory_enabled"] !== false, user: m["user_profile_enabled"] !== false };
}

/** What MEMORY.md and USER.md hold now (read live, not the session's frozen snapshot). */
export async function storedMemory(home: string, config: HermesConfig): Promise<StoredMemory> {
  const flags = memoryFlags(config);
  const store = knowledgeStores(home).memory(config.memory);
  const read = async (target: MemoryTarget) => {
    try {
      const r = await store.read(target);
      return { entries: (r.current_entries ?? []) as string[], usage: String(r.usage ?? "") };
    } catch (error) {
      // An unreadable file: the memory tool reports the same problem if the reviewer writes.
      return {
        entries: [`(could not be read: ${error instanceof Error ? error.message : String(error)})`],
        usage: "?",
      };
    }
  };
  return {
    user: flags.user ? await read("user") : null,
    memory: flags.memory ? await read("memory") : null,
  };
}

/** A successful write in a tool result, or undefined (a read, a refusal, an error). */
function writeOf(name: string, args: Record<string, unknown>, result: string): ReviewSave | undefined {
  let parsed: Record<string, unknown>;
  try {
    const value: unknown = JSON.parse(result);
    if (value === null || typeof value !== "object") return undefined;
    parsed = value as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (parsed["success"] !== true) return undefined;
  // Staged by write approval (`staged: true`) rather than applied.
  const pending = parsed["staged"] === true || parsed["pending"] === true || parsed["status"] === "pending";
  const action =
    typeof args["action"] === "string" ? args["action"] : Array.isArray(args["operations"]) ? "batch" : "";
  if (name === "memory") {
    if (action === "read" || action === "") return undefined;
    const store: MemoryTarget = args["target"] === "user" ? "user" : "memory";
    return { store, action, ...(pending ? { pending } : {}) };
  }
  if (name === "skill_manage" && action) {
    const skill = typeof args["name"] === "string" ? args["name"] : undefined;
    return { store: "skill", action, ...(skill ? { name: skill } : {}), ...(pending ? { pending } : {}) };
  }
  return undefined;
}

/** Where the review's model calls go: the first entry of `auxiliary.background_review`, or the main model. */
function reviewRuntime(host: ReviewHost): {
  resolved?: ResolvedRuntime;
  transport?: Transport;
  model?: string;
  provider?: string;
  baseUrl?: string;
  apiKey?: string;
  requestTimeoutMs?: number;
} {
  if (host.resolved) {
    const first = resolveAuxiliaryChain("background_review", {
      config: host.config,
      env: host.env,
      main: host.resolved,
      home: host.home,
    })[0];
    if (first) {
      const { source: _source, timeoutMs, ...resolved } = first;
      return { resolved, requestTimeoutMs: timeoutMs };
    }
    return { resolved: host.resolved };
  }
  const { provider, baseUrl, apiKey } = host.flags ?? {};
  return {
    ...(host.transport ? { transport: host.transport } : {}),
    ...(provider ? { provider } : {}),
    ...(baseUrl ? { baseUrl } : {}),
    ...(apiKey ? { apiKey } : {}),
    model: host.model,
  };
}

/**
 * Runs the review to its end (or its budget). Never throws: a failure is an outcome with `error`,
 * since nobody is waiting on a background review to handle it.
 */
export async function runReview(host: ReviewHost, request: ReviewRequest): Promise<ReviewOutcome> {
  const started = Date.now();
  const sessionId = newSessionId();
  const done = (status: ReviewOutcome["status"], rest: Partial<ReviewOutcome> = {}): ReviewOutcome => ({
    sessionId,
    status,
    saved: [],
    text: "",
    durationMs: Date.now() - started,
    ...rest,
  });
  const transcript = renderTranscript(request.messages);
  if (!transcript || request.signal?.aborted) return done("skipped");
  let agent: AIAgent;
  try {
    agent = new AIAgent({
      config: host.config,
      home: host.home,
      cwd: host.cwd,
      env: host.env,
      sessionId,
      toolsets: [...REVIEW_TOOLS],
      systemPrompt: reviewSystemPrompt({
        focus: request.focus,
        trigger: request.trigger,
        stored: await storedMemory(host.home, host.config),
      }),
      skipContextFiles: true,
      skipMemory: true,
      platform: REVIEW_SOURCE,
      // Its writes are labelled as the review's, and the skills it creates are the agent's own
      // (`created_by: agent`): the curator may tend them.
      writeOrigin: "background_review",
      maxTurns: REVIEW_MAX_ITERATIONS,
      ...reviewRuntime(host),
      ...(host.store ? { sessionStore: host.store } : {}),
    });
  } catch (error) {
    return done("failed", { error: error instanceof Error ? error.message : String(error) });
  }
  const saved: ReviewSave[] = [];
  const calls = new Map<string, Record<string, unknown>>();
  const errors: string[] = [];
  const listeners: Array<() => void> = [
    agent.on((event: AgentEvent) => {
      if (event.type === "tool_start" && !event.parentCallId) calls.set(event.callId, event.args);
      else if (event.type === "tool_end" && !event.parentCallId) {
        const save = writeOf(event.name, calls.get(event.callId) ?? {}, event.result);
        if (save) saved.push(save);
      } else if (event.type === "error") errors.push(event.message);
    }),
  ];
  if (host.store) {
    listeners.push(
      agent.on(
        sessionRecorder({
          store: host.store,
          source: REVIEW_SOURCE,
          cwd: host.cwd,
          parentSessionId: request.parentSessionId,
          ...(host.resolved
            ? { billingProvider: host.resolved.provider, billingBaseUrl: host.resolved.baseUrl }
            : {}),
        }),
      ),
    );
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    agent.interrupt();
  }, request.budgetMs);
  const onAbort = () => agent.interrupt();
  request.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const result = await agent.run(reviewUserMessage(transcript)).result;
    const status: ReviewOutcome["status"] = timedOut
      ? "timed_out"
      : result.reason === "interrupted"
        ? "interrupted"
        : result.reason === "error"
          ? "failed"
          : "completed";
    const error = result.error ?? errors[0];
    return done(status, { saved, text: result.text.trim(), ...(error ? { error } : {}) });
  } catch (error) {
    return done("failed", { saved, error: error instanceof Error ? error.message : String(error) });
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", onAbort);
    for (const off of listeners) off();
    await agent.close().catch(() => undefined);
  }
}

/** The one line a surface shows after a review saved something; undefined when it saved nothing. */
export function savedLine(saved: readonly ReviewSave[]): string | undefined {
  if (saved.length === 0) return undefined;
  const parts: string[] = [];
  const stores = (target: MemoryTarget) => saved.filter((s) => s.store === target);
  const label = (list: readonly ReviewSave[], what: string) => {
    if (list.length === 0) return;
    const pending = list.every((s) => s.pending);
    parts.push(`${what}${pending ? " (pending approval)" : ""}`);
  };
  label(stores("user"), "user profile");
  label(stores("memory"), "memory");
  const skills = new Map<string, ReviewSave[]>();
  for (const s of saved.filter((x) => x.store === "skill")) {
    const key = s.name ?? "?";
    skills.set(key, [...(skills.get(key) ?? []), s]);
  }
  for (const [name, list] of skills) {
    const created = list.some((s) => s.action === "create");
    label(list, `skill ${name} (${created ? "created" : "updated"})`);
  }
  return `💾 Learned from this conversation: ${parts.join(", ")}`;
}
