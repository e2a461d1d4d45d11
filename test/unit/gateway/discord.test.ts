import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { createDiscordAdapter } from "../../../src/gateway/platforms/discord.js";
import { PlatformError } from "../../../src/gateway/platforms/types.js";
import {
  connected,
  context,
  fake,
  home,
  recorder,
  restartFake,
  startNewFake,
  tracked,
  useDiscordBench,
  WAIT,
} from "../../support/discord-adapter-bench.js";
import { type FakeGuild, startFakeDiscord } from "../../support/fake-discord.js";

useDiscordBench();

describe("connect", () => {
  it("logs in over REST and the gateway with the intents the adapter needs", async () => {
    await restartFake({ heartbeatIntervalMs: 200 });
    const { events } = await connected();
    expect(fake.identifies).toHaveLength(1);
    const identify = fake.identifies[0] as { token: string; intents: number };
    expect(identify.token).toBe(fake.token);
    // Guilds | GuildMessages | DirectMessages | MessageContent
    for (const bit of [1, 1 << 9, 1 << 12, 1 << 15]) expect(identify.intents & bit).toBe(bit);
    expect(fake.calls.some((c) => c.method === "GET" && c.path === "/gateway/bot")).toBe(true);
    // Heartbeats are answered, so the client stays on its first session.
    await vi.waitFor(() => expect(fake.heartbeats).toBeGreaterThanOrEqual(2), WAIT);
    expect(fake.identifies).toHaveLength(1);
    expect(events.errors).toEqual([]);
  });

  it("rejects a refused token quickly and clearly", async () => {
    const adapter = tracked(createDiscordAdapter(context({}, { DISCORD_BOT_TOKEN: "wrong-token" })));
    const started = Date.now();
    await expect(adapter.connect(recorder().handlers)).rejects.toThrow(/Discord refused DISCORD_BOT_TOKEN/);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(fake.identifies).toHaveLength(0);
  });

  it("explains a gateway that refuses the token or the intents", async () => {
    await restartFake({ closeOnIdentify: 4004 });
    const refused = tracked(createDiscordAdapter(context()));
    await expect(refused.connect(recorder().handlers)).rejects.toThrow(/Discord refused DISCORD_BOT_TOKEN/);
    await restartFake({ closeOnIdentify: 4014 });
    const intents = tracked(createDiscordAdapter(context()));
    await expect(intents.connect(recorder().handlers)).rejects.toThrow(/enable Message Content Intent/);
  });

  it("names the missing variable when there is no token", async () => {
    const adapter = createDiscordAdapter(context({ env: {} }));
    await expect(adapter.connect(recorder().handlers)).rejects.toThrow(/DISCORD_BOT_TOKEN is not set/);
  });

  it("says Discord cannot be reached when nothing listens at the API address", async () => {
    const url = fake.apiBase;
    await fake.stop();
    const adapter = tracked(createDiscordAdapter(context({}, { DISCORD_API_URL: url })));
    await expect(adapter.connect(recorder().handlers)).rejects.toThrow(
      /Could not reach Discord at http:\/\/127/,
    );
    await startNewFake();
  });

  it("gives up after the connect timeout when the gateway never says hello", async () => {
    await restartFake({ silentGateway: true });
    const adapter = tracked(createDiscordAdapter(context(), { connectTimeoutMs: 1500 }));
    const started = Date.now();
    const error = await adapter.connect(recorder().handlers).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(PlatformError);
    expect(String(error)).toMatch(/did not finish logging in within 1.5 s/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("disconnect during a hanging login ends it at once", async () => {
    await restartFake({ silentGateway: true });
    const adapter = tracked(createDiscordAdapter(context(), { connectTimeoutMs: 60_000 }));
    const connecting = adapter.connect(recorder().handlers).catch((err: unknown) => err);
    await fake.waitForCall("GET", "/gateway/bot");
    const started = Date.now();
    await adapter.disconnect();
    expect(String(await connecting)).toMatch(/disconnected before the login finished/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("takes the gateway URL from options when given", async () => {
    const other = await startFakeDiscord({ token: fake.token });
    try {
      const adapter = tracked(createDiscordAdapter(context(), { gatewayUrl: other.gatewayUrl }));
      await adapter.connect(recorder().handlers);
      expect(other.identifies).toHaveLength(1);
      expect(fake.identifies).toHaveLength(0);
      await adapter.disconnect();
    } finally {
      await other.stop();
    }
  });

  it("disconnect closes the gateway session and is idempotent", async () => {
    const { adapter } = await connected();
    expect(fake.openSessions).toBe(1);
    await adapter.disconnect();
    await adapter.disconnect();
    await vi.waitFor(() => expect(fake.openSessions).toBe(0), WAIT);
    await expect(adapter.send({ chatId: "1" }, "hi")).rejects.toThrow(/not connected/);
  });
});

describe("inbound messages", () => {
  let guild: FakeGuild;
  let general: string;

  beforeEach(() => {
    guild = fake.addGuild({ name: "Hermes Lab", channels: [{ name: "general" }, { name: "random" }] });
    general = guild.channels[0]!.id;
  });

  it("delivers a DM with a dm source", async () => {
    const { events } = await connected();
    const alice = fake.addUser("alice");
    const sent = fake.injectMessage({ author: alice, content: "hello there" });
    await vi.waitFor(() => expect(events.messages).toHaveLength(1), WAIT);
    expect(events.messages[0]).toEqual({
      source: {
        platform: "discord",
        chatType: "dm",
        chatId: sent.channel_id,
        userId: alice.id,
        userName: "alice",
      },
      text: "hello there",
      messageId: sent.id,
      media: undefined,
      mentioned: undefined,
    });
  });

  it("ignores a guild message without a mention and passes one that mentions the bot, mention stripped", async () => {
    const { events } = await connected();
    const bob = fake.addUser("bob");
    fake.injectMessage({ channelId: general, author: bob, content: "just chatting" });
    const addressed = fake.injectMessage({
      channelId: general,
      author: bob,
      content: `<@${fake.botUser.id}> what is the weather?`,
    });
    fake.injectMessage({
      channelId: general,
      author: bob,
      content: `hey <@!${fake.botUser.id}>, still there?`,
    });
    await vi.waitFor(() => expect(events.messages).toHaveLength(2), WAIT);
    expect(events.messages[0]).toMatchObject({
      source: {
        platform: "discord",
        chatType: "channel",
        chatId: general,
        chatName: "general",
        scopeId: guild.id,
        userId: bob.id,
      },
      text: "what is the weather?",
      messageId: addressed.id,
      mentioned: true,
    });
    expect(events.messages[1]?.text).toBe("hey , still there?");
    expect(events.messages.some((m) => m.text === "just chatting")).toBe(false);
  });

  it("passes a reply to the bot without a mention", async () => {
    const { adapter, events } = await connected();
    const { messageId } = await adapter.send({ chatId: general }, "Which file?");
    fake.injectMessage({ channelId: general, content: "the second one", replyTo: messageId });
    await vi.waitFor(() => expect(events.messages).toHaveLength(1), WAIT);
    expect(events.messages[0]).toMatchObject({ text: "the second one", mentioned: false });
  });

  it("passes everything in free-response channels and when require_mention is off", async () => {
    const random = guild.channels[1]!.id;
    const { events } = await connected({ settings: { free_response_channels: [random] } });
    fake.injectMessage({ channelId: general, content: "not for the bot" });
    fake.injectMessage({ channelId: random, content: "free talk" });
    await vi.waitFor(() => expect(events.messages.map((m) => m.text)).toEqual(["free talk"]), WAIT);
    expect(events.messages[0]?.mentioned).toBe(false);

    const open = await connected({ settings: { require_mention: false } });
    fake.injectMessage({ channelId: general, content: "anyone?" });
    await vi.waitFor(() => expect(open.events.messages.map((m) => m.text)).toContain("anyone?"), WAIT);
  });

  it("maps a thread message to chatType thread with the parent as chat and the thread as threadId", async () => {
    const { events } = await connected();
    const thread = fake.addThread({ parentId: general, name: "deploy plan" });
    fake.injectMessage({ channelId: thread.id, content: `<@${fake.botUser.id}> status?` });
    await vi.waitFor(() => expect(events.messages).toHaveLength(1), WAIT);
    expect(events.messages[0]?.source).toMatchObject({
      chatType: "thread",
      chatId: general,
      threadId: thread.id,
      scopeId: guild.id,
      chatName: "general / deploy plan",
    });
  });

  it("looks up the parent of a thread the client was never told about", async () => {
    const { events } = await connected();
    const thread = fake.addThread({ parentId: general, name: "old thread", announce: false });
    fake.injectMessage({ channelId: thread.id, content: `<@${fake.botUser.id}> hello?` });
    await vi.waitFor(() => expect(events.messages).toHaveLength(1), WAIT);
    expect(events.messages[0]?.source).toMatchObject({
      chatType: "thread",
      chatId: general,
      threadId: thread.id,
    });
    expect(fake.calls.some((c) => c.method === "GET" && c.path === `/channels/${thread.id}`)).toBe(true);
  });

  it("ignores messages from bots, itself included", async () => {
    const { events } = await connected();
    const otherBot = fake.addUser("other-bot", { bot: true });
    fake.injectMessage({ author: otherBot, content: "beep" });
    fake.injectMessage({ author: fake.botUser, content: "my own echo" });
    fake.injectMessage({ content: "from a person" });
    await vi.waitFor(() => expect(events.messages).toHaveLength(1), WAIT);
    expect(events.messages[0]?.text).toBe("from a person");
  });

  it("survives malformed dispatches and keeps delivering", async () => {
    const { events } = await connected();
    fake.dispatch("MESSAGE_CREATE", {
      id: "1",
      channel_id: general,
      guild_id: guild.id,
      content: "no author",
    });
    fake.dispatch("MESSAGE_CREATE", { id: "2", channel_id: "999", channel_type: 77, content: "odd channel" });
    fake.dispatch("INTERACTION_CREATE", { id: "3", type: 3, data: {} });
    fake.dispatch("INTERACTION_CREATE", {
      id: "5",
      type: 3,
      token: "t",
      data: { component_type: 2, custom_id: "approve" },
      channel_id: general,
    });
    fake.dispatch("MESSAGE_CREATE", null);
    fake.dispatch("THREAD_CREATE", { id: "4" });
    fake.injectMessage({ content: "still alive" });
    await vi.waitFor(() => expect(events.messages.map((m) => m.text)).toEqual(["still alive"]), WAIT);
    expect(events.errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/malformed MESSAGE_CREATE/),
        expect.stringMatching(/malformed INTERACTION_CREATE/),
      ]),
    );
  });

  it("downloads attachments into the media cache with the right kinds", async () => {
    const { events } = await connected();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const carol = fake.addUser("carol");
    // Same DM: the text-only voice note must not overtake the message with four downloads.
    fake.injectMessage({
      author: carol,
      content: "look at these",
      attachments: [
        { filename: "chart.png", data: png, contentType: "image/png" },
        { filename: "notes.pdf", data: "%PDF-1.4", contentType: "application/pdf" },
        { filename: "clip.mp4", data: "mp4", contentType: "video/mp4" },
        { filename: "song.mp3", data: "mp3", contentType: "audio/mpeg" },
      ],
    });
    fake.injectMessage({
      author: carol,
      content: "",
      flags: 8192,
      attachments: [{ filename: "voice-message.ogg", data: "ogg", contentType: "audio/ogg", flags: 1 << 13 }],
    });
    await vi.waitFor(() => expect(events.messages).toHaveLength(2), WAIT);
    const [first, voice] = events.messages;
    expect(first?.media?.map((m) => [m.kind, m.fileName, m.mimeType])).toEqual([
      ["photo", "chart.png", "image/png"],
      ["document", "notes.pdf", "application/pdf"],
      ["video", "clip.mp4", "video/mp4"],
      ["audio", "song.mp3", "audio/mpeg"],
    ]);
    const stored = first?.media?.[0]?.path ?? "";
    expect(stored.startsWith(join(home, "cache", "media"))).toBe(true);
    expect(readFileSync(stored)).toEqual(png);
    expect(voice?.media?.map((m) => m.kind)).toEqual(["voice"]);
    expect(voice?.text).toBe("");
  });

  it("keeps the message with a note when an attachment is too big or cannot be fetched", async () => {
    const { events } = await connected({ maxInboundMediaBytes: 100 });
    fake.injectMessage({
      content: "two files",
      attachments: [
        { filename: "huge.zip", data: "zip", size: 5_000_000, contentType: "application/zip" },
        { filename: "gone.txt", data: "x", missing: true, contentType: "text/plain" },
        { filename: "liar.bin", data: Buffer.alloc(500), size: 10 },
      ],
    });
    await vi.waitFor(() => expect(events.messages).toHaveLength(1), WAIT);
    const message = events.messages[0]!;
    expect(message.media).toBeUndefined();
    expect(message.text).toMatch(/^two files\n/);
    expect(message.text).toMatch(
      /huge\.zip could not be downloaded: it is 4\.8 MiB, over the 100 B download limit/,
    );
    expect(message.text).toMatch(/gone\.txt could not be downloaded: HTTP 404/);
    expect(message.text).toMatch(/liar\.bin could not be downloaded: it is over the 100 B download limit/);
    expect(events.errors).toHaveLength(3);
    expect(existsSync(join(home, "cache", "media"))).toBe(false);
  });
});
