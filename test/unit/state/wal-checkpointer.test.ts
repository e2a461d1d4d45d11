/**
 * WAL checkpoints on a worker thread (state/wal-checkpointer.ts): they happen while the recording
 * store keeps writing, the writer's close still leaves no WAL behind, a checkpointer that cannot
 * work never breaks a write, and a process killed while its worker checkpoints loses no message
 * it had committed.
 */
import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/ai/types.js";
import { openRecordingEngine } from "../../../src/state/recording-store.js";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import { CHECKPOINT_BYTES, SAFETY_PAGES, WalCheckpointer } from "../../../src/state/wal-checkpointer.js";
import { waitFor } from "../tools/terminal/helpers.js";
import { spawnStoreScript, useTempStores } from "./helpers.js";

const { dir, track } = useTempStores();

/** One loop step's two messages, padded so a few hundred steps fill several MB of WAL. */
function step(i: number): Message[] {
  return [
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: `call_${i}`,
          type: "function",
          function: { name: "todo", arguments: JSON.stringify({ step: i }) },
        },
      ],
    },
    { role: "tool", tool_call_id: `call_${i}`, name: "todo", content: `step ${i} ${"output ".repeat(600)}` },
  ];
}

const size = (path: string) => (existsSync(path) ? statSync(path).size : 0);

describe("WAL checkpoints on a worker thread", () => {
  it("copy the WAL into state.db while the recording store keeps writing; closing leaves no WAL", async () => {
    const home = dir();
    const db = join(home, "state.db");
    const store = track(openRecordingEngine(home, { open: { durability: "normal" }, notify: () => {} }));
    store.createSession({ id: "s1", source: "cli" });
    const before = size(db);
    let steps = 0;
    // Past the threshold, and a few more commits for the size check that notices it.
    while (size(`${db}-wal`) < CHECKPOINT_BYTES) for (const m of step(steps++)) store.appendMessage("s1", m);
    for (let i = 0; i < 8; i++) for (const m of step(steps++)) store.appendMessage("s1", m);
    // The writer's own checkpoint would wait for SAFETY_PAGES: only the worker can have done this.
    expect(size(`${db}-wal`)).toBeLessThan(SAFETY_PAGES * 4096);
    // In WAL mode only a checkpoint writes to state.db itself.
    await waitFor(() => size(db) > before, 20_000, "state.db to receive the WAL's pages");
    // Writing goes on normally after (and during) a checkpoint.
    for (const m of step(steps++)) store.appendMessage("s1", m);
    const conversation = store.conversation("s1");
    expect(conversation).toHaveLength(steps * 2);
    expect(conversation.at(-1)?.content).toContain(`step ${steps - 1} `);
    store.close();
    expect(existsSync(`${db}-wal`)).toBe(false);
    const reader = openSqliteStore(db, { readonly: true });
    try {
      expect(reader.conversation("s1")).toEqual(conversation);
    } finally {
      reader.close();
    }
  }, 60_000);

  it("a one-shot of a hundred loop steps starts no checkpoint thread; closing copies the WAL in", () => {
    const home = dir();
    const db = join(home, "state.db");
    const store = track(openRecordingEngine(home, { open: { durability: "normal" }, notify: () => {} }));
    store.createSession({ id: "s1", source: "cli" });
    const before = size(db);
    // The CLI's loop step: an assistant message calling a tool, then the tool's short result.
    for (let i = 0; i < 101; i++) {
      store.appendMessage("s1", step(i)[0]!);
      store.appendMessage("s1", {
        role: "tool",
        tool_call_id: `call_${i}`,
        name: "todo",
        content: `done ${i}`,
      });
    }
    // Past SQLite's own 1000 pages, yet nothing was copied into state.db: no checkpoint ran.
    expect(size(`${db}-wal`)).toBeGreaterThan(1000 * 4096);
    expect(size(`${db}-wal`)).toBeLessThan(CHECKPOINT_BYTES);
    expect(size(db)).toBe(before);
    store.close();
    expect(existsSync(`${db}-wal`)).toBe(false);
    const reader = openSqliteStore(db, { readonly: true });
    try {
      expect(reader.conversation("s1")).toHaveLength(202);
      expect(reader.check()).toMatchObject({ integrity: true, problems: [] });
    } finally {
      reader.close();
    }
  });

  it("a checkpointer whose worker cannot open the file gives up quietly; commits are never disturbed", async () => {
    const reports: Array<{ error?: string }> = [];
    const missing = join(dir(), "no-such.db");
    const checkpointer = new WalCheckpointer({
      path: missing,
      synchronous: "NORMAL",
      thresholdBytes: 0,
      checkEvery: 1,
      onReport: (r) => reports.push(r),
    });
    expect(() => checkpointer.afterCommit()).not.toThrow();
    await waitFor(() => reports.length > 0, 10_000, "the worker's report");
    expect(reports[0]?.error).toMatch(/no-such\.db|unable to open|does not exist/i);
    // Given up: later commits neither throw nor start anything again.
    for (let i = 0; i < 5; i++) expect(() => checkpointer.afterCommit()).not.toThrow();
    expect(checkpointer.busy).toBe(false);
    checkpointer.close();
    checkpointer.close();
  });

  it("a WAL path that cannot be read is not an error of the commit", () => {
    const reports: Array<{ error?: string }> = [];
    // A path whose parent is a file: stat fails with ENOTDIR, not ENOENT.
    const file = join(dir(), "plain-file");
    writeFileSync(file, "x");
    const checkpointer = new WalCheckpointer({
      path: join(file, "state.db"),
      synchronous: "NORMAL",
      checkEvery: 1,
      onReport: (r) => reports.push(r),
    });
    expect(() => checkpointer.afterCommit()).not.toThrow();
    expect(reports[0]?.error).toMatch(/ENOTDIR/);
    checkpointer.close();
  });

  it("kill -9 while the worker checkpoints: every message the process had committed is there", async () => {
    const home = dir();
    const db = join(home, "state.db");
    const { child, out, err, exited } = spawnStoreScript(
      home,
      "writer.mjs",
      `
const { openRecordingEngine } = await import(process.argv[2]);
const store = openRecordingEngine(process.argv[3], { open: { durability: "normal" }, notify: () => {} });
store.createSession({ id: "s1", source: "cli" });
for (let i = 0; ; i++) {
  store.appendMessage("s1", { role: "user", content: "message " + i + " " + "padding ".repeat(300) });
  // Printed only once the append returned, i.e. committed.
  process.stdout.write(i + "\\n");
}
`,
    );
    await waitFor(() => out().includes("\n") || child.exitCode !== null, 60_000, "the first commit");
    const before = size(db);
    try {
      // In WAL mode only a checkpoint writes to state.db itself: kill as it starts copying.
      await waitFor(() => size(db) > before || child.exitCode !== null, 60_000, "a checkpoint to start");
      expect(child.exitCode, err()).toBeNull();
    } finally {
      child.kill("SIGKILL");
    }
    await exited;
    const lines = out()
      .split("\n")
      .filter((l) => l !== "");
    const committed = Number(lines.at(-1));
    expect(committed).toBeGreaterThan(100);
    const reader = openSqliteStore(db);
    try {
      const messages = reader.conversation("s1");
      // Everything reported committed, in order (the one in flight may or may not be there).
      expect(messages.length).toBeGreaterThanOrEqual(committed + 1);
      expect(messages.filter((m, i) => !String(m.content).startsWith(`message ${i} `))).toEqual([]);
      expect(reader.check()).toMatchObject({ integrity: true, problems: [] });
    } finally {
      reader.close();
    }
  }, 90_000);
});
