import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../../src/config/defaults.js";

const _DEFAULT_CONFIG = defaultConfig();

import { setup, stopRoutersAfterEach, until } from "../../support/router-harness.js";
import { callTools, say } from "../../support/scripted-transport.js";

stopRoutersAfterEach();

describe("MessageRouter: answers, pairing, delivery and approvals", () => {
  it("answers an allowed user and records the chat's session in sessions.json with its origin", async () => {
    const t = setup();
    t.transport.push(say("Hello there!"));
    t.adapter.from("100", "hi");
    await until(() => t.adapter.texts().includes("Hello there!"), "the answer").catch((e) => {
      throw new Error(`${e.message}\n${t.logs.join("\n")}\n${JSON.stringify(t.adapter.log)}`);
    });
    const index = JSON.parse(readFileSync(join(t.home, "sessions", "sessions.json"), "utf8"));
    const entry = index["agent:main:telegram:dm:100"];
    expect(t.opened).toHaveLength(1);
    expect(entry.origin).toMatchObject({ platform: "telegram", chat_id: "100", user_id: "100" });
    expect(t.store.engine.getSession(entry.session_id)?.source).toBe("telegram");
    expect(t.adapter.log.some((e) => e.op === "typing")).toBe(true);
    expect(t.opened[0]?.toolState["cron.origin"]).toEqual({ platform: "telegram", chat_id: "100" });
  });

  it("keeps one agent per chat across messages, so the second turn sees the first", async () => {
    const t = setup();
    t.transport.push(say("first answer")).push(say("second answer"));
    t.adapter.from("100", "one");
    await until(() => t.adapter.texts().includes("first answer"), "first");
    t.adapter.from("100", "two");
    await until(() => t.adapter.texts().includes("second answer"), "second");
    expect(t.opened).toHaveLength(1);
    const second = t.transport.requests[1]?.messages.map((m) => m.content);
    expect(second).toContain("one");
    expect(second).toContain("first answer");
  });

  it("sends a stranger a pairing code instead of an answer, and answers once the owner approves", async () => {
    const t = setup();
    t.adapter.from("555", "hello?");
    const codeMessage = await until(
      () => t.adapter.texts().find((m) => m.includes("hermes pairing approve")),
      "code",
    );
    const code = /hermes pairing approve telegram ([A-Z0-9]{8})/.exec(codeMessage)?.[1] ?? "";
    expect(code).toHaveLength(8);
    expect(t.transport.requests).toHaveLength(0);
    expect((await t.pairing.approve("telegram", code)).status).toBe("approved");
    t.transport.push(say("Nice to meet you."));
    t.adapter.from("555", "hello again");
    await until(() => t.adapter.texts().includes("Nice to meet you."), "answer after pairing");
  });

  it("ignores strangers in groups without a word", async () => {
    const t = setup();
    t.adapter.from("777", "hey bot", { chatType: "group", chatId: "-1001" });
    await new Promise((r) => setTimeout(r, 100));
    await t.router.stop();
    expect(t.adapter.log.filter((e) => e.op === "send")).toHaveLength(0);
  });

  it("reports started, then succeeded or failed, to an adapter with a processing hook; never for strangers", async () => {
    const t = setup();
    const states: string[] = [];
    t.adapter.processing = async (message, state) => {
      states.push(`${message.source.userId}:${message.text}:${state}`);
    };
    t.transport.push(say("Fine."));
    t.adapter.from("100", "how are you?");
    await until(() => states.includes("100:how are you?:succeeded"), "the success state");
    t.adapter.from("555", "let me in");
    t.transport.push(say(""));
    t.adapter.from("100", "fail now");
    await until(() => states.some((s) => s.startsWith("100:fail now:")), "the second turn's outcome");
    expect(states[0]).toBe("100:how are you?:started");
    expect(states.indexOf("100:fail now:started")).toBeLessThan(
      states.findIndex((s) => /fail now:(succeeded|failed)/.test(s)),
    );
    expect(states.some((s) => s.startsWith("555:"))).toBe(false);
  });

  it("cuts a long answer into messages within the platform limit and keeps code blocks whole", async () => {
    const t = setup();
    const code = Array.from({ length: 30 }, (_, i) => `line ${i} of the program`).join("\n");
    const answer = `Here it is:\n\n\`\`\`python\n${code}\n\`\`\`\n\nDone.`;
    t.transport.push(say(answer));
    t.adapter.from("100", "write it");
    await until(() => t.adapter.texts().some((m) => m.endsWith("Done.")), "last chunk");
    const texts = t.adapter.texts();
    expect(texts.length).toBeGreaterThan(2);
    for (const text of texts) {
      expect(text.length).toBeLessThanOrEqual(300);
      expect((text.match(/```/g) ?? []).length % 2).toBe(0);
    }
    expect(texts.join("\n")).toContain("line 29 of the program");
  });

  it("delivers nothing for [SILENT] and sends MEDIA: files as attachments", async () => {
    const t = setup();
    const file = join(t.cwd, "chart.png");
    writeFileSync(file, "png");
    t.transport
      .push(say("[SILENT]"))
      .push(say(`Here is the chart.\nMEDIA: ${file}\nMEDIA: /nope/missing.pdf`));
    t.adapter.from("100", "anything new?");
    await until(() => t.transport.requests.length === 1, "first turn");
    t.adapter.from("100", "draw it");
    await until(() => t.adapter.log.some((e) => e.op === "media"), "attachment");
    const media = t.adapter.log.find((e) => e.op === "media")?.media;
    expect(media).toEqual({ kind: "photo", path: file });
    const texts = t.adapter.texts();
    expect(texts.some((m) => m.includes("SILENT"))).toBe(false);
    expect(texts.find((m) => m.startsWith("Here is the chart."))).toContain(
      "/nope/missing.pdf: no such file",
    );
  });

  it("asks before a dangerous command; a button press approves and the command runs", async () => {
    const t = setup();
    const victim = join(t.cwd, "victim");
    mkdirSync(victim);
    t.transport.push(callTools(["terminal", { command: `rm -rf ${victim}` }])).push(say("Deleted."));
    t.adapter.from("100", "delete it");
    const ask = await until(
      () => [...t.adapter.messages.entries()].find(([, m]) => m.options?.buttons),
      "approval message",
    ).catch((e) => {
      throw new Error(
        `${e.message}\n${t.logs.join("\n")}\n${JSON.stringify(t.adapter.log)}\n${JSON.stringify(t.transport.requests.at(-1)?.messages.at(-1))}`,
      );
    });
    expect(existsSync(victim)).toBe(true);
    const approve = ask[1].options?.buttons?.[0]?.[0]?.data ?? "";
    let acknowledged = false;
    t.adapter.handlers.onAction({
      source: { platform: "telegram", chatType: "dm", chatId: "100", userId: "100" },
      data: approve,
      messageId: ask[0],
      acknowledge: async () => {
        acknowledged = true;
      },
    });
    await until(() => t.adapter.texts().includes("Deleted."), "answer");
    expect(existsSync(victim)).toBe(false);
    expect(acknowledged).toBe(true);
    expect(t.adapter.messages.get(ask[0])?.text).toMatch(/Approved once/);
  });

  it("a 'no' reply denies the command and it never runs", async () => {
    const t = setup();
    const victim = join(t.cwd, "keep");
    mkdirSync(victim);
    t.transport
      .push(callTools(["terminal", { command: `rm -rf ${victim}` }]))
      .push(say("Understood, left it."));
    t.adapter.from("100", "delete it");
    await until(() => [...t.adapter.messages.values()].find((m) => m.options?.buttons), "approval message");
    t.adapter.from("100", "no");
    await until(() => t.adapter.texts().includes("Understood, left it."), "answer");
    expect(existsSync(victim)).toBe(true);
    const toolResult = t.transport.requests[1]?.messages.find((m) => m.role === "tool");
    expect(String(toolResult?.content)).toMatch(/denied|not approved|refused/i);
  });

  it("an unanswered approval is denied after approvals.timeout", async () => {
    const t = setup({ config: { approvals: { mode: "manual", timeout: 0.3, cron_mode: "deny" } } });
    const victim = join(t.cwd, "stays");
    mkdirSync(victim);
    t.transport
      .push(callTools(["terminal", { command: `rm -rf ${victim}` }]))
      .push(say("Timed out, left it."));
    t.adapter.from("100", "delete it");
    await until(() => t.adapter.texts().includes("Timed out, left it."), "answer");
    expect(existsSync(victim)).toBe(true);
    expect(t.adapter.texts().some((m) => m.includes("Denied (no answer in time)"))).toBe(true);
  });
});
