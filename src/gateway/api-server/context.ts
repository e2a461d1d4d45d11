/**
 * What a route handler of the API server is given: the turn runner, the run limiter, the model
 * name it answers as, the stores it reads and writes, and the server's settings that the
 * discovery routes (`/v1/capabilities`, `/v1/toolsets`, `/health/detailed`) report.
 */
import type { HermesConfig } from "../../config/defaults.js";
import type { CronJobs } from "../../knowledge/cron/store.js";
import type { CronJobsOptions } from "../../knowledge/stores.js";
import type { SessionStore } from "../../state/types.js";
import type { ToolRegistry } from "../../tools/registry.js";
import type { ResponseRecords } from "./response-store.js";
import type { TurnRunner } from "./turns.js";

export interface RouteContext {
  /** The model id clients see (`API_SERVER_MODEL_NAME`, default `hermes-agent`). */
  modelName: string;
  turns: TurnRunner;
  responses: ResponseRecords;
  /** state.db, as this server records it (sessions API, Responses transcripts). */
  store: SessionStore;
  /** The cron jobs `/api/jobs` manages (the state backend's). */
  cronJobs(options?: CronJobsOptions): CronJobs;
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  registry: ToolRegistry;
  /** Toolsets every turn of this server gets (`platform_toolsets.api_server`). */
  toolsets: string[];
  /** Whether browser origins are allowed (`API_SERVER_CORS_ORIGINS` set). */
  cors: boolean;
  /** When the server started (ms), for `/health/detailed`. */
  startedAt: number;
  /** Agent turns running and waiting now. */
  load(): { running: number; queued: number; maxRunning: number };
  /** The emoji a tool shows in progress displays ("" when it has none). */
  toolEmoji(name: string): string;
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
