/**
 * The environment side of Atropos (NousResearch/atropos): the contract an RL environment fills in
 * and the payloads its API server takes. Field names are Atropos's own (`atroposlib/api/server.py`,
 * `atroposlib/envs/base.py`), so a trainer reads what we send unchanged.
 */
import type { Message } from "../ai/types.js";

/** `POST /scored_data`: one group of rollouts of the same item, as Atropos's `ScoredData` model. */
export interface ScoredDataGroup {
  /** One token sequence per rollout: the whole conversation, prompt and completion. */
  tokens: number[][];
  /** Same shape as `tokens`: -100 where the trainer must not learn (prompt, tool results), else the token id. */
  masks: number[][];
  /** One reward per rollout. */
  scores: number[];
  advantages?: number[][] | null;
  ref_logprobs?: number[][] | null;
  /** The conversations, `{role, content}` each (sent only with `include_messages`). */
  messages?: { role: string; content: string }[][] | null;
  generation_params?: Record<string, unknown> | null;
  inference_logprobs?: number[][] | null;
  overrides?: Record<string, unknown>[] | null;
  group_overrides?: Record<string, unknown> | null;
  images?: unknown;
  env_id?: number | null;
}

/** One thing to roll out (a task): what the environment's source hands out. */
export interface RlItem {
  /** Stable id, for logs and the rollout's session title. */
  id: string;
  /** The user message the agent gets. */
  prompt: string;
}

/** What one rollout produced. */
export interface Rollout {
  /** The conversation as the model saw it: system prompt, user prompt, assistant turns, tool results. */
  messages: Message[];
  /** The session it was recorded under (source `rl`), when sessions are recorded. */
  sessionId: string | undefined;
  /** Why the agent stopped: `completed`, `max_iterations`, `error`... */
  reason: string;
  /** The rollout's working directory (removed after scoring unless kept). */
  workdir: string;
}

/**
 * An RL environment: a source of items, how each is prepared, and the reward. Rollouts themselves
 * are the runner's: every environment's agent runs through the same `AIAgent`, approvals and guards.
 */
export interface RlEnvironment<I extends RlItem = RlItem> {
  /** The name `hermes rl serve NAME` takes and the `desired_name` registered with the server. */
  readonly name: string;
  readonly description: string;
  /** The next item, or undefined when the source is used up. */
  nextItem(): Promise<I | undefined>;
  /** Prepares a fresh working directory for one rollout of `item` (files, a setup command). */
  prepare(item: I, workdir: string, signal: AbortSignal): Promise<void>;
  /** The reward of one finished rollout, from what it left in `workdir` (0..1 for terminal tasks). */
  score(item: I, rollout: Rollout, signal: AbortSignal): Promise<number>;
}
