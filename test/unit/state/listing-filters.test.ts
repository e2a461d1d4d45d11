import { describe, expect, it } from "vitest";
import { useTempStores } from "./helpers.js";

const stores = useTempStores();

describe("listSessions filters", () => {
  it("filters by model and by start time, combined with source and paging", () => {
    const store = stores.open();
    const day = 86_400;
    const base = 1_780_000_000;
    store.createSession({ id: "a", source: "cli", model: "gpt-x", startedAt: base });
    store.createSession({ id: "b", source: "telegram", model: "gpt-x", startedAt: base + day });
    store.createSession({ id: "c", source: "cli", model: "claude-y", startedAt: base + 2 * day });
    store.createSession({ id: "d", source: "cli", startedAt: base + 3 * day });
    const ids = (filter: Parameters<typeof store.listSessions>[0]) =>
      store.listSessions(filter).map((s) => s.id);

    expect(ids({ model: "gpt-x" })).toEqual(["b", "a"]);
    expect(ids({ model: "gpt-x", source: "cli" })).toEqual(["a"]);
    expect(ids({ startedAfter: base + day })).toEqual(["d", "c", "b"]);
    expect(ids({ startedBefore: base + day })).toEqual(["a"]);
    expect(ids({ startedAfter: base + day, startedBefore: base + 3 * day })).toEqual(["c", "b"]);
    expect(ids({ startedAfter: base, limit: 2, offset: 1 })).toEqual(["c", "b"]);
    expect(ids({ model: "nope" })).toEqual([]);
    // A model name is a value, never SQL.
    expect(ids({ model: "' OR 1=1 --" })).toEqual([]);
  });
});
