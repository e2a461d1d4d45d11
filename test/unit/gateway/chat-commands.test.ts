/**
 * The chat side of the shared commands: the admin tier from config, questions answered by the
 * next message, markdown paint and the published menu.
 */
import { describe, expect, it } from "vitest";
import { chatTier } from "../../../src/gateway/auth/admin.js";
import {
  ChatQuestions,
  chatCommandMenu,
  chatPaint,
  slackSlashCommands,
} from "../../../src/gateway/messaging/commands.js";

describe("chatTier", () => {
  const who = { platform: "telegram", userId: "1001", userName: "Owner" };

  it("makes every allowed user an admin when no admin is configured", () => {
    expect(chatTier({}, who)).toEqual({ isAdmin: true, userAllowedCommands: [] });
  });

  it("reads gateway.admin_users, with platform: prefixes and @usernames", () => {
    expect(chatTier({ gateway: { admin_users: ["1001"] } }, who).isAdmin).toBe(true);
    expect(chatTier({ gateway: { admin_users: ["telegram:1001"] } }, who).isAdmin).toBe(true);
    expect(chatTier({ gateway: { admin_users: "discord:1001, 42" } }, who).isAdmin).toBe(false);
    expect(chatTier({ gateway: { admin_users: ["@owner"] } }, who).isAdmin).toBe(true);
    expect(chatTier({ gateway: { admin_users: ["@owner"] } }, { ...who, userName: undefined }).isAdmin).toBe(
      false,
    );
  });

  it("reads upstream's platforms.<platform>.extra.allow_admin_from and user_allowed_commands", () => {
    const config = {
      platforms: { telegram: { extra: { allow_admin_from: ["7"], user_allowed_commands: "model, /yolo" } } },
    };
    expect(chatTier(config, who)).toEqual({ isAdmin: false, userAllowedCommands: ["model", "/yolo"] });
    expect(chatTier(config, { ...who, userId: "7" }).isAdmin).toBe(true);
    // Another platform's list does not make this one's users non-admins.
    expect(chatTier(config, { ...who, platform: "slack" }).isAdmin).toBe(true);
  });

  it("treats a configured admin list that names nobody here as no admin for a stranger id", () => {
    expect(chatTier({ gateway: { admin_users: [""] } }, who).isAdmin).toBe(true);
    expect(chatTier({ gateway: { admin_users: ["1001x"] } }, who).isAdmin).toBe(false);
  });
});

describe("ChatQuestions", () => {
  it("hands the next message to the waiting question, once", async () => {
    const questions = new ChatQuestions(60_000);
    const answer = questions.wait("chat");
    expect(questions.has("chat")).toBe(true);
    expect(questions.answer("chat", "2")).toBe(true);
    expect(await answer).toBe("2");
    expect(questions.answer("chat", "3")).toBe(false);
  });

  it("cancels with null: a new question, cancel(), or the timeout", async () => {
    const questions = new ChatQuestions(20);
    const first = questions.wait("chat");
    const second = questions.wait("chat");
    expect(await first).toBeNull();
    questions.cancel();
    expect(await second).toBeNull();
    expect(await questions.wait("other")).toBeNull();
    expect(questions.has("other")).toBe(false);
  });
});

describe("chat paint and menu", () => {
  it("paints markdown: bold stays, colours vanish, tables become bold keys", () => {
    expect(chatPaint.bold("Status")).toBe("**Status**");
    expect(chatPaint.red("on")).toBe("on");
    expect(chatPaint.table?.([["Model", "x"]])).toEqual(["**Model:** x"]);
  });

  it("publishes the chat commands with Telegram-valid names", () => {
    const menu = chatCommandMenu();
    expect(menu.map((c) => c.name)).toEqual(
      expect.arrayContaining(["new", "model", "reload_mcp", "sethome"]),
    );
    expect(menu.every((c) => /^[a-z0-9_]{1,32}$/.test(c.name))).toBe(true);
  });
});

describe("Slack's slash commands", () => {
  it("lists /hermes with every chat command as its usage hint, and each one with --each", () => {
    const [hermes, ...rest] = slackSlashCommands();
    expect(rest).toEqual([]);
    expect(hermes).toMatchObject({ command: "/hermes", should_escape: false });
    expect(hermes?.usage_hint).toContain("resume");
    expect(hermes?.usage_hint).not.toContain("quit");
    const each = slackSlashCommands({ each: true, url: "https://bot.example/slack/events" });
    const model = each.find((c) => c.command === "/model");
    expect(model).toMatchObject({
      usage_hint: "[name|provider:model] [--provider NAME] [--global|--session] [--refresh]",
      url: "https://bot.example/slack/events",
    });
    expect(each.every((c) => /^\/[a-z0-9_-]{1,31}$/.test(c.command))).toBe(true);
  });
});
