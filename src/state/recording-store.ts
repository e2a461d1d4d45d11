/**
 * Opening `state.db` for a surface that records a conversation as it happens (the CLI chat). Two
 * things differ from `openSessionStore`, which refuses and reports:
 *
 * - An unreadable file (0 bytes, not SQLite, or damaged pages met at the first queries) is never
 *   replaced or ignored: it is moved aside to `state.db.corrupt-<time>` with its `-wal`/`-shm`, a
 *   new state.db starts, and the user is told how to bring the old sessions back
 *   (`hermes sessions repair --from <file>`).
 * - Writes that meet another process's lock are queued instead of lost (queued-store.ts).
 *
 * Read-only commands (`hermes sessions list`…) keep using `openSessionStore`: they report a damaged
 * file and change nothing.
 */
import { existsSync } from "node:fs";
import { checkHeader } from "./connection.js";
import { isStaleEmptyFile, type Quarantined, quarantineFile } from "./quarantine.js";
import {
  type AsyncQueuedStore,
  type QueuedStoreOptions,
  queuedSessionStore,
  type SyncQueuedStore,
} from "./queued-store.js";
import { openSqliteStore, sessionStorePath } from "./sqlite-store.js";
import { type OpenOptions, SessionStoreError, type SqliteSessionStoreHandle } from "./types.js";

export interface RecordingStoreOptions extends Omit<QueuedStoreOptions, "recoveryDir"> {
  /** Passed to `openSessionStore` (lock waits, durability, clock, redaction). */
  open?: OpenOptions;
  /** Wall clock for the moved-aside file's name (default: now). */
  clock?: () => Date;
}

/**
 * The open options `state.durability` asks for: `normal` unless it says `full`. Every surface that
 * records conversations (the CLI, the gateway, the API server) opens state.db this way, so a
 * commit costs no fsync by default and each message is still in the file before the next step.
 */
export function durabilityOptions(state: { durability?: string } | undefined): OpenOptions {
  return { durability: state?.durability === "full" ? "full" : "normal" };
}

function isCorrupt(error: unknown): boolean {
  return error instanceof SessionStoreError && error.code === "corrupt";
}

/**
 * Opens `<home>/state.db` for recording, moving an unreadable one aside first (see the file
 * comment). Throws what `openSessionStore` throws otherwise (`locked` when even reading is blocked
 * past the retry budget; `invalid` when the directory cannot be written).
 */
export function openRecordingStore(home: string, options: RecordingStoreOptions): AsyncQueuedStore {
  const path = sessionStorePath(home);
  const clock = options.clock ?? (() => new Date());
  let moved: { files: Quarantined; why: string } | undefined;
  if (isStaleEmptyFile(path, clock().getTime())) {
    moved = { files: quarantineFile(path, clock()), why: "it was empty (0 bytes)" };
  } else if (existsSync(path)) {
    try {
      checkHeader(path);
    } catch (error) {
      if (!isCorrupt(error)) throw error;
      moved = { files: quarantineFile(path, clock()), why: "it is not a SQLite database" };
    }
  }
  let inner: SqliteSessionStoreHandle;
  try {
    inner = openProbed(path, options.open);
  } catch (error) {
    if (!isCorrupt(error) || moved) throw error;
    moved = { files: quarantineFile(path, clock()), why: "its pages are damaged" };
    inner = openProbed(path, options.open);
  }
  if (moved) {
    const file = moved.files.movedTo;
    options.notify(
      `${path} could not be read (${moved.why}). It was moved aside to ${file}` +
        `${moved.files.files.length > 1 ? " (with its -wal/-shm)" : ""} and a new, empty state.db was started; ` +
        `nothing was deleted. Recover its sessions with \`hermes sessions repair --from ${file}\`.`,
    );
  }
  return queuedSessionStore(inner, { ...options, recoveryDir: home });
}

/** `openRecordingStore`'s synchronous engine, for callers not yet on the asynchronous contract. */
export function openRecordingEngine(home: string, options: RecordingStoreOptions): SyncQueuedStore {
  return openRecordingStore(home, options).engine;
}

function openProbed(path: string, options: OpenOptions | undefined): SqliteSessionStoreHandle {
  // A recording store commits every few hundred milliseconds for as long as the session runs:
  // its WAL checkpoints go to a worker thread instead of into one of those commits.
  const store = openSqliteStore(path, { checkpointInBackground: true, ...options });
  try {
    store.probe();
    return store;
  } catch (error) {
    store.close();
    throw error;
  }
}
