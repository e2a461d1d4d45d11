/**
 * The Discord adapter driven through the real discord.js client against a local fake of Discord
 * (REST v10 + Gateway WebSocket on 127.0.0.1): every test here crosses the real wire protocols.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  buttonComponents,
  createDiscordAdapter,
  mediaKindFor,
  splitForDiscord,
  stripBotMention,
  toDiscordMarkdown,
} from "../../../src/gateway/platforms/discord.js";
import type {
  AdapterContext,
  AdapterHandlers,
  InboundAction,
  InboundMessage,
  PlatformAdapter,
} from "../../../src/gateway/platforms/types.js";
import { PlatformError } from "../../../src/gateway/platforms/types.js";
import { type FakeDiscord, type FakeGuild, startFakeDiscord } from "../../support/fake-discord.js";

const WAIT = { timeout: 15_000, interval: 20 };

/** Handlers that record what the adapter delivers; `onAction` runs too when given. */
function recorder(onAction?: (action: InboundAction) => void) {
  const [messages, actions, errors] = [[] as InboundMessage[], [] as InboundAction[], [] as string[]];
  const handlers: AdapterHandlers = {
    onMessage: (message) => messages.push(message),
    onAction: (action) => [actions.push(action), onAction?.(action)],
    onError: (line) => errors.push(line),
  };
  return { handlers, messages, actions, errors };
}

let fake: FakeDiscord;
let home: string;
const adapters: PlatformAdapter[] = [];

function context(overrides: Partial<AdapterContext> = {}, env: Record<string, string> = {}): AdapterContext {
  return {
    home,
    env: { DISCORD_BOT_TOKEN: fake.token, DISCORD_API_URL: fake.apiBase, ...env },
    settings: {},
    mediaDir: join(home, "cache", "media"),
    maxInboundMediaBytes: 1024 * 1024,
    ...overrides,
  };
}

/** Registers an adapter for disconnection after the test. */
function tracked(adapter: PlatformAdapter): PlatformAdapter {
  adapters.push(adapter);
  return adapter;
}

async function restartFake(options?: Parameters<typeof startFakeDiscord>[0]): Promise<void> {
  await fake.stop();
  fake = await startFakeDiscord(options);
}

async function connected(
  overrides: Partial<AdapterContext> = {},
  onAction?: (action: InboundAction) => void,
): Promise<{ adapter: PlatformAdapter; events: ReturnType<typeof recorder> }> {
  const adapter = tracked(createDiscordAdapter(context(overrides), { connectTimeoutMs: 20_000 }));
  const events = recorder(onAction);
  await adapter.connect(events.handlers);
  return { adapter, events };
}

beforeEach(async () => {
  fake = await startFakeDiscord();
  home = mkdtempSync(join(tmpdir(), "hermes-discord-"));
});

afterEach(async () => {
  for (const adapter of adapters.splice(0)) await adapter.disconnect();
  await fake.stop();
  rmSync(home, { recursive: true, force: true });
});

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
    fake = await startFakeDiscord();
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

