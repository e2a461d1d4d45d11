import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Message } from "../../../src/ai/types.js";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import type { SyncSessionStore } from "../../../src/state/types.js";
import { manualClock, useTempStores } from "./helpers.js";

const { open } = useTempStores();

interface Fixture {
  store: SyncSessionStore;
  ids: Record<string, number>;
  sessions: Record<string, string>;
}

const shared = mkdtempSync(join(tmpdir(), "hermes-search-"));

/** One store shared by the read-only cases below (each `it` gets the same data). */
function build(): Fixture {
  const clock = manualClock(1_750_000_000);
  const store = openSqliteStore(join(shared, "state.db"), { now: clock.now });
  const ids: Record<string, number> = {};
  const sessions: Record<string, string> = {};
  const add = (session: string, key: string, message: Message) => {
    clock.advance(1);
    ids[key] = store.appendMessage(sessions[session]!, message);
  };
  sessions["main"] = store.createSession({ source: "cli", title: "Main work", model: "m/a" }).id;
  sessions["tg"] = store.createSession({ source: "telegram", model: "m/b" }).id;
  add("main", "quote", { role: "user", content: 'Why does deploy.sh fail with an "unbalanced quote?' });
  add("main", "prefix", {
    role: "assistant",
    content: "The foobar helper and foo*bar globbing are unrelated.",
  });
  add("main", "dash", { role: "user", content: "Run it with -bar to skip the progress bar." });
  add("main", "colon", { role: "assistant", content: "Set a:b in the config, then restart." });
  add("main", "paren", { role: "user", content: "Call f(x) and g(y) please" });
  add("main", "and", { role: "assistant", content: "Apples AND oranges, or apples OR pears, NOT bananas." });
  add("main", "near", { role: "user", content: "Is NEAR( a keyword in the query syntax?" });
  add("main", "cpp", { role: "user", content: "I write c++ and C# at work." });
  add("main", "whats", { role: "user", content: "what's the weather like" });
  add("main", "emoji", { role: "user", content: "party time 🎉 with friends 😀" });
  add("main", "cjk", { role: "assistant", content: "今天天气很好，我们去公园吧" });
  add("main", "tool", {
    role: "tool",
    content: "zebra crossing found in logs",
    tool_call_id: "c1",
    name: "search_files",
  });
  add("main", "docker", { role: "user", content: "Edit the Dockerfile and rebuild the image" });
  add("tg", "tgzebra", { role: "user", content: "a zebra at the zoo" });
  add("tg", "tgdocker", { role: "assistant", content: "docker compose up -d restarts the stack" });
  add("main", "undone", { role: "user", content: "hippopotamus" });
  store.undoTurns(sessions["main"]!, 1);
  return { store, ids, sessions };
}

let f: Fixture;
beforeAll(() => {
  f = build();
});
afterAll(() => {
  f.store.close();
  rmSync(shared, { recursive: true, force: true });
});

const found = (query: string, extra: Partial<Parameters<SyncSessionStore["search"]>[0]> = {}) =>
  f.store
    .search({ query, ...extra })
    .map((h) => Object.entries(f.ids).find(([, id]) => id === h.messageId)?.[0]);

