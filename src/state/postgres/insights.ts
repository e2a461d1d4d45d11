/**
 * Insights and usage series over PostgreSQL. This build of the session store answers them with a
 * clear error; the SQL aggregates (per day, model and source) replace this file.
 */
import { type Insights, type InsightsOptions, SessionStoreError } from "../types.js";
import type { UsageSeries, UsageSeriesOptions } from "../usage-series-types.js";
import type { PgQueryable } from "./database.js";

function unavailable(what: string): SessionStoreError {
  return new SessionStoreError("invalid", `${what} over PostgreSQL is not in this build of Hermes.`);
}

export async function pgInsights(_db: PgQueryable, _options: InsightsOptions = {}): Promise<Insights> {
  throw unavailable("hermes insights");
}

export async function pgUsageSeries(
  _db: PgQueryable,
  _options: UsageSeriesOptions = {},
): Promise<UsageSeries> {
  throw unavailable("The usage series");
}
