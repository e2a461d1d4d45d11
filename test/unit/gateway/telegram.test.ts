import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createTelegramAdapter,
  type TelegramAdapterOptions,
  telegramGating,
  telegramInbound,
  type WireMessage,
} from "../../../src/gateway/platforms/telegram.js";
import {
  type AdapterContext,
  type InboundAction,
  type InboundMessage,
  type PlatformAdapter,
  PlatformError,
} from "../../../src/gateway/platforms/types.js";
import { startTelegramEmulator, type TelegramEmulator } from "../../support/telegram-emulator.js";

interface Inbox {
  messages: InboundMessage[];
  actions: InboundAction[];
  errors: string[];
}

let tg: TelegramEmulator;
let root: string;
let adapters: PlatformAdapter[];

beforeEach(async () => {
  tg = await startTelegramEmulator();
  root = mkdtempSync(join(tmpdir(), "hermes-telegram-"));
  adapters = [];
});

afterEach(async () => {
  for (const adapter of adapters) await adapter.disconnect();
  await tg.stop();
  rmSync(root, { recursive: true, force: true });
});

function context(overrides: Partial<AdapterContext> = {}): AdapterContext {
  return {
    home: root,
    env: { TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.apiRoot },
    settings: {},
    mediaDir: join(root, "cache", "media"),
    maxInboundMediaBytes: 1024 * 1024,
    ...overrides,
  };
}

function adapterFor(overrides: Partial<AdapterContext> = {}, options: TelegramAdapterOptions = {}) {
  const adapter = createTelegramAdapter(context(overrides), { pollingTimeoutSeconds: 2, ...options });
  adapters.push(adapter);
  return adapter;
}

async function connected(overrides: Partial<AdapterContext> = {}, options: TelegramAdapterOptions = {}) {
  const adapter = adapterFor(overrides, options);
  const inbox: Inbox = { messages: [], actions: [], errors: [] };
  await adapter.connect({
    onMessage: (m) => inbox.messages.push(m),
    onAction: (a) => inbox.actions.push(a),
    onError: (e) => inbox.errors.push(e),
  });
  return { adapter, inbox };
}

const nth = <T>(list: T[], n: number) => tg.waitFor(() => list[n], { what: `item #${n + 1}` });