describe("outbound", () => {
  let guild: FakeGuild;
  let general: string;

  beforeEach(() => {
    guild = fake.addGuild({ name: "Hermes Lab", channels: [{ name: "general" }] });
    general = guild.channels[0]!.id;
  });

  it("send posts the text to the channel, threads replies and blocks mass pings", async () => {
    const { adapter } = await connected();
    const first = await adapter.send({ chatId: general }, "Hello @everyone, **done**.");
    const reply = await adapter.send({ chatId: general, replyTo: first.messageId }, "and a reply");
    const posts = fake.calls.filter((c) => c.method === "POST" && c.path === `/channels/${general}/messages`);
    expect(posts).toHaveLength(2);
    expect(posts[0]?.body).toMatchObject({
      content: "Hello @everyone, **done**.",
      allowed_mentions: { parse: ["users"] },
    });
    expect(posts[0]?.body).not.toHaveProperty("message_reference");
    expect(posts[1]?.body).toMatchObject({
      content: "and a reply",
      message_reference: { message_id: first.messageId, fail_if_not_exists: false },
    });
    expect(fake.messages.get(reply.messageId)?.content).toBe("and a reply");
    // A threadId wins over the chat id.
    const thread = fake.addThread({ parentId: general, name: "work" });
    await adapter.send({ chatId: general, threadId: thread.id }, "in the thread");
    const call = await fake.waitForCall("POST", `/channels/${thread.id}/messages`);
    expect(call.body).toMatchObject({ content: "in the thread" });
  });

  it("converts tables and deep headings unless plain, and splits long text", async () => {
    const { adapter } = await connected();
    await adapter.send({ chatId: general }, "#### Result\n\n| a | b |\n|---|---|\n| 1 | 22 |");
    await adapter.send({ chatId: general }, "| raw | table |\n|---|---|", { plain: true });
    const long = Array.from({ length: 300 }, (_, i) => `line ${i} of a long answer`).join("\n");
    const sent = await adapter.send({ chatId: general }, long, { buttons: [[{ label: "OK", data: "ok" }]] });
    const contents = fake.calls.filter((c) => c.method === "POST").map((c) => String(c.body?.content));
    expect(contents[0]).toBe("**Result**\n\n```\na   | b\n----+----\n1   | 22\n```");
    expect(contents[1]).toBe("| raw | table |\n|---|---|");
    const pieces = contents.slice(2);
    expect(pieces.length).toBeGreaterThan(1);
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(2000);
    expect(pieces.join("\n")).toBe(long);
    // Buttons ride on the last piece, whose id is returned.
    expect(fake.messages.get(sent.messageId)?.components).toHaveLength(1);
  });

  it("reports failures as PlatformError, with retryAfterMs on a rate limit", async () => {
    const { adapter } = await connected();
    const unknown = await adapter.send({ chatId: "123456789" }, "hi").catch((err: unknown) => err);
    expect(unknown).toBeInstanceOf(PlatformError);
    expect(String(unknown)).toMatch(
      /Discord refused to send a message to channel 123456789: Unknown Channel/,
    );

    fake.rateLimitNext("POST", `/channels/${general}/messages`, 5);
    const limited = await adapter.send({ chatId: general }, "hi").catch((err: unknown) => err);
    expect(limited).toBeInstanceOf(PlatformError);
    expect((limited as PlatformError).retryAfterMs).toBeGreaterThanOrEqual(5000);
    expect((limited as PlatformError).retryAfterMs).toBeLessThan(7000);
  });

  it("edit patches the message and drops its buttons unless given again", async () => {
    const { adapter } = await connected();
    const buttons = [[{ label: "Approve", data: "approve:1", style: "primary" as const }]];
    const { messageId } = await adapter.send({ chatId: general }, "Working", { buttons });
    await adapter.edit({ chatId: general }, messageId, "Working.. still", { buttons });
    expect(fake.messages.get(messageId)?.components).toHaveLength(1);
    await adapter.edit({ chatId: general }, messageId, "Done");
    const patches = fake.calls.filter((c) => c.method === "PATCH");
    expect(patches.map((c) => c.path)).toEqual([
      `/channels/${general}/messages/${messageId}`,
      `/channels/${general}/messages/${messageId}`,
    ]);
    expect(fake.messages.get(messageId)).toMatchObject({ content: "Done", components: [] });
    await expect(adapter.edit({ chatId: general }, "42", "x")).rejects.toThrow(/Unknown Message/);
  });

  it("typing posts the typing indicator and never throws", async () => {
    const { adapter } = await connected();
    await adapter.typing({ chatId: general });
    await fake.waitForCall("POST", `/channels/${general}/typing`);
    await expect(adapter.typing({ chatId: "404404" })).resolves.toBeUndefined();
    const idle = createDiscordAdapter(context());
    await expect(idle.typing({ chatId: general })).resolves.toBeUndefined();
  });

  it("sendMedia uploads the file as multipart with the caption", async () => {
    const { adapter } = await connected();
    const file = join(home, "report.pdf");
    writeFileSync(file, "%PDF-1.4 fake report");
    const sent = await adapter.sendMedia(
      { chatId: general, replyTo: "77" },
      { kind: "document", path: file, caption: "Your report" },
    );
    const upload = await fake.waitForCall("POST", `/channels/${general}/messages`);
    expect(upload.headers["content-type"]).toMatch(/^multipart\/form-data/);
    expect(upload.body).toMatchObject({ content: "Your report", message_reference: { message_id: "77" } });
    expect(upload.files).toHaveLength(1);
    expect(upload.files[0]?.name).toBe("report.pdf");
    expect(upload.files[0]?.data.toString()).toBe("%PDF-1.4 fake report");
    expect(fake.messages.get(sent.messageId)?.attachments).toHaveLength(1);
  });

  it("sendMedia refuses files over 25 MiB and missing files before uploading", async () => {
    const { adapter } = await connected();
    const big = join(home, "big.mp4");
    writeFileSync(big, "");
    truncateSync(big, 26 * 1024 * 1024);
    const error = await adapter
      .sendMedia({ chatId: general }, { kind: "video", path: big })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformError);
    expect(String(error)).toMatch(/big\.mp4.*26\.0 MiB.*25\.0 MiB upload limit/);
    await expect(
      adapter.sendMedia({ chatId: general }, { kind: "photo", path: join(home, "nope.png") }),
    ).rejects.toThrow(/nope\.png.*no such file/);
    expect(fake.calls.filter((c) => c.method === "POST" && c.path.endsWith("/messages"))).toHaveLength(0);
  });
});

