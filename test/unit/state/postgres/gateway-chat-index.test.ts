/**
 * The chat → session index: the same cases against `sessions/sessions.json` and PostgreSQL, then
 * what only a shared database gives (several instances see one index; a restart mark is taken
 * once), and hostile keys.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type ChatSessionIndex,
  chatSessionIndex,
  type IndexedSource,
  SessionIndex,
} from "../../../../src/state/gateway/session-index.js";
import { keyDigest } from "../../../../src/state/postgres/gateway-common.js";
import { PgStoreInputError, pgChatSessionIndex } from "../../../../src/state/postgres/gateway-stores.js";
import { BACKENDS, type Storage, useStorages } from "./gateway-harness.js";

const storage = useStorages();
const source: IndexedSource = {
  platform: "telegram",
  chatType: "dm",
  chatId: "100",
  userId: "7",
  userName: "alice",
};
const T1 = new Date("2026-11-27T01:00:00.000Z");
const T2 = new Date("2026-11-27T02:00:00.000Z");
const KEY = "agent:main:telegram:dm:100";

async function open(s: Storage): Promise<ChatSessionIndex> {
  return s.kind === "file" ? chatSessionIndex(new SessionIndex(s.home)) : pgChatSessionIndex(await s.pool());
}

/** Writes an entry as another program would (a key this code does not know included). */
async function seed(s: Storage, key: string, entry: Record<string, unknown>): Promise<void> {
  if (s.kind === "file") {
    mkdirSync(join(s.home, "sessions"), { recursive: true });
    writeFileSync(join(s.home, "sessions", "sessions.json"), JSON.stringify({ [key]: entry }));
    return;
  }
  const db = await s.pool();
  await db.query(
    "INSERT INTO gateway_chat_index (key_digest, session_key, session_id, entry) VALUES ($1, $2, $3, $4)",
    [keyDigest(key), key, entry["session_id"], JSON.stringify(entry)],
  );
}

describe.each(BACKENDS)("chat session index (%s)", (kind) => {
  it("points a chat at a session, with Hermes's entry shape", async () => {
    const index = await open(await storage(kind));
    expect(await index.get(KEY)).toBeUndefined();
    const entry = await index.set(KEY, "s1", { ...source, scopeId: "guild9" }, T1);
    expect(entry).toEqual({
      session_key: KEY,
      session_id: "s1",
      created_at: T1.toISOString(),
      updated_at: T1.toISOString(),
      display_name: "alice",
      platform: "telegram",
      chat_type: "dm",
      origin: {
        platform: "telegram",
        chat_id: "100",
        chat_name: null,
        chat_type: "dm",
        user_id: "7",
        user_name: "alice",
        thread_id: null,
        chat_topic: null,
        scope_id: "guild9",
        guild_id: "guild9",
      },
    });
    expect(await index.get(KEY)).toEqual(entry);
  });

  it("keeps the creation time while the session stays, and renews it for a new session", async () => {
    const index = await open(await storage(kind));
    await index.set(KEY, "s1", source, T1);
    const same = await index.set(KEY, "s1", source, T2);
    expect([same.created_at, same.updated_at]).toEqual([T1.toISOString(), T2.toISOString()]);
    const other = await index.set(KEY, "s2", source, T2);
    expect([other.session_id, other.created_at]).toEqual(["s2", T2.toISOString()]);
  });

  it("touches and marks only existing chats; a restart mark is taken once", async () => {
    const index = await open(await storage(kind));
    await index.touch("nobody", T2);
    await index.markInterrupted("nobody", "restart_interrupted", T2);
    expect(await index.get("nobody")).toBeUndefined();
    expect(await index.takeInterrupted("nobody")).toBeUndefined();
    await index.set(KEY, "s1", source, T1);
    await index.touch(KEY, T2);
    expect((await index.get(KEY))?.updated_at).toBe(T2.toISOString());
    expect(await index.takeInterrupted(KEY)).toBeUndefined();
    await index.markInterrupted(KEY, "restart_interrupted", T2);
    expect(await index.get(KEY)).toMatchObject({
      resume_pending: true,
      resume_reason: "restart_interrupted",
    });
    expect(await index.takeInterrupted(KEY)).toEqual({ reason: "restart_interrupted", at: T2 });
    expect(await index.takeInterrupted(KEY)).toBeUndefined();
    const after = await index.get(KEY);
    expect(after).not.toHaveProperty("resume_pending");
    expect(after).not.toHaveProperty("resume_marked_at");
  });

  it("keeps keys another program wrote into an entry, and a new instance sees what was saved", async () => {
    const s = await storage(kind);
    await seed(s, KEY, {
      session_key: KEY,
      session_id: "py1",
      created_at: T1.toISOString(),
      suspended: true,
    });
    const index = await open(s);
    const entry = await index.set(KEY, "py1", source, T2);
    expect(entry).toMatchObject({
      suspended: true,
      created_at: T1.toISOString(),
      updated_at: T2.toISOString(),
    });
    expect(await (await open(s)).get(KEY)).toEqual(entry);
  });

  it("takes hostile keys as plain keys: object names, 100 kB, quotes and markup", async () => {
    const index = await open(await storage(kind));
    for (const key of ["constructor", "__proto__", "toString"]) {
      expect(await index.get(key)).toBeUndefined();
      await index.touch(key, T2);
      expect(await index.takeInterrupted(key)).toBeUndefined();
    }
    const keys = ["__proto__", "k".repeat(100_000), `'; DROP TABLE gateway_chat_index; --`, '<b>"x"</b> 🚀'];
    for (const [i, key] of keys.entries()) await index.set(key, `s${i}`, source, T1);
    for (const [i, key] of keys.entries()) expect((await index.get(key))?.session_id).toBe(`s${i}`);
    expect(await index.get("constructor")).toBeUndefined();
  });
});

