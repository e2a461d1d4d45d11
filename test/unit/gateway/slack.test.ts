import { mkdtemp, readdir, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSlackAdapter, type SlackPlatformAdapter } from "../../../src/gateway/platforms/slack.js";
import {
  type AdapterContext,
  type InboundAction,
  type InboundMessage,
  PlatformError,
} from "../../../src/gateway/platforms/types.js";
import {
  blockActionPayload,
  channelEvent,
  dmEvent,
  type FakeSlack,
  mentionEvent,
  SlackRequestSender,
  slackTs,
  startFakeSlack,
} from "../../support/fake-slack.js";
import { freePort } from "../../support/free-port.js";

const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

interface Harness {
  slack: FakeSlack;
  adapter: SlackPlatformAdapter;
  sender: SlackRequestSender;
  messages: InboundMessage[];
  actions: InboundAction[];
  errors: string[];
  dir: string;
}

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function waitFor<T>(check: () => T | undefined | false, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function context(
  dir: string,
  env: Record<string, string | undefined>,
  settings: Record<string, unknown> = {},
) {
  return {
    home: dir,
    env,
    settings,
    mediaDir: join(dir, "cache", "media"),
    maxInboundMediaBytes: 1024 * 1024,
  } satisfies AdapterContext;
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "hermes-slack-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function fakeSlack(): Promise<FakeSlack> {
  const slack = await startFakeSlack();
  cleanups.push(() => slack.stop());
  return slack;
}

/** A connected HTTP-mode adapter on a free port, talking to a fresh fake Slack. */
async function setup(
  settings: Record<string, unknown> = {},
  maxInboundMediaBytes = 1024 * 1024,
): Promise<Harness> {
  const dir = await tempDir();
  const slack = await fakeSlack();
  const env = {
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: slack.apiUrl,
  };
  const ctx = { ...context(dir, env, settings), maxInboundMediaBytes };
  const adapter = createSlackAdapter(ctx, { mode: "http", host: "127.0.0.1", port: 0 });
  const messages: InboundMessage[] = [];
  const actions: InboundAction[] = [];
  const errors: string[] = [];
  await adapter.connect({
    onMessage: (m) => messages.push(m),
    onAction: (a) => actions.push(a),
    onError: (e) => errors.push(e),
  });
  cleanups.push(() => adapter.disconnect());
  const address = adapter.httpAddress();
  if (!address) throw new Error("adapter did not report its HTTP address");
  const sender = new SlackRequestSender({
    url: `http://127.0.0.1:${address.port}/slack/events`,
    signingSecret: SIGNING_SECRET,
    teamId: slack.teamId,
    botUserId: slack.botUserId,
  });
  return { slack, adapter, sender, messages, actions, errors, dir };
}

let markerCount = 0;

/** Sends a DM and waits for it: events sent before it have been handled by then. */
async function marker(h: Harness): Promise<void> {
  markerCount += 1;
  const text = `marker ${markerCount}`;
  await h.sender.event(dmEvent(text, { channel: "D0MARK" }));
  await received(h, text);
}

/** Waits for the message whose text is `text`. */
function received(h: Harness, text: string): Promise<InboundMessage> {
  return waitFor(() => h.messages.find((m) => m.text === text), `the message "${text}"`);
}

function texts(h: Harness): string[] {
  return h.messages.map((m) => m.text).filter((t) => !t.startsWith("marker "));
}

describe("Slack adapter over the Events API (HTTP mode)", () => {
  it("answers Slack's url_verification challenge", async () => {
    const h = await setup();
    const res = await h.sender.urlVerification("3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P");
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({
      challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
    });
  });

  it("delivers a DM with its chat, sender and workspace, unthreaded", async () => {
    const h = await setup();
    const ts = slackTs();
    const text = "Hello &amp; welcome &lt;3 <https://example.com|the site>";
    const res = await h.sender.event(
      dmEvent(text, { channel: "D024BE91L", user: "U2147483697", ts, team: "T0FAKE" }),
    );
    expect(res.status).toBe(200);
    const message = await waitFor(() => h.messages[0], "the DM");
    expect(message).toMatchObject({
      source: {
        platform: "slack",
        chatType: "dm",
        chatId: "D024BE91L",
        userId: "U2147483697",
        scopeId: "T0FAKE",
      },
      text: "Hello & welcome <3 the site (https://example.com)",
      messageId: ts,
    });
    expect(message.source.threadId).toBeUndefined();
    expect(message.mentioned).toBeUndefined();
  });

  it("delivers an app_mention in a channel once, mention stripped, threaded under itself", async () => {
    const h = await setup();
    const ts = slackTs();
    const text = `<@${h.slack.botUserId}> what is the status of the deploy?`;
    // Slack sends both a `message` and an `app_mention` event for one mention.
    await h.sender.event(mentionEvent(text, { ts }));
    await h.sender.event(channelEvent(text, { ts }));
    const message = await waitFor(() => h.messages[0], "the mention");
    expect(message).toMatchObject({
      source: {
        chatType: "group",
        chatId: "C0GENERAL",
        chatName: "channel-c0general",
        userId: "U0ALICE",
        threadId: ts,
        scopeId: "T0FAKE",
      },
      text: "what is the status of the deploy?",
      mentioned: true,
      messageId: ts,
    });
    await marker(h);
    expect(texts(h)).toEqual(["what is the status of the deploy?"]);
  });

  it("reports a mention in a private channel as a group chat", async () => {
    const h = await setup();
    await h.sender.event(mentionEvent(`hey <@${h.slack.botUserId}|hermes> hi`, { channel: "G0SECRET" }));
    const message = await waitFor(() => h.messages[0], "the mention");
    expect(message.source.chatType).toBe("group");
    expect(message.text).toBe("hey hi");

    const code = "run this:\n```\nif x:\n    print(x  &lt; 2)\n```";
    await h.sender.event(mentionEvent(`<@${h.slack.botUserId}> ${code}`, { channel: "G0SECRET" }));
    const second = await waitFor(() => h.messages[1], "the mention with code");
    expect(second.text).toBe("run this:\n```\nif x:\n    print(x  < 2)\n```");
  });

  it("ignores channel messages that do not mention the bot", async () => {
    const h = await setup();
    await h.sender.event(channelEvent("lunch anyone?"));
    await marker(h);
    expect(texts(h)).toEqual([]);
  });

  it("answers unmentioned channel messages with require_mention off or in a free-response channel", async () => {
    const h = await setup({ require_mention: false });
    await h.sender.event(channelEvent("one"));
    await received(h, "one");

    const h2 = await setup({ free_response_channels: ["C0FREE"] });
    const ts = slackTs();
    await h2.sender.event(channelEvent("no", { channel: "C0NOPE" }));
    await h2.sender.event(channelEvent("yes", { channel: "C0FREE", ts }));
    const message = await received(h2, "yes");
    expect(message.mentioned).toBe(false);
    expect(message.source.threadId).toBe(ts);
    await marker(h2);
    expect(texts(h2)).toEqual(["yes"]);
  });

  it("carries thread_ts as threadId, and follows a thread the bot was mentioned in", async () => {
    const h = await setup();
    const root = slackTs();
    await h.sender.event(dmEvent("in a DM thread", { thread_ts: root }));
    const dm = await received(h, "in a DM thread");
    expect(dm.source.threadId).toBe(root);

    const parent = slackTs();
    await h.sender.event(
      mentionEvent(`<@${h.slack.botUserId}> look at this`, { channel: "C0DEV", thread_ts: parent }),
    );
    const mention = await received(h, "look at this");
    expect(mention.source.threadId).toBe(parent);
    const reply = "and a follow-up without a mention";
    await h.sender.event(channelEvent(reply, { channel: "C0DEV", user: "U0B", thread_ts: parent }));
    const followUp = await received(h, reply);
    expect(followUp).toMatchObject({ mentioned: false, source: { threadId: parent, userId: "U0B" } });
  });

  it("ignores bot messages, its own messages, edits and deletions", async () => {
    const h = await setup();
    await h.sender.event(dmEvent("beep", { subtype: "bot_message", bot_id: "B0OTHER", user: undefined }));
    await h.sender.event(dmEvent("boop", { user: "U0OTHER", bot_id: "B0OTHER" }));
    await h.sender.event(dmEvent("my own echo", { user: h.slack.botUserId }));
    await h.sender.event(
      dmEvent("", { subtype: "message_changed", message: { user: "U0A", text: "edited" } }),
    );
    await h.sender.event(dmEvent("", { subtype: "message_deleted", deleted_ts: slackTs() }));
    await h.sender.event(dmEvent("joined", { subtype: "channel_join" }));
    await marker(h);
    expect(texts(h)).toEqual([]);
  });

  it("rejects a request with a bad signature with 401 and delivers nothing", async () => {
    const h = await setup();
    const body = JSON.stringify(h.sender.eventCallback(dmEvent("forged")));
    const res = await h.sender.raw(body, "application/json", { signature: `v0=${"0".repeat(64)}` });
    expect(res.status).toBe(401);
    const stale = await h.sender.raw(body, "application/json", {
      timestamp: Math.floor(Date.now() / 1000) - 3600,
    });
    expect(stale.status).toBe(401);
    await marker(h);
    expect(texts(h)).toEqual([]);
    expect(h.errors.some((e) => /verify/.test(e))).toBe(true);
  });

  it("answers malformed payloads with an error status and keeps working", async () => {
    const h = await setup();
    const broken = await h.sender.raw('{"type":"event_callback","event":', "application/json");
    expect(broken.status).toBe(400);
    const noEvent = await h.sender.raw(
      JSON.stringify({ type: "event_callback", team_id: "T0FAKE" }),
      "application/json",
    );
    expect(noEvent.status).toBeGreaterThanOrEqual(400);
    const noUser = await h.sender.event(dmEvent("who?", { user: undefined }));
    expect(noUser.status).toBe(200);
    const unknown = await h.sender.event({
      type: "reaction_added",
      user: "U0A",
      reaction: "thumbsup",
      item: {},
    });
    expect(unknown.status).toBe(200);
    await waitFor(() => h.errors.some((e) => /without user/.test(e)), "a report of the user-less message");
    await marker(h);
    expect(texts(h)).toEqual([]);
  });

  it("turns a button press into an action with the button's value", async () => {
    const h = await setup();
    const messageTs = slackTs();
    const threadTs = slackTs();
    const res = await h.sender.interaction(
      blockActionPayload({
        teamId: h.slack.teamId,
        userId: "U0ALICE",
        channelId: "C0GENERAL",
        messageTs,
        threadTs,
        value: "approve:once:42",
      }),
    );
    expect(res.status).toBe(200);
    const action = await waitFor(() => h.actions[0], "the button press");
    expect(action).toMatchObject({
      data: "approve:once:42",
      messageId: messageTs,
      source: {
        platform: "slack",
        chatType: "group",
        chatId: "C0GENERAL",
        userId: "U0ALICE",
        threadId: threadTs,
        scopeId: "T0FAKE",
      },
    });
    await action.acknowledge?.("Approved.");
    const note = await h.slack.waitForCall("chat.postEphemeral");
    expect(note.args).toMatchObject({
      channel: "C0GENERAL",
      user: "U0ALICE",
      text: "Approved.",
      thread_ts: threadTs,
    });
  });

  it("downloads attached files into the media cache with the bot token", async () => {
    const h = await setup();
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    const file = h.slack.addFile({ name: "chart.png", content: png, mimetype: "image/png" });
    await h.sender.event(dmEvent("see attached", { subtype: "file_share", files: [file] }));
    const message = await waitFor(() => h.messages[0], "the message with a file");
    expect(message.text).toBe("see attached");
    expect(message.media).toHaveLength(1);
    const media = message.media?.[0];
    expect(media).toMatchObject({ kind: "photo", mimeType: "image/png", fileName: "chart.png" });
    expect(media?.path.startsWith(join(h.dir, "cache", "media"))).toBe(true);
    expect(await readFile(media?.path ?? "")).toEqual(png);
  });

  it("still delivers a message whose file cannot be downloaded, with a note, and reports it", async () => {
    const h = await setup({}, 16);
    const missing = h.slack.addFile({
      name: "gone.pdf",
      content: "x",
      mimetype: "application/pdf",
      status: 404,
    });
    const huge = h.slack.addFile({
      name: "big.bin",
      content: Buffer.alloc(64),
      mimetype: "application/octet-stream",
    });
    // Without a declared size the limit is enforced on the download itself.
    const { size: _size, ...undeclared } = h.slack.addFile({ name: "bigger.bin", content: Buffer.alloc(64) });
    await h.sender.event(
      dmEvent("three files", { subtype: "file_share", files: [missing, huge, undeclared] }),
    );
    const message = await waitFor(() => h.messages[0], "the message");
    expect(message.media).toBeUndefined();
    expect(message.text).toContain('[Attachment "gone.pdf" could not be downloaded: HTTP 404]');
    expect(message.text).toMatch(/\[Attachment "big\.bin" could not be downloaded: .*16-byte limit/);
    expect(message.text).toMatch(/\[Attachment "bigger\.bin" could not be downloaded: .*16-byte limit/);
    expect(h.errors.filter((e) => /could not download/.test(e))).toHaveLength(3);
    expect(await readdir(join(h.dir, "cache", "media")).catch(() => [])).toEqual([]);
  });
});

describe("Slack adapter: sending", () => {
  it("posts markdown as mrkdwn, threaded, and returns the message ts", async () => {
    const h = await setup();
    const sent = await h.adapter.send(
      { chatId: "C0GENERAL", threadId: "1700000000.000100" },
      "## Result\n\n**Done** in *3 s*: [logs](https://ci.example.com/run?id=1&x=2) & more",
    );
    const call = await h.slack.waitForCall("chat.postMessage");
    expect(call.token).toBe(h.slack.botToken);
    expect(call.args).toMatchObject({
      channel: "C0GENERAL",
      thread_ts: "1700000000.000100",
      text: "*Result*\n\n*Done* in _3 s_: <https://ci.example.com/run?id=1&amp;x=2|logs> &amp; more",
    });
    expect(call.args.blocks).toBeUndefined();
    expect(sent.messageId).toMatch(/^\d+\.\d{6}$/);
  });

  it("sends plain text verbatim apart from Slack's control characters", async () => {
    const h = await setup();
    await h.adapter.send({ chatId: "D0DM" }, "Your code: **AB12** <ok>", { plain: true });
    const call = await h.slack.waitForCall("chat.postMessage");
    expect(call.args).toMatchObject({ text: "Your code: **AB12** &lt;ok&gt;", mrkdwn: "false" });
    expect(call.args.thread_ts).toBeUndefined();
  });

  it("turns button rows into an actions block under the text", async () => {
    const h = await setup();
    await h.adapter.send({ chatId: "D0DM" }, "Run `rm -rf build`?", {
      buttons: [
        [
          { label: "Approve", data: "approve:1", style: "primary" },
          { label: "Deny", data: "deny:1", style: "danger" },
        ],
        [{ label: "Always", data: "always:1" }],
      ],
    });
    const call = await h.slack.waitForCall("chat.postMessage");
    expect(call.args.text).toBe("Run `rm -rf build`?");
    const blocks = call.args.blocks as Record<string, unknown>[];
    expect(blocks[0]).toEqual({ type: "section", text: { type: "mrkdwn", text: "Run `rm -rf build`?" } });
    const actions = blocks.filter((b) => b.type === "actions") as { elements: Record<string, unknown>[] }[];
    expect(actions).toHaveLength(2);
    const buttons = actions.flatMap((a) => a.elements);
    expect(buttons.map((b) => [b.value, b.style])).toEqual([
      ["approve:1", "primary"],
      ["deny:1", "danger"],
      ["always:1", undefined],
    ]);
    expect(buttons.every((b) => b.type === "button")).toBe(true);
    expect(new Set(buttons.map((b) => b.action_id)).size).toBe(3);
  });

  it("edits with chat.update and removes buttons unless given again", async () => {
    const h = await setup();
    const { messageId } = await h.adapter.send({ chatId: "D0DM" }, "Approve?", {
      buttons: [[{ label: "Yes", data: "yes" }]],
    });
    await h.adapter.edit({ chatId: "D0DM" }, messageId, "~~Approve?~~ **approved**");
    const update = await h.slack.waitForCall("chat.update");
    expect(update.args).toMatchObject({
      channel: "D0DM",
      ts: messageId,
      text: "~Approve?~ *approved*",
      blocks: [],
    });

    await h.adapter.edit({ chatId: "D0DM" }, messageId, "Still?", {
      buttons: [[{ label: "Yes", data: "yes" }]],
    });
    const second = await h.slack.waitForCall("chat.update", (c) => c.args.text === "Still?");
    expect(JSON.stringify(second.args.blocks)).toContain('"value":"yes"');

    await expect(h.adapter.edit({ chatId: "D0DM" }, "1.000001", "nope")).rejects.toThrow(/message_not_found/);
  });

  it("turns a 429 into a PlatformError with the wait Slack asked for", async () => {
    const h = await setup();
    h.slack.rateLimit("chat.postMessage", 7);
    const error = await h.adapter.send({ chatId: "D0DM" }, "hi").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformError);
    expect((error as PlatformError).retryAfterMs).toBe(7000);
    expect((error as PlatformError).message).toMatch(/rate-limited/);
    h.slack.failNext("chat.postMessage", "not_in_channel");
    await expect(h.adapter.send({ chatId: "C0X" }, "hi")).rejects.toThrow(/not_in_channel.*invite the bot/);
    await expect(h.adapter.send({ chatId: "D0DM" }, "works again")).resolves.toMatchObject({
      messageId: expect.any(String),
    });
  });

  it("uploads media through Slack's external upload flow", async () => {
    const h = await setup();
    const path = join(h.dir, "report.txt");
    await writeFile(path, "quarterly numbers\n");
    const sent = await h.adapter.sendMedia(
      { chatId: "C0GENERAL", threadId: "1700000000.000200" },
      { kind: "document", path, caption: "Here is the **report**" },
    );
    const getUrl = await h.slack.waitForCall("files.getUploadURLExternal");
    expect(getUrl.args).toMatchObject({ filename: "report.txt", length: "18" });
    const complete = await h.slack.waitForCall("files.completeUploadExternal");
    expect(complete.args).toMatchObject({
      channel_id: "C0GENERAL",
      thread_ts: "1700000000.000200",
      initial_comment: "Here is the *report*",
    });
    expect(h.slack.uploads[0]?.bytes?.toString()).toBe("quarterly numbers\n");
    expect(sent.messageId).toBe(h.slack.uploads[0]?.fileId);
  });

  it("refuses missing and oversized files before calling Slack", async () => {
    const h = await setup();
    await expect(
      h.adapter.sendMedia({ chatId: "D0DM" }, { kind: "photo", path: join(h.dir, "nope.png") }),
    ).rejects.toThrow(/file not found/);
    const big = join(h.dir, "huge.bin");
    await writeFile(big, "");
    await truncate(big, 1024 ** 3 + 1); // sparse: no disk used
    const error = await h.adapter
      .sendMedia({ chatId: "D0DM" }, { kind: "video", path: big })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformError);
    expect((error as Error).message).toMatch(/1 GiB/);
    expect(h.slack.callsTo("files.getUploadURLExternal")).toHaveLength(0);
  });

  it("has no typing indicator and says so in its capabilities", async () => {
    const h = await setup();
    expect(h.adapter.capabilities).toMatchObject({ typing: false, edit: true, buttons: true, media: true });
    await expect(h.adapter.typing({ chatId: "D0DM" })).resolves.toBeUndefined();
  });
});

describe("Slack adapter: connecting", () => {
  it("rejects a refused bot token with a message naming it", async () => {
    const dir = await tempDir();
    const slack = await fakeSlack();
    const adapter = createSlackAdapter(
      context(dir, { SLACK_BOT_TOKEN: "xoxb-wrong", SLACK_SIGNING_SECRET: "s", SLACK_API_URL: slack.apiUrl }),
      { port: 0 },
    );
    await expect(adapter.connect(handlers())).rejects.toThrow(/SLACK_BOT_TOKEN.*invalid_auth/);
    expect(adapter.httpAddress()).toBeUndefined();
  });

  it("rejects clearly when Slack cannot be reached", async () => {
    const dir = await tempDir();
    const port = await freePort();
    const adapter = createSlackAdapter(
      context(dir, {
        SLACK_BOT_TOKEN: "xoxb-1",
        SLACK_SIGNING_SECRET: "s",
        SLACK_API_URL: `http://127.0.0.1:${port}/api/`,
      }),
      { port: 0 },
    );
    await expect(adapter.connect(handlers())).rejects.toThrow(
      /Could not reach Slack for auth\.test at http:\/\/127\.0\.0\.1.*ECONNREFUSED/,
    );
  });

  it("names the variables to set when tokens are missing", async () => {
    const dir = await tempDir();
    await expect(createSlackAdapter(context(dir, {})).connect(handlers())).rejects.toThrow(
      /SLACK_BOT_TOKEN is not set/,
    );
    await expect(
      createSlackAdapter(context(dir, { SLACK_BOT_TOKEN: "xoxb-1" })).connect(handlers()),
    ).rejects.toThrow(/SLACK_APP_TOKEN.*SLACK_SIGNING_SECRET/);
    await expect(
      createSlackAdapter(
        context(dir, { SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNING_SECRET: "s", SLACK_HTTP_PORT: "web" }),
      ).connect(handlers()),
    ).rejects.toThrow(/SLACK_HTTP_PORT.*"web"/);
  });

  it("frees its port on disconnect, and disconnect is idempotent", async () => {
    const h = await setup();
    const port = h.adapter.httpAddress()?.port ?? 0;
    expect(port).toBeGreaterThan(0);
    await h.adapter.disconnect();
    await h.adapter.disconnect();
    expect(h.adapter.httpAddress()).toBeUndefined();
    await expect(listenOn(port)).resolves.toBeUndefined();
    await expect(h.adapter.send({ chatId: "D0DM" }, "hi")).rejects.toThrow(/not connected/);
  });
});

/** A Socket Mode adapter talking to a fresh fake Slack; connected unless `appToken` is wrong. */
async function socketSetup(appToken?: string) {
  const dir = await tempDir();
  const slack = await fakeSlack();
  const env = {
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_APP_TOKEN: appToken ?? slack.appToken,
    SLACK_API_URL: slack.apiUrl,
  };
  const adapter = createSlackAdapter(context(dir, env));
  cleanups.push(() => adapter.disconnect());
  const messages: InboundMessage[] = [];
  const actions: InboundAction[] = [];
  const errors: string[] = [];
  const connected = adapter.connect({
    onMessage: (m) => messages.push(m),
    onAction: (a) => actions.push(a),
    onError: (e) => errors.push(e),
  });
  // Socket Mode payloads are the same bodies the Events API POSTs.
  const sender = new SlackRequestSender({ url: "unused", signingSecret: "unused", teamId: slack.teamId });
  return { slack, adapter, connected, messages, actions, errors, sender };
}

describe("Slack adapter over Socket Mode", () => {
  it("connects with the app token, receives events and presses, and acks each envelope", async () => {
    const { slack, adapter, connected, messages, actions, sender } = await socketSetup();
    await connected;
    const open = await slack.waitForCall("apps.connections.open");
    expect(open.token).toBe(slack.appToken);
    expect(adapter.httpAddress()).toBeUndefined();

    const ts = slackTs();
    const ack = await slack.sendEnvelope(
      "events_api",
      sender.eventCallback(dmEvent("over the socket", { ts })),
    );
    expect(ack.envelope_id).toEqual(expect.any(String));
    const message = await waitFor(() => messages[0], "the Socket Mode message");
    expect(message).toMatchObject({
      text: "over the socket",
      source: { chatType: "dm", chatId: "D0DM", scopeId: "T0FAKE" },
    });

    const press = blockActionPayload({
      teamId: slack.teamId,
      userId: "U0A",
      channelId: "D0DM",
      messageTs: ts,
      value: "deny:9",
    });
    const pressAck = await slack.sendEnvelope("interactive", press);
    expect(pressAck.envelope_id).toEqual(expect.any(String));
    const action = await waitFor(() => actions[0], "the Socket Mode button press");
    expect(action).toMatchObject({ data: "deny:9", source: { chatType: "dm", chatId: "D0DM" } });

    await adapter.disconnect();
    await waitFor(() => slack.socketCount() === 0, "the socket to close");
  });

  it("reconnects after Slack drops the socket, reporting a failed reconnect instead of crashing", async () => {
    const { slack, connected, messages, errors, sender } = await socketSetup();
    await connected;
    await slack.waitForSocket();

    slack.failNext("apps.connections.open", "invalid_auth");
    slack.closeSockets();
    const reconnects = () => slack.callsTo("apps.connections.open").length;
    await waitFor(
      () => errors.find((e) => /reconnect failed/.test(e)),
      "a report of the failed reconnect",
      30_000,
    );
    await waitFor(() => reconnects() >= 3 && slack.socketCount() === 1, "a new socket", 30_000);
    await slack.sendEnvelope("events_api", sender.eventCallback(dmEvent("back")));
    await waitFor(() => messages.find((m) => m.text === "back"), "a message after reconnecting");
  }, 60_000);

  it("turns /hermes <command> and a command of its own into the typed /command", async () => {
    const { slack, connected, messages } = await socketSetup();
    await connected;
    await slack.waitForSocket();
    const slash = (command: string, text: string) => ({
      command,
      text,
      user_id: "U0A",
      user_name: "alice",
      channel_id: "D0DM",
      team_id: slack.teamId,
      response_url: "http://127.0.0.1:9/unused",
      trigger_id: "1.2.3",
    });
    const ack = await slack.sendEnvelope("slash_commands", slash("/hermes", "model gpt-5"));
    expect(ack.envelope_id).toEqual(expect.any(String));
    await waitFor(() => messages.find((m) => m.text === "/model gpt-5"), "the /hermes subcommand");
    expect(messages[0]).toMatchObject({
      source: { platform: "slack", chatType: "dm", chatId: "D0DM", userId: "U0A", userName: "alice" },
    });
    await slack.sendEnvelope("slash_commands", slash("/hermes", ""));
    await waitFor(() => messages.find((m) => m.text === "/help"), "bare /hermes as /help");
    await slack.sendEnvelope("slash_commands", slash("/status", ""));
    await waitFor(() => messages.find((m) => m.text === "/status"), "a command of its own");
  });

  it("rejects a refused app token with a message naming it", async () => {
    const { slack, connected } = await socketSetup("xapp-wrong");
    await expect(connected).rejects.toThrow(/SLACK_APP_TOKEN.*invalid_auth/);
    expect(slack.socketCount()).toBe(0);
  });
});

function handlers() {
  return { onMessage() {}, onAction() {}, onError() {} };
}

function listenOn(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => server.close(() => resolve()));
  });
}
