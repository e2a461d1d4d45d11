import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import {
  createPythonStateDb,
  PYTHON_MESSAGE_COLUMNS,
  PYTHON_SESSION_COLUMNS,
  pyJsonDumps,
} from "../../support/python-state-db.js";
import { rawDb, useTempStores } from "./helpers.js";

const { dir, track } = useTempStores();

function schemaOf(path: string): string[] {
  const db = rawDb(path, { readonly: true });
  const rows = db.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name").all() as Array<{
    sql: string | null;
  }>;
  db.close();
  return rows.map((r) => JSON.stringify(r));
}

describe("a state.db written by Python Hermes (v17)", () => {
  it("opens as it is: no schema change but our listing index, everything readable", () => {
    const path = join(dir(), "state.db");
    const { sessionIds } = createPythonStateDb(path);
    const before = schemaOf(path);
    const store = track(openSqliteStore(path));
    // The one addition: our listing index, which Python Hermes never reads and never minds.
    const after = schemaOf(path);
    expect(after.filter((r) => !r.includes('"idx_sessions_archived_started"'))).toEqual(before);
    expect(after).toHaveLength(before.length + 1);

    const list = store.listSessions();
    expect(list.map((s) => s.id).sort()).toEqual([...sessionIds].sort());
    const [parser, continued, telegram, undone] = sessionIds.map((id) => store.getSession(id)!);
    expect(parser).toMatchObject({
      title: "Refactor the parser",
      source: "cli",
      messageCount: 4,
      toolCallCount: 1,
      apiCallCount: 2,
      inputTokens: 5120,
      endReason: "user_exit",
      systemPrompt: "You are Hermes Agent, an intelligent AI assistant created by Nous Research.",
    });
    expect(JSON.parse(parser!.modelConfig!)).toMatchObject({ max_iterations: 90 });
    expect(continued).toMatchObject({ parentSessionId: parser!.id, title: "Refactor the parser #2" });
    expect(telegram).toMatchObject({
      title: null,
      modelConfig: null,
      userId: "123456789",
      source: "telegram",
    });

    const conversation = store.conversation(parser!.id);
    expect(conversation.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(conversation[1]?.tool_calls).toEqual([
      {
        id: "call_ab12",
        type: "function",
        function: { name: "read_file", arguments: '{"path": "parser.py"}' },
      },
    ]);
    expect(conversation[2]).toMatchObject({ tool_call_id: "call_ab12", name: "read_file" });
    expect(store.conversation(undone!.id).map((m) => m.content)).toEqual([
      "Make a grocery list: apples, pears, oat milk",
      "Grocery list: apples, pears, oat milk.",
    ]);

    expect(new Set(store.search({ query: "tokenizer" }).map((h) => h.sessionId))).toEqual(
      new Set([parser!.id, continued!.id]),
    );
    expect(store.search({ query: "天气" }).map((h) => h.sessionId)).toEqual([telegram!.id]);
    expect(store.search({ query: "grocery" }).map((h) => h.snippet)).not.toContain(
      "first attempt at a grocery list",
    );
    expect(store.resolveSession("Refactor the parser").id).toBe(continued!.id);
    expect(store.check()).toEqual({ integrity: true, problems: [], fixed: [] });
    expect(store.stats()).toMatchObject({ sessions: 4, messages: 12, schemaVersion: 17 });
  });

  it("stays valid for Python after we write to it", () => {
    const path = join(dir(), "state.db");
    const { sessionIds } = createPythonStateDb(path);
    const store = track(openSqliteStore(path));
    const id = sessionIds[0]!;
    store.reopenSession(id);
    store.appendMessages(id, [
      { role: "user", content: [{ type: "text", text: "and now the lexer" }] },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c9", type: "function", function: { name: "read_file", arguments: '{"path":"lexer.py"}' } },
        ],
      },
      { role: "tool", content: "def lex(): ...", tool_call_id: "c9", name: "read_file" },
      { role: "assistant", content: "Done: the lexer is faster too.", finish_reason: "stop" },
    ]);
    store.recordUsage(id, { inputTokens: 10, outputTokens: 5, costUsd: 0.001 });
    const created = store.createSession({ source: "cli", title: "fresh", modelConfig: { a: "é" } });
    store.appendMessage(created.id, { role: "user", content: "hello" });
    const branch = store.branchSession(id);
    store.undoTurns(branch.id, 1);
    store.setTitle(sessionIds[2]!, "telegram chat");
    store.close();

    const db = rawDb(path, { readonly: true });
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
      expect(db.pragma("foreign_key_check")).toEqual([]);
      // A Python-style reader: explicit upstream columns, rows as dicts.
      const sessions = db.prepare(`SELECT ${PYTHON_SESSION_COLUMNS.join(", ")} FROM sessions`).all() as Array<
        Record<string, unknown>
      >;
      const messages = db
        .prepare(`SELECT ${PYTHON_MESSAGE_COLUMNS.join(", ")} FROM messages ORDER BY timestamp, id`)
        .all() as Array<Record<string, unknown>>;
      expect(sessions).toHaveLength(6);
      for (const s of sessions) {
        for (const col of ["id", "source", "started_at", "rewind_count", "archived"])
          expect(s[col]).not.toBeNull();
        for (const col of [
          "message_count",
          "tool_call_count",
          "input_tokens",
          "output_tokens",
          "api_call_count",
        ]) {
          expect(typeof s[col]).toBe("number");
        }
        if (s["model_config"] !== null) expect(() => JSON.parse(String(s["model_config"]))).not.toThrow();
      }
      const typed = db
        .prepare(
          "SELECT DISTINCT typeof(started_at) AS t FROM sessions UNION SELECT DISTINCT typeof(timestamp) FROM messages",
        )
        .all();
      expect(typed).toEqual([{ t: "real" }]);
      for (const m of messages) {
        for (const col of ["session_id", "role", "timestamp", "active", "compacted"])
          expect(m[col]).not.toBeNull();
        if (m["tool_calls"] !== null) expect(Array.isArray(JSON.parse(String(m["tool_calls"])))).toBe(true);
      }
      // Python's _decode_content: the "\x00json:" prefix, then json.loads.
      const parts = messages.find((m) => String(m["content"] ?? "").startsWith("\u0000json:"));
      expect(JSON.parse(String(parts?.["content"]).slice(6))).toEqual([
        { type: "text", text: "and now the lexer" },
      ]);
      // Counters agree with the rows as Python computes them.
      const drift = db
        .prepare(
          `SELECT id FROM sessions s WHERE message_count <> (SELECT COUNT(*) FROM messages WHERE session_id = s.id AND active = 1)`,
        )
        .all();
      expect(drift).toEqual([]);
      // The word and trigram indexes hold every row, as Python's triggers would have written them.
      const n = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
      expect(n("SELECT COUNT(*) AS n FROM messages_fts")).toBe(n("SELECT COUNT(*) AS n FROM messages"));
      expect(n("SELECT COUNT(*) AS n FROM messages_fts_trigram")).toBe(
        n("SELECT COUNT(*) AS n FROM messages"),
      );
      // Three rows mention the lexer, and the branch holds a copy of each.
      expect(n(`SELECT COUNT(*) AS n FROM messages_fts WHERE messages_fts MATCH 'lexer'`)).toBe(6);
    } finally {
      db.close();
    }
  });

  it("writes model_config as JSON text Python can load", () => {
    expect(pyJsonDumps({ a: "é", b: [1, null, true] })).toBe('{"a": "\\u00e9", "b": [1, null, true]}');
  });
});

