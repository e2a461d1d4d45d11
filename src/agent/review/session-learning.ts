/**
 * The learning loop as a `ChatSession` builds it: settings from config.yaml, the log line of each
 * review, and none at all where memory is skipped (cron jobs, `--ignore-rules`), as Python Hermes's
 * `skip_memory` also turns the review off.
 */
import type { ResolvedRuntime } from "../../ai/resolve.js";
import type { Transport } from "../../ai/types.js";
import { defaultConfig, type HermesConfig } from "../../config/defaults.js";
import type { SessionStore } from "../../state/types.js";
import type { Logger } from "../../util/log.js";
import { LearningLoop } from "./learning-loop.js";
import type { ReviewHost } from "./runner.js";
import { reviewSettings } from "./settings.js";

/** The part of `ChatSessionOptions` the loop reads. */
export interface SessionLearningOptions {
  config?: HermesConfig | undefined;
  env?: Record<string, string | undefined> | undefined;
  resolved?: ResolvedRuntime | undefined;
  transport?: Transport | undefined;
  provider?: string | undefined;
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  skipMemory?: boolean | undefined;
  /** Hold due reviews until released (the gateway, after the reply is sent). */
  holdReviews?: boolean | undefined;
  onLearned?: ((line: string) => void) | undefined;
  logger?: Logger | undefined;
}

/** The conversation under review, read when a review starts (its agent and model change). */
export interface ReviewedSession {
  readonly id: string;
  readonly model: string;
  readonly agent: { readonly config: HermesConfig; readonly home: string; readonly cwd: string };
}

export function sessionLearning(
  options: SessionLearningOptions,
  store: SessionStore | null,
  session: ReviewedSession,
): LearningLoop | undefined {
  if (options.skipMemory) return undefined;
  const { logger, onLearned } = options;
  const host = (): ReviewHost => ({
    config: session.agent.config,
    home: session.agent.home,
    cwd: session.agent.cwd,
    env: options.env ?? process.env,
    // The session's model now: `/model` switched it for the reviewed turns too.
    resolved: options.resolved ? { ...options.resolved, model: session.model } : undefined,
    transport: options.transport,
    flags: { provider: options.provider, baseUrl: options.baseUrl, apiKey: options.apiKey },
    model: session.model,
    store,
  });
  return new LearningLoop({
    settings: reviewSettings(options.config ?? defaultConfig()),
    ...(options.holdReviews ? { hold: true } : {}),
    host,
    ...(onLearned ? { onLearned: (line: string) => onLearned(line) } : {}),
    onOutcome: (outcome, request) =>
      logger?.child({ component: "review", sessionId: session.id }).info("background review", {
        trigger: request.trigger,
        focus: request.focus,
        status: outcome.status,
        review_session: outcome.sessionId,
        saved: outcome.saved.length,
        ms: outcome.durationMs,
        ...(outcome.error ? { error: outcome.error } : {}),
      }),
  });
}
