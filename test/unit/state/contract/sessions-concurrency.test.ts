import { expect, it } from "vitest";
import { type SessionStore, SessionStoreError } from "../../../../src/state/types.js";
import { contract } from "./backends.js";

function codes(results: PromiseSettledResult<unknown>[]): string[] {
  return results
    .map((r) => {
      if (r.status === "fulfilled") return "ok";
      if (r.reason instanceof SessionStoreError) return r.reason.code;
      throw r.reason;
    })
    .sort();
}

contract("session store contract: two instances at once", (h) => {
  it("two instances appending to one session: every message kept, each instance's in its order", async () => {
    const { store } = h();
    const other = await h().second();
    const s = await store.createSession({ source: "api-server" });
    const turn = async (st: SessionStore, tag: string) => {
      for (let i = 0; i < 25; i++) {
        await st.appendMessage(
          s.id,
          { role: i % 2 ? "assistant" : "user", content: `${tag}${i}` },
          { usage: { inputTokens: 1, outputTokens: 0, costUsd: 0.5 } },
        );
      }
    };
    await Promise.all([turn(store, "a"), turn(other, "b")]);
    const messages = await other.getMessages(s.id);
    expect(messages).toHaveLength(50);
    const ids = messages.map((m) => m.id);
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    for (let i = 1; i < messages.length; i++)
      expect(messages[i]!.timestamp).toBeGreaterThanOrEqual(messages[i - 1]!.timestamp);
    const texts = messages.map((m) => String(m.content));
    expect(texts.filter((t) => t.startsWith("a"))).toEqual(Array.from({ length: 25 }, (_, i) => `a${i}`));
    expect(texts.filter((t) => t.startsWith("b"))).toEqual(Array.from({ length: 25 }, (_, i) => `b${i}`));
    expect(await store.getSession(s.id)).toMatchObject({
      messageCount: 50,
      inputTokens: 50,
      apiCallCount: 50,
      estimatedCostUsd: 25,
    });
    expect((await store.check()).problems).toEqual([]);
  });

  it("bursts of writes from both instances without awaiting each other stay counted", async () => {
    const { store } = h();
    const other = await h().second();
    const s = await store.createSession({ source: "cli" });
    const calls = Array.from({ length: 40 }, (_, i) =>
      (i % 2 ? store : other).appendMessages(s.id, [
        { role: "user", content: `q${i}` },
        { role: "assistant", content: `a${i}` },
      ]),
    );
    const ids = (await Promise.all(calls)).flat();
    expect(new Set(ids).size).toBe(80);
    expect((await store.getSession(s.id))?.messageCount).toBe(80);
    const stored = await store.getMessages(s.id);
    // Each call's pair stays together, question before answer.
    for (let i = 0; i < stored.length; i += 2) {
      expect(String(stored[i + 1]!.content)).toBe(String(stored[i]!.content).replace("q", "a"));
    }
  });

  it("creating sessions at once: distinct ids, one winner per title, one winner per id", async () => {
    const { store } = h();
    const other = await h().second();
    const plain = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? store : other).createSession({ source: "cli" })),
    );
    expect(new Set(plain.map((s) => s.id)).size).toBe(20);
    const titled = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? store : other).createSession({ source: "cli", title: "race" }),
      ),
    );
    expect(codes(titled)).toEqual([
      "ok",
      "title_taken",
      "title_taken",
      "title_taken",
      "title_taken",
      "title_taken",
    ]);
    const sameId = await Promise.allSettled(
      Array.from({ length: 4 }, (_, i) =>
        (i % 2 ? store : other).createSession({ id: "one-id", source: "cli" }),
      ),
    );
    expect(codes(sameId)).toEqual(["invalid", "invalid", "invalid", "ok"]);
    const started = await Promise.allSettled(
      Array.from({ length: 4 }, (_, i) =>
        (i % 2 ? store : other).startSession(
          { source: "cli", title: "first words" },
          { role: "user", content: `hi ${i}` },
        ),
      ),
    );
    expect(codes(started)).toEqual(["ok", "title_taken", "title_taken", "title_taken"]);
    expect((await store.stats()).sessions).toBe(23);
    expect((await store.resolveSession("first words")).messageCount).toBe(1);
  });

  it("setting titles at once: one session ends up with it, the rest are told it is taken", async () => {
    const { store } = h();
    const other = await h().second();
    const sessions = await Promise.all(
      Array.from({ length: 6 }, () => store.createSession({ source: "cli" })),
    );
    const results = await Promise.allSettled(
      sessions.map((s, i) => (i % 2 ? store : other).setTitle(s.id, "shared name")),
    );
    expect(codes(results)).toEqual([
      "ok",
      "title_taken",
      "title_taken",
      "title_taken",
      "title_taken",
      "title_taken",
    ]);
    const holders = (await store.listSessions({ limit: 10 })).filter((s) => s.title === "shared name");
    expect(holders).toHaveLength(1);
    const loser = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(String(loser.reason.message)).toContain(holders[0]!.id);
  });

  it("branching one titled session from both instances numbers the lineage without a collision", async () => {
    const { store } = h();
    const other = await h().second();
    const s = await store.createSession({ source: "cli", title: "idea" });
    await store.appendMessage(s.id, { role: "user", content: "seed" });
    const branches = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? store : other).branchSession(s.id)),
    );
    expect(branches.map((b) => b.title).sort()).toEqual([
      "idea #2",
      "idea #3",
      "idea #4",
      "idea #5",
      "idea #6",
      "idea #7",
    ]);
    expect(await store.nextLineageTitle("idea")).toBe("idea #8");
  });

  it("a session deleted by one instance while the other writes to it leaves nothing behind", async () => {
    const { store } = h();
    const other = await h().second();
    const s = await store.createSession({ source: "cli" });
    const writes = Array.from({ length: 20 }, (_, i) =>
      other.appendMessage(s.id, { role: "user", content: `w${i}` }),
    );
    const deleted = store.deleteSession(s.id);
    const settled = await Promise.allSettled([...writes, deleted]);
    expect(codes(settled).filter((c) => c !== "ok" && c !== "not_found")).toEqual([]);
    expect(await store.getSession(s.id)).toBeNull();
    expect((await store.stats()).messages).toBe(0);
    expect((await store.check()).problems).toEqual([]);
  });
});
