/**
 * The words checkpoints are shown in, shared by `/rollback`, `/checkpoints` and `hermes
 * checkpoints`. Pure: lines of plain text, the caller paints them.
 */

import type { Checkpoint, RestoreResult } from "./restore.js";
import type { ProjectStatus } from "./store.js";

/** `2026-11-26 04:10` from an ISO time (UTC offsets kept as git wrote them). */
export function shortTime(iso: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return match ? `${match[1]} ${match[2]}` : iso;
}

function changeSummary(c: Checkpoint): string {
  if (c.files === 0) return "";
  return `  (${c.files} file${c.files === 1 ? "" : "s"}, +${c.insertions}/-${c.deletions})`;
}

/** The numbered list, newest first, with how to use it; one line when there is none. */
export function checkpointLines(list: readonly Checkpoint[], directory: string, slash = true): string[] {
  if (list.length === 0) return [`No checkpoints for ${directory} yet.`];
  const lines = [`Checkpoints for ${directory} (1 is the most recent):`];
  list.forEach((c, i) => {
    lines.push(
      `  ${String(i + 1).padStart(2)}. ${c.short}  ${shortTime(c.time)}  ${c.reason}${changeSummary(c)}`,
    );
  });
  const how = slash
    ? [
        "/rollback N         restore checkpoint N (the current files are saved first)",
        "/rollback diff N    what changed since checkpoint N",
        "/rollback N FILE    restore one file from checkpoint N",
      ]
    : [
        "hermes checkpoints rollback N [FILE]   restore checkpoint N (the current files are saved first)",
        "hermes checkpoints diff N              what changed since checkpoint N",
      ];
  return [...lines, "", ...how];
}

export function restoreLines(result: RestoreResult, slash = true): string[] {
  const { checkpoint } = result;
  const lines = [
    `Restored ${result.directory} to checkpoint ${checkpoint.short} (${shortTime(checkpoint.time)}, ${checkpoint.reason}).`,
  ];
  if (result.removed.length > 0)
    lines.push(`Removed ${result.removed.length} file(s) created since: ${preview(result.removed)}`);
  if (result.kept.length > 0)
    lines.push(
      `Left ${result.kept.length} file(s) that lie behind a link out of the directory: ${preview(result.kept)}`,
    );
  if (result.saved)
    lines.push(
      slash
        ? "The files as they were are checkpoint 1 now: /rollback 1 undoes this."
        : "The files as they were are checkpoint 1 now: hermes checkpoints rollback 1 undoes this.",
    );
  return lines;
}

function preview(names: readonly string[]): string {
  const shown = names.slice(0, 5).join(", ");
  return names.length > 5 ? `${shown} and ${names.length - 5} more` : shown;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** `hermes checkpoints status`: the store, its size and every project in it. */
export function statusLines(store: string, bytes: number, projects: readonly ProjectStatus[]): string[] {
  const lines = [`Checkpoint store: ${store}`, `Size: ${formatBytes(bytes)}`, `Projects: ${projects.length}`];
  const sorted = [...projects].sort((a, b) => b.last_touch - a.last_touch);
  for (const p of sorted) {
    const touched = p.last_touch > 0 ? shortTime(new Date(p.last_touch * 1000).toISOString()) : "never";
    lines.push(
      `  ${p.workdir}${p.exists ? "" : " (gone)"}: ${p.checkpoints} checkpoint${p.checkpoints === 1 ? "" : "s"}, last ${touched}`,
    );
  }
  return lines;
}