describe("telegram adapter: inbound", () => {
  it("delivers a DM with the sender, chat and message id", async () => {
    const { inbox } = await connected();
    const alice = tg.client({ userId: 4242, username: "alice", firstName: "Alice" });
    const sent = await alice.sendText("hello there");
    const message = await nth(inbox.messages, 0);
    expect(message).toMatchObject({
      text: "hello there",
      messageId: String(sent.message_id),
      source: { platform: "telegram", chatType: "dm", chatId: "4242", userId: "4242", userName: "alice" },
    });
    expect(message.source.threadId).toBeUndefined();
    expect(message.mentioned).toBeUndefined();
  });

  it("drops group chatter and passes a message that mentions the bot, mention stripped", async () => {
    const { inbox } = await connected();
    const bob = tg.client({ userId: 7, username: "bob", chat: { type: "supergroup", title: "Crew" } });
    await bob.sendText("just talking among ourselves");
    await bob.sendText(`@${tg.bot.username} what's the weather?`);
    const message = await nth(inbox.messages, 0);
    expect(message.text).toBe("what's the weather?");
    expect(message.mentioned).toBe(true);
    expect(message.source).toMatchObject({
      chatType: "group",
      chatId: String(bob.chat.id),
      chatName: "Crew",
    });
    await bob.sendText(`hey @${tg.bot.username.toUpperCase()}, ping`);
    expect((await nth(inbox.messages, 1)).text).toBe("hey ping");
    expect(inbox.messages).toHaveLength(2);
  });

  it("passes a group reply to one of the bot's messages", async () => {
    const { adapter, inbox } = await connected();
    const bob = tg.client({ userId: 7, username: "bob", chat: { type: "group" } });
    const next = tg.nextBotMessage(bob.chat.id);
    const { messageId } = await adapter.send({ chatId: String(bob.chat.id) }, "Shall I go on?");
    const botMessage = await next();
    expect(String(botMessage.message_id)).toBe(messageId);
    await bob.sendText("yes please", { replyTo: botMessage });
    const message = await nth(inbox.messages, 0);
    expect(message.text).toBe("yes please");
    expect(message.mentioned).toBe(false);
  });

  it("normalises /command@thisbot, ignores /command@otherbot in groups", async () => {
    const { inbox } = await connected();
    const bob = tg.client({ userId: 7, chat: { type: "supergroup" } });
    await bob.sendText("/status@some_other_bot");
    await bob.sendText(`/reset@${tg.bot.username} hard`);
    expect((await nth(inbox.messages, 0)).text).toBe("/reset hard");
    await bob.sendText("/help");
    expect((await nth(inbox.messages, 1)).text).toBe("/help");
    expect(inbox.messages).toHaveLength(2);
  });

  it("honours require_mention: false and free_response_chats", async () => {
    const free = tg.client({ userId: 8, chat: { type: "group" } });
    const gated = tg.client({ userId: 9, chat: { type: "group" } });
    const { inbox } = await connected({ settings: { free_response_chats: [free.chat.id] } });
    await gated.sendText("not for the bot");
    await free.sendText("anyone here?");
    expect((await nth(inbox.messages, 0)).text).toBe("anyone here?");
    expect(inbox.messages[0]?.mentioned).toBe(false);
    expect(inbox.messages).toHaveLength(1);
  });

  it("passes every group message with require_mention: false", async () => {
    const { inbox } = await connected({ settings: { require_mention: false } });
    await tg.client({ userId: 10, chat: { type: "group" } }).sendText("no mention needed");
    expect(await nth(inbox.messages, 0)).toMatchObject({ text: "no mention needed", mentioned: false });
    expect(telegramGating({ require_mention: "false" }).requireMention).toBe(false);
    expect(telegramGating({ free_response_chats: "-1, -2" }).freeResponseChats).toEqual(
      new Set(["-1", "-2"]),
    );
    expect(telegramGating({}).requireMention).toBe(true);
  });

  it("puts forum topic messages on their thread; the topic's own root is not a reply to the bot", async () => {
    const { inbox } = await connected();
    const carol = tg.client({ userId: 11, chat: { type: "supergroup", isForum: true, title: "Forum" } });
    await carol.sendText("chatter inside the topic", { threadId: 77 });
    await carol.sendText(`@${tg.bot.username} summarise`, { threadId: 77 });
    const message = await nth(inbox.messages, 0);
    expect(message.text).toBe("summarise");
    expect(message.source.threadId).toBe("77");
    expect(inbox.messages).toHaveLength(1);
  });

  it("maps channel posts to chatType channel", async () => {
    const { inbox } = await connected({ settings: { require_mention: false } });
    const channel = tg.client({ chat: { type: "channel", title: "News" } });
    await channel.sendText("new post");
    expect((await nth(inbox.messages, 0)).source).toMatchObject({ chatType: "channel", chatName: "News" });
  });

  it("ignores stickers, service messages, edits and bots; reports a sender-less group message", async () => {
    const { inbox } = await connected({ settings: { require_mention: false } });
    const dave = tg.client({ userId: 12, chat: { type: "group" } });
    await dave.sendRaw({
      sticker: { file_id: "S1", file_unique_id: "s1", width: 1, height: 1, type: "regular" },
    });
    await dave.sendRaw({ new_chat_members: [{ id: 99, is_bot: false, first_name: "New" }] });
    await dave.sendRaw({ text: "from a bot", from: { id: 55, is_bot: true, first_name: "Other" } });
    await dave.sendRaw({ text: "no sender", from: undefined });
    await tg.sendUpdate({
      edited_message: { message_id: 1, date: 1, chat: dave.chat, from: dave.user, text: "edited" },
    });
    await dave.sendText("the real one");
    expect((await nth(inbox.messages, 0)).text).toBe("the real one");
    expect(inbox.messages).toHaveLength(1);
    expect(inbox.errors.join("\n")).toMatch(/has no sender/);
  });

  it("downloads a photo (largest size) and a document into mediaDir", async () => {
    const mediaDir = join(root, "cache", "media");
    const { inbox } = await connected({ mediaDir });
    const erin = tg.client({ userId: 13 });
    const photo = Buffer.from("\xff\xd8 pretend jpeg bytes", "latin1");
    await erin.sendPhoto(photo, { caption: "look at this" });
    const first = await nth(inbox.messages, 0);
    expect(first.text).toBe("look at this");
    expect(first.media).toHaveLength(1);
    const media = first.media?.[0];
    expect(media?.kind).toBe("photo");
    expect(media?.path.startsWith(mediaDir)).toBe(true);
    expect(media?.path.endsWith(".jpg")).toBe(true);
    expect(readFileSync(media?.path ?? "")).toEqual(photo);

    const pdf = Buffer.from("%PDF-1.4 tiny");
    await erin.sendDocument(pdf, { fileName: "../../report final.pdf", mimeType: "application/pdf" });
    const second = await nth(inbox.messages, 1);
    const doc = second.media?.[0];
    expect(doc).toMatchObject({ kind: "document", mimeType: "application/pdf" });
    expect(doc?.path.startsWith(mediaDir)).toBe(true);
    expect(doc?.path.endsWith(".pdf")).toBe(true);
    expect(readFileSync(doc?.path ?? "")).toEqual(pdf);
    expect(second.text).toBe("");
  });

  it("delivers an oversized or failed download with a note and reports it", async () => {
    const mediaDir = join(root, "media");
    const { inbox } = await connected({ mediaDir, maxInboundMediaBytes: 100 });
    const frank = tg.client({ userId: 14 });
    await frank.sendDocument(Buffer.alloc(50), {
      fileName: "big.bin",
      caption: "see file",
      declaredSize: 5_000_000,
    });
    const declared = await nth(inbox.messages, 0);
    expect(declared.media).toBeUndefined();
    expect(declared.text).toMatch(
      /^see file\n\n\[the document could not be downloaded: it is 4\.8 MB, over the 100 bytes limit/,
    );

    // No size announced: the cap applies while streaming, and no partial file is left behind.
    await frank.sendDocument(Buffer.alloc(5000, 1), { fileName: "sneaky.bin", omitSize: true });
    const streamed = await nth(inbox.messages, 1);
    expect(streamed.text).toMatch(/^\[the document could not be downloaded: it is over the 100 bytes limit/);
    expect(existsSync(mediaDir) ? readdirSync(mediaDir) : []).toEqual([]);
    expect(inbox.errors.filter((e) => e.includes("could not download"))).toHaveLength(2);
  });

  it("turns a button press into onAction, and acknowledge answers the callback query", async () => {
    const { adapter, inbox } = await connected();
    const gina = tg.client({ userId: 15, username: "gina" });
    const { messageId } = await adapter.send({ chatId: "15" }, "Run `rm -rf build`?", {
      buttons: [
        [
          { label: "Approve", data: "approve:1" },
          { label: "Deny", data: "deny:1", style: "danger" },
        ],
      ],
    });
    const prompt = await tg.waitForBotMessage((m) => String(m.message_id) === messageId);
    expect(prompt.reply_markup?.inline_keyboard).toEqual([
      [
        { text: "Approve", callback_data: "approve:1" },
        { text: "Deny", callback_data: "deny:1" },
      ],
    ]);
    const queryId = await gina.press(prompt, "deny:1");
    const action = await nth(inbox.actions, 0);
    expect(action).toMatchObject({
      data: "deny:1",
      messageId,
      source: { chatType: "dm", chatId: "15", userId: "15", userName: "gina" },
    });
    await action.acknowledge?.("Denied");
    expect(tg.callbackAnswers()).toEqual([{ callback_query_id: queryId, text: "Denied" }]);
  });

  it("keeps polling after a failed getUpdates and reports the failure", async () => {
    tg.failNext("getUpdates", { error_code: 502, description: "Bad Gateway" });
    const { inbox } = await connected();
    await tg.client({ userId: 16 }).sendText("still there?");
    expect((await nth(inbox.messages, 0)).text).toBe("still there?");
    expect(inbox.errors[0]).toMatch(/Telegram polling failed: Bad Gateway; retrying in 1s/);
  });
});

describe("telegram adapter: connect and disconnect", () => {
  it("rejects a refused token with a clear message", async () => {
    const adapter = adapterFor({ env: { TELEGRAM_BOT_TOKEN: "999:refused", TELEGRAM_API_ROOT: tg.apiRoot } });
    const attempt = adapter.connect({ onMessage() {}, onAction() {}, onError() {} });
    await expect(attempt).rejects.toThrow(/Telegram refused TELEGRAM_BOT_TOKEN \(401 Unauthorized\)/);
    await expect(attempt).rejects.not.toThrow(/999:refused/);
  });

  it("names the missing variable and reports an unreachable server", async () => {
    const handlers = { onMessage() {}, onAction() {}, onError() {} };
    await expect(adapterFor({ env: {} }).connect(handlers)).rejects.toThrow(/TELEGRAM_BOT_TOKEN is not set/);
    const offline = adapterFor({}, { apiRoot: "http://127.0.0.1:1" });
    await expect(offline.connect(handlers)).rejects.toThrow(
      /could not reach the Telegram Bot API at http:\/\/127\.0\.0\.1:1/,
    );
    await expect(offline.connect(handlers)).rejects.not.toThrow(tg.token);
  });

  it("stops a pending long poll promptly, is idempotent, and receives nothing afterwards", async () => {
    const { adapter, inbox } = await connected({}, { pollingTimeoutSeconds: 50 });
    await tg.waitFor(() => tg.activePolls() === 1, { what: "the long poll" });
    const started = Date.now();
    await adapter.disconnect();
    await adapter.disconnect();
    expect(Date.now() - started).toBeLessThan(3000);
    await tg.waitFor(() => tg.activePolls() === 0, { what: "the poll to close" });
    await tg.client({ userId: 17 }).sendText("anyone?");
    expect(tg.pendingUpdates()).toBe(1);
    expect(inbox.messages).toHaveLength(0);
  });

  it("resumes after a reconnect without delivering anything twice", async () => {
    const { adapter, inbox } = await connected();
    const hank = tg.client({ userId: 18 });
    await hank.sendText("one");
    await nth(inbox.messages, 0);
    await adapter.disconnect();
    await hank.sendText("two");
    await adapter.connect({
      onMessage: (m) => inbox.messages.push(m),
      onAction: (a) => inbox.actions.push(a),
      onError: (e) => inbox.errors.push(e),
    });
    expect((await nth(inbox.messages, 1)).text).toBe("two");
    await hank.sendText("three");
    expect((await nth(inbox.messages, 2)).text).toBe("three");
    expect(inbox.messages.map((m) => m.text)).toEqual(["one", "two", "three"]);
  });
});

describe("telegram adapter: outbound", () => {
  it("sends markdown as Telegram HTML, in a thread and as a reply", async () => {
    const adapter = adapterFor();
    const ivy = tg.client({ userId: 19, chat: { type: "supergroup", isForum: true } });
    const question = await ivy.sendText("question", { threadId: 5 });
    const chatId = String(ivy.chat.id);
    const { messageId } = await adapter.send(
      { chatId, threadId: "5", replyTo: String(question.message_id) },
      "**Done**: `x < y` & [docs](https://example.com)",
    );
    const sent = await tg.waitForBotMessage((m) => String(m.message_id) === messageId);
    expect(sent).toMatchObject({
      chat_id: chatId,
      parse_mode: "HTML",
      text: '<b>Done</b>: <code>x &lt; y</code> &amp; <a href="https://example.com">docs</a>',
      message_thread_id: 5,
      reply_parameters: { message_id: question.message_id, allow_sending_without_reply: true },
    });
    await adapter.send({ chatId }, "*plain* <raw>", { plain: true });
    expect(tg.botMessages(chatId).at(-1)).toMatchObject({ text: "*plain* <raw>", parse_mode: undefined });
  });

  it("resends as plain text when Telegram cannot parse the HTML", async () => {
    const adapter = adapterFor();
    tg.client({ userId: 20 });
    tg.failNext("sendMessage", { error_code: 400, description: "Bad Request: can't parse entities: odd" });
    const { messageId } = await adapter.send({ chatId: "20" }, "**bold** text");
    const sent = await tg.waitForBotMessage((m) => String(m.message_id) === messageId);
    expect(sent.text).toBe("**bold** text");
    expect(sent.parse_mode).toBeUndefined();
  });

  it("maps 429, unknown chats and over-long text to PlatformError", async () => {
    const adapter = adapterFor();
    tg.client({ userId: 21 });
    tg.failNext("sendMessage", {
      error_code: 429,
      description: "Too Many Requests: retry after 3",
      retry_after: 3,
    });
    const limited = await adapter.send({ chatId: "21" }, "hi").catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(PlatformError);
    expect((limited as PlatformError).retryAfterMs).toBe(3000);

    await expect(adapter.send({ chatId: "404404" }, "hi")).rejects.toThrow(/chat not found/);

    const before = tg.calls("sendMessage").length;
    const long = adapter.send({ chatId: "21" }, "a".repeat(5000));
    await expect(long).rejects.toBeInstanceOf(PlatformError);
    await expect(long).rejects.toThrow(/5000 characters .*Telegram allows 4096/);
    expect(tg.calls("sendMessage")).toHaveLength(before);
    await expect(adapter.send({ chatId: "21" }, "   ")).rejects.toThrow(/empty message/);
  });

  it("edits a message, removes its buttons, and treats 'not modified' as success", async () => {
    const adapter = adapterFor();
    tg.client({ userId: 22 });
    const { messageId } = await adapter.send({ chatId: "22" }, "working…", {
      buttons: [[{ label: "Stop", data: "stop" }]],
    });
    await adapter.edit({ chatId: "22" }, messageId, "_done_");
    const edited = await tg.waitForBotMessage((m) => String(m.message_id) === messageId && m.edits === 1);
    expect(edited).toMatchObject({ text: "<i>done</i>", parse_mode: "HTML", reply_markup: undefined });
    await expect(adapter.edit({ chatId: "22" }, messageId, "_done_")).resolves.toBeUndefined();
    await expect(adapter.edit({ chatId: "22" }, "999999", "x")).rejects.toThrow(/message to edit not found/);
  });

  it("shows typing and never throws from typing", async () => {
    const adapter = adapterFor();
    tg.client({ userId: 23 });
    await adapter.typing({ chatId: "23" });
    expect(tg.chatActions()).toEqual([{ chat_id: "23", action: "typing" }]);
    await expect(adapter.typing({ chatId: "nowhere" })).resolves.toBeUndefined();
    await expect(
      createTelegramAdapter(context({ env: {} })).typing({ chatId: "23" }),
    ).resolves.toBeUndefined();
  });

  it("uploads a document and a photo with an HTML caption", async () => {
    const adapter = adapterFor();
    tg.client({ userId: 24 });
    const path = join(root, "notes.txt");
    writeFileSync(path, "some notes");
    const { messageId } = await adapter.sendMedia(
      { chatId: "24" },
      { kind: "document", path, caption: "**notes**" },
    );
    const doc = await tg.waitForBotMessage((m) => String(m.message_id) === messageId);
    expect(doc).toMatchObject({ method: "sendDocument", caption: "<b>notes</b>", parse_mode: "HTML" });
    expect(doc.file?.fileName).toBe("notes.txt");
    expect(doc.file?.bytes.toString()).toBe("some notes");

    const png = join(root, "chart.png");
    writeFileSync(png, Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const photo = await adapter.sendMedia({ chatId: "24" }, { kind: "photo", path: png });
    expect(tg.botMessages("24").find((m) => String(m.message_id) === photo.messageId)?.method).toBe(
      "sendPhoto",
    );

    // Telegram captions stop at 1024 characters: a longer one follows the file as its own message.
    const long = `**Summary** ${"word ".repeat(300)}`;
    const next = tg.nextBotMessage("24");
    const voice = await adapter.sendMedia({ chatId: "24" }, { kind: "voice", path: png, caption: long });
    const upload = await next();
    expect(upload).toMatchObject({ method: "sendVoice", caption: undefined });
    expect(String(upload.message_id)).toBe(voice.messageId);
    const text = await tg.waitForBotMessage((m) => m.method === "sendMessage" && m.chat_id === "24");
    expect(text.text?.startsWith("<b>Summary</b> word word")).toBe(true);
  });

  it("refuses a file over 50 MB or a missing file with PlatformError", async () => {
    const adapter = adapterFor();
    tg.client({ userId: 25 });
    const big = join(root, "huge.bin");
    const handle = await open(big, "w");
    await handle.truncate(51 * 1024 * 1024); // sparse: no real 51 MB written
    await handle.close();
    const oversized = adapter.sendMedia({ chatId: "25" }, { kind: "document", path: big });
    await expect(oversized).rejects.toBeInstanceOf(PlatformError);
    await expect(oversized).rejects.toThrow(
      /huge\.bin is 51\.0 MB; Telegram bots can upload at most 50\.0 MB/,
    );
    await expect(
      adapter.sendMedia({ chatId: "25" }, { kind: "photo", path: join(root, "nope.png") }),
    ).rejects.toThrow(/does not exist/);
    expect(tg.calls("sendDocument")).toHaveLength(0);
  });

  it("publishes valid commands and skips invalid ones", async () => {
    const adapter = adapterFor();
    await adapter.setCommands?.([
      { name: "/Reset", description: "Start a new session" },
      { name: "model", description: "Switch model" },
      { name: "bad-name", description: "dash is not allowed" },
      { name: "empty", description: "  " },
      { name: "model", description: "duplicate" },
    ]);
    expect(tg.commands()).toEqual([
      { command: "reset", description: "Start a new session" },
      { command: "model", description: "Switch model" },
    ]);
  });

  it("declares Telegram's capabilities", () => {
    expect(adapterFor().capabilities).toEqual({
      maxMessageLength: 4096,
      edit: true,
      buttons: true,
      typing: true,
      media: true,
      maxMediaBytes: 50 * 1024 * 1024,
    });
  });
});

describe("telegramInbound (pure mapping)", () => {
  const bot = { id: 500, username: "hermes_bot" };
  const gating = telegramGating({});
  const group = { id: -100, type: "supergroup", title: "G" };
  const user = { id: 1, is_bot: false, first_name: "Ann" };
  const cases: Array<[string, WireMessage, string | null]> = [
    ["no chat", { message_id: 1, text: "x" } as WireMessage, null],
    ["unknown chat type", { message_id: 1, chat: { id: 1, type: "secret" }, from: user, text: "x" }, null],
    [
      "group text mention entity",
      {
        message_id: 1,
        chat: group,
        from: user,
        text: "@Hermes_Bot hi",
        entities: [{ type: "mention", offset: 0, length: 11 }],
      },
      "hi",
    ],
    [
      "caption mention",
      { message_id: 1, chat: group, from: user, caption: "hi @hermes_bot", photo: [{ file_id: "p" }] },
      "hi",
    ],
    [
      "email-like text is no mention",
      { message_id: 1, chat: group, from: user, text: "mail me@hermes_bot.org" },
      null,
    ],
    [
      "anonymous admin",
      {
        message_id: 1,
        chat: group,
        from: { id: 1087968824, is_bot: true, first_name: "Group" },
        sender_chat: group,
        text: "@hermes_bot status",
      },
      "status",
    ],
    [
      "DM command for another bot passes unchanged",
      {
        message_id: 1,
        chat: { id: 1, type: "private" },
        from: user,
        text: "/start@other_bot",
      },
      "/start@other_bot",
    ],
    [
      "malformed entities do not throw",
      { message_id: 1, chat: group, from: user, text: "@hermes_bot hi", entities: [null as never] },
      "hi",
    ],
  ];
  it.each(cases)("%s", (_name, msg, expected) => {
    const result = telegramInbound(msg, bot, gating);
    if (expected === null) expect(result.deliver).toBe(false);
    else expect(result.deliver && result.message.text).toBe(expected);
  });

  it("picks the largest photo and reports malformed messages", () => {
    const result = telegramInbound(
      {
        message_id: 3,
        chat: { id: 1, type: "private" },
        from: user,
        photo: [
          { file_id: "small", file_size: 10 },
          { file_id: "large", file_size: 9000 },
          { file_id: "mid", file_size: 500 },
        ],
      },
      bot,
      gating,
    );
    expect(result.deliver && result.media).toMatchObject({ kind: "photo", fileId: "large" });
    const voice = telegramInbound(
      {
        message_id: 4,
        chat: { id: 1, type: "private" },
        from: user,
        voice: { file_id: "v", mime_type: "audio/ogg" },
      },
      bot,
      gating,
    );
    expect(voice.deliver && voice.media).toMatchObject({ kind: "voice", fileId: "v", mimeType: "audio/ogg" });
    expect(voice.deliver && voice.message.text).toBe("");
    const broken = telegramInbound({ message_id: 1 } as WireMessage, bot, gating);
    expect(!broken.deliver && broken.report).toMatch(/without a chat/);
  });
});
