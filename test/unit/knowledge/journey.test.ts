import { describe, expect, it } from "vitest";
import { buildJourney, formatJourney } from "../../../src/knowledge/journey.js";
import type { LearningCall } from "../../../src/state/learning-calls.js";

const call = (over: Partial<LearningCall>): LearningCall => ({
  sessionId: "s1",
  source: "cli",
  sessionTitle: null,
  timestamp: Date.parse("2026-03-01T10:00:00Z") / 1000,
  tool: "memory",
  args: {},
  result: '{"success": true}',
  ...over,
});

describe("buildJourney", () => {
  it("merges recorded calls, usage, curator runs and unexplained memory entries, oldest first", () => {
    const events = buildJourney({
      calls: [
        call({ args: { action: "add", target: "user", content: "Likes tea." } }),
        call({
          timestamp: Date.parse("2026-03-02T10:00:00Z") / 1000,
          tool: "skill_manage",
          args: { action: "create", name: "brew" },
          sessionId: "s2",
          source: "review",
        }),
        call({
          tool: "skill_manage",
          args: { action: "patch", name: "brew" },
          result: '{"success": false, "error": "x"}',
        }),
        call({ args: { operations: [{ action: "add", content: "Repo uses pnpm." }, { action: "read" }] } }),
      ],
      usage: {
        brew: { created_at: "2026-03-02T10:00:00+00:00", created_by: "agent" },
        legacy: { created_at: "2025-01-01T00:00:00+00:00", created_by: null },
      },
      memory: [
        {
          target: "user",
          entries: ["Likes tea.", "Lives in Oslo."],
          mtime: new Date("2026-02-01T00:00:00Z"),
        },
        { target: "memory", entries: [], mtime: undefined },
      ],
      curatorRuns: [
        {
          started_at: "2026-04-01T00:00:00+00:00",
          archived: ["old", "dup"],
          consolidated: [{ name: "dup", into: "brew" }],
        },
        { started_at: "2026-04-02T00:00:00+00:00", archived: ["never"], dry_run: true },
      ],
    });
    expect(events.map((e) => [e.at.slice(0, 10), e.kind, e.action, e.subject, e.source])).toEqual([
      ["2025-01-01", "skill", "created", "legacy", "files"],
      ["2026-02-01", "user", "added", "Lives in Oslo.", "files"],
      ["2026-03-01", "user", "added", "Likes tea.", "cli"],
      ["2026-03-01", "memory", "added", "Repo uses pnpm.", "cli"],
      ["2026-03-02", "skill", "created", "brew", "review"],
      ["2026-04-01", "skill", "archived", "old", "curator"],
      ["2026-04-01", "skill", "merged", "dup", "curator"],
    ]);
    expect(events.find((e) => e.subject === "brew")?.sessionId).toBe("s2");
  });

  it("says so when nothing was learned, and keeps lines short", () => {
    expect(formatJourney([])).toEqual(["Nothing learned yet: no memories or skills have been saved."]);
    const [line] = formatJourney([
      {
        at: "2026-01-01T00:00:00.000Z",
        kind: "memory",
        action: "added",
        subject: "x".repeat(200),
        source: "cli",
        sessionId: "s",
      },
    ]);
    expect(line).toMatch(/^2026-01-01 00:00 {2}memory {2}added\s+x{69}… {2}\(cli session s\)$/);
  });
});
