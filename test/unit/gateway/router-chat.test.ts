import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../../src/config/defaults.js";

const _DEFAULT_CONFIG = defaultConfig();

import { setup, stopRoutersAfterEach, until } from "../../support/router-harness.js";
import { callTools, say } from "../../support/scripted-transport.js";

stopRoutersAfterEach();

describe("MessageRouter: streaming, groups, voice notes and chat commands", () => {
  it("streams by editing one message, then shows tool progress and the final answer", async () => {
    const t = setup({ config: { streaming: { enabled: true, edit_interval: 0.01, buffer_threshold: 4 } } });
    t.transport.push(callTools(["todo", { todos: [{ id: "1", content: "x", status: "pending" }] }]));
    let release!: () => void;
    t.transport.push(
      say("The final answer is forty-two, as computed."),
      new Promise<void>((r) => (release = r)),
    );
    t.adapter.from("100", "compute");
    const growing = await until(
      () => [...t.adapter.messages.values()].find((m) => m.text.endsWith("▉")),
      "a growing message",
    );
    expect(growing.text).toMatch(/^The final answ/);
    release();
    await until(
      () => t.adapter.texts().includes("The final answer is forty-two, as computed."),
      "final streamed text",
    );
    const streamed = t.adapter.log.filter((e) => e.op === "send" || e.op === "edit");
    expect(streamed.some((e) => e.op === "edit")).toBe(true);
    expect(t.adapter.texts().some((m) => m.startsWith("📋 todo"))).toBe(true);
    expect(t.adapter.texts().every((m) => !m.endsWith("▉"))).toBe(true);
  });

  it("a stream that drops mid-answer: the shown fragment is withdrawn and replaced by the retried answer", async () => {
    const t = setup({ config: { streaming: { enabled: true, edit_interval: 0.01, buffer_threshold: 4 } } });
    let drop!: () => void;
    t.transport.push(say("Fragment that will break off here."), new Promise<void>((r) => (drop = r)), true);
    t.transport.push(say("The whole retried answer."));
    t.adapter.from("100", "hello");
    const growing = await until(
      () => [...t.adapter.messages.values()].find((m) => m.text.startsWith("Fragment")),
      "the fragment on screen",
    );
    drop();
    await until(() => t.adapter.texts().includes("The whole retried answer."), "the retried answer");
    expect(t.adapter.texts().join("\n")).not.toContain("Fragment");
    // The message that showed the fragment is the one that now holds the answer.
    expect(growing.text).toBe("The whole retried answer.");
    expect(t.adapter.log.some((e) => e.op === "edit" && e.text?.startsWith("↻"))).toBe(true);
    // The wait before the retry was shown with the progress lines.
    expect(t.adapter.texts().some((m) => /^⏳ .*retrying in/s.test(m))).toBe(true);
  });

  it("in a group, the answer replies to the message it answers", async () => {
    const t = setup();
    t.transport.push(say("Answer in the group."));
    t.adapter.handlers.onMessage({
      source: { platform: "telegram", chatType: "group", chatId: "-1005", userId: "100", userName: "owner" },
      text: "question for the bot",
      messageId: "77",
    });
    await until(() => t.adapter.texts().includes("Answer in the group."), "answer");
    const sent = [...t.adapter.messages.values()].find((m) => m.text === "Answer in the group.");
    expect(sent?.target).toEqual({ chatId: "-1005", replyTo: "77" });
  });

  it("transcribes a voice note with the configured speech-to-text and gives the agent both", async () => {
    const stt = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ text: "turn on the porch light" }));
      });
    });
    await new Promise<void>((r) => stt.listen(0, "127.0.0.1", r));
    const port = (stt.address() as AddressInfo).port;
    try {
      const t = setup({
        config: { stt: { provider: "openai", openai: { base_url: `http://127.0.0.1:${port}/v1` } } },
      });
      const note = join(t.cwd, "note.ogg");
      writeFileSync(note, "OggS fake voice");
      t.transport.push(say("Porch light is on."));
      t.adapter.handlers.onMessage({
        source: { platform: "telegram", chatType: "dm", chatId: "100", userId: "100" },
        text: "",
        media: [{ kind: "voice", path: note }],
      });
      await until(() => t.adapter.texts().includes("Porch light is on."), "answer");
      const input = t.transport.requests[0]?.messages.at(-1)?.content;
      expect(input).toContain(`saved at ${note}`);
      expect(input).toContain("[Transcript: turn on the porch light]");
    } finally {
      stt.close();
    }
  });

  it("answers an unknown /word in a DM without the model, and keeps quiet about one in a group nobody addressed", async () => {
    const t = setup();
    t.adapter.from("100", "/wether");
    await until(() => t.adapter.texts().find((m) => m.startsWith("Unknown command /wether")), "suggestion");
    t.adapter.handlers.onMessage({
      source: { platform: "telegram", chatType: "group", chatId: "-1002", userId: "100", userName: "u" },
      text: "/weather@otherbot tomorrow",
      mentioned: false,
    });
    t.adapter.from("100", "/status", { chatType: "group", chatId: "-1002" });
    await until(() => t.adapter.texts().find((m) => m.includes("**Turn:** idle")), "status in the group");
    expect(t.adapter.texts().filter((m) => m.startsWith("Unknown command"))).toHaveLength(1);
    expect(t.transport.requests).toHaveLength(0);
  });

  it("/resume with no argument asks, and the next message picks the session", async () => {
    const t = setup();
    t.transport.push(say("noted the plan")).push(say("back again"));
    t.adapter.from("100", "remember the launch plan");
    await until(() => t.adapter.texts().includes("noted the plan"), "first answer");
    t.adapter.from("100", "/new");
    await until(() => t.adapter.texts().includes("✨ New conversation started."), "new");
    t.adapter.from("100", "/resume");
    const list = await until(() => t.adapter.texts().find((m) => m.includes("Reply with a number")), "list");
    const number = /(\d+)\. [^\n]*remember the launch plan/.exec(list)?.[1];
    expect(number, list).toBeDefined();
    t.adapter.from("100", number ?? "");
    await until(() => t.adapter.texts().find((m) => m.includes("Resumed")), "resumed");
    t.adapter.from("100", "and now?");
    await until(() => t.adapter.texts().includes("back again"), "answer in the resumed session");
    const sent = JSON.stringify(t.transport.requests.at(-1)?.messages);
    expect(sent).toContain("remember the launch plan");
    expect(sent).not.toContain('"content":"1"');
  });

  it("/sethome saves the home channel, and deliver() sends there without the agent", async () => {
    const t = setup();
    t.adapter.from("100", "/sethome", { chatType: "group", chatId: "-1009", threadId: "7" });
    await until(() => t.adapter.texts().some((m) => m.startsWith("🏠")), "sethome reply");
    expect(readFileSync(join(t.home, ".env"), "utf8")).toMatch(/TELEGRAM_HOME_CHANNEL=-1009:7/);
    await t.router.deliver("telegram", {}, "Cron says hi");
    const last = [...t.adapter.messages.values()].at(-1);
    expect(last).toMatchObject({ text: "Cron says hi", target: { chatId: "-1009", threadId: "7" } });
    await expect(t.router.deliver("discord", {}, "x")).rejects.toThrow(/not connected/);
    expect(t.transport.requests).toHaveLength(0);
  });
});