describe("buttons", () => {
  let general: string;

  beforeEach(() => {
    general = fake.addGuild({ name: "Hermes Lab", channels: [{ name: "general" }] }).channels[0]!.id;
  });

  it("sends buttons as action rows and turns a press into onAction; acknowledge answers it", async () => {
    const { adapter, events } = await connected({}, (action) => void action.acknowledge?.());
    const { messageId } = await adapter.send({ chatId: general }, "Run `rm -rf build`?", {
      buttons: [
        [
          { label: "Approve", data: "approve:abc", style: "primary" },
          { label: "Deny", data: "deny:abc", style: "danger" },
          { label: "Later", data: "later:abc" },
        ],
      ],
    });
    const post = await fake.waitForCall("POST", `/channels/${general}/messages`);
    expect(post.body?.components).toEqual([
      {
        type: 1,
        components: [
          { type: 2, style: 1, label: "Approve", custom_id: "approve:abc" },
          { type: 2, style: 4, label: "Deny", custom_id: "deny:abc" },
          { type: 2, style: 2, label: "Later", custom_id: "later:abc" },
        ],
      },
    ]);
    const dave = fake.addUser("dave");
    const press = fake.pressButton({ messageId, customId: "approve:abc", user: dave });
    await vi.waitFor(() => expect(events.actions).toHaveLength(1), WAIT);
    expect(events.actions[0]).toMatchObject({
      source: {
        platform: "discord",
        chatType: "channel",
        chatId: general,
        userId: dave.id,
        userName: "dave",
      },
      data: "approve:abc",
      messageId,
    });
    const callback = await fake.waitForCall(
      "POST",
      `/interactions/${press.interactionId}/${press.token}/callback`,
    );
    expect(callback.body).toEqual({ type: 6 });
    expect(callback.status).toBe(204);
  });

  it("acknowledge with text answers with an ephemeral message", async () => {
    const { adapter } = await connected({}, (action) => void action.acknowledge?.("Approved"));
    const dm = fake.dmChannel(fake.addUser("erin"));
    const { messageId } = await adapter.send({ chatId: dm.id }, "Allow?", {
      buttons: [[{ label: "Yes", data: "yes" }]],
    });
    const press = fake.pressButton({ messageId, customId: "yes", user: dm.recipient });
    const callback = await fake.waitForCall(
      "POST",
      `/interactions/${press.interactionId}/${press.token}/callback`,
    );
    expect(callback.body).toMatchObject({ type: 4, data: { content: "Approved", flags: 64 } });
  });

  it("answers a press nobody acknowledged within Discord's 3 s window, and a late toast follows up", async () => {
    const pending: InboundAction[] = [];
    let deliveredAt = 0;
    const { adapter, events } = await connected({}, (action) => {
      deliveredAt = Date.now();
      pending.push(action);
    });
    const { messageId } = await adapter.send({ chatId: general }, "Allow?", {
      buttons: [[{ label: "Yes", data: "yes" }]],
    });
    const press = fake.pressButton({ messageId, customId: "yes" });
    const callback = await fake.waitForCall(
      "POST",
      `/interactions/${press.interactionId}/${press.token}/callback`,
    );
    // Measured from delivery, so a slow test machine does not count against the adapter.
    expect(deliveredAt).toBeGreaterThan(0);
    expect(Date.now() - deliveredAt).toBeLessThan(3000);
    expect(callback.body).toEqual({ type: 6 });
    await pending[0]?.acknowledge?.("Too late but shown");
    const followUp = await fake.waitForCall("POST", (p) => p.startsWith(`/webhooks/${fake.applicationId}/`));
    expect(followUp.body).toMatchObject({ content: "Too late but shown", flags: 64 });
    expect(events.errors).toEqual([]);
  });
});

describe("slash commands", () => {
  it("publishes the chat's commands and turns a picked one into the typed /command", async () => {
    const { adapter, events } = await connected();
    await adapter.setCommands?.([
      { name: "model", description: "Show the model, or use another one from the next turn" },
      { name: "reload_mcp", description: "x".repeat(300) },
    ]);
    expect(fake.applicationCommands.map((c) => c.name)).toEqual(["model", "reload_mcp"]);
    expect(String(fake.applicationCommands[1]?.description).length).toBeLessThanOrEqual(100);
    const dm = fake.dmChannel(fake.addUser("frank"));
    const id = fake.useSlashCommand({ channelId: dm.id, name: "model", args: " gpt-5 ", user: dm.recipient });
    await vi.waitFor(() => expect(events.messages).toHaveLength(1), WAIT);
    expect(events.messages[0]).toMatchObject({
      text: "/model gpt-5",
      source: { platform: "discord", chatType: "dm", chatId: dm.id, userId: dm.recipient?.id },
    });
    const callback = await fake.waitForCall("POST", (p) => p.startsWith(`/interactions/${id}/`));
    expect(callback.body).toMatchObject({ type: 4, data: { content: "/model gpt-5" } });
    fake.useSlashCommand({ channelId: dm.id, name: "status", user: dm.recipient });
    await vi.waitFor(() => expect(events.messages.map((m) => m.text)).toContain("/status"), WAIT);
  });
});

