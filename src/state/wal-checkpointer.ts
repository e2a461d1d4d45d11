/**
 * WAL checkpoints off the writing thread. SQLite's automatic checkpoint runs inside the commit
 * that pushes the WAL past `wal_autocheckpoint` pages: it copies those pages into state.db and
 * (at `synchronous=NORMAL`) fsyncs the WAL and the database file, a few milliseconds that land on
 * one unlucky step of the agent loop every ~25 steps. A recording store instead checks the WAL's
 * size after its commits and, past `thresholdBytes`, asks a worker thread holding its own
 * connection to run `wal_checkpoint(PASSIVE)`, which never blocks the writer (nor readers).
 *
 * Nothing about durability changes: each message is committed to the WAL by the writer before
 * its step goes on, as before; a checkpoint only moves already-committed pages into the main
 * file, and a process killed mid-checkpoint is recovered by the next open like any other. The
 * writer's own automatic checkpoint stays on at a higher mark (`SAFETY_PAGES`) in case the
 * worker cannot keep up or cannot start.
 *
 * The worker starts only when the WAL first passes the threshold (a one-shot never pays for it),
 * does not keep the process alive, and is closed before the writer's connection, so the writer's
 * close is still the last one and removes the WAL as before.
 */
import { statSync } from "node:fs";
import { createRequire } from "node:module";
import type { Worker } from "node:worker_threads";

/**
 * Default WAL size that triggers a background checkpoint: 32 MiB. Each commit of a loop step
 * writes about 20 pages (most of them the two full-text indexes' new segments), mostly the same
 * pages again, so at SQLite's own 1000 pages (4 MiB) a one-shot of a few dozen model calls
 * started the worker thread (about 35 ms of CPU for its start, and its memory) and checkpointed
 * several times; below 32 MiB a run of up to about 190 such calls starts no thread at all, and
 * closing checkpoints the pages it changed (what the database grew by, not the WAL's size).
 */
export const CHECKPOINT_BYTES = 32 * 1024 * 1024;
/** The writer's own `wal_autocheckpoint` while a checkpointer runs (pages: 64 MiB of 4 KiB). */
export const SAFETY_PAGES = 16_384;

// The worker's whole program. Plain CommonJS evaluated in the thread (the CLI is one bundle: there
// is no separate file to point a Worker at). It reports each checkpoint's outcome; on "close" it
// closes its connection and flags `done` so the writer's synchronous close can wait for it.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const done = new Int32Array(workerData.done);
let db;
try {
  db = new Database(workerData.path, { fileMustExist: true });
  db.pragma("busy_timeout = 0");
  db.pragma("synchronous = " + workerData.synchronous);
} catch (error) {
  parentPort.postMessage({ error: String(error && error.message || error) });
}
parentPort.on("message", (message) => {
  if (message === "checkpoint") {
    let result;
    try {
      result = db ? db.pragma("wal_checkpoint(PASSIVE)")[0] : undefined;
    } catch (error) {
      result = { error: String(error && error.message || error) };
    }
    parentPort.postMessage({ checkpointed: result });
    return;
  }
  if (message === "close") {
    try { if (db) db.close(); } catch {}
    Atomics.store(done, 0, 1);
    Atomics.notify(done, 0);
    parentPort.close();
  }
});
`;

export interface CheckpointerOptions {
  /** `state.db`'s path; the WAL is `<path>-wal`. */
  path: string;
  /** The writer's `synchronous` setting, used for the checkpoint too. */
  synchronous: "FULL" | "NORMAL";
  /** WAL size that triggers a checkpoint (default `CHECKPOINT_BYTES`). */
  thresholdBytes?: number;
  /** Commits between two looks at the WAL's size (default 8; one `stat` each). */
  checkEvery?: number;
  /** How long `close` waits for the worker's connection to close (default 2000 ms). */
  closeWaitMs?: number;
  /** Told what the worker reports (tests); default: nothing. */
  onReport?: (report: { checkpointed?: unknown; error?: string }) => void;
}

/** Runs checkpoints on a worker thread; see the file comment. */
export class WalCheckpointer {
  private worker: Worker | undefined;
  private readonly done = new Int32Array(new SharedArrayBuffer(4));
  private commits = 0;
  private running = false;
  private failed = false;
  private closed = false;

  constructor(private readonly options: CheckpointerOptions) {}

  /** True while a checkpoint asked for has not reported back. */
  get busy(): boolean {
    return this.running;
  }

  /** Called after each commit: every `checkEvery` commits, a WAL past the threshold is checkpointed. */
  afterCommit(): void {
    if (this.closed || this.failed || this.running) return;
    if (++this.commits % (this.options.checkEvery ?? 8) !== 0) return;
    // Never throws: the commit before it succeeded, and its caller must not think otherwise.
    try {
      const size = statSync(`${this.options.path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
      if (size < (this.options.thresholdBytes ?? CHECKPOINT_BYTES)) return;
      const worker = this.worker ?? this.start();
      if (!worker) return;
      this.running = true;
      worker.postMessage("checkpoint");
    } catch (error) {
      this.failed = true;
      this.options.onReport?.({ error: error instanceof Error ? error.message : String(error) });
    }
  }

  private start(): Worker | undefined {
    try {
      // Loaded here, not at import: most processes never start a checkpointer.
      const require = createRequire(import.meta.url);
      const { Worker: WorkerThread } = require("node:worker_threads") as typeof import("node:worker_threads");
      const worker = new WorkerThread(WORKER_SOURCE, {
        eval: true,
        workerData: {
          driver: require.resolve("better-sqlite3"),
          path: this.options.path,
          synchronous: this.options.synchronous,
          done: this.done.buffer,
        },
      });
      worker.unref();
      worker.on("message", (report: { checkpointed?: unknown; error?: string }) => {
        this.running = false;
        // A worker that cannot open or checkpoint is given up: the writer's own checkpoint remains.
        if (report.error !== undefined) this.failed = true;
        this.options.onReport?.(report);
      });
      worker.on("error", (error) => {
        this.running = false;
        this.failed = true;
        this.options.onReport?.({ error: error.message });
      });
      this.worker = worker;
      return worker;
    } catch (error) {
      this.failed = true;
      this.options.onReport?.({ error: error instanceof Error ? error.message : String(error) });
      return undefined;
    }
  }

  /**
   * Closes the worker's connection (waiting for a checkpoint in progress, bounded) so the writer's
   * close that follows is the last connection and cleans the WAL up. Synchronous: stores close from
   * exit hooks.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    if (!worker) return;
    worker.postMessage("close");
    Atomics.wait(this.done, 0, 0, this.options.closeWaitMs ?? 2000);
    void worker.terminate();
  }
}
