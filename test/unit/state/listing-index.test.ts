/**
 * The default listing (not archived, newest first) pages through `idx_sessions_archived_started`:
 * a file without the index (Python Hermes writes none) gets it at open, and SQLite's plan for the
 * listing query walks it instead of reading every skipped session row.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import { rawDb, useTempStores } from "./helpers.js";

const temp = useTempStores();

describe("the listing index", () => {
  it("is added to an existing file at open and used by the default listing", () => {
    const path = join(temp.dir(), "state.db");
    const first = openSqliteStore(path, { now: () => 1_760_000_000 });
    for (let i = 0; i < 30; i++)
      first.createSession({ source: "cli", model: "m", startedAt: 1_760_000_000 + i });
    first.close();
    const db = rawDb(path);
    db.exec("DROP INDEX idx_sessions_archived_started");
    db.prepare("UPDATE sessions SET archived = 1 WHERE started_at % 3 = 0").run();
    db.close();

    // A read-only check of a file without it (as Python Hermes leaves it) reports no problem.
    const readonly = temp.track(openSqliteStore(path, { readonly: true }));
    expect(readonly.check().problems).toEqual([]);
    expect(readonly.listSessions({ limit: 3 })).toHaveLength(3);
    readonly.close();

    const store = temp.track(openSqliteStore(path));
    const check = rawDb(path, { readonly: true });
    const index = check
      .prepare("SELECT sql FROM sqlite_master WHERE name = 'idx_sessions_archived_started'")
      .get() as { sql: string } | undefined;
    expect(index?.sql).toContain("sessions(archived, started_at DESC)");
    const plan = check
      .prepare(
        "EXPLAIN QUERY PLAN SELECT s.* FROM sessions s WHERE s.archived = 0 ORDER BY s.started_at DESC LIMIT ? OFFSET ?",
      )
      .all(5, 10) as Array<{ detail: string }>;
    check.close();
    expect(plan.map((p) => p.detail).join(" | ")).toMatch(/USING INDEX idx_sessions_archived_started/);
    expect(plan.map((p) => p.detail).join(" | ")).not.toMatch(/TEMP B-TREE/);

    // Pages are still the newest unarchived sessions, in order.
    const unarchived = Array.from({ length: 30 }, (_, i) => 1_760_000_000 + i)
      .filter((t) => t % 3 !== 0)
      .reverse();
    const page = store.listSessions({ limit: 5, offset: 10 });
    expect(page.map((s) => s.startedAt)).toEqual(unarchived.slice(10, 15));
    expect(store.listSessions({ limit: 50, offset: 18 }).map((s) => s.startedAt)).toEqual(
      unarchived.slice(18),
    );
  });
});
