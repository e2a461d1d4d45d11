import { truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { createDiscordAdapter } from "../../../src/gateway/platforms/discord.js";
import type { InboundAction } from "../../../src/gateway/platforms/types.js";
import { PlatformError } from "../../../src/gateway/platforms/types.js";
import {
  connected,
  context,
  fake,
  home,
  useDiscordBench,
  WAIT,
} from "../../support/discord-adapter-bench.js";
import type { FakeGuild } from "../../support/fake-discord.js";

useDiscordBench();

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
