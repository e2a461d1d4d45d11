import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Message } from "../../../src/ai/types.js";
import { openSessionStore, type SqliteSessionStore } from "../../../src/state/sqlite-store.js";
import type { SessionStore } from "../../../src/state/types.js";
import { createBuiltinRegistry } from "../../../src/tools/builtin.js";
import { sessionSearchTool } from "../../../src/tools/session-search.js";
import { makeToolContext } from "../../support/tool-context.js";

type Args = Parameters<typeof sessionSearchTool.handler>[0];
// biome-ignore lint/suspicious/noExplicitAny: results are JSON read field by field
type Result = any;

const NOW = 1_750_000_000;
const DAY = 86_400;
let dir: string;
let store: SqliteSessionStore;
const ids = { deploy: "", grocery: "", long: "", current: "", hidden: "", older: "", newer: "" };
/** Message ids of the long session, in order. */
let longIds: number[] = [];

function session(
  id: string,
  source: string,
  title: string | undefined,
  startedAt: number,
  messages: Array<Message & { at?: number }>,
): string {
  store.engine.createSession({ id, source, model: "test/model", startedAt, ...(title ? { title } : {}) });
  messages.forEach((m, i) => {
    const { at, ...message } = m;
    store.engine.appendMessage(id, message, { timestamp: at ?? startedAt + i * 10 });
  });
  return id;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hermes-session-search-"));
  store = openSessionStore(join(dir, "state.db"), { now: () => NOW });
  ids.deploy = session("20250601_100000_aaaaaa", "cli", "Deploy pipeline", NOW - 3 * DAY, [
    { role: "user", content: 'Why does deploy.sh fail with an "unbalanced quote error?' },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "terminal", arguments: JSON.stringify({ command: "bash -n deploy.sh" }) },
        },
      ],
    },
    {
      role: "tool",
      tool_call_id: "call_1",
      name: "terminal",
      content: `kubectlmarker ${"line of noisy tool output ".repeat(60)}`,
    },
    { role: "assistant", content: "The foo* glob on line 3 expands to nothing; quote it as a:b pairs." },
  ]);
  ids.grocery = session("20250602_100000_bbbbbb", "telegram", "Grocery list", NOW - 2 * DAY, [
    { role: "user", content: "Add apples; run the script with the -x flag later" },
    { role: "assistant", content: "Added apples to the grocery list." },
  ]);
  const long: Message[] = [];
  for (let i = 0; i < 40; i++) {
    long.push({
      role: i % 2 === 0 ? "user" : "assistant",
      content: i === 20 ? "the zebramarker appears here" : `turn ${i}`,
    });
  }
  ids.long = session("20250603_100000_cccccc", "cli", "Long chat", NOW - DAY, long);
  longIds = store.engine.getMessages(ids.long).map((m) => m.id);
  ids.current = session("20250604_100000_dddddd", "cli", "Current", NOW - 60, [
    { role: "user", content: "deploy it again please" },
  ]);
  ids.hidden = session("20250604_110000_eeeeee", "tool", undefined, NOW - 30, [
    { role: "user", content: "deploy from an integration" },
  ]);
  ids.older = session("20240101_100000_ffffff", "cli", "Older heron", NOW - 300 * DAY, [
    { role: "user", content: "the heronmarker first time" },
  ]);
  ids.newer = session("20250605_100000_gggggg", "cli", "Newer heron", NOW - 10, [
    { role: "user", content: "the heronmarker second time" },
  ]);
});

afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const ctx = (overrides: { sessionStore?: SessionStore | undefined } = {}) =>
  makeToolContext({
    sessionId: ids.current,
    ...("sessionStore" in overrides ? overrides : { sessionStore: store }),
  });

const call = async (args: Args, context = ctx()): Promise<Result> =>
  (await sessionSearchTool.handler(args, context)) as Result;

