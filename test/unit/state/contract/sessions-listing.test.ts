import { expect, it } from "vitest";
import { type ExportedSession, SessionStoreError } from "../../../../src/state/types.js";
import { contract } from "./backends.js";

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (error) {
    if (error instanceof SessionStoreError) return error.code;
    throw error;
  }
  return "resolved";
}

contract("session store contract: listings, delete, export and health", (h) => {
  it("lists newest first with previews and every filter", async () => {
    const { store, clock } = h();
    const a = await store.createSession({ source: "cli", model: "m1" });
    await store.appendMessages(a.id, [
      { role: "system", content: "sys" },
      { role: "user", content: "  the   first\nquestion " + "x".repeat(100) },
    ]);
    clock.tick(10);
    const b = await store.createSession({ source: "telegram", model: "m2", parentSessionId: a.id });
    clock.tick(10);
    const c = await store.createSession({ source: "subagent", model: "m1" });
    clock.tick(10);
    const d = await store.createSession({ source: "cli" });
    await store.updateSession(d.id, { archived: true });
    const ids = async (f: Parameters<typeof store.listSessions>[0]) =>
      (await store.listSessions(f)).map((s) => s.id);
    expect(await ids({})).toEqual([c.id, b.id, a.id]);
    expect(await ids({ includeArchived: true })).toEqual([d.id, c.id, b.id, a.id]);
    expect(await ids({ source: "cli", includeArchived: true })).toEqual([d.id, a.id]);
    expect(await ids({ excludeSources: ["subagent", "telegram"] })).toEqual([a.id]);
    expect(await ids({ parentSessionId: a.id })).toEqual([b.id]);
    expect(await ids({ model: "m1" })).toEqual([c.id, a.id]);
    expect(await ids({ startedAfter: a.startedAt + 10 })).toEqual([c.id, b.id]);
    expect(await ids({ startedBefore: a.startedAt + 10 })).toEqual([a.id]);
    expect(await ids({ limit: 1, offset: 1 })).toEqual([b.id]);
    expect(await ids({ limit: 0 })).toEqual([]);
    const [first] = await store.listSessions({ source: "cli" });
    expect(first!.preview).toBe(`the first question ${"x".repeat(60)}…`);
    expect(first!.preview.length).toBe(80);
    expect(first!.lastActiveAt).toBe(a.startedAt);
    const [empty] = await store.listSessions({ source: "telegram" });
    expect(empty).toMatchObject({ preview: "", lastActiveAt: b.startedAt });
  });

  it("browses the most recently active sessions with something in them", async () => {
    const { store, clock } = h();
    const a = await store.createSession({ source: "cli" });
    clock.tick();
    const b = await store.createSession({ source: "cli" });
    clock.tick();
    await store.createSession({ source: "cli" }); // empty: never listed
    const archived = await store.createSession({ source: "cli" });
    await store.appendMessage(archived.id, { role: "user", content: "hidden" });
    await store.updateSession(archived.id, { archived: true });
    clock.tick();
    await store.appendMessage(b.id, { role: "user", content: "b talks" });
    clock.tick();
    await store.appendMessage(a.id, { role: "user", content: [{ type: "text", text: "a talks" }] });
    const recent = await store.recent();
    expect(recent.map((s) => [s.id, s.preview, s.lastActiveAt])).toEqual([
      [a.id, "a talks", clock.t],
      [b.id, "b talks", clock.t - 1],
    ]);
    expect((await store.recent(1)).map((s) => s.id)).toEqual([a.id]);
    expect((await store.recent(10, a.id)).map((s) => s.id)).toEqual([b.id]);
  });

  it("deletes a session with its messages; children live on without a parent", async () => {
    const { store } = h();
    const parent = await store.createSession({ source: "cli", title: "p" });
    await store.appendMessages(parent.id, [
      { role: "user", content: "1" },
      { role: "assistant", content: "2" },
    ]);
    const child = await store.branchSession(parent.id);
    expect(await store.deleteSession(parent.id)).toEqual({ messages: 2 });
    expect(await store.getSession(parent.id)).toBeNull();
    expect(await store.getSession(child.id)).toMatchObject({ parentSessionId: null, messageCount: 2 });
    expect(await code(store.deleteSession(parent.id))).toBe("not_found");
    const again = await store.createSession({ source: "cli", title: "p" });
    expect(again.title).toBe("p");
  });

  it("exports every session one at a time, in start order, with inactive messages", async () => {
    const { store, clock } = h();
    const a = await store.createSession({ source: "cli" });
    await store.appendMessages(a.id, [
      { role: "user", content: "u" },
      { role: "assistant", content: "v" },
    ]);
    await store.undoTurns(a.id, 1);
    const same = await store.createSession({ source: "telegram" }); // same second as a
    clock.tick();
    const b = await store.createSession({ source: "cli" });
    const all: ExportedSession[] = [];
    for await (const e of store.exportSessions()) all.push(e);
    expect(all.map((e) => e.session.id)).toEqual([a.id, same.id, b.id]);
    expect(all[0]!.messages.map((m) => [m.content, m.active])).toEqual([
      ["u", false],
      ["v", false],
    ]);
    const cli: string[] = [];
    for await (const e of store.exportSessions({ source: "cli" })) cli.push(e.session.id);
    expect(cli).toEqual([a.id, b.id]);
    const one: string[] = [];
    for await (const e of store.exportSessions({ sessionId: b.id })) one.push(e.session.id);
    expect(one).toEqual([b.id]);
    const iterate = async () => {
      for await (const _ of store.exportSessions({ sessionId: "ghost" })) void _;
    };
    expect(await code(iterate())).toBe("not_found");
  });

  it("counts sessions and messages by source", async () => {
    const { store, clock } = h();
    const empty = await store.stats();
    expect(empty).toMatchObject({
      sessions: 0,
      messages: 0,
      bySource: {},
      oldestStartedAt: null,
      newestStartedAt: null,
    });
    const a = await store.createSession({ source: "cli" });
    await store.appendMessages(a.id, [
      { role: "user", content: "1" },
      { role: "assistant", content: "2" },
    ]);
    clock.tick(60);
    await store.createSession({ source: "discord" });
    const stats = await store.stats();
    expect(stats).toMatchObject({
      sessions: 2,
      messages: 2,
      bySource: { cli: 1, discord: 1 },
      oldestStartedAt: a.startedAt,
      newestStartedAt: a.startedAt + 60,
    });
    expect(stats.bytes).toBeGreaterThan(0);
    expect(stats.schemaVersion).toBeGreaterThan(0);
  });

  it("checks counters against the messages and repairs them in place", async () => {
    const { store, raw } = h();
    const s = await store.createSession({ id: "drift", source: "cli" });
    await store.appendMessages(s.id, [
      { role: "user", content: "1" },
      {
        role: "assistant",
        content: "2",
        tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }],
      },
    ]);
    const healthy = await store.check();
    expect(healthy).toEqual({ integrity: true, problems: [], fixed: [] });
    await raw("UPDATE sessions SET message_count = 40, tool_call_count = 9 WHERE id = 'drift'");
    const sick = await store.check();
    expect(sick.integrity).toBe(true);
    expect(sick.problems.join("\n")).toContain(
      "drift: message_count 40, counted 2; tool_call_count 9, counted 1",
    );
    const repaired = await store.repair();
    expect(repaired.fixed).toContain("recomputed counters of 1 session");
    expect(repaired.problems).toEqual([]);
    expect(await store.getSession("drift")).toMatchObject({ messageCount: 2, toolCallCount: 1 });
    const optimized = await store.optimize();
    expect(optimized.bytesBefore).toBeGreaterThan(0);
    expect(optimized.bytesAfter).toBeGreaterThan(0);
    expect(await store.getMessages("drift")).toHaveLength(2);
  });

  it("prunes ended sessions older than the cutoff, once per interval", async () => {
    const { store, clock } = h();
    const old = await store.createSession({ source: "cli" });
    await store.appendMessage(old.id, { role: "user", content: "old" });
    await store.endSession(old.id, "done");
    const open = await store.createSession({ source: "cli" });
    const child = await store.createSession({ source: "cli", parentSessionId: old.id });
    clock.tick(40 * 86_400);
    expect((await store.prunable({ olderThanDays: 30 })).map((s) => s.id)).toEqual([old.id]);
    expect(await store.prunable({ olderThanDays: 30, source: "telegram" })).toEqual([]);
    expect(await code(store.prunable({ olderThanDays: -1 }))).toBe("invalid");
    expect(await store.autoPrune({ retentionDays: 30, minIntervalHours: 24, vacuum: false })).toEqual({
      skipped: false,
      sessions: 1,
      vacuumed: false,
    });
    expect(await store.autoPrune({ retentionDays: 30, minIntervalHours: 24, vacuum: false })).toMatchObject({
      skipped: true,
    });
    expect(await store.getSession(old.id)).toBeNull();
    expect(await store.getSession(open.id)).not.toBeNull();
    expect((await store.getSession(child.id))?.parentSessionId).toBeNull();
    expect(await store.prune({ olderThanDays: 30 })).toEqual({ sessions: 0, messages: 0 });
  });

  it("rejects every call once closed", async () => {
    const { store } = h();
    await store.close();
    expect(await code(store.createSession({ source: "cli" }))).toBe("invalid");
    expect(await code(store.listSessions())).toBe("invalid");
  });

  it("searches through the backend's search with the contract's filters", async () => {
    const { store, clock } = h();
    const a = await store.createSession({ source: "cli", title: "ferns" });
    await store.appendMessages(a.id, [
      { role: "user", content: "tell me about ferns and mosses" },
      { role: "assistant", content: "Ferns reproduce by spores" },
    ]);
    clock.tick();
    const b = await store.createSession({ source: "telegram" });
    await store.appendMessage(b.id, { role: "user", content: "ferns on my balcony" });
    const hits = await store.search({ query: "ferns" });
    expect(new Set(hits.map((x) => x.sessionId))).toEqual(new Set([a.id, b.id]));
    expect(hits.every((x) => x.snippet.includes(">>>") && x.snippet.includes("<<<"))).toBe(true);
    expect(hits.find((x) => x.sessionId === a.id)?.sessionTitle).toBe("ferns");
    expect((await store.search({ query: "ferns", source: "telegram" })).map((x) => x.sessionId)).toEqual([
      b.id,
    ]);
    expect(
      new Set((await store.search({ query: "ferns", excludeSessionId: b.id })).map((x) => x.sessionId)),
    ).toEqual(new Set([a.id]));
    expect((await store.search({ query: "ferns", roles: ["assistant"] })).map((x) => x.role)).toEqual([
      "assistant",
    ]);
    expect(await store.search({ query: "   " })).toEqual([]);
    expect(await store.search({ query: "cacti" })).toEqual([]);
  });
});
