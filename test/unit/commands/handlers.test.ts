/**
 * Each slash-command handler against the surface-neutral context (a fake session and surface), as
 * the REPL and a chat run them.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { looksLikeCommand } from "../../../src/commands/index.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { fakeContext, fakeSession, registry } from "../../support/command-context.js";

type Fake = ReturnType<typeof fakeContext>;

function context(session = fakeSession(), answers: Array<string | null> = []): Fake {
  return fakeContext({ session, answers });
}

async function run(text: string, c: Fake = context()) {
  const parsed = registry.parse(text);
  if (parsed.kind !== "command") throw new Error(`not a command: ${text}`);
  await parsed.command.run(parsed.args, c.ctx);
  return c;
}

describe("what counts as a command", () => {
  it.each<[string, boolean]>([
    ["/help", true],
    ["/model gpt-5", true],
    ["/HELP", true],
    ["/", true],
    ["/tmp/x is big", false],
    ["//not a command", false],
    ["/Users/me/file.md:12 fix this", false],
    ["/etc/hosts is empty?", false],
    ["/notes.md is too long", false],
    ["/model gpt-5.1", true],
    ["/status@hermes_bot", true],
    ["hello /help", false],
    [" /help", false],
  ])("%j → %s", (text, expected) => {
    expect(looksLikeCommand(text)).toBe(expected);
  });

  it("parses commands, aliases, arguments, unknown names and messages", () => {
    const help = registry.parse("/Help");
    expect(help.kind === "command" && help.command.name).toBe("help");
    const fork = registry.parse("/fork  my branch ");
    expect(fork.kind === "command" && [fork.command.name, fork.args]).toEqual(["branch", "my branch"]);
    const q = registry.parse("/q later");
    expect(q.kind === "command" && [q.command.name, q.args]).toEqual(["queue", "later"]);
    expect(registry.parse("/hlep")).toMatchObject({ kind: "unknown", name: "hlep", suggestion: "help" });
    expect(registry.parse("/sess")).toMatchObject({ kind: "unknown", name: "sess", suggestion: "sessions" });
    expect(registry.parse("/zzzzzz")).toMatchObject({ kind: "unknown", name: "zzzzzz", suggestion: null });
    expect(registry.parse("/tmp/x is big")).toEqual({ kind: "message", text: "/tmp/x is big" });
    expect(registry.parse("//x")).toEqual({ kind: "message", text: "//x" });
  });

  it("marks which commands may run during a turn", () => {
    const during = registry
      .all()
      .filter((c) => c.availableWhileRunning === true)
      .map((c) => c.name);
    for (const name of ["stop", "steer", "queue", "status", "usage", "help", "quit", "verbose", "yolo"]) {
      expect(during).toContain(name);
    }
    for (const name of ["new", "resume", "retry", "undo", "branch"]) expect(during).not.toContain(name);
  });
});

describe("completion", () => {
  it("completes command names and aliases", async () => {
    const { ctx } = context();
    expect(await registry.complete("/he", ctx)).toEqual([["/help"], "/he"]);
    expect(await registry.complete("/un", ctx)).toEqual([["/undo "], "/un"]);
    const [all] = await registry.complete("/", ctx);
    expect(all).toContain("/resume ");
    expect(all).toContain("/exit");
    expect(await registry.complete("hello", ctx)).toEqual([[], "hello"]);
  });

  it("completes /resume and /title arguments from session titles", async () => {
    const { ctx } = context();
    expect(await registry.complete("/resume ol", ctx)).toEqual([["old work"], "ol"]);
    expect(await registry.complete("/title ", ctx)).toEqual([
      ["now", "old work", "telegram chat", "someone else's chat", "recorded without a user"],
      "",
    ]);
    expect(await registry.complete("/undo 1", ctx)).toEqual([[], "/undo 1"]);
  });
});

describe("command handlers", () => {
  it("/help lists every command", async () => {
    const { printed } = await run("/help");
    const text = printed.join("\n");
    for (const c of registry.all("repl")) expect(text).toContain(`/${c.name}`);
    expect(text).toContain("Ctrl+C");
    expect(text).not.toContain("/approve");
  });

  it("/verbose cycles and /yolo toggles the session's agent", async () => {
    const c = context();
    await run("/verbose", c);
    expect(c.ctx.settings.toolProgress).toBe("verbose");
    await run("/verbose", c);
    expect(c.ctx.settings.toolProgress).toBe("off");
    await run("/yolo", c);
    expect(c.ctx.settings.yolo).toBe(true);
    expect(c.session.agent.yolo).toBe(true);
    expect(c.printed.at(-1)).toMatch(/YOLO on/);
    await run("/yolo", c);
    expect(c.session.agent.yolo).toBe(false);
  });

  it("/undo validates its argument; /retry undoes and resends", async () => {
    const bad = await run("/undo two");
    expect(bad.printed.at(-1)).toMatch(/positive whole number.*"two"/);
    const good = await run("/undo 2");
    expect(good.printed.at(-1)).toMatch(/Undid 2 turns \(4 messages\)/);
    const retry = await run("/retry");
    expect(retry.sent).toEqual(["again please"]);
  });

  it("/resume with no argument lists sessions and resumes the picked number", async () => {
    const c = context(fakeSession(), ["2"]);
    await run("/resume", c);
    expect(c.printed.join("\n")).toContain("2. old work");
    expect(c.session.calls).toContain("resume:s-old");
    expect(c.events).toContain("sessionChanged");
    const direct = await run("/resume 3");
    expect(direct.session.calls).toContain("resume:s-older");
    const cancelled = context(fakeSession(), [null]);
    await run("/resume", cancelled);
    expect(cancelled.session.calls.filter((x) => x.startsWith("resume"))).toEqual([]);
  });

  it("/title shows, sets, and reports a taken title as an error", async () => {
    expect((await run("/title")).printed.at(-1)).toMatch(/no title/);
    expect((await run("/title Work notes")).printed.at(-1)).toBe("Title set: Work notes");
    await expect(run("/title taken")).rejects.toThrow(/already used/);
  });

  it("/steer, /queue and /stop act on a running turn", async () => {
    const session = fakeSession();
    const c = context(session);
    c.ctx.running = true;
    await run("/steer prefer tabs", c);
    await run("/queue then do this", c);
    await run("/stop", c);
    expect(session.calls).toEqual(["steer:prefer tabs", "interrupt"]);
    expect(c.ctx.queue.list()).toEqual(["then do this"]);
    await run("/queue clear", c);
    expect(c.ctx.queue.list()).toEqual([]);
  });

  it("/steer and /queue send at once when nothing runs", async () => {
    const c = context();
    await run("/steer hi", c);
    await run("/queue there", c);
    expect(c.sent).toEqual(["hi", "there"]);
  });

  it("/compress without a topic compresses with no focus", async () => {
    const c = await run("/compress");
    expect(c.session.calls).toEqual(["compress:"]);
  });

  it("/usage, /status, /tools, /toolsets and /model report", async () => {
    expect((await run("/usage")).printed.join("\n")).toMatch(/Input tokens\s+10/);
    const status = (await run("/status")).printed.join("\n");
    expect(status).toContain("s-current");
    expect(status).toMatch(/Turn\s+idle/);
    expect((await run("/tools")).printed.join("\n")).toContain("💻 terminal");
    expect((await run("/toolsets")).printed.join("\n")).toMatch(/● hermes-cli/);
    expect((await run("/model")).printed.at(-1)).toMatch(/^Model: fake-model via custom\n/);
    const c = await run("/model other-model");
    expect(c.session.calls).toContain("model:other-model");
  });

  it("/quit and /exit leave with status 0; /q is /queue, as upstream", async () => {
    for (const cmd of ["/quit", "/exit"]) expect((await run(cmd)).exits).toEqual([0]);
    const q = await run("/q");
    expect(q.exits).toEqual([]);
    expect(q.printed.join("\n")).toMatch(/queue is empty/);
  });
});

describe("/personality and /skills", () => {
  it("lists personalities, applies a known one and refuses an unknown one", async () => {
    const listed = await run("/personality");
    expect(listed.printed.join("\n")).toMatch(/pirate/);
    expect(listed.session.calls).toEqual([]);

    const applied = await run("/personality Pirate");
    expect(applied.session.calls).toEqual(["personality:pirate"]);
    expect(applied.printed.join("\n")).toMatch(/pirate" applies from the next message/);

    const none = await run("/personality none");
    expect(none.session.calls).toEqual(["personality:none"]);

    const unknown = await run("/personality grumpy-wizard");
    expect(unknown.session.calls).toEqual([]);
    expect(unknown.printed.join("\n")).toMatch(/No personality called "grumpy-wizard"/);
  });

  it("offers custom personalities from agent.personalities", async () => {
    const config = defaultConfig();
    config.agent["personalities"] = { bard: "Answer in rhyming couplets." };
    const session = fakeSession();
    (session.agent as { config: typeof config }).config = config;
    const c = context(session);
    await run("/personality bard", c);
    expect(c.session.calls).toEqual(["personality:bard"]);
  });

  it("/skills says so when the home has none", async () => {
    const c = await run("/skills");
    expect(c.printed.join("\n")).toMatch(/No skills installed/);
  });
});

describe("/compress", () => {
  it("compresses with an optional focus topic and reports the result", async () => {
    const c = await run("/compress focus the database migration");
    expect(c.session.calls).toEqual(["compress:the database migration"]);
    expect(c.printed.join("\n")).toMatch(/9000 → 2500 tokens/);
  });

  it("tells the user when a failed summary kept everything", async () => {
    const session = fakeSession({
      compress: async () => ({
        status: "failed",
        tokensBefore: 9000,
        tokensAfter: 9000,
        error: "The summary call failed twice; every turn was kept.",
      }),
    });
    const c = await run("/compress", context(session));
    expect(c.printed.join("\n")).toMatch(/every turn was kept/);
  });
});

describe("/browser", () => {
  it("connects the browser tools to a DevTools endpoint that answers, refuses one that does not, and disconnects", async () => {
    const devtools = createServer((req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(req.url === "/json/version" ? JSON.stringify({ Browser: "Chrome/140.0.0.0" }) : "{}");
    });
    await new Promise<void>((r) => devtools.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(devtools.address() as AddressInfo).port}`;
    try {
      const c = context();
      await run(`/browser connect ${url}`, c);
      expect(c.printed.join("\n")).toContain(`Browser tools now use Chrome/140.0.0.0 at ${url}.`);
      expect(c.session.agent.config.browser).toMatchObject({ cdp_url: url });
      await run("/browser status", c);
      expect(c.printed.at(-1)).toContain(`at ${url} (CDP)`);
      await run("/browser connect http://127.0.0.1:9", c);
      expect(c.printed.join("\n")).toContain("No browser answers at http://127.0.0.1:9");
      expect(c.session.agent.config.browser).toMatchObject({ cdp_url: url });
      await run("/browser disconnect", c);
      expect(c.session.agent.config.browser).not.toHaveProperty("cdp_url");
    } finally {
      devtools.close();
    }
  });
});

describe("handlers in a chat", () => {
  const chat = { kind: "chat" as const, platform: "telegram", isAdmin: true, userId: "100" };

  function chatContext(answers: Array<string | null> = []) {
    const decisions: string[] = [];
    const c = fakeContext({
      surface: chat,
      answers,
      chat: {
        answerApproval: (decision) => {
          decisions.push(decision);
          return decisions.length === 1;
        },
        setHome: () => ({ variable: "TELEGRAM_HOME_CHANNEL", value: "-1009:7" }),
      },
    });
    return { ...c, decisions };
  }

  it("/new starts over the chat's way and says so plainly", async () => {
    const c = chatContext();
    await run("/new", c);
    expect(c.events).toEqual(["newSession"]);
    expect(c.printed).toEqual(["✨ New conversation started."]);
  });

  it("/sessions and /resume offer only this platform's sessions, numbered alike", async () => {
    const listed = await run("/sessions", chatContext());
    expect(listed.printed.join("\n")).toContain("1. telegram chat");
    expect(listed.printed.join("\n")).not.toContain("old work");
    const c = chatContext(["1"]);
    await run("/resume", c);
    expect(c.printed.join("\n")).toContain("Reply with a number, id or title");
    expect(c.session.calls).toContain("resume:s-tg");
    const byTitle = await run("/resume Telegram Chat", chatContext());
    expect(byTitle.session.calls).toContain("resume:s-tg");
  });

  it("/resume in a chat never reaches the terminal's sessions or another chat user's", async () => {
    const listed = await run("/sessions", chatContext());
    expect(listed.printed.join("\n")).not.toMatch(/someone else|without a user/);
    for (const ref of ["s-old", "old work", "s-tg-other", "someone else's chat", "s-tg-unowned"]) {
      const c = await run(`/resume ${ref}`, chatContext());
      expect(c.session.calls).toEqual([]);
      expect(c.printed).toEqual([`No telegram session is called "${ref}". /sessions lists them.`]);
    }
  });

  it("/resume says so when the chat has nothing else to resume", async () => {
    const session = fakeSession({ listSessions: async () => [] });
    const c = fakeContext({ session, surface: chat });
    await run("/resume", c);
    expect(c.printed).toEqual(["No other sessions to resume."]);
  });

  it("/approve, /approve session, /deny answer the pending approval; nothing pending is said", async () => {
    const c = chatContext();
    await run("/approve session", c);
    expect(c.decisions).toEqual(["session"]);
    expect(c.printed).toEqual([]);
    await run("/deny", c);
    expect(c.decisions).toEqual(["session", "deny"]);
    expect(c.printed).toEqual(["Nothing is waiting for approval."]);
  });

  it("/sethome names the variable and value it saved", async () => {
    const c = await run("/sethome", chatContext());
    expect(c.printed).toEqual([
      "🏠 This chat is now the telegram home channel (TELEGRAM_HOME_CHANNEL=-1009:7).",
    ]);
  });

  it("/stop in a busy chat stops and says so; idle, it says nothing runs", async () => {
    const c = chatContext();
    c.ctx.running = true;
    await run("/stop", c);
    expect(c.session.calls).toEqual(["interrupt"]);
    expect(c.printed).toEqual(["⏹ Stopped."]);
    const idle = await run("/stop", chatContext());
    expect(idle.printed).toEqual(["Nothing is running."]);
  });

  it("/help lists the chat's commands without the terminal's keys", async () => {
    const c = await run("/help", chatContext());
    const text = c.printed.join("\n");
    expect(text).toContain("/approve");
    expect(text).toContain("/q)");
    expect(text).not.toContain("Ctrl+C");
    expect(text).not.toContain("/quit");
  });
});
