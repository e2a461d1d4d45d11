import { describe, expect, it } from "vitest";
import {
  mattermostInbound,
  mattermostSettings,
  parsePostedEvent,
} from "../../../src/gateway/platforms/mattermost-inbound.js";

const me = { userId: "botid", username: "hermes" };
const defaults = mattermostSettings({}, {});
const post = (fields: Record<string, unknown> = {}) => ({
  id: "p1",
  channel_id: "c1",
  user_id: "u1",
  message: "hello",
  root_id: "",
  type: "",
  create_at: 1000,
  ...fields,
});
const deliver = (p: unknown, channelType = "O", settings = defaults) => {
  const r = mattermostInbound(p, { channelType, senderName: "@alice" }, me, settings);
  return r.deliver ? r : undefined;
};

describe("mattermostSettings", () => {
  it("defaults: mention required, flat replies, reactions on, every channel", () => {
    expect(defaults).toMatchObject({ requireMention: true, replyMode: "off", reactions: true });
    expect(defaults.allowedChannels.size).toBe(0);
  });

  it("config wins over the environment; lists come as YAML lists or comma strings", () => {
    const s = mattermostSettings(
      {
        MATTERMOST_REQUIRE_MENTION: "true",
        MATTERMOST_ALLOWED_CHANNELS: "a, b",
        MATTERMOST_REPLY_MODE: "thread",
      },
      { require_mention: false, free_response_channels: ["x", " y "] },
    );
    expect(s.requireMention).toBe(false);
    expect([...s.allowedChannels]).toEqual(["a", "b"]);
    expect([...s.freeResponseChannels]).toEqual(["x", "y"]);
    expect(s.replyMode).toBe("thread");
    expect(mattermostSettings({ MATTERMOST_REPLY_MODE: "sideways" }, {}).replyMode).toBe("off");
  });
});

describe("mattermostInbound", () => {
  it("a DM goes through as is, with the sender's username", () => {
    const r = deliver(post(), "D");
    expect(r?.message.source).toMatchObject({
      platform: "mattermost",
      chatType: "dm",
      chatId: "c1",
      userId: "u1",
      userName: "alice",
    });
    expect(r?.message.text).toBe("hello");
    expect(r?.message.source.threadId).toBeUndefined();
  });

  it("ignores our own posts, system posts, deleted posts and posts without ids", () => {
    expect(deliver(post({ user_id: "botid" }), "D")).toBeUndefined();
    expect(deliver(post({ type: "system_join_channel" }), "D")).toBeUndefined();
    expect(deliver(post({ delete_at: 5 }), "D")).toBeUndefined();
    const bad = mattermostInbound({ message: "x" }, {}, me, defaults);
    expect(bad).toMatchObject({ deliver: false, report: expect.stringContaining("without id") });
    expect(mattermostInbound("nope", {}, me, defaults).deliver).toBe(false);
  });

  it("in channels needs an @mention (by handle or id) and strips it", () => {
    expect(deliver(post({ message: "hello all" }))).toBeUndefined();
    expect(deliver(post({ message: "@hermes what's up?" }))?.message).toMatchObject({
      text: "what's up?",
      mentioned: true,
    });
    expect(deliver(post({ message: "hey @HERMES, hi" }))?.message.text).toBe("hey , hi");
    expect(deliver(post({ message: "ping @botid please" }))?.message.text).toBe("ping please");
    expect(deliver(post({ message: "thanks @hermes." }))?.message.text).toBe("thanks .");
  });

  it("look-alike handles are not mentions", () => {
    for (const message of [
      "@hermesbot hi",
      "@hermes-dev hi",
      "mail me at x@hermes",
      "@hermes.team hi",
      "email@hermes hi",
    ]) {
      expect(deliver(post({ message })), message).toBeUndefined();
    }
  });

  it("free-response channels and require_mention: false answer without a mention", () => {
    expect(
      deliver(post(), "O", mattermostSettings({ MATTERMOST_FREE_RESPONSE_CHANNELS: "c1" }, {}))?.message
        .mentioned,
    ).toBe(false);
    expect(
      deliver(post(), "P", mattermostSettings({}, { require_mention: false }))?.message.source.chatType,
    ).toBe("group");
  });

  it("allowed_channels is a whitelist for channels, even when mentioned; DMs are not affected", () => {
    const s = mattermostSettings({ MATTERMOST_ALLOWED_CHANNELS: "c2" }, {});
    expect(deliver(post({ message: "@hermes hi" }), "O", s)).toBeUndefined();
    expect(deliver(post({ message: "@hermes hi", channel_id: "c2" }), "O", s)).toBeDefined();
    expect(deliver(post(), "D", s)).toBeDefined();
  });

  it("threads: a reply stays in its thread; thread mode starts one under a top-level channel post", () => {
    expect(deliver(post({ message: "@hermes x", root_id: "r1" }))?.message.source.threadId).toBe("r1");
    expect(deliver(post({ message: "@hermes x" }))?.message.source.threadId).toBeUndefined();
    const thread = mattermostSettings({ MATTERMOST_REPLY_MODE: "thread" }, {});
    expect(deliver(post({ message: "@hermes x" }), "O", thread)?.message.source.threadId).toBe("p1");
    expect(deliver(post(), "D", thread)?.message.source.threadId).toBeUndefined();
  });

  it("files: ids with what metadata says about them", () => {
    const r = deliver(
      post({
        file_ids: ["f1", "f2", 7],
        metadata: { files: [{ id: "f1", name: "a.png", mime_type: "image/png", size: 3 }] },
      }),
      "D",
    );
    expect(r?.files).toEqual([{ id: "f1", name: "a.png", mimeType: "image/png", size: 3 }, { id: "f2" }]);
  });
});

describe("parsePostedEvent", () => {
  it("parses the post JSON string and the event's channel fields", () => {
    const parsed = parsePostedEvent({
      post: JSON.stringify(post()),
      channel_type: "D",
      sender_name: "@a",
      channel_display_name: "A",
    });
    expect(parsed?.meta).toEqual({ channelType: "D", senderName: "@a", channelName: "A" });
    expect(parsePostedEvent({ post: "{not json" })).toBeUndefined();
    expect(parsePostedEvent({ post: "42" })).toBeUndefined();
    expect(parsePostedEvent(null)).toBeUndefined();
  });
});