describe("process lifetime", () => {
  it("a process that receives a file, replies and disconnects exits on its own", async () => {
    const script = join(home, "lifetime.mts");
    const adapterPath = resolve(import.meta.dirname, "../../../src/gateway/platforms/discord.ts");
    const ctx = { home, settings: {}, mediaDir: join(home, "media"), maxInboundMediaBytes: 1024 };
    writeFileSync(
      script,
      [
        `import { createDiscordAdapter } from ${JSON.stringify(adapterPath)};`,
        `const adapter = createDiscordAdapter({ ...${JSON.stringify(ctx)}, env: process.env });`,
        "const got = new Promise((resolve) => {",
        "  adapter.connect({ onMessage: resolve, onAction() {}, onError: console.error }).then(() => console.log('ready'));",
        "});",
        "const message = await got;",
        "await adapter.send({ chatId: message.source.chatId }, 'got ' + message.media.length + ' file');",
        "await adapter.disconnect();",
        "console.log('disconnected');",
      ].join("\n"),
    );
    // One process (tsx as a loader, not its CLI wrapper), so a kill on timeout reaches it.
    const tsx = pathToFileURL(resolve(import.meta.dirname, "../../../node_modules/tsx/dist/loader.mjs")).href;
    const env = {
      PATH: process.env.PATH ?? "",
      DISCORD_BOT_TOKEN: fake.token,
      DISCORD_API_URL: fake.apiBase,
    };
    const child = spawn(process.execPath, ["--import", tsx, script], { env, stdio: "pipe" });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((done) => {
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      child.on("close", (code) => {
        clearTimeout(timer);
        done(code);
      });
    });
    try {
      await vi.waitFor(() => expect(output).toContain("ready"), { timeout: 25_000, interval: 50 });
      fake.injectMessage({ content: "here", attachments: [{ filename: "a.txt", data: "hello" }] });
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    expect(output).toContain("disconnected");
    expect(fake.calls.find((c) => c.method === "POST")?.body).toMatchObject({ content: "got 1 file" });
  }, 45_000);
});

describe("pure helpers", () => {
  it("mediaKindFor sorts by MIME type, voice only with the voice-message flag", () => {
    const types = ["image/png", "audio/ogg", "audio/ogg; codecs=opus", "video/webm", "application/zip", null];
    expect(types.map((t) => mediaKindFor(t, false))).toEqual([
      "photo",
      "audio",
      "audio",
      "video",
      "document",
      "document",
    ]);
    expect(mediaKindFor("audio/ogg", true)).toBe("voice");
  });

  it("stripBotMention removes both mention spellings", () => {
    expect(stripBotMention("<@42> hi <@!42>  there", "42")).toBe("hi there");
    expect(stripBotMention("<@421> not me", "42")).toBe("<@421> not me");
  });

  it("toDiscordMarkdown leaves code blocks and shallow headings alone", () => {
    const text = "### Plan\n```\n#### not a heading\n| a | b |\n|---|---|\n```\n###### Deep";
    expect(toDiscordMarkdown(text)).toBe(
      "### Plan\n```\n#### not a heading\n| a | b |\n|---|---|\n```\n**Deep**",
    );
  });

  it("splitForDiscord keeps code fences balanced across pieces", () => {
    const code = Array.from({ length: 200 }, (_, i) => `const value${i} = ${i};`).join("\n");
    const pieces = splitForDiscord(`Here:\n\`\`\`ts\n${code}\n\`\`\`\nDone.`, 1000);
    expect(pieces.length).toBeGreaterThan(2);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(1000);
      expect((piece.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(splitForDiscord("short")).toEqual(["short"]);
    expect(splitForDiscord("x".repeat(4500), 2000).every((p) => p.length <= 2000)).toBe(true);
  });

  it("buttonComponents caps rows and buttons at Discord's limits", () => {
    const row = Array.from({ length: 7 }, (_, i) => ({ label: `b${i}`, data: `d${i}` }));
    const rows = buttonComponents(Array.from({ length: 7 }, () => row));
    expect(rows).toHaveLength(5);
    expect(rows[0]?.components).toHaveLength(5);
  });
});
