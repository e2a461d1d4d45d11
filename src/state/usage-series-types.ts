/** The shapes of `usageSeries` (usage-series.ts), apart so the store's interface can name them. */

export interface UsageSeriesOptions {
  /** Look back this many days from `now` (default 30). */
  days?: number;
  source?: string;
  /** Injected clock, seconds (default: the store's). */
  now?: number;
}

/** One day's (or one day and model's) totals. */
export interface UsagePoint {
  /** Local calendar day, `YYYY-MM-DD`. */
  day: string;
  sessions: number;
  apiCalls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  reasoningTokens: number;
  /** Sum of the known costs; null when none is known. */
  costUsd: number | null;
  /** Sessions with usage that had no known price. */
  unpricedSessions: number;
}

export interface UsageSeries {
  since: number;
  until: number;
  /** Per day, only days with sessions (oldest first); `toolCalls` per day too. */
  days: Array<UsagePoint & { toolCalls: number }>;
  /** Per day and model (oldest first, then model). */
  byModel: Array<UsagePoint & { model: string }>;
  /** Every source with sessions in the window, whatever `source` filters (for the filter list). */
  sources: Array<{ source: string; sessions: number }>;
}
