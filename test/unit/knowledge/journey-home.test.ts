/**
 * `collectHomeJourney`: a home whose backend registered its stores (PostgreSQL) builds the timeline
 * from them (recorded calls, memory entries dated by their last change, usage), never from the
 * home's files; a file home reads the files as before.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { collectHomeJourney } from "../../../src/knowledge/journey.js";
import { MemoryStore, memoryRecords } from "../../../src/knowledge/memory/store.js";
import { fileKnowledgeStores, registerKnowledgeStores } from "../../../src/knowledge/stores.js";

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-journey-home-"));
  homes.push(dir);
  mkdirSync(join(dir, "memories"));
  // A stale local file a postgres home must not show.
  writeFileSync(join(dir, "memories", "USER.md"), "Local file entry that is not shared");
  return dir;
}

describe("collectHomeJourney", () => {
  it("reads a registered backend's calls and memory instead of the home's files", async () => {
    const h = home();
    // The shared memory: another folder's files stand in for the database's rows.
    const shared = mkdtempSync(join(tmpdir(), "hermes-journey-shared-"));
    homes.push(shared);
    const memory = memoryRecords(MemoryStore.forHome(shared, {}));
    await memory.add("user", "Rides a blue bicycle");
    await memory.add("memory", "The deploy key lives in the vault");
    const changed = new Date("2026-04-01T08:00:00Z");
    const unregister = registerKnowledgeStores(h, {
      ...fileKnowledgeStores(shared),
      memory: () => ({ ...memory, updatedAt: async () => changed }),
      learningCalls: async () => [
        {
          sessionId: "s-gw",
          source: "telegram",
          sessionTitle: null,
          timestamp: Date.parse("2026-03-01T10:00:00Z") / 1000,
          tool: "memory",
          args: { action: "add", target: "user", content: "Rides a blue bicycle" },
          result: '{"success": true}',
        },
      ],
    });
    try {
      const events = await collectHomeJourney(h);
      expect(events.map((e) => [e.at, e.kind, e.subject, e.source])).toEqual([
        ["2026-03-01T10:00:00.000Z", "user", "Rides a blue bicycle", "telegram"],
        ["2026-04-01T08:00:00.000Z", "memory", "The deploy key lives in the vault", "files"],
      ]);
    } finally {
      unregister();
    }
  });

  it("reads a file home's files", async () => {
    const events = await collectHomeJourney(home());
    expect(events.map((e) => [e.kind, e.subject])).toEqual([["user", "Local file entry that is not shared"]]);
  });
});
