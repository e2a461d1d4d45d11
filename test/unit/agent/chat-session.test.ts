import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChatSession } from "../../../src/agent/chat-session.js";
import { undoInMemory } from "../../../src/agent/session-tally.js";
import type { Message } from "../../../src/ai/types.js";
import type { SessionStore } from "../../../src/state/types.js";
import { callTools, ScriptedTransport, say } from "../../support/scripted-transport.js";
import { useSessionEnvs } from "../../support/session-env.js";

const setup = useSessionEnvs("hermes-chat-session-");

function open(
  transport: ScriptedTransport,
  env: { store: SessionStore | null; cwd: string; home: string },
  extra: Partial<Parameters<typeof ChatSession.open>[0]> = {},
) {
  return ChatSession.open({
    transport,
    cwd: env.cwd,
    home: env.home,
    env: {},
    toolsets: ["todo"],
    store: env.store,
    ...extra,
  });
}

describe("ChatSession", () => {
  it("records the session row, its frozen system prompt and every message as the turn happens", async () => {
    const env = setup();
    const transport = new ScriptedTransport([callTools(["todo", {}]), say("done")]);
    const session = await open(transport, env, { title: "first chat" });
    await session.run("plan my day").result;
    const row = env.db.getSession(session.id);
    expect(row?.source).toBe("cli");
    expect(row?.title).toBe("first chat");
    expect(row?.cwd).toBe(env.cwd);
    expect(row?.systemPrompt).toBe(transport.requests[0]?.messages[0]?.content);
    expect(row?.apiCallCount).toBe(2);
    expect(row?.inputTokens).toBe(20);
    expect(env.db.conversation(session.id).map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(row?.toolCallCount).toBe(1);
    await session.close();
    expect(env.db.getSession(session.id)?.endReason).toBe("user_exit");
  });

  it("resumes with the saved system prompt byte for byte and the saved history", async () => {
    const env = setup();
    const first = new ScriptedTransport([say("hello there")]);
    const a = await open(first, env);
    await a.run("hi").result;
    const id = a.id;
    await a.close();
    // A stored prompt that the builder would never produce proves it is reused, not rebuilt.
    env.db.updateSession(id, { systemPrompt: "SAVED PROMPT \u00e9\n  with trailing space " });

    const second = new ScriptedTransport([say("again")]);
    const b = await open(second, { ...env, cwd: env.home }, { continueLast: true });
    expect(b.resumed).toBe(true);
    expect(b.id).toBe(id);
    await b.run("once more").result;
    const request = second.requests[0];
    expect(request?.messages[0]).toEqual({
      role: "system",
      content: "SAVED PROMPT \u00e9\n  with trailing space ",
    });
    expect(request?.messages.slice(1).map((m) => m.content)).toEqual(["hi", "hello there", "once more"]);
    expect(env.db.getSession(id)?.endedAt).toBeNull();
    await b.close();
  });

  it("resumes by title and refuses an unknown reference without creating anything", async () => {
    const env = setup();
    const a = await open(new ScriptedTransport([say("ok")]), env, { title: "taxes" });
    await a.run("help with taxes").result;
    await a.close();
    const b = await open(new ScriptedTransport([]), env, { resume: "taxes" });
    expect(b.id).toBe(a.id);
    expect(b.agent.messages).toHaveLength(2);
    await b.close();
    await expect(open(new ScriptedTransport([]), env, { resume: "nope-nothing" })).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(
      open(new ScriptedTransport([]), { ...env, store: null }, { continueLast: true }),
    ).rejects.toMatchObject({ code: "not_found" });
    expect(env.db.listSessions()).toHaveLength(1);
  });

  it("undoes turns, retries the last one, and keeps undone messages out of the next request", async () => {
    const env = setup();
    const transport = new ScriptedTransport([say("one"), say("two"), say("two again")]);
    const session = await open(transport, env);
    await session.run("first").result;
    await session.run("second").result;
    const text = await session.retryText();
    expect(text).toBe("second");
    expect(session.agent.messages.map((m) => m.content)).toEqual(["first", "one"]);
    await session.run(text ?? "").result;
    expect(transport.requests[2]?.messages.slice(1).map((m) => m.content)).toEqual([
      "first",
      "one",
      "second",
    ]);
    expect(env.db.conversation(session.id).map((m) => m.content)).toEqual([
      "first",
      "one",
      "second",
      "two again",
    ]);
    expect(await session.undo(5)).toMatchObject({ removed: 4, userText: "first" });
    expect(session.agent.messages).toHaveLength(0);
    await session.close();
  });

  it("branches into a child session that keeps the conversation and the prompt", async () => {
    const env = setup();
    const transport = new ScriptedTransport([say("base answer"), say("branch answer")]);
    const session = await open(transport, env, { title: "idea" });
    await session.run("explore").result;
    const parent = session.id;
    const fork = await session.branch();
    expect(fork.parentSessionId).toBe(parent);
    expect(fork.title).toBe("idea #2");
    expect(session.id).toBe(fork.id);
    await session.run("go on").result;
    expect(transport.requests[1]?.messages[0]?.content).toBe(transport.requests[0]?.messages[0]?.content);
    expect(env.db.conversation(parent)).toHaveLength(2);
    expect(env.db.conversation(fork.id)).toHaveLength(4);
    expect(env.db.getSession(parent)?.endReason).toBe("branched");
    await session.close();
  });

  it("titles a session before anything is said, and refuses a taken title for /new", async () => {
    const env = setup();
    const session = await open(new ScriptedTransport([say("fine")]), env);
    expect((await session.setTitle("named early")).title).toBe("named early");
    await session.run("hello").result;
    expect(env.db.getSession(session.id)?.systemPrompt).toBeTruthy();
    await expect(session.newSession("named early")).rejects.toMatchObject({ code: "title_taken" });
    const before = session.id;
    await session.newSession("fresh");
    expect(session.id).not.toBe(before);
    expect(env.db.getSession(before)?.endReason).toBe("new_session");
    await session.close();
  });

  it("works without a store: undo in memory, and a clear error for what needs one", async () => {
    const env = { ...setup(), store: null };
    const session = await open(new ScriptedTransport([say("a"), say("b")]), env);
    await session.run("x").result;
    await session.run("y").result;
    expect(await session.undo()).toEqual({ removed: 2, userText: "y" });
    expect(await session.loadRecord()).toBeNull();
    await expect(session.branch()).rejects.toThrow(/not being recorded/);
    expect(await session.usageReport()).toMatchObject({ apiCalls: 2, usage: { inputTokens: 20 } });
    await session.close();
  });

  it("switches models without touching history or the system prompt", async () => {
    const env = setup();
    const transport = new ScriptedTransport([say("a"), say("b")]);
    const session = await open(transport, env, { model: "model-a" });
    await session.run("x").result;
    await session.setModel("model-b");
    await session.run("y").result;
    expect(transport.requests.map((r) => r.model)).toEqual(["model-a", "model-b"]);
    expect(transport.requests[1]?.messages[0]).toEqual(transport.requests[0]?.messages[0]);
    expect(env.db.getSession(session.id)?.model).toBe("model-b");
    await session.close();
  });

  it("records a /model switch on the session at once, follows model_aliases, and refuses an empty name", async () => {
    const env = setup();
    const transport = new ScriptedTransport([say("a")]);
    const session = await open(transport, env, { model: "model-a" });
    await session.run("x").result;
    (session.agent.config as Record<string, unknown>)["model_aliases"] = { quick: "model-q" };
    await session.setModel("quick");
    expect(session.model).toBe("model-q");
    expect(env.db.getSession(session.id)?.model).toBe("model-q");
    await expect(session.setModel("  ")).rejects.toThrow(/Give a model/);
    expect(session.model).toBe("model-q");
    await session.close();
  });
});

describe("undoInMemory", () => {
  const m = (role: Message["role"], content: string): Message => ({ role, content });
  const history = [m("user", "a"), m("assistant", "1"), m("user", "b"), m("assistant", "2"), m("tool", "t")];
  it.each([
    [1, 3, "b", 2],
    [2, 5, "a", 0],
    [9, 5, "a", 0],
  ])("undo %i turn(s) removes %i messages", (turns, removed, userText, left) => {
    const cut = undoInMemory(history, turns);
    expect(cut).toMatchObject({ removed, userText });
    expect(cut.messages).toHaveLength(left);
  });
  it("does nothing on an empty history", () => {
    expect(undoInMemory([], 1)).toEqual({ messages: [], removed: 0, userText: null });
  });

  it("/personality rebuilds the prompt with the overlay, keeps the history and saves the new prompt", async () => {
    const env = setup();
    const transport = new ScriptedTransport([say("plain"), say("arr")]);
    const session = await open(transport, env);
    await session.run("hello").result;
    const before = transport.requests[0]?.messages[0]?.content as string;
    await session.setPersonality("pirate");
    await session.run("again").result;
    const after = transport.requests[1]?.messages[0]?.content as string;
    expect(after).not.toBe(before);
    expect(after.startsWith(before.split("\n\n")[0] ?? "")).toBe(true);
    expect(after.toLowerCase()).toContain("pirate");
    expect(transport.requests[1]?.messages.map((m) => m.content)).toContain("plain");
    expect(env.db.getSession(session.id)?.systemPrompt).toBe(after);
    await session.close();
  });

  it("turns /<skill-name> into a user message carrying the skill, and unknown names into undefined", async () => {
    const env = setup();
    const dir = join(env.home, "skills", "ops", "rotate-logs");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "SKILL.md"),
      "---\nname: rotate-logs\ndescription: Rotate and compress old logs.\n---\n# Rotate logs\n\nRun logrotate -f.\n",
    );
    const session = await open(new ScriptedTransport([]), env);
    const message = await session.skillMessage("rotate-logs", "for nginx");
    expect(message).toContain("Run logrotate -f.");
    expect(message).toContain("for nginx");
    expect(await session.skillMessage("no-such-skill")).toBeUndefined();
    await session.close();
  });

  it("turns /<bundle> into one user message carrying each of the bundle's skills", async () => {
    const env = setup();
    for (const [name, step] of [
      ["rotate-logs", "Run logrotate -f."],
      ["check-disk", "Run df -h."],
    ]) {
      mkdirSync(join(env.home, "skills", "ops", name as string), { recursive: true });
      writeFileSync(
        join(env.home, "skills", "ops", name as string, "SKILL.md"),
        `---\nname: ${name}\ndescription: Ops step.\n---\n# ${name}\n\n${step}\n`,
      );
    }
    mkdirSync(join(env.home, "skill-bundles"), { recursive: true });
    writeFileSync(
      join(env.home, "skill-bundles", "server-day.yaml"),
      "skills: [check-disk, rotate-logs]\ninstruction: Report before changing anything.\n",
    );
    const session = await open(new ScriptedTransport([]), env);
    const message = (await session.skillMessage("server-day", "on web-1")) ?? "";
    expect(message).toContain("Run df -h.");
    expect(message).toContain("Run logrotate -f.");
    expect(message).toContain("Bundle instruction: Report before changing anything.");
    expect(message.endsWith("User request: on web-1")).toBe(true);
    await session.close();
  });
});
