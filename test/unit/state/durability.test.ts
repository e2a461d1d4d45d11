import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { durabilityOptions, openRecordingEngine } from "../../../src/state/recording-store.js";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

describe("state.durability", () => {
  it.each([
    [undefined, "normal"],
    [{}, "normal"],
    [{ durability: "normal" }, "normal"],
    [{ durability: "full" }, "full"],
    [{ durability: "FULL" }, "normal"],
    [{ durability: "off" }, "normal"],
  ])("%j opens state.db with %s", (state, expected) => {
    expect(durabilityOptions(state)).toEqual({ durability: expected });
  });

  it("a recording store opened with it commits each message before returning, readable by another connection", () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-durability-"));
    homes.push(home);
    const store = openRecordingEngine(home, { open: durabilityOptions(undefined), notify: () => {} });
    try {
      store.createSession({ id: "s1", source: "api_server" });
      store.appendMessage("s1", { role: "user", content: "hello" });
      const reader = openSqliteStore(join(home, "state.db"), { readonly: true });
      try {
        expect(reader.conversation("s1")).toEqual([{ role: "user", content: "hello" }]);
      } finally {
        reader.close();
      }
      // Unknown sessions are still refused, by the cheaper existence check too.
      expect(() => store.appendMessage("missing", { role: "user", content: "x" })).toThrow(/No session/);
    } finally {
      store.close();
    }
  });
});
