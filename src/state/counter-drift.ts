/**
 * Counter drift, as both session stores' `check` and `repair` report it: sessions whose stored
 * `message_count`/`tool_call_count` disagree with their active messages. Each backend counts with
 * its own SQL (columns `id`, `stored`, `actual`, `stored_calls`, `actual_calls`); the row shape and
 * the wording the user reads are shared here so both backends say the same thing.
 */

export interface Drift {
  id: string;
  stored: number;
  actual: number;
  storedCalls: number;
  actualCalls: number;
}

/** One drift row (`stored_calls`, `actual_calls` snake_case, counts as numbers or numeric text). */
export function driftFromRow(row: Record<string, unknown>): Drift {
  return {
    id: String(row["id"]),
    stored: Number(row["stored"]),
    actual: Number(row["actual"]),
    storedCalls: Number(row["stored_calls"]),
    actualCalls: Number(row["actual_calls"]),
  };
}

/** The `check` problem line for a non-empty drift list, naming the first session as an example. */
export function describeDrift(drift: readonly Drift[]): string {
  const first = drift[0]!;
  return (
    `${drift.length} session${drift.length === 1 ? "" : "s"} ha${drift.length === 1 ? "s" : "ve"} counters that disagree ` +
    `with their messages (e.g. ${first.id}: message_count ${first.stored}, counted ${first.actual}; ` +
    `tool_call_count ${first.storedCalls}, counted ${first.actualCalls})`
  );
}

/** The `repair` line once `count` sessions' counters were recomputed. */
export function recountedLine(count: number): string {
  return `recomputed counters of ${count} session${count === 1 ? "" : "s"}`;
}
