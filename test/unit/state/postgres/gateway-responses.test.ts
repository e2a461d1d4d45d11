/**
 * The API server's Responses store: the same cases against `response_store.db` (SQLite) and
 * PostgreSQL (round trip, LRU capacity, named conversations, another instance reading what one
 * wrote), and hostile ids and names.
 */
import { afterEach, describe, expect, it } from "vitest";
import { ResponseStore, responseRecords } from "../../../../src/gateway/api-server/response-store.js";
import type { ResponseRecords, StoredResponse } from "../../../../src/state/gateway/response-records.js";
import { PgStoreInputError, pgResponseRecords } from "../../../../src/state/postgres/gateway-stores.js";
import { BACKENDS, type Storage, useStorages } from "./gateway-harness.js";

const storage = useStorages();
const opened: ResponseRecords[] = [];
afterEach(async () => {
  for (const records of opened.splice(0)) await records.close().catch(() => undefined);
});

async function open(s: Storage, capacity = 100): Promise<ResponseRecords> {
  const records =
    s.kind === "file"
      ? responseRecords(new ResponseStore(s.home, capacity))
      : pgResponseRecords(await s.pool(), { capacity });
  opened.push(records);
  return records;
}

const entry = (n: number, extra: Partial<StoredResponse> = {}): StoredResponse => ({
  sessionId: `session-${n}`,
  response: {
    id: `resp_${n}`,
    object: "response",
    output: [{ type: "message", content: [{ text: `answer ${n}` }] }],
  },
  conversationHistory: [
    { role: "user", content: `question ${n}` },
    { role: "assistant", content: `answer ${n}` },
  ],
  instructions: n % 2 ? "Be brief." : null,
  ...extra,
});

async function present(r: ResponseRecords, ids: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const id of ids) if (await r.get(id)) found.push(id);
  return found;
}

describe.each(BACKENDS)("Responses records (%s)", (kind) => {
  it("stores, replaces, reads and deletes responses", async () => {
    const r = await open(await storage(kind));
    expect(r.capacity).toBe(100);
    expect(await r.get("resp_1")).toBeUndefined();
    await r.put("resp_1", entry(1));
    await r.put("resp_2", entry(2));
    expect(await r.get("resp_1")).toEqual(entry(1));
    expect(await r.get("resp_2")).toEqual(entry(2));
    await r.put("resp_1", entry(3));
    expect(await r.get("resp_1")).toEqual(entry(3));
    expect(await r.delete("resp_1")).toBe(true);
    expect(await r.delete("resp_1")).toBe(false);
    expect(await r.get("resp_1")).toBeUndefined();
    await r.close();
  });

  it("evicts the least recently read or written past the capacity", async () => {
    const r = await open(await storage(kind), 3);
    for (const n of [1, 2, 3]) await r.put(`r${n}`, entry(n));
    await r.get("r1");
    await r.put("r4", entry(4));
    expect(await present(r, ["r1", "r2", "r3", "r4"])).toEqual(["r1", "r3", "r4"]);
    await r.put("r3", entry(33));
    await r.put("r5", entry(5));
    expect(await present(r, ["r1", "r3", "r4", "r5"])).toEqual(["r3", "r4", "r5"]);
  });

  it("names conversations: a new name is unknown, a later response moves the name on", async () => {
    const r = await open(await storage(kind));
    expect(await r.conversation("project-x")).toBeUndefined();
    await r.setConversation("project-x", "resp_1");
    await r.setConversation("project-x", "resp_2");
    await r.setConversation("project-y", "resp_9");
    expect(await r.conversation("project-x")).toBe("resp_2");
    expect(await r.conversation("project-y")).toBe("resp_9");
  });

  it("a response written through one instance is read and continued through another", async () => {
    const s = await storage(kind);
    const [a, b] = [await open(s), await open(s)];
    await a.put("resp_a", entry(1));
    await a.setConversation("chat", "resp_a");
    expect(await b.get((await b.conversation("chat")) ?? "")).toEqual(entry(1));
    await b.put("resp_b", entry(2));
    await b.setConversation("chat", "resp_b");
    expect(await a.conversation("chat")).toBe("resp_b");
  });

  it("keeps the capacity when two instances write at once", async () => {
    const s = await storage(kind);
    const [a, b] = [await open(s, 5), await open(s, 5)];
    const ids = Array.from({ length: 20 }, (_, i) => `c${i}`);
    await Promise.all(ids.map((id, i) => (i % 2 ? a : b).put(id, entry(i))));
    expect(await present(a, ids)).toHaveLength(5);
  });

  it("takes hostile ids and names as plain keys, and big entries whole", async () => {
    const r = await open(await storage(kind));
    for (const id of ["", "'; DROP TABLE gateway_responses; --", "x".repeat(100_000), "a\u0000b"]) {
      expect(await r.get(id)).toBeUndefined();
      expect(await r.conversation(id)).toBeUndefined();
    }
    const name = `${"n".repeat(100_000)}🚀'"`;
    await r.setConversation(name, "resp_long");
    expect(await r.conversation(name)).toBe("resp_long");
    const big = entry(1, {
      conversationHistory: [{ role: "user", content: `${"q".repeat(2_000_000)}\u0000` }],
      instructions: "NUL \u0000 inside",
    });
    await r.put("x".repeat(5_000), big);
    expect(await r.get("x".repeat(5_000))).toEqual(big);
  });
});

describe.skipIf(!BACKENDS.includes("postgres"))("Responses records in PostgreSQL only", () => {
  it("refuses NUL in ids and names, counts a damaged row as absent, and leaves the pool open on close", async () => {
    const s = await storage("postgres");
    const db = await s.pool();
    const r = pgResponseRecords(db, { capacity: 10 });
    await expect(r.put("a\u0000b", entry(1))).rejects.toThrow(PgStoreInputError);
    await expect(r.setConversation("a\u0000b", "resp_1")).rejects.toThrow(/conversation name contains a NUL/);
    await r.put("resp_1", entry(1));
    await db.query("UPDATE gateway_responses SET data = 'not json'");
    expect(await r.get("resp_1")).toBeUndefined();
    await r.close();
    expect(await db.query("SELECT 1 AS one")).toEqual([{ one: 1 }]);
    expect(() => pgResponseRecords(db, { capacity: 0 })).toThrow(RangeError);
  });
});