describe.skipIf(!BACKENDS.includes("postgres"))("chat session index shared by instances (postgres)", () => {
  it("one instance sees another's changes, and a restart mark is taken by exactly one", async () => {
    const s = await storage("postgres");
    const [a, b] = [await open(s), await open(s)];
    await a.set(KEY, "s1", source, T1);
    expect((await b.get(KEY))?.session_id).toBe("s1");
    await b.markInterrupted(KEY, "restart_interrupted", T2);
    const taken = await Promise.all([a.takeInterrupted(KEY), b.takeInterrupted(KEY), a.takeInterrupted(KEY)]);
    expect(taken.filter(Boolean)).toEqual([{ reason: "restart_interrupted", at: T2 }]);
  });

  it("two instances creating one chat's entry at once both succeed, and one entry remains", async () => {
    const s = await storage("postgres");
    const [a, b] = [await open(s), await open(s)];
    const made = await Promise.all([a.set(KEY, "sa", source, T1), b.set(KEY, "sb", source, T1)]);
    const final = await a.get(KEY);
    expect(made.map((e) => e.session_id).sort()).toEqual(["sa", "sb"]);
    expect(["sa", "sb"]).toContain(final?.session_id);
    const db = await s.pool();
    expect(await db.query("SELECT count(*)::int AS n FROM gateway_chat_index")).toEqual([{ n: 1 }]);
  });

  it("refuses a NUL in a key or session id with a clear error, storing nothing", async () => {
    const s = await storage("postgres");
    const index = await open(s);
    await expect(index.set("a\u0000b", "s1", source, T1)).rejects.toThrow(PgStoreInputError);
    await expect(index.set(KEY, "s\u00001", source, T1)).rejects.toThrow(/session id contains a NUL/);
    expect(await index.get("a\u0000b")).toBeUndefined();
    expect(await index.get(KEY)).toBeUndefined();
    // A NUL inside the entry's values is escaped in its JSON and comes back whole.
    const entry = await index.set(KEY, "s1", { ...source, chatName: "a\u0000b" }, T1);
    expect((await index.get(KEY))?.display_name).toBe(entry.display_name);
  });

  it("counts a damaged row as absent and replaces it on the next set", async () => {
    const s = await storage("postgres");
    const index = await open(s);
    await index.set(KEY, "s1", source, T1);
    const db = await s.pool();
    for (const damage of ["not json", "[1,2]", '{"no_session_id": true}']) {
      await db.query("UPDATE gateway_chat_index SET entry = $1", [damage]);
      expect(await index.get(KEY)).toBeUndefined();
      expect(await index.takeInterrupted(KEY)).toBeUndefined();
      await index.touch(KEY, T2);
      const entry = await index.set(KEY, "s2", source, T2);
      expect(await index.get(KEY)).toEqual(entry);
    }
  });
});
