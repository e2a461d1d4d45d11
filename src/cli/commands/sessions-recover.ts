/**
 * `hermes sessions repair --from FILE`: brings sessions back from a moved-aside damaged state.db
 * (`state.db.corrupt-*`), another Hermes's state.db (Python's too) or an unsaved-writes file
 * (`state-unsaved-*.jsonl`) into the home's state.db. Sessions already present are never touched.
 * Exit 1 when nothing at all could be read from FILE.
 */
import { resolve } from "node:path";
import { openSessionStore, sessionStorePath } from "../../state/sqlite-store.js";
import type { RecoveryReport } from "../../state/types.js";
import { CliFailure } from "../command.js";
import type { CliIo } from "../io.js";

/** The report as the user reads it (several lines, no trailing newline). */
export function formatRecovery(file: string, target: string, r: RecoveryReport): string {
  if (!r.readable) return `Nothing recovered: ${r.reason ?? `${file} could not be read`}.`;
  const line = (what: string, c: RecoveryReport["sessions"], skippedWhy: string) =>
    `  ${what}: ${c.recovered} recovered, ${c.skipped} skipped${c.skipped > 0 ? ` (${skippedWhy})` : ""}, ${c.unreadable} unreadable`;
  const lines = [
    `Recovered from ${file} into ${target}:`,
    line(
      "sessions",
      r.sessions,
      r.kind === "unsaved" ? "id already here" : "same id already here, left as it is",
    ),
    line("messages", r.messages, "their session was skipped"),
  ];
  if (r.placeholders > 0) {
    lines.push(
      `  ${r.placeholders} session rows were unreadable; their messages were kept under new rows with source "recovered".`,
    );
  }
  if (r.kind === "sqlite" && (r.sessions.unreadable > 0 || r.messages.unreadable > 0)) {
    lines.push("  (unreadable counts damaged rows and pages that could not be read; what they held is lost)");
  }
  if (r.reason) lines.push(r.reason);
  return lines.join("\n");
}

export async function recoverFromFile(
  home: string,
  file: string,
  flags: { json?: boolean },
  io: CliIo,
): Promise<number> {
  const source = resolve(file);
  const target = sessionStorePath(home);
  if (source === target) {
    throw new CliFailure(`--from must name another file than the state.db it recovers into (${target}).`, 2);
  }
  const store = openSessionStore(target);
  let report: RecoveryReport;
  try {
    io.err(`Recovering sessions from ${source} …`);
    report = await store.recoverFrom(source);
  } finally {
    await store.close();
  }
  io.out(
    flags.json
      ? JSON.stringify({ from: source, into: target, ...report })
      : formatRecovery(source, target, report),
  );
  return report.readable ? 0 : 1;
}
