/**
 * The instances sharing a PostgreSQL state backend, for `hermes gateway status`: each live
 * instance (heartbeat fresh), where it runs, what it holds (leases such as `telegram`, cron jobs
 * it is running, how many chats and API-server or webhook turns), whether it drains, and its
 * health URL. Read-only: status does not register as an instance. A SQLite home answers undefined (one machine, one gateway).
 */
import { StateBackendConfigError, stateBackendChoice } from "../../state/backend-config.js";
import type { InstanceInfo } from "../../state/coordination.js";
import type { SharedApprovalInfo } from "../../state/gateway/shared-approvals.js";
import { loadHomeConfig } from "../home-env.js";

export type InstancesReport =
  | { database: string; instances: InstanceInfo[]; approvals?: SharedApprovalInfo[] }
  | { database: string; error: string };

export async function sharedInstances(
  home: string,
  processEnv: Record<string, string | undefined>,
): Promise<InstancesReport | undefined> {
  let choice: ReturnType<typeof stateBackendChoice>;
  try {
    const { config, env } = loadHomeConfig(home, processEnv);
    choice = stateBackendChoice(config.state, env);
  } catch (error) {
    // A broken config.yaml is doctor's to report; a postgres backend named wrongly is ours.
    if (!(error instanceof StateBackendConfigError)) return undefined;
    return { database: "(not configured)", error: error.message };
  }
  if (choice.kind !== "postgres") return undefined;
  const { openPgDatabase } = await import("../../state/postgres/database.js");
  const { listPgInstances } = await import("../../state/postgres/coordination-instances.js");
  const { pgPendingApprovals } = await import("../../state/postgres/gateway-approvals.js");
  const db = await openPgDatabase(choice.url, {
    max: 1,
    connectTimeoutMs: 5_000,
    applicationName: "hermes status",
  });
  try {
    const instances = await listPgInstances(db);
    // A database no instance of this version migrated yet has no approvals table: none listed.
    const approvals = await pgPendingApprovals(db)
      .list()
      .catch(() => undefined);
    return { database: choice.label, instances, ...(approvals ? { approvals } : {}) };
  } catch (error) {
    const code = (error as { code?: string }).code;
    const message =
      code === "42P01"
        ? "the database has no coordination tables yet (no instance has started on it)"
        : error instanceof Error
          ? error.message.split(choice.url).join(choice.label)
          : String(error);
    return { database: choice.label, error: message };
  } finally {
    await db.close().catch(() => {});
  }
}

function ago(iso: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return s < 60 ? `${s} s ago` : `${Math.round(s / 60)} min ago`;
}

export function formatInstances(report: InstancesReport, now: number = Date.now()): string {
  if ("error" in report) return `Instances (${report.database}): could not list them: ${report.error}`;
  const lines = [`Instances (${report.database}): ${report.instances.length} live`];
  for (const i of report.instances) {
    const state = i.draining ? "draining" : "serving";
    lines.push(
      `  ${i.id}  ${state}  ${i.host} pid ${i.pid}, since ${i.startedAt}, seen ${ago(i.lastSeenAt, now)}`,
    );
    const holds = i.holds.length ? i.holds.join(", ") : "nothing";
    const running = `chats: ${i.chats ?? 0}; api/webhook turns: ${i.turns ?? 0}`;
    lines.push(`    holds: ${holds}; ${running}${i.healthUrl ? `; health: ${i.healthUrl}` : ""}`);
  }
  if (report.approvals) {
    lines.push(`Pending approvals (all instances): ${report.approvals.length}`);
    for (const a of report.approvals) {
      const command = a.command.length > 80 ? `${a.command.slice(0, 77)}...` : a.command;
      lines.push(`  ${a.id}  on ${a.instance}  ${a.platform} ${a.chat_id}: ${command.replace(/\s+/g, " ")}`);
    }
  }
  return lines.join("\n");
}
