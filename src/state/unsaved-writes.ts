/**
 * Session writes that could not reach state.db yet: what the write queue holds in memory while
 * another process has the lock, and the JSONL file they go to when hermes exits with the lock still
 * held (`<home>/state-unsaved-<time>.jsonl`). `hermes sessions repair --from` that file replays
 * them once (a marker in `state_meta` keeps a second run from duplicating them).
 *
 * File format: a header line `{"hermes_unsaved_writes":1,"id":…,"database":…,"created":…}`, then
 * one `QueuedWrite` per line, in the order they were made.
 */
import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "../ai/types.js";
import { quarantineStamp } from "./quarantine.js";
import { emptyReport } from "./salvage.js";
import type {
  NewSession,
  RecoveryReport,
  SqliteSessionStoreHandle,
  SyncSessionStore,
  UsageDelta,
} from "./types.js";

export type SessionPatch = Parameters<SyncSessionStore["updateSession"]>[1];

export interface TimedMessage {
  message: Message;
  /** When the message was produced (seconds); kept when the write lands later. */
  timestamp: number;
  tokenCount?: number;
}

/** One write the store accepted but has not committed yet. */
export type QueuedWrite =
  | { op: "createSession"; input: NewSession & { id: string; startedAt: number } }
  | { op: "updateSession"; id: string; patch: SessionPatch }
  | { op: "setTitle"; id: string; title: string | null }
  | { op: "endSession"; id: string; reason: string; at: number }
  | { op: "reopenSession"; id: string }
  | { op: "appendMessages"; sessionId: string; entries: TimedMessage[] }
  | { op: "recordUsage"; sessionId: string; delta: UsageDelta }
  | {
      /** The compression hand-off: one transaction in the file, one entry here. */
      op: "continueSession";
      parentId: string;
      child: NewSession & { id: string; startedAt: number; parentSessionId: string };
      messages: Message[];
      reason: string;
    };

/** The session a write belongs to. */
export function writeSession(w: QueuedWrite): string {
  switch (w.op) {
    case "createSession":
      return w.input.id;
    case "continueSession":
      return w.child.id;
    case "appendMessages":
    case "recordUsage":
      return w.sessionId;
    default:
      return w.id;
  }
}

/** Messages a write carries (what the user is told is unsaved). */
export function messagesIn(w: QueuedWrite): number {
  if (w.op === "continueSession") return w.messages.length;
  return w.op === "appendMessages" ? w.entries.length : 0;
}

/** Performs one queued write against the store, as its own transaction. */
export function applyWrite(store: SqliteSessionStoreHandle, w: QueuedWrite): void {
  switch (w.op) {
    case "createSession":
      store.createSession(w.input);
      return;
    case "updateSession":
      store.updateSession(w.id, w.patch);
      return;
    case "setTitle":
      store.setTitle(w.id, w.title);
      return;
    case "endSession":
      store.updateSession(w.id, { endedAt: w.at, endReason: w.reason });
      return;
    case "reopenSession":
      store.reopenSession(w.id);
      return;
    case "appendMessages":
      store.appendTimed(w.sessionId, w.entries);
      return;
    case "recordUsage":
      store.recordUsage(w.sessionId, w.delta);
      return;
    case "continueSession":
      store.continueSession(w.parentId, w.child, w.messages, w.reason);
      return;
  }
}

/** Writes `writes` to a new unsaved-writes file in `dir`; returns its path. */
export function writeUnsavedFile(
  dir: string,
  database: string,
  writes: readonly QueuedWrite[],
  at = new Date(),
): string {
  const path = join(dir, `state-unsaved-${quarantineStamp(at)}-${process.pid}.jsonl`);
  const header = { hermes_unsaved_writes: 1, id: randomUUID(), database, created: at.toISOString() };
  const lines = [JSON.stringify(header), ...writes.map((w) => JSON.stringify(w))];
  writeFileSync(path, `${lines.join("\n")}\n`, { mode: 0o600 });
  return path;
}

const OPS = new Set([
  "createSession",
  "updateSession",
  "setTitle",
  "endSession",
  "reopenSession",
  "appendMessages",
  "recordUsage",
  "continueSession",
]);

/** The writes in an unsaved-writes file; lines that are not one are counted, never guessed at. */
export function readUnsavedFile(path: string): { id: string; writes: QueuedWrite[]; unreadable: number } {
  const lines = readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  let id = "";
  const writes: QueuedWrite[] = [];
  let unreadable = 0;
  lines.forEach((line, i) => {
    try {
      const value = JSON.parse(line) as Record<string, unknown>;
      if (i === 0 && value["hermes_unsaved_writes"] === 1) {
        id = String(value["id"] ?? "");
        return;
      }
      if (typeof value["op"] === "string" && OPS.has(value["op"]))
        writes.push(value as unknown as QueuedWrite);
      else unreadable++;
    } catch {
      unreadable++;
    }
  });
  return { id, writes, unreadable };
}

/**
 * Replays an unsaved-writes file into `store`. A session the file creates whose id is already in
 * the store is skipped with everything the file does to it; writes to sessions that existed before
 * the lock (the file only holds their newest messages) are applied. `seen`/`mark` keep one file
 * from being replayed twice.
 */
export function replayUnsaved(
  store: SqliteSessionStoreHandle,
  file: string,
  once: { seen: (key: string) => boolean; mark: (key: string) => void },
): RecoveryReport {
  const report = emptyReport("unsaved");
  const { id, writes, unreadable } = readUnsavedFile(file);
  report.messages.unreadable = unreadable;
  const key = `unsaved_writes_replayed:${id}`;
  if (id && once.seen(key)) {
    for (const w of writes) report.messages.skipped += messagesIn(w);
    return { ...report, reason: `${file} was already replayed into ${store.path}; nothing was added again` };
  }
  const skippedSessions = new Set<string>();
  for (const w of writes) {
    const session = writeSession(w);
    const creates = w.op === "createSession" || w.op === "continueSession";
    if (creates && store.getSession(session)) skippedSessions.add(session);
    if (skippedSessions.has(session)) {
      if (creates) report.sessions.skipped++;
      report.messages.skipped += messagesIn(w);
      continue;
    }
    try {
      applyWrite(store, w);
      if (creates) report.sessions.recovered++;
      report.messages.recovered += messagesIn(w);
    } catch {
      if (creates) report.sessions.unreadable++;
      report.messages.unreadable += messagesIn(w);
    }
  }
  if (id) once.mark(key);
  return report;
}
