import { describe, expect, it } from "vitest";
import {
  parseSignalMessageId,
  renderMentions,
  signalGating,
  signalInbound,
} from "../../../src/gateway/platforms/signal-inbound.js";
import { authorize } from "../../../src/state/gateway/allowlist.js";

const BOT = "+15550000001";
const gating = (env: Record<string, string> = {}, settings: Record<string, unknown> = {}) =>
  signalGating(BOT, env, settings);
const never = () => false;
const dm = (data: Record<string, unknown>, envelope: Record<string, unknown> = {}) => ({
  envelope: {
    sourceNumber: "+15551112222",
    sourceUuid: "a1b2c3d4-0000-4000-8000-000000000001",
    sourceName: "Alice",
    timestamp: 1700000000000,
    dataMessage: { timestamp: 1700000000000, ...data },
    ...envelope,
  },
  account: BOT,
});

describe("signalInbound", () => {
  it("turns a DM into a message keyed by sender and timestamp", () => {
    const r = signalInbound(dm({ message: "hi" }), gating(), never);
    expect(r).toMatchObject({
      deliver: true,
      key: "+15551112222:1700000000000",
      message: {
        text: "hi",
        messageId: "1700000000000:+15551112222",
        source: {
          platform: "signal",
          chatType: "dm",
          chatId: "+15551112222",
          userId: "+15551112222",
          chatName: "Alice",
        },
      },
    });
  });

  it("never offers the spoofable profile name as the user name an @allowlist entry matches", () => {
    const r = signalInbound(dm({ message: "hi" }, { sourceName: "owner" }), gating(), never);
    if (!r.deliver) throw new Error("expected a message");
    expect(r.message.source.userName).toBeUndefined();
    const decision = authorize(
      {
        platform: "signal",
        userId: r.message.source.userId,
        userName: r.message.source.userName,
        isDm: true,
      },
      { env: { GATEWAY_ALLOWED_USERS: "@owner", SIGNAL_ALLOWED_USERS: "@owner" }, approved: new Set() },
    );
    expect(decision.allowed).toBe(false);
  });

  it("uses the UUID when the sender hides their number", () => {
    const r = signalInbound(dm({ message: "hi" }, { sourceNumber: null }), gating(), never);
    expect(r.deliver && r.message.source.userId).toBe("a1b2c3d4-0000-4000-8000-000000000001");
  });

  it.each([
    ["a typing event", { dataMessage: undefined, typingMessage: { action: "STARTED" } }],
    ["a receipt", { dataMessage: undefined, receiptMessage: { isDelivery: true } }],
    ["a reaction", { dataMessage: { timestamp: 1, reaction: { emoji: "👍" } } }],
    ["a story", { storyMessage: { text: "x" } }],
    ["our own number", { sourceNumber: BOT }],
  ])("ignores %s", (_what, envelope) => {
    expect(signalInbound(dm({ message: "x" }, envelope), gating(), never).deliver).toBe(false);
  });

  it("ignores groups unless SIGNAL_GROUP_ALLOWED_USERS lists them (or is *)", () => {
    const msg = dm({ message: "hello", groupInfo: { groupId: "G1", groupName: "Team" } });
    expect(signalInbound(msg, gating(), never).deliver).toBe(false);
    expect(signalInbound(msg, gating({ SIGNAL_GROUP_ALLOWED_USERS: "G2" }), never).deliver).toBe(false);
    const listed = signalInbound(msg, gating({ SIGNAL_GROUP_ALLOWED_USERS: "G2, G1" }), never);
    expect(listed).toMatchObject({
      deliver: true,
      message: { source: { chatId: "group:G1", chatType: "group", chatName: "Team" } },
    });
    expect(signalInbound(msg, gating({ SIGNAL_GROUP_ALLOWED_USERS: "*" }), never).deliver).toBe(true);
  });

  it("requires a mention in groups when asked and strips the bot's own mention", () => {
    const g = gating({ SIGNAL_GROUP_ALLOWED_USERS: "*", SIGNAL_REQUIRE_MENTION: "true" });
    const plain = dm({ message: "hello all", groupInfo: { groupId: "G1" } });
    expect(signalInbound(plain, g, never).deliver).toBe(false);
    const mentioned = dm({
      message: "\uFFFC what time is it",
      mentions: [{ start: 0, length: 1, number: BOT, uuid: "bot-uuid" }],
      groupInfo: { groupId: "G1" },
    });
    expect(signalInbound(mentioned, g, never)).toMatchObject({
      deliver: true,
      message: { text: "what time is it", mentioned: true },
    });
    // Someone else's mention neither counts nor is removed.
    const other = dm({
      message: "ask \uFFFC",
      mentions: [{ start: 4, length: 1, number: "+1999" }],
      groupInfo: { groupId: "G1" },
    });
    expect(signalInbound(other, g, never).deliver).toBe(false);
    expect(signalInbound(other, gating({ SIGNAL_GROUP_ALLOWED_USERS: "*" }), never)).toMatchObject({
      message: { text: "ask @+1999", mentioned: false },
    });
  });

  it("takes Note to Self from a linked device but not sync copies of our own sends", () => {
    const note = (ts: number, destination: string) => ({
      envelope: {
        sourceNumber: BOT,
        timestamp: ts,
        syncMessage: { sentMessage: { destinationNumber: destination, timestamp: ts, message: "remind me" } },
      },
    });
    expect(signalInbound(note(5, BOT), gating(), never)).toMatchObject({
      deliver: true,
      message: { source: { userId: BOT } },
    });
    expect(signalInbound(note(5, BOT), gating(), (ts) => ts === 5).deliver).toBe(false);
    expect(signalInbound(note(6, "+15551112222"), gating(), never).deliver).toBe(false);
    expect(
      signalInbound({ envelope: { sourceNumber: BOT, syncMessage: { readMessages: [] } } }, gating(), never)
        .deliver,
    ).toBe(false);
  });

  it("reads edited messages and attachments, and drops events without a sender", () => {
    const edited = dm(
      {},
      { dataMessage: undefined, editMessage: { dataMessage: { timestamp: 9, message: "fixed" } } },
    );
    expect(signalInbound(edited, gating(), never)).toMatchObject({
      deliver: true,
      message: { text: "fixed" },
    });
    const photo = dm({
      message: null,
      attachments: [{ id: "a1", contentType: "image/png", filename: "x.png", size: 3 }, { nope: 1 }],
    });
    expect(signalInbound(photo, gating(), never)).toMatchObject({
      deliver: true,
      attachments: [{ id: "a1", contentType: "image/png", fileName: "x.png", size: 3 }],
    });
    expect(signalInbound({ envelope: { dataMessage: { message: "x" } } }, gating(), never)).toMatchObject({
      deliver: false,
      report: expect.stringContaining("without a sender"),
    });
    for (const junk of [null, 42, "x", [], { envelope: "x" }])
      expect(signalInbound(junk, gating(), never).deliver).toBe(false);
  });

  it("reads gating from the environment first, then the signal: section", () => {
    expect(gating({}, { require_mention: true, ignore_stories: false })).toMatchObject({
      requireMention: true,
      ignoreStories: false,
    });
    expect(
      gating(
        { SIGNAL_REQUIRE_MENTION: "no", SIGNAL_IGNORE_STORIES: "yes" },
        { require_mention: true, ignore_stories: false },
      ),
    ).toMatchObject({
      requireMention: false,
      ignoreStories: true,
    });
  });
});

describe("mentions and message ids", () => {
  it("renders placeholders from the end so offsets hold", () => {
    expect(
      renderMentions("\uFFFC and \uFFFC", [
        { start: 0, length: 1, number: "+1" },
        { start: 6, length: 1, uuid: "u2" },
      ]),
    ).toBe("@+1 and @u2");
    expect(renderMentions("no placeholder", [{ start: 0, length: 1, number: "+1" }])).toBe("no placeholder");
  });
  it("parses ids it made and refuses others", () => {
    expect(parseSignalMessageId("17:+1555")).toEqual({ timestamp: 17, author: "+1555" });
    expect(parseSignalMessageId("abc")).toBeUndefined();
    expect(parseSignalMessageId(undefined)).toBeUndefined();
  });
});