describe("session_search discovery", () => {
  it("groups hits by session with ids, titles, dates and snippets, leaving the current session out", async () => {
    const r = await call({ query: "deploy" });
    expect(r.error).toBeUndefined();
    expect(r.mode).toBe("search");
    const found = r.sessions.map((s: Result) => s.session_id);
    expect(found).toContain(ids.deploy);
    expect(found).not.toContain(ids.current);
    expect(found).not.toContain(ids.hidden);
    const deploy = r.sessions.find((s: Result) => s.session_id === ids.deploy);
    expect(deploy.title).toBe("Deploy pipeline");
    expect(deploy.source).toBe("cli");
    expect(deploy.started).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    expect(deploy.hits.length).toBeGreaterThan(0);
    const storedIds = store.engine.getMessages(ids.deploy).map((m) => m.id);
    for (const hit of deploy.hits) {
      expect(storedIds).toContain(hit.message_id);
      expect(hit.snippet.toLowerCase()).toContain("deploy");
    }
    expect(r.next).toContain("around_message_id");
  });

  it("includes the current session only when asked", async () => {
    const r = await call({ query: "deploy", include_current_session: true });
    expect(r.sessions.map((s: Result) => s.session_id)).toContain(ids.current);
  });

  it.each([
    ['"unbalanced', "deploy"],
    ["foo*", "deploy"],
    ["a:b", "deploy"],
    ["-x", null],
    ["deploy AND (", null],
    ["NEAR(", null],
    ["'; DROP TABLE messages; --", null],
  ] as const)("takes %j as plain text, never an error", async (query, expected) => {
    const r = await call({ query });
    expect(r.error).toBeUndefined();
    expect(r.mode).toBe("search");
    if (expected) expect(r.sessions.map((s: Result) => s.session_id)).toContain(ids[expected]);
  });

  it("searches the roles named by role_filter, as a list or comma-separated", async () => {
    expect((await call({ query: "kubectlmarker" })).count).toBe(0);
    const tool = await call({ query: "kubectlmarker", role_filter: "tool" });
    expect(tool.sessions.map((s: Result) => s.session_id)).toEqual([ids.deploy]);
    expect(tool.sessions[0].hits[0].role).toBe("tool");
    expect((await call({ query: "kubectlmarker", role_filter: ["user", "tool"] })).count).toBe(1);
    expect((await call({ query: "kubectlmarker", role_filter: " user , assistant " })).count).toBe(0);
    const bad = await call({ query: "deploy", role_filter: "user,wizard" });
    expect(bad.error).toMatch(/wizard/);
    expect(bad.error).toMatch(/user, assistant, tool, system/);
  });

  it("sorts by newest or oldest", async () => {
    const newest = await call({ query: "heronmarker", sort: "newest" });
    expect(newest.sessions.map((s: Result) => s.session_id)).toEqual([ids.newer, ids.older]);
    // Each hit carries the snippet of its own message.
    expect(newest.sessions[0].hits[0].snippet).toContain("second time");
    expect(newest.sessions[1].hits[0].snippet).toContain("first time");
    const oldest = await call({ query: "heronmarker", sort: "oldest" });
    expect(oldest.sessions.map((s: Result) => s.session_id)).toEqual([ids.older, ids.newer]);
  });

  it("returns at most limit sessions and says so when nothing matches", async () => {
    expect((await call({ query: "heronmarker", limit: 1 })).sessions).toHaveLength(1);
    const none = await call({ query: "nothingmatchesthisword" });
    expect(none).toMatchObject({ mode: "search", count: 0, sessions: [] });
    expect(none.message).toMatch(/no arguments/);
  });
});

