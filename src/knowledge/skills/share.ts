/**
 * Bulk changes of a home's skills folder (a curator rollback, a bundled reset, an opt-out with
 * --remove, bundled updates at seeding) told to the home's skill sink, so a shared backend
 * (PostgreSQL) stores them for every instance. A file home has no sink: nothing happens.
 */
import { knowledgeStores } from "../stores.js";
import type { ReconcileOptions, SkillReconcileReport } from "./types.js";

/**
 * Stores what changed (see `SkillWriteSink.reconcile`); undefined for a home without a shared
 * backend. Failures are in the report (the rest went on), never thrown for one skill.
 */
export async function shareSkillChanges(
  home: string,
  options: ReconcileOptions = {},
): Promise<SkillReconcileReport | undefined> {
  const sink = knowledgeStores(home).skillSink;
  if (!sink?.reconcile) return undefined;
  if (options.names && options.names.length === 0) return { stored: [], deleted: [], failed: [] };
  return sink.reconcile(options);
}

/** One line per skill the shared backend refused, for stderr; empty when all went through. */
export function unsharedLines(report: SkillReconcileReport | undefined): string[] {
  return (report?.failed ?? []).map(
    (f) => `${f.name} changed here but was not stored for the other instances: ${f.error}`,
  );
}
