/**
 * The compression hand-off (`continueSession`) is one transaction: the parent ends and the child
 * is created with its messages together, or nothing changes, so a crash in the middle can never
 * leave an ended parent with an empty child that `hermes -c` would pick up.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/ai/types.js";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";

function store() {
  return openSqliteStore(join(mkdtempSync(join(tmpdir(), "hermes-continue-")), "state.db"));
}

describe("continueSession", () => {
  it("ends the parent and creates the child with its messages", () => {
    const s = store();
    try {
      s.createSession({ id: "parent", source: "cli", systemPrompt: "P" });
      s.appendMessages("parent", [{ role: "user", content: "long history" }]);
      const child = s.continueSession(
        "parent",
        { id: "child", source: "cli", parentSessionId: "parent", systemPrompt: "P" },
        [
          { role: "user", content: "summary" },
          { role: "assistant", content: "ok" },
        ],
      );
      expect(child).toMatchObject({ id: "child", parentSessionId: "parent", messageCount: 2 });
      expect(s.getSession("parent")).toMatchObject({ endReason: "compression" });
      expect(s.conversation("child").map((m) => m.content)).toEqual(["summary", "ok"]);
      expect(s.latestSession({ source: "cli" })?.id).toBe("child");
    } finally {
      s.close();
    }
  });

  it("a failure part-way changes nothing: the parent stays open and no child exists", () => {
    const s = store();
    try {
      s.createSession({ id: "parent", source: "cli" });
      s.appendMessages("parent", [{ role: "user", content: "keep me" }]);
      const bad = { role: "robot", content: "x" } as unknown as Message;
      expect(() =>
        s.continueSession("parent", { id: "child", source: "cli", parentSessionId: "parent" }, [
          { role: "user", content: "summary" },
          bad,
        ]),
      ).toThrow(/unknown role/);
      expect(s.getSession("child")).toBeNull();
      expect(s.getSession("parent")).toMatchObject({ endedAt: null, endReason: null });
      expect(s.latestSession({ source: "cli" })?.id).toBe("parent");
      expect(s.conversation("parent")).toEqual([{ role: "user", content: "keep me" }]);
    } finally {
      s.close();
    }
  });
});
