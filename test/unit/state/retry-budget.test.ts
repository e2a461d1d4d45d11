/**
 * `withRetryBudget` changes SQLite's own lock wait for one call only. The connection tracks the
 * value instead of reading it back each time (the recording store calls this around every write),
 * so these tests hold another connection's lock and time what a write does inside and after.
 */
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import type { SessionStoreError } from "../../../src/state/types.js";
import { rawDb, useTempStores } from "./helpers.js";

const { dir, track } = useTempStores();

function holdLock(path: string) {
  const holder = rawDb(path);
  holder.pragma("busy_timeout = 0");
  holder.exec("BEGIN EXCLUSIVE");
  return () => {
    holder.exec("ROLLBACK");
    holder.close();
  };
}

/** Milliseconds a throwing call took, and its error code. */
function failure(fn: () => unknown): { ms: number; code: string } {
  const started = performance.now();
  try {
    fn();
  } catch (error) {
    return { ms: performance.now() - started, code: (error as SessionStoreError).code };
  }
  throw new Error("the write went through while another connection held the lock");
}

describe("withRetryBudget", () => {
  it("gives up at once inside a zero budget, and the connection's own wait comes back after, every time", () => {
    const path = join(dir(), "state.db");
    // No retries of our own: the only wait outside withRetryBudget is SQLite's busy timeout.
    const store = openSqliteStore(path, { busyTimeoutMs: 400, retryBudgetMs: 0 });
    track(store);
    const id = store.createSession({ source: "cli" }).id;
    const release = holdLock(path);
    try {
      for (let round = 0; round < 3; round++) {
        const quick = failure(() =>
          store.withRetryBudget(0, 0, () => store.appendMessage(id, { role: "user", content: "hi" })),
        );
        expect(quick.code).toBe("locked");
        expect(quick.ms).toBeLessThan(350);
        const patient = failure(() => store.appendMessage(id, { role: "user", content: "hi" }));
        expect(patient.code).toBe("locked");
        // SQLite waited out the restored 400 ms before reporting the lock.
        expect(patient.ms).toBeGreaterThanOrEqual(380);
      }
      // A nested budget restores the outer one, not the connection's.
      const nested = failure(() =>
        store.withRetryBudget(0, 0, () =>
          store.withRetryBudget(0, 0, () => store.appendMessage(id, { role: "user", content: "x" })),
        ),
      );
      expect(nested.ms).toBeLessThan(350);
    } finally {
      release();
    }
    store.appendMessage(id, { role: "user", content: "after the lock" });
    expect(store.getMessages(id).map((m) => m.content)).toEqual(["after the lock"]);
  });
});