describe("session_search scroll and read", () => {
  it("returns the window around a hit, marks the anchor and says how to scroll on", async () => {
    const hit = (await call({ query: "zebramarker" })).sessions[0].hits[0];
    expect(hit.message_id).toBe(longIds[20]);
    const r = await call({ session_id: ids.long, around_message_id: hit.message_id, window: 2 });
    expect(r.mode).toBe("scroll");
    expect(r.session).toMatchObject({ session_id: ids.long, title: "Long chat" });
    expect(r.messages.map((m: Result) => m.id)).toEqual(longIds.slice(18, 23));
    expect(r.messages.filter((m: Result) => m.anchor)).toEqual([
      expect.objectContaining({ id: longIds[20], content: "the zebramarker appears here" }),
    ]);
    expect(r.messages_before).toBe(18);
    expect(r.messages_after).toBe(17);
    expect(r.next).toContain(`around_message_id=${longIds[15]}`);
    expect(r.next).toContain(`around_message_id=${longIds[25]}`);

    const next = await call({ session_id: ids.long, around_message_id: longIds[25] as number, window: 2 });
    expect(next.messages[0].id).toBe(longIds[23]);
  });

  it("stops at the edges of the session", async () => {
    const r = await call({ session_id: ids.long, around_message_id: longIds[0] as number, window: 3 });
    expect(r.messages.map((m: Result) => m.id)).toEqual(longIds.slice(0, 4));
    expect(r.messages_before).toBe(0);
    expect(r.next).not.toContain("earlier");
  });

  it("shortens tool output and shows tool calls on one line", async () => {
    const first = store.engine.getMessages(ids.deploy)[0]?.id as number;
    const r = await call({ session_id: ids.deploy, around_message_id: first, window: 5 });
    const tool = r.messages.find((m: Result) => m.role === "tool");
    expect(tool.tool_name).toBe("terminal");
    expect(tool.content.length).toBeLessThan(500);
    expect(tool.content).toMatch(/more characters\]$/);
    expect(tool.content_chars).toBeGreaterThan(1000);
    const caller = r.messages.find((m: Result) => m.tool_calls);
    expect(caller.tool_calls).toEqual(["terminal(bash -n deploy.sh)"]);
  });

  it("reads a whole short session, or the head and tail of a long one", async () => {
    expect((await call({ session_id: ids.grocery })).messages).toHaveLength(2);
    const r = await call({ session_id: ids.long });
    expect(r.mode).toBe("read");
    expect(r.message_count).toBe(40);
    expect(r.omitted).toBe(40 - r.messages.length);
    expect(r.messages[0].id).toBe(longIds[0]);
    expect(r.messages.at(-1).id).toBe(longIds[39]);
    expect(r.next).toContain("around_message_id");
  });

  it("explains an unknown session id, a message of another session, and a missing session_id", async () => {
    expect((await call({ session_id: "no-such-session", around_message_id: 1 })).error).toMatch(
      /Unknown session_id "no-such-session"/,
    );
    const other = store.engine.getMessages(ids.grocery)[0]?.id as number;
    const wrong = await call({ session_id: ids.long, around_message_id: other });
    expect(wrong.error).toMatch(new RegExp(`${other} is not a message of session ${ids.long}`));
    expect(wrong.error).toContain(`ids ${longIds[0]} to ${longIds[39]}`);
    expect((await call({ around_message_id: 5 })).error).toMatch(/needs session_id/);
  });
});

describe("session_search browse", () => {
  it("lists recent sessions with title, preview, date and size, without the current or hidden ones", async () => {
    const r = await call({});
    expect(r.mode).toBe("browse");
    const listed = r.sessions.map((s: Result) => s.session_id);
    expect(listed[0]).toBe(ids.newer);
    expect(listed).not.toContain(ids.current);
    expect(listed).not.toContain(ids.hidden);
    const grocery = r.sessions.find((s: Result) => s.session_id === ids.grocery);
    expect(grocery).toMatchObject({ title: "Grocery list", source: "telegram", message_count: 2 });
    expect(grocery.preview).toContain("Add apples");
    expect((await call({ limit: 2 })).sessions).toHaveLength(2);
  });
});

describe("session_search without a store", () => {
  it("tells the model that past sessions are not available", async () => {
    const r = await call({ query: "deploy" }, ctx({ sessionStore: undefined }));
    expect(r.error).toMatch(/not available/);
  });

  it("reports a closed or broken store as unavailable instead of throwing", async () => {
    const closed = openSessionStore(join(dir, "state.db"), { readonly: true });
    await closed.close();
    const r = await call({ query: "deploy" }, ctx({ sessionStore: closed }));
    expect(r.error).toMatch(/session store is unavailable/);
  });
});

describe("session_search through the registry", () => {
  it("validates arguments and returns JSON the model can read", async () => {
    const registry = createBuiltinRegistry();
    const ok = await registry.execute("session_search", { query: "foo*", limit: "3" }, ctx());
    expect(ok.ok).toBe(true);
    expect(JSON.parse(ok.content).sessions[0].session_id).toBe(ids.deploy);
    const tooMany = await registry.execute("session_search", { limit: 50 }, ctx());
    expect(tooMany.ok).toBe(false);
    expect(tooMany.error).toMatch(/limit/);
    const missing = await registry.execute(
      "session_search",
      { query: "x" },
      ctx({ sessionStore: undefined }),
    );
    expect(missing.ok).toBe(false);
  });
});
