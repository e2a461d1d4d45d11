/** Session keys match the ones Python Hermes builds (gateway/session.py build_session_key). */
import { describe, expect, it } from "vitest";
import { type SessionKeyOptions, type SessionSource, sessionKey } from "../../../src/gateway/session-key.js";

const cases: Array<[string, SessionSource, SessionKeyOptions, string]> = [
  [
    "telegram DM",
    { platform: "telegram", chatType: "dm", chatId: "123", userId: "123" },
    {},
    "agent:main:telegram:dm:123",
  ],
  [
    "DM in a topic keeps the thread",
    { platform: "telegram", chatType: "dm", chatId: "123", userId: "123", threadId: "9" },
    {},
    "agent:main:telegram:dm:123:9",
  ],
  [
    "DM without a chat id falls back to the sender, before the thread",
    { platform: "signal", chatType: "dm", chatId: "", userId: "u1", threadId: "t" },
    {},
    "agent:main:signal:dm:u1:t",
  ],
  ["DM with neither", { platform: "signal", chatType: "dm", chatId: "" }, {}, "agent:main:signal:dm"],
  [
    "group: one session per participant by default",
    { platform: "telegram", chatType: "group", chatId: "-100", userId: "42" },
    {},
    "agent:main:telegram:group:-100:42",
  ],
  [
    "group shared when groupSessionsPerUser is off",
    { platform: "telegram", chatType: "group", chatId: "-100", userId: "42" },
    { groupSessionsPerUser: false },
    "agent:main:telegram:group:-100",
  ],
  [
    "thread shared by default",
    { platform: "discord", chatType: "thread", chatId: "c1", userId: "u1", threadId: "th" },
    {},
    "agent:main:discord:thread:c1:th",
  ],
  [
    "thread per user puts the user after the thread",
    { platform: "discord", chatType: "thread", chatId: "c1", userId: "u1", threadId: "th" },
    { threadSessionsPerUser: true },
    "agent:main:discord:thread:c1:th:u1",
  ],
  [
    "forum topic in a group",
    { platform: "telegram", chatType: "group", chatId: "-100", userId: "42", threadId: "7" },
    {},
    "agent:main:telegram:group:-100:7",
  ],
  [
    "channel per user",
    { platform: "discord", chatType: "channel", chatId: "555", userId: "u9" },
    {},
    "agent:main:discord:channel:555:u9",
  ],
  [
    "Slack workspace scope precedes the channel",
    { platform: "slack", chatType: "channel", chatId: "C1", userId: "U1", scopeId: "T1" },
    {},
    "agent:main:slack:channel:T1:C1:U1",
  ],
  [
    "Discord guild scope is left out",
    { platform: "discord", chatType: "channel", chatId: "C1", userId: "U1", scopeId: "G1" },
    {},
    "agent:main:discord:channel:C1:U1",
  ],
  [
    "a named profile namespaces the key",
    { platform: "telegram", chatType: "dm", chatId: "1" },
    { profile: "work" },
    "agent:work:telegram:dm:1",
  ],
  [
    "the default profile is main",
    { platform: "telegram", chatType: "dm", chatId: "1" },
    { profile: "default" },
    "agent:main:telegram:dm:1",
  ],
  [
    "a profile named main is marked",
    { platform: "telegram", chatType: "dm", chatId: "1" },
    { profile: "main" },
    "agent:main~:telegram:dm:1",
  ],
  [
    "a missing platform reads unknown",
    { platform: "", chatType: "dm", chatId: "1" },
    {},
    "agent:main:unknown:dm:1",
  ],
];

describe("sessionKey", () => {
  it.each(cases)("%s", (_name, source, options, expected) => {
    expect(sessionKey(source, options)).toBe(expected);
  });

  it("two members of one group get different sessions, two DMs too", () => {
    const a = sessionKey({ platform: "telegram", chatType: "group", chatId: "g", userId: "a" });
    const b = sessionKey({ platform: "telegram", chatType: "group", chatId: "g", userId: "b" });
    expect(a).not.toBe(b);
    const dmA = sessionKey({ platform: "signal", chatType: "dm", chatId: "", userId: "a" });
    const dmB = sessionKey({ platform: "signal", chatType: "dm", chatId: "", userId: "b" });
    expect(dmA).not.toBe(dmB);
  });
});
