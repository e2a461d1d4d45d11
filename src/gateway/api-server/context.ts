/**
 * What a route handler of the API server is given: the turn runner, the run limiter, the model
 * name it answers as, and the in-memory Responses store.
 */
import type { ResponseStore } from "./response-store.js";
import type { TurnRunner } from "./turns.js";

export interface RouteContext {
  /** The model id clients see (`API_SERVER_MODEL_NAME`, default `hermes-agent`). */
  modelName: string;
  turns: TurnRunner;
  responses: ResponseStore;
  /**
   * Runs `work` holding one of the limited run slots. Throws `ApiError` 429 (with Retry-After) when
   * the queue is full; returns undefined without running `work` when `signal` aborts while waiting.
   */
  withRunSlot<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T | undefined>;
}

/** `finish_reason` for how a turn stopped. */
export function finishReason(reason: string): "stop" | "length" {
  return reason === "max_turns" || reason === "guardrail" ? "length" : "stop";
}
