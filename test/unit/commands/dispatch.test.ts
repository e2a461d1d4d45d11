/**
 * The one dispatcher both surfaces use: what a `/word` means on each surface, who may run what,
 * what waits for the turn, skills, unknown names, the chat menu and Tab completion.
 */
import { describe, expect, it } from "vitest";
import { dispatchInput, offeredOn, runsWhileBusy } from "../../../src/commands/index.js";
import { fakeContext, registry } from "../../support/command-context.js";

const chat = { kind: "chat" as const, platform: "telegram", isAdmin: true };
const guest = { ...chat, isAdmin: false };

describe("dispatchInput", () => {
  it("leaves messages and paths to the caller", async () => {
    for (const text of ["hello", "/etc/hosts is empty?", "/notes.md is long", "//x", "see /help"]) {
      const c = fakeContext({ surface: chat });
      expect(await dispatchInput(registry, text, c.ctx)).toEqual({ kind: "message" });
      expect(c.printed).toEqual([]);
    }
  });

  it("answers an unknown /word with the closest commands and sends nothing", async () => {
    const c = fakeContext({ surface: chat });
    expect(await dispatchInput(registry, "/modle gpt-5", c.ctx)).toEqual({ kind: "unknown", name: "modle" });
    expect(c.printed.join("\n")).toMatch(/Unknown command \/modle\. Type \/help\. Did you mean \/model/);
    expect(c.sent).toEqual([]);
    const far = fakeContext({ surface: chat });
    await dispatchInput(registry, "/zzzzzz", far.ctx);
    expect(far.printed).toEqual(["Unknown command /zzzzzz. Type /help."]);
  });

  it("can stay quiet about an unknown /word (a group where the bot was not addressed)", async () => {
    const c = fakeContext({ surface: { ...chat, chatType: "group" } });
    expect(await dispatchInput(registry, "/weather", c.ctx, { quietUnknown: true })).toEqual({
      kind: "unknown",
      name: "weather",
    });
    expect(c.printed).toEqual([]);
    expect(c.sent).toEqual([]);
    await dispatchInput(registry, "/deploy x", c.ctx, { quietUnknown: true });
    expect(c.sent).toEqual(["[Skill deploy] x"]);
  });

  it("suggests only what the surface offers", () => {
    expect(registry.closest("qui", "repl")).toContain("quit");
    expect(registry.closest("qui", "chat")).not.toContain("quit");
    expect(registry.closest("aprove", "repl")).not.toContain("approve");
    expect(registry.closest("aprove", "chat")).toContain("approve");
  });

  it("refuses a command the surface does not offer, and says where it works", async () => {
    const inChat = fakeContext({ surface: chat });
    await dispatchInput(registry, "/quit", inChat.ctx);
    expect(inChat.exits).toEqual([]);
    expect(inChat.printed).toEqual(["/quit works only in the terminal."]);
    const inRepl = fakeContext();
    expect(await dispatchInput(registry, "/approve", inRepl.ctx)).toMatchObject({ reason: "surface" });
    expect(inRepl.printed).toEqual(["/approve works only in chats."]);
  });

  it("refuses admin-only commands to a chat user who is not an admin", async () => {
    for (const command of ["/model other", "/yolo", "/reload-mcp", "/sethome"]) {
      const c = fakeContext({ surface: guest });
      expect(await dispatchInput(registry, command, c.ctx)).toMatchObject({
        kind: "refused",
        reason: "admin",
      });
      expect(c.printed.at(-1)).toMatch(/is for this bot's admins only/);
      expect(c.session.calls).toEqual([]);
      expect(c.ctx.settings.yolo).toBe(false);
    }
    const admin = fakeContext({ surface: chat });
    await dispatchInput(registry, "/model other", admin.ctx);
    expect(admin.session.calls).toEqual(["model:other"]);
    // The REPL's user is the owner.
    const repl = fakeContext({ surface: { kind: "repl", platform: "cli", isAdmin: false } });
    await dispatchInput(registry, "/yolo", repl.ctx);
    expect(repl.ctx.settings.yolo).toBe(true);
  });

  it("lets a non-admin run the admin-only commands user_allowed_commands names", async () => {
    const c = fakeContext({ surface: { ...guest, userAllowedCommands: ["/model"] } });
    await dispatchInput(registry, "/model other", c.ctx);
    expect(c.session.calls).toEqual(["model:other"]);
    await dispatchInput(registry, "/yolo", c.ctx);
    expect(c.printed.at(-1)).toMatch(/admins only/);
  });

  it("holds commands that must wait for the turn, and runs the rest", async () => {
    const c = fakeContext({ running: true });
    expect(await dispatchInput(registry, "/undo", c.ctx)).toMatchObject({ reason: "busy" });
    expect(c.printed.at(-1)).toMatch(/\/undo cannot run during a turn: \/stop it first/);
    await dispatchInput(registry, "/steer use tabs", c.ctx);
    expect(c.session.calls).toEqual(["steer:use tabs"]);
    // /new waits in the terminal but starts over at once in a chat.
    const repl = fakeContext({ running: true });
    expect(await dispatchInput(registry, "/new", repl.ctx)).toMatchObject({ reason: "busy" });
    const inChat = fakeContext({ running: true, surface: chat });
    expect(await dispatchInput(registry, "/new", inChat.ctx)).toMatchObject({ kind: "command" });
    expect(inChat.events).toContain("newSession");
  });

  it("shows a handler's error and nothing else happens", async () => {
    const c = fakeContext();
    await dispatchInput(registry, "/title taken", c.ctx);
    expect(c.printed).toEqual(['✗ The title "taken" is already used.']);
  });

  it("loads /<skill-name> [request] into a message, queued while a turn runs", async () => {
    const idle = fakeContext({ surface: chat });
    expect(await dispatchInput(registry, "/deploy staging now", idle.ctx)).toEqual({
      kind: "skill",
      name: "deploy",
    });
    expect(idle.sent).toEqual(["[Skill deploy] staging now"]);
    expect(idle.printed).toEqual(["⚡ Loaded skill deploy"]);
    const busy = fakeContext({ running: true });
    await dispatchInput(registry, "/deploy", busy.ctx);
    expect(busy.sent).toEqual([]);
    expect(busy.ctx.queue.list()).toEqual(["[Skill deploy] "]);
  });

  it("reads Telegram's /cmd@bot and /under_score names", async () => {
    const c = fakeContext({ surface: chat });
    await dispatchInput(registry, "/model@hermes_bot", c.ctx);
    expect(c.printed[0]).toMatch(/^Model: fake-model via custom\n/);
    expect(registry.get("reload_mcp")?.name).toBe("reload-mcp");
    expect(registry.get("set_home")?.name).toBe("sethome");
  });

  it("/q is /queue on both surfaces", async () => {
    for (const surface of [chat, { kind: "repl" as const, platform: "cli", isAdmin: true }]) {
      const c = fakeContext({ surface, running: true });
      await dispatchInput(registry, "/q after this", c.ctx);
      expect(c.ctx.queue.list()).toEqual(["after this"]);
      expect(c.exits).toEqual([]);
    }
  });
});

describe("the registry's declarations", () => {
  it("offers the issue's parity list in chats", () => {
    const names = registry.all("chat").map((c) => c.name);
    for (const name of [
      "new",
      "title",
      "resume",
      "sessions",
      "retry",
      "undo",
      "branch",
      "model",
      "personality",
      "skills",
      "tools",
      "toolsets",
      "verbose",
      "yolo",
      "usage",
      "status",
      "stop",
      "steer",
      "queue",
      "compress",
      "reload-mcp",
      "approve",
      "deny",
      "sethome",
      "help",
    ])
      expect(names).toContain(name);
    expect(names).not.toContain("quit");
    expect(names).not.toContain("browser");
    expect(offeredOn(registry.get("approve") ?? registry.all()[0]!, "repl")).toBe(false);
  });

  it("lets /stop, /status, /queue, /approve, /deny and /new through a busy chat", () => {
    for (const name of ["stop", "status", "queue", "approve", "deny", "new", "help"]) {
      const command = registry.get(name);
      expect(command && runsWhileBusy(command, "chat"), name).toBe(true);
    }
  });

  it("makes a Telegram menu of valid names from the chat commands, in help order", () => {
    const menu = registry.menu();
    for (const item of menu) {
      expect(item.name).toMatch(/^[a-z0-9_]{1,32}$/);
      expect(item.description.length).toBeGreaterThan(0);
      expect(item.description.length).toBeLessThanOrEqual(256);
    }
    const names = menu.map((m) => m.name);
    expect(names).toContain("reload_mcp");
    expect(names).not.toContain("quit");
    expect(names.indexOf("new")).toBeLessThan(names.indexOf("retry"));
    expect(names.indexOf("retry")).toBeLessThan(names.indexOf("model"));
  });

  it("groups /help per surface and marks what a chat user may not run", () => {
    const paint = { bold: (t: string) => `[${t}]`, dim: (t: string) => t };
    const repl = registry.helpLines(paint, "repl").join("\n");
    expect(repl).toContain("[Exit]");
    expect(repl).toContain("/quit");
    expect(repl).not.toContain("/approve");
    const chatHelp = registry.helpLines(paint, "chat", { locked: (c) => c.adminOnly === true });
    expect(chatHelp).toContain("[Session]");
    expect(chatHelp.join("\n")).not.toContain("[Exit]");
    expect(chatHelp.find((l) => l.startsWith("/yolo"))).toMatch(/🔒 admins only$/);
    expect(chatHelp.find((l) => l.startsWith("/status"))).not.toMatch(/admins only/);
  });
});

describe("Tab completion", () => {
  it("completes installed skill names after the commands", async () => {
    const { ctx } = fakeContext();
    const skills = () => ["deploy-check", "docs-writer", "undo-helper"];
    expect(await registry.complete("/dep", ctx, skills)).toEqual([["/deploy-check "], "/dep"]);
    expect(await registry.complete("/un", ctx, skills)).toEqual([["/undo ", "/undo-helper "], "/un"]);
    // An unreadable skills folder still completes the commands.
    const failing = () => Promise.reject(new Error("unreadable"));
    expect(await registry.complete("/he", ctx, failing)).toEqual([["/help"], "/he"]);
  });

  it("never completes a command the surface does not offer", async () => {
    const { ctx } = fakeContext();
    const [names] = await registry.complete("/", ctx);
    expect(names).toContain("/quit");
    expect(names).not.toContain("/approve");
    expect(names).toContain("/q");
  });
});
