import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/state/sqlite-store.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { createPythonStateDb } from "../support/python-state-db.js";

const llm = useFakeLlm();

type ChatBody = { messages: Array<{ role: string; content: string | null }> };
const body = (i: number) => llm.chatRequests[i]?.body as ChatBody;

function home(): { home: string; cwd: string } {
  const h = tempHome();
  writeFileSync(join(h.home, "config.yaml"), fakeProviderConfig(llm.url));
  return h;
}

describe("sessions are recorded and resumed from the CLI", () => {
  it("hermes -c continues the last session with the same system prompt bytes, from another directory", async () => {
    const h = home();
    llm.enqueue(reply().text("Noted: the code word is heron."));
    const first = await runHermes(["-q", "Remember the code word heron"], h);
    expect(first.code).toBe(0);

    const elsewhere = join(h.cwd, "..", "elsewhere");
    mkdirSync(elsewhere);
    llm.enqueue(reply().text("It was heron."));
    const second = await runHermes(["-c", "-q", "What was the code word?"], { ...h, cwd: elsewhere });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("It was heron.");
    expect(second.stderr).toMatch(/Resumed .*2 messages/);

    const [a, b] = [body(0), body(1)];
    expect(a.messages[0]?.role).toBe("system");
    // Byte-identical even though the working directory (part of the prompt) changed.
    expect(b.messages[0]?.content).toBe(a.messages[0]?.content);
    expect(b.messages.slice(1).map((m) => m.content)).toEqual([
      "Remember the code word heron",
      "Noted: the code word is heron.",
      "What was the code word?",
    ]);

    const store = openSqliteStore(join(h.home, "state.db"), { readonly: true });
    try {
      const sessions = store.listSessions();
      expect(sessions).toHaveLength(1);
      expect(sessions[0]?.messageCount).toBe(4);
      // The fake server reports no token usage; model calls are still counted.
      expect(sessions[0]?.apiCallCount).toBe(2);
      expect(sessions[0]?.source).toBe("cli");
    } finally {
      store.close();
    }
  });

  it("hermes -r resumes by id and rejects an unknown one with exit 1", async () => {
    const h = home();
    llm.enqueue(reply().text("first answer"));
    expect((await runHermes(["-q", "first question"], h)).code).toBe(0);
    const store = openSqliteStore(join(h.home, "state.db"));
    const id = store.listSessions()[0]?.id ?? "";
    store.close();

    llm.enqueue(reply().text("second answer"));
    const resumed = await runHermes(["-r", id, "-q", "second question"], h);
    expect(resumed.code).toBe(0);
    expect(body(1).messages.map((m) => m.content)).toContain("first answer");

    const missing = await runHermes(["-r", "no-such-session", "-q", "x"], h);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no-such-session/);
    expect(llm.chatRequests).toHaveLength(2);
  });

  it("resumes a session from a state.db written by Python Hermes and keeps its columns valid", async () => {
    const h = home();
    const dbPath = join(h.home, "state.db");
    const { sessionIds } = createPythonStateDb(dbPath);
    const id = sessionIds[0] ?? "";
    const raw = new Database(dbPath, { readonly: true });
    const saved = raw.prepare("SELECT system_prompt FROM sessions WHERE id = ?").get(id) as {
      system_prompt: string | null;
    };
    const before = raw.prepare("SELECT count(*) AS n FROM messages WHERE session_id = ?").get(id) as {
      n: number;
    };
    raw.close();

    llm.enqueue(reply().text("Picking up where we left off."));
    const result = await runHermes(["-r", id, "-q", "Where were we?"], h);
    expect(result.code).toBe(0);
    if (saved.system_prompt !== null) expect(body(0).messages[0]?.content).toBe(saved.system_prompt);
    expect(body(0).messages.length).toBeGreaterThan(2);

    const check = new Database(dbPath, { readonly: true });
    try {
      expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
      const rows = check
        .prepare("SELECT role, content, timestamp, active FROM messages WHERE session_id = ? ORDER BY id")
        .all(id) as Array<{ role: string; content: string; timestamp: number; active: number }>;
      expect(rows.length).toBe(before.n + 2);
      expect(rows.at(-1)).toMatchObject({
        role: "assistant",
        content: "Picking up where we left off.",
        active: 1,
      });
      expect(typeof rows.at(-1)?.timestamp).toBe("number");
      const session = check.prepare("SELECT message_count, source FROM sessions WHERE id = ?").get(id) as {
        message_count: number;
        source: string;
      };
      expect(session.message_count).toBe(before.n + 2);
    } finally {
      check.close();
    }
  });

  it("a corrupt state.db is moved aside, never overwritten, and the conversation is recorded in a new one", async () => {
    const h = home();
    const dbPath = join(h.home, "state.db");
    const junk = Buffer.from("this is not a database\n".repeat(200));
    writeFileSync(dbPath, junk);
    llm.enqueue(reply().text("still here"));
    const result = await runHermes(["-q", "hello"], h);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("still here");
    expect(result.stderr).toMatch(/not a SQLite database\). It was moved aside to .*state\.db\.corrupt-/);
    const moved = readdirSync(h.home).filter((f) => f.startsWith("state.db.corrupt-"));
    expect(moved).toHaveLength(1);
    expect(readFileSync(join(h.home, moved[0]!)).equals(junk)).toBe(true);

    llm.enqueue(reply().text("continued"));
    const resumed = await runHermes(["-c", "-q", "again"], h);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain("continued");
    const sent = (llm.chatRequests.at(-1)!.body as { messages: Array<{ content: unknown }> }).messages;
    expect(sent.map((m) => m.content)).toContain("hello");
  });
});
