/**
 * The record of one curator run: `logs/curator/<YYYYMMDD-HHMMSS>/run.json` (machine-readable, in
 * the fields Python Hermes writes) and `REPORT.md` (for a person). Rendering is pure; writing picks
 * a fresh folder (`-2`, `-3` for runs in the same second).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Transition } from "./lifecycle.js";

export interface RunReport {
  started_at: string;
  duration_seconds: number;
  dry_run: boolean;
  trigger: string;
  model: string;
  provider: string;
  backup: string | null;
  auto_transitions: Record<string, number>;
  counts: Record<string, number>;
  archived: string[];
  consolidated: { name: string; into: string; reason: string }[];
  pruned: { name: string; reason: string }[];
  added: string[];
  state_transitions: { name: string; from: string; to: string }[];
  /** Merges proposed but not applied (dry run, write approval), and why. */
  proposals: { into: string; from: string[]; reason: string; status: string }[];
  rejected: { proposal: string; why: string }[];
  llm_summary: string;
  llm_error: string | null;
}

export const curatorLogsRoot = (home: string): string => join(home, "logs", "curator");

const ACTION_STATE: Record<Transition["action"], string> = {
  stale: "stale",
  archive: "archived",
  reactivate: "active",
};

/** The state-change list of a report from the planned transitions. */
export function stateTransitions(transitions: readonly Transition[]): RunReport["state_transitions"] {
  return transitions.map((t) => ({ name: t.name, from: t.from, to: ACTION_STATE[t.action] }));
}

/** REPORT.md for a run. */
export function renderReport(r: RunReport): string {
  const lines = [`# Curator run — ${r.started_at}${r.dry_run ? " (dry run: nothing was changed)" : ""}`, ""];
  lines.push(
    `Trigger: ${r.trigger}  ·  Duration: ${r.duration_seconds}s  ·  Backup: ${r.backup ?? "none"}` +
      (r.model ? `  ·  Model: \`${r.model}\` via \`${r.provider}\`` : ""),
    "",
    "## Automatic transitions",
    "",
  );
  const a = r.auto_transitions;
  lines.push(
    `- checked: ${a["checked"] ?? 0}`,
    `- marked stale: ${a["marked_stale"] ?? 0}`,
    `- archived: ${a["archived"] ?? 0}`,
    `- reactivated: ${a["reactivated"] ?? 0}`,
    "",
  );
  if (r.state_transitions.length > 0) {
    lines.push(`### State changes${r.dry_run ? " (would be made)" : ""}`, "");
    for (const t of r.state_transitions) lines.push(`- \`${t.name}\`: ${t.from} → ${t.to}`);
    lines.push("");
  }
  lines.push("## Consolidation", "", r.llm_summary || "skipped", "");
  if (r.llm_error) lines.push(`> The review failed: \`${r.llm_error}\``, "");
  for (const c of r.consolidated)
    lines.push(`- \`${c.name}\` merged into \`${c.into}\`${c.reason ? ` — ${c.reason}` : ""}`);
  for (const p of r.proposals)
    lines.push(
      `- proposed: ${p.from.map((f) => `\`${f}\``).join(", ")} → \`${p.into}\` (${p.status})${p.reason ? ` — ${p.reason}` : ""}`,
    );
  for (const x of r.rejected) lines.push(`- dropped: ${x.proposal} (${x.why})`);
  if (r.added.length > 0) lines.push("", `New skills: ${r.added.map((n) => `\`${n}\``).join(", ")}`);
  lines.push(
    "",
    "## Recovery",
    "",
    "- Restore an archived skill: `hermes curator restore <name>` (archives live in `skills/.archive/`)",
    "- Undo the whole run: `hermes curator rollback` (snapshots in `skills/.curator_backups/`)",
    "",
  );
  return lines.join("\n");
}

/** `YYYYMMDD-HHMMSS` in UTC. */
export function reportStamp(at: Date): string {
  const iso = at.toISOString();
  return `${iso.slice(0, 10).replace(/-/g, "")}-${iso.slice(11, 19).replace(/:/g, "")}`;
}

/** Writes run.json and REPORT.md; returns the folder. */
export function writeRunReport(home: string, report: RunReport, started: Date): string {
  const root = curatorLogsRoot(home);
  mkdirSync(root, { recursive: true });
  const stamp = reportStamp(started);
  let dir = join(root, stamp);
  for (let n = 2; existsSync(dir); n++) dir = join(root, `${stamp}-${n}`);
  mkdirSync(dir);
  writeFileSync(join(dir, "run.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(dir, "REPORT.md"), renderReport(report));
  return dir;
}