/** The schema a v9-era Python Hermes wrote: fewer columns, external-content FTS, no trigram table. */
const V9_SQL = `
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (9);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT, system_prompt TEXT,
    parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
    message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0, title TEXT,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
    content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL,
    token_count INTEGER, finish_reason TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content=messages, content_rowid=id);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES('delete', old.id, old.content);
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
INSERT INTO sessions (id, source, started_at, message_count, title) VALUES ('old1', 'cli', 1700000000.5, 2, 'ancient');
INSERT INTO messages (session_id, role, content, timestamp) VALUES ('old1', 'user', 'how do I grep recursively', 1700000001.0);
INSERT INTO messages (session_id, role, content, timestamp) VALUES ('old1', 'assistant', 'use grep -r pattern dir', 1700000002.0);
`;

describe("files from other Hermes versions", () => {
  it("reads an older file read-only without changing it, adapting to the missing columns", () => {
    const path = join(dir(), "state.db");
    const db = rawDb(path);
    db.exec(V9_SQL);
    db.close();
    const bytes = readFileSync(path);
    const ro = track(openSqliteStore(path, { readonly: true }));
    expect(ro.listSessions().map((s) => [s.id, s.title, s.preview, s.archived])).toEqual([
      ["old1", "ancient", "how do I grep recursively", false],
    ]);
    expect(ro.conversation("old1")).toHaveLength(2);
    expect(ro.search({ query: "recursively" })).toHaveLength(1);
    expect(ro.stats()).toMatchObject({ schemaVersion: 9, trigram: false });
    expect(ro.check().problems.join("\n")).toMatch(/missing column sessions\.archived/);
    expect(() => ro.appendMessage("old1", { role: "user", content: "x" })).toThrow(/read-only/);
    ro.close();
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  it("reconciles an older file: adds columns, tables and the trigram index, keeps its version and data", () => {
    const path = join(dir(), "state.db");
    const db = rawDb(path);
    db.exec(V9_SQL);
    db.close();
    const store = track(openSqliteStore(path));
    const raw = rawDb(path, { readonly: true });
    const cols = (t: string) =>
      (raw.prepare(`PRAGMA table_info(${t})`).all() as Array<{ name: string }>).map((c) => c.name);
    expect(cols("sessions")).toEqual(
      expect.arrayContaining(["archived", "rewind_count", "api_call_count", "git_branch", "session_key"]),
    );
    expect(cols("messages")).toEqual(
      expect.arrayContaining(["active", "compacted", "reasoning", "platform_message_id"]),
    );
    const tables = (
      raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>
    ).map((t) => t.name);
    expect(tables).toEqual(
      expect.arrayContaining([
        "state_meta",
        "compression_locks",
        "telegram_dm_topic_bindings",
        "messages_fts_trigram",
      ]),
    );
    expect(raw.prepare("SELECT version FROM schema_version").all()).toEqual([{ version: 9 }]);
    expect(raw.prepare("SELECT active, compacted FROM messages").all()).toEqual([
      { active: 1, compacted: 0 },
      { active: 1, compacted: 0 },
    ]);
    raw.close();
    // The old external-content word index and the new trigram index both work, for old and new rows.
    expect(store.search({ query: "recursively" })).toHaveLength(1);
    expect(store.search({ query: "ecursiv" })).toHaveLength(1);
    store.appendMessage("old1", { role: "user", content: "and case-insensitively?" });
    expect(store.search({ query: "insensitively" })).toHaveLength(1);
    expect(store.getSession("old1")).toMatchObject({ messageCount: 3, archived: false, apiCallCount: 0 });
    expect(store.check()).toEqual({ integrity: true, problems: [], fixed: [] });
  });

  it("leaves a newer file's extra columns and tables alone and keeps writing to it", () => {
    const path = join(dir(), "state.db");
    createPythonStateDb(path, { sessions: [{ id: "s1", messages: [{ role: "user", content: "hi" }] }] });
    const db = rawDb(path);
    db.exec(`
      ALTER TABLE sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE messages ADD COLUMN display_kind TEXT;
      CREATE TABLE gateway_routing (scope TEXT NOT NULL DEFAULT '', session_key TEXT NOT NULL, PRIMARY KEY (scope, session_key));
      UPDATE schema_version SET version = 30;
    `);
    db.close();
    const store = track(openSqliteStore(path));
    const s = store.createSession({ source: "cli" });
    store.appendMessage(s.id, { role: "user", content: "written by TS" });
    store.appendMessage("s1", { role: "assistant", content: "hello again" });
    expect(store.conversation("s1").map((m) => m.content)).toEqual(["hi", "hello again"]);
    expect(store.stats().schemaVersion).toBe(30);
    store.close();
    const raw = rawDb(path, { readonly: true });
    expect(raw.prepare("SELECT id, pinned FROM sessions ORDER BY started_at").all()).toEqual([
      { id: "s1", pinned: 0 },
      { id: s.id, pinned: 0 },
    ]);
    expect(raw.prepare("SELECT COUNT(*) AS n FROM messages WHERE display_kind IS NULL").get()).toEqual({
      n: 3,
    });
    expect(raw.prepare("SELECT name FROM sqlite_master WHERE name = 'gateway_routing'").get()).toEqual({
      name: "gateway_routing",
    });
    raw.close();
  });
});
