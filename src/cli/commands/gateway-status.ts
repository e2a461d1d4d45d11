/**
 * `hermes gateway status`: what the home's gateway is doing, asked over its control socket
 * (platforms and their state, running turns, pending approvals, version); from `gateway.pid` alone
 * when the socket does not answer (an older gateway, or a Python Hermes gateway on the same home).
 */
import { runningGateway } from "../../gateway/pid-file.js";
import { connectGatewayControl, type GatewayStatus } from "../../state/gateway-control.js";

export type GatewayStatusReport =
  | { running: false }
  | ({ running: true; source: "control" } & GatewayStatus)
  | { running: true; source: "pid-file"; pid: number; started_at: string; note: string };

/** How long status waits for the socket's answer before falling back to the pid file. */
const STATUS_TIMEOUT_MS = 5000;

export async function gatewayStatus(home: string): Promise<GatewayStatusReport> {
  const record = runningGateway(home);
  let note = "its control socket did not answer";
  try {
    const control = await connectGatewayControl(home);
    if (control) {
      try {
        const live = await control.call("status", {}, { timeoutMs: STATUS_TIMEOUT_MS });
        return { running: true, source: "control", ...live };
      } finally {
        control.close();
      }
    }
    note = "no control socket (an older or Python Hermes gateway?)";
  } catch (error) {
    note = error instanceof Error ? error.message : String(error);
  }
  if (!record) return { running: false };
  return { running: true, source: "pid-file", pid: record.pid, started_at: record.started_at, note };
}

export function formatGatewayStatus(report: GatewayStatusReport): string {
  if (!report.running) return "Gateway: not running";
  if (report.source === "pid-file") {
    const since = report.started_at ? `, since ${report.started_at}` : "";
    return `Gateway: running (pid ${report.pid}${since})\n  (details unavailable: ${report.note})`;
  }
  const lines = [
    `Gateway: running (pid ${report.pid}, since ${report.started_at}, version ${report.version})`,
  ];
  if (report.platforms.length) {
    lines.push("Platforms:");
    for (const p of report.platforms)
      lines.push(`  ${p.name.padEnd(12)} ${p.state}${p.error ? `: ${p.error}` : ""} (since ${p.since})`);
  }
  const other = report.services.filter((s) => !report.platforms.some((p) => p.name === s));
  if (other.length) lines.push(`Services: ${other.join(", ")}`);
  lines.push(`Running turns: ${report.running_turns.length}`);
  for (const t of report.running_turns)
    lines.push(`  ${t.session_key} (${t.platform} ${t.chat_id}, since ${t.started_at})`);
  lines.push(`Pending approvals: ${report.pending_approvals}`);
  return lines.join("\n");
}