describe("search: any text is a valid query", () => {
  it.each([
    ['"unbalanced', ["quote"]],
    ["foo*", ["prefix"]],
    ["foobar", ["prefix"]],
    ["-bar", ["dash", "prefix"]],
    ["a:b", ["colon"]],
    ["(x", ["paren"]],
    ["f(x)", ["paren"]],
    ["AND", ["and", "cpp", "docker", "paren", "prefix"]],
    ["apples OR pears", ["and"]],
    ["apples NOT bananas", []],
    ["NEAR(", ["near"]],
    ["c++", ["cpp"]],
    ["what's", ["whats"]],
    ["🎉", ["emoji"]],
    ["😀 friends", ["emoji"]],
    ["天气", ["cjk"]],
    ["今天天气很好", ["cjk"]],
    ["公园吧", ["cjk"]],
    ["ockerfi", ["docker"]],
    ['"compose up"', ["tgdocker"]],
    ["hippopotamus", []],
    ["*", ["prefix"]],
    ["()", []],
    ["(x)", ["paren"]],
    ['""', []],
    ["NOT", ["and"]],
  ])("%j", (query, expected) => {
    expect(found(query).sort()).toEqual([...expected].sort());
  });

  it("returns nothing for empty or whitespace-only text (browse with recent() instead)", () => {
    expect(f.store.search({ query: "" })).toEqual([]);
    expect(f.store.search({ query: "  \n\t " })).toEqual([]);
  });

  it("marks the match in the snippet and fills in the session", () => {
    const [hit] = f.store.search({ query: "weather" });
    expect(hit).toMatchObject({
      role: "user",
      sessionId: f.sessions["main"],
      sessionTitle: "Main work",
      source: "cli",
      model: "m/a",
      snippet: "what's the >>>weather<<< like",
    });
    expect(f.store.search({ query: "天气" })[0]?.snippet).toBe("今天>>>天气<<<很好，我们去公园吧");
    expect(f.store.search({ query: "ockerfi" })[0]?.snippet).toContain(">>>ockerfi<<<");
  });
});

describe("search: filters, order and limit", () => {
  it("searches user and assistant messages unless roles say otherwise", () => {
    expect(found("zebra")).toEqual(["tgzebra"]);
    expect(found("zebra", { roles: ["tool"] })).toEqual(["tool"]);
    expect(found("zebra", { roles: ["tool", "user"] }).sort()).toEqual(["tgzebra", "tool"]);
    expect(() => f.store.search({ query: "x", roles: ["robot" as "user"] })).toThrow(/roles/);
  });

  it("filters by source and leaves out one session", () => {
    expect(found("docker OR Dockerfile", { source: "telegram" })).toEqual(["tgdocker"]);
    expect(found("docker OR Dockerfile", { excludeSessionId: f.sessions["tg"]! })).toEqual(["docker"]);
  });

  it("sorts by relevance, newest or oldest and honours the limit", () => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    const a = store.appendMessage(s.id, { role: "user", content: "kettle" });
    const b = store.appendMessage(s.id, { role: "user", content: "kettle kettle kettle boiling kettle" });
    const c = store.appendMessage(s.id, { role: "user", content: `kettle ${"filler ".repeat(200)}` });
    expect(store.search({ query: "kettle", sort: "newest" }).map((h) => h.messageId)).toEqual([c, b, a]);
    expect(store.search({ query: "kettle", sort: "oldest" }).map((h) => h.messageId)).toEqual([a, b, c]);
    expect(store.search({ query: "kettle" }).map((h) => h.messageId)[0]).toBe(b);
    expect(store.search({ query: "kettle", limit: 2 })).toHaveLength(2);
    expect(() => store.search({ query: "kettle", sort: "random" as "newest" })).toThrow(/sort/);
  });

  it("ranks within bounded windows yet still finds every match of a very common word", () => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    const common = Array.from(
      { length: 2600 },
      (_, i) => ({ role: "assistant", content: `common word ${i}` }) as Message,
    );
    store.appendMessages(s.id, common);
    // The only match the filters keep sits behind more than two ranking windows of newer matches.
    const first = store.getMessages(s.id)[0]!;
    store.appendMessages(s.id, [{ role: "user", content: "padding" }]);
    const all = store.search({ query: "common", roles: ["assistant"], limit: 100 });
    expect(all).toHaveLength(100);
    const onlyUser = store.search({ query: "word", roles: ["user"] });
    expect(onlyUser).toEqual([]);
    const oldest = store.search({ query: "common", sort: "oldest", limit: 1 });
    expect(oldest[0]?.messageId).toBe(first.id);
    const limited = store.search({ query: "common", limit: 500 });
    expect(limited).toHaveLength(100);
  });
});
