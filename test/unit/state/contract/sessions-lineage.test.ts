import { expect, it } from "vitest";
import { SessionStoreError } from "../../../../src/state/types.js";
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

contract("session store contract: sessions, titles and lineage", (h) => {
  it("creates sessions with Python-format ids and every field it was given", async () => {
    const { store, clock } = h();
    const s = await store.createSession({
      source: "cli",
      model: "m1",
      modelConfig: { temperature: 0.2 },
      systemPrompt: "be brief",
      cwd: "/w",
      gitBranch: "main",
      userId: "u1",
      title: "  first\u200b   talk ",
    });
    expect(s.id).toMatch(/^\d{8}_\d{6}_[0-9a-f]{6}$/);
    expect(s).toMatchObject({
      source: "cli",
      model: "m1",
      modelConfig: '{"temperature":0.2}',
      systemPrompt: "be brief",
      cwd: "/w",
      gitBranch: "main",
      userId: "u1",
      title: "first talk",
      startedAt: clock.t,
      endedAt: null,
      messageCount: 0,
      archived: false,
    });
    expect(await store.getSession(s.id)).toEqual(s);
    expect(await store.getSession("nope")).toBeNull();
  });

  it("refuses a missing source, a taken id, an unknown parent and a too long title, writing nothing", async () => {
    const { store } = h();
    expect(await code(store.createSession({ source: "" }))).toBe("invalid");
    await store.createSession({ id: "fixed", source: "cli" });
    expect(await code(store.createSession({ id: "fixed", source: "cli" }))).toBe("invalid");
    expect(await code(store.createSession({ source: "cli", parentSessionId: "ghost" }))).toBe("not_found");
    expect(await code(store.createSession({ source: "cli", title: "x".repeat(101) }))).toBe("invalid");
    expect((await store.listSessions({ limit: 100 })).map((s) => s.id)).toEqual(["fixed"]);
  });

  it("keeps titles unique, clears them, and numbers lineages", async () => {
    const { store, clock } = h();
    const a = await store.createSession({ source: "cli", title: "work" });
    clock.tick();
    const b = await store.createSession({ source: "cli" });
    const err = await store.setTitle(b.id, "work").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SessionStoreError);
    expect((err as SessionStoreError).code).toBe("title_taken");
    expect((err as SessionStoreError).message).toContain(a.id);
    expect(await code(store.createSession({ source: "cli", title: "work" }))).toBe("title_taken");
    expect(await store.nextLineageTitle("work")).toBe("work #2");
    expect((await store.setTitle(b.id, "work #2")).title).toBe("work #2");
    expect(await store.nextLineageTitle("work #2")).toBe("work #3");
    expect(await store.nextLineageTitle("100% done_")).toBe("100% done_");
    expect((await store.setTitle(a.id, "work")).title).toBe("work");
    expect((await store.setTitle(a.id, null)).title).toBeNull();
    expect((await store.setTitle(b.id, "   ")).title).toBeNull();
    expect(await code(store.setTitle("ghost", "x"))).toBe("not_found");
  });

  it("resolves ids, prefixes, titles and lineages, and says when a reference is ambiguous", async () => {
    const { store, clock } = h();
    const a = await store.createSession({ id: "20260601_100000_aaaaaa", source: "cli", title: "plan" });
    clock.tick();
    const b = await store.createSession({ id: "20260601_100001_aaaabb", source: "cli", title: "plan #2" });
    clock.tick();
    await store.createSession({ id: "20260601_100001_aaaacc", source: "cli", title: "50%_off" });
    expect((await store.resolveSession(a.id)).id).toBe(a.id);
    expect((await store.resolveSession("20260601_100000")).id).toBe(a.id);
    expect(await code(store.resolveSession("20260601_100001"))).toBe("ambiguous");
    expect((await store.resolveSession("plan")).id).toBe(b.id);
    expect((await store.resolveSession("plan #2")).id).toBe(b.id);
    expect((await store.resolveSession("50%_off")).id).toBe("20260601_100001_aaaacc");
    expect(await code(store.resolveSession("2026%"))).toBe("not_found");
    expect(await code(store.resolveSession("nothing here"))).toBe("not_found");
    expect(await code(store.resolveSession("  "))).toBe("invalid");
    await store.setTitle(a.id, null);
    expect((await store.resolveSession("plan")).id).toBe(b.id);
  });

  it("continues a session after compression in one step and refuses an unknown parent", async () => {
    const { store, clock } = h();
    const parent = await store.createSession({ source: "telegram", title: "chat" });
    await store.appendMessage(parent.id, { role: "user", content: "long history" });
    clock.tick(10);
    const child = await store.continueSession(
      parent.id,
      { source: "telegram", parentSessionId: parent.id, title: "chat #2" },
      [
        { role: "system", content: "summary" },
        { role: "user", content: "go on" },
      ],
    );
    expect(child).toMatchObject({ parentSessionId: parent.id, title: "chat #2", messageCount: 2 });
    expect(await store.getSession(parent.id)).toMatchObject({ endedAt: clock.t, endReason: "compression" });
    expect((await store.conversation(child.id)).map((m) => m.content)).toEqual(["summary", "go on"]);
    expect((await store.listSessions({ parentSessionId: parent.id })).map((s) => s.id)).toEqual([child.id]);
    expect((await store.latestSession({ title: "chat" }))?.id).toBe(child.id);
    const before = await store.listSessions({ limit: 50 });
    expect(
      await code(
        store.continueSession("ghost", { source: "cli", parentSessionId: "ghost" }, [
          { role: "user", content: "x" },
        ]),
      ),
    ).toBe("not_found");
    expect(
      await code(
        store.continueSession(parent.id, { source: "cli", parentSessionId: parent.id }, [
          { role: "wizard" as never, content: "x" },
        ]),
      ),
    ).toBe("invalid");
    expect(await store.listSessions({ limit: 50 })).toEqual(before);
  });

  it("branches the active messages into a titled child and marks where it came from", async () => {
    const { store, clock } = h();
    const s = await store.createSession({
      source: "cli",
      title: "idea",
      model: "m",
      systemPrompt: "p",
      cwd: "/x",
    });
    await store.appendMessages(s.id, [
      { role: "user", content: "one" },
      {
        role: "assistant",
        content: "two",
        tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }],
      },
      { role: "tool", content: "three", tool_call_id: "c1", name: "t" },
      { role: "user", content: "four" },
    ]);
    await store.undoTurns(s.id, 1);
    clock.tick();
    const b = await store.branchSession(s.id);
    expect(b).toMatchObject({
      parentSessionId: s.id,
      title: "idea #2",
      model: "m",
      systemPrompt: "p",
      cwd: "/x",
    });
    expect(JSON.parse(b.modelConfig!)).toEqual({ _branched_from: s.id });
    expect(b.messageCount).toBe(3);
    expect(b.toolCallCount).toBe(1);
    expect((await store.conversation(b.id)).map((m) => m.content)).toEqual(["one", "two", "three"]);
    const again = await store.branchSession(s.id, { title: "mine", source: "tool" });
    expect(again).toMatchObject({ title: "mine", source: "tool" });
    expect(await code(store.branchSession(s.id, { title: "mine" }))).toBe("title_taken");
    expect(await code(store.branchSession("ghost"))).toBe("not_found");
  });

  it("ends, reopens and updates sessions", async () => {
    const { store, clock } = h();
    const s = await store.createSession({ source: "cli" });
    clock.tick(5);
    await store.endSession(s.id, "user_exit");
    expect(await store.getSession(s.id)).toMatchObject({ endedAt: clock.t, endReason: "user_exit" });
    await store.reopenSession(s.id);
    expect(await store.getSession(s.id)).toMatchObject({ endedAt: null, endReason: null });
    await store.updateSession(s.id, { model: "m2", archived: true, gitBranch: "dev", systemPrompt: "new" });
    expect(await store.getSession(s.id)).toMatchObject({
      model: "m2",
      archived: true,
      gitBranch: "dev",
      systemPrompt: "new",
    });
    await store.updateSession(s.id, {});
    // Each rejection is handled as it is made (`code`), not only when its turn to be awaited comes.
    for (const p of [
      code(store.endSession("ghost", "x")),
      code(store.reopenSession("ghost")),
      code(store.updateSession("ghost", { model: "x" })),
      code(store.updateSession("ghost", {})),
    ])
      expect(await p).toBe("not_found");
  });

  it("finds the most recently active session, of a source or a lineage", async () => {
    const { store, clock } = h();
    expect(await store.latestSession()).toBeNull();
    const a = await store.createSession({ source: "cli", title: "a" });
    clock.tick();
    const b = await store.createSession({ source: "telegram" });
    clock.tick();
    expect((await store.latestSession())?.id).toBe(b.id);
    await store.appendMessage(a.id, { role: "user", content: "back to a" });
    expect((await store.latestSession())?.id).toBe(a.id);
    expect((await store.latestSession({ source: "telegram" }))?.id).toBe(b.id);
    expect((await store.latestSession({ title: "a" }))?.id).toBe(a.id);
    expect(await store.latestSession({ title: "zzz" })).toBeNull();
  });

  it("takes hostile text literally: quotes, wildcards and SQL in titles, ids, sources and filters", async () => {
    const { store } = h();
    const evil = "x'); DROP TABLE sessions; --";
    const s = await store.createSession({ id: evil, source: "cli' OR '1'='1", title: `${evil} %_\\` });
    expect((await store.resolveSession(evil)).id).toBe(evil);
    expect((await store.resolveSession(`${evil} %_\\`)).id).toBe(evil);
    expect(await store.nextLineageTitle(`${evil} %_\\`)).toBe(`${evil} %_\\ #2`);
    expect(await code(store.resolveSession("%%%%"))).toBe("not_found");
    expect(await code(store.resolveSession("____"))).toBe("not_found");
    expect((await store.listSessions({ source: "cli' OR '1'='1" })).map((x) => x.id)).toEqual([s.id]);
    expect(await store.listSessions({ source: "cli" })).toEqual([]);
    expect(await store.listSessions({ excludeSources: ["cli' OR '1'='1"] })).toEqual([]);
    expect(await store.latestSession({ title: "%" })).toBeNull();
    await store.appendMessage(s.id, { role: "user", content: "'; DELETE FROM messages; --" });
    expect((await store.stats()).sessions).toBe(1);
    expect((await store.conversation(s.id))[0]!.content).toBe("'; DELETE FROM messages; --");
  });
});
