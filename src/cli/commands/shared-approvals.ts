/**
 * The pending approvals of every gateway instance sharing a PostgreSQL home, read and answered
 * straight from the database by a process that is not an instance itself (`hermes mcp serve`,
 * `hermes gateway status`). An answer is recorded for the instance whose turn waits on it, which
 * carries it out within its next check (half a second). A SQLite home answers undefined: its one
 * gateway's control socket is the way there.
 */
import { stateBackendChoice } from "../../state/backend-config.js";
import type { PendingApprovalRecords } from "../../state/gateway/shared-approvals.js";
import { loadHomeConfig } from "../home-env.js";

export async function withSharedApprovals<T>(
  home: string,
  processEnv: Record<string, string | undefined>,
  fn: (records: PendingApprovalRecords) => Promise<T>,
): Promise<{ value: T } | undefined> {
  const { config, env } = loadHomeConfig(home, processEnv);
  const choice = stateBackendChoice(config.state, env);
  if (choice.kind !== "postgres") return undefined;
  const { openPgDatabase } = await import("../../state/postgres/database.js");
  const { pgPendingApprovals } = await import("../../state/postgres/gateway-approvals.js");
  const db = await openPgDatabase(choice.url, { max: 1, connectTimeoutMs: 5_000, applicationName: "hermes" });
  try {
    return { value: await fn(pgPendingApprovals(db)) };
  } catch (error) {
    if (error instanceof Error && error.message.includes(choice.url))
      error.message = error.message.split(choice.url).join(choice.label);
    if ((error as { code?: string }).code === "42P01")
      throw new Error(`the database ${choice.label} has no approvals table yet: start a gateway on it first`);
    throw error;
  } finally {
    await db.close().catch(() => {});
  }
}
