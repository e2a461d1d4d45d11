/**
 * The REPL's slash commands in a chat, end to end: `hermes gateway run` (the built CLI) against the
 * Telegram emulator and the fake LLM. The menu comes from the shared registry; /model, /retry,
 * /undo, /resume (numbered pick), /q, /<skill> work as in the terminal; a non-admin is refused an
 * admin-only command; an unknown /word is answered with the closest commands and never reaches
 * the model, while `/etc/hosts is empty?` is a message.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { type FakeLlm, type RecordedRequest, reply, startFakeLlm } from "../support/fake-llm.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.js";

const OWNER = 1001;
const GUEST = 3003;

let llm: FakeLlm;
let tg: TelegramEmulator;
let gateway: GatewayProcess;

beforeAll(async () => {
  llm = await startFakeLlm();
  tg = await startTelegramEmulator({ botUsername: "hermes_cmd_bot" });
  const h = tempHome(
    fakeProviderConfig(
      llm.url,
      'display:\n  tool_progress: "off"\ngateway:\n  admin_users: ["telegram:1001"]\n',
    ),
  );
  const skill = join(h.home, "skills", "ops", "deploy-check");
  mkdirSync(skill, { recursive: true });
  writeFileSync(
    join(skill, "SKILL.md"),
    "---\nname: deploy-check\ndescription: Check a deployment is healthy.\n---\n# Deploy check\n\nCall the health endpoint of the named environment and report its version.\n",
  );
  gateway = await startGatewayProcess(h, {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.apiRoot,
    TELEGRAM_ALLOWED_USERS: `${OWNER},${GUEST}`,
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await tg?.stop();
  await llm?.close();
});

/** Sends `text` as `userId` and resolves with the text of the bot's next message to them. */
async function say(userId: number, text: string): Promise<string> {
  const next = tg.nextBotMessage(userId);
  await tg.client({ userId, username: userId === OWNER ? "owner" : "guest" }).sendText(text);
  return (await next(20_000)).text ?? "";
}

/** The user and assistant texts of a model request. */
function conversation(request: RecordedRequest | undefined): string[] {
  const body = request?.body as { messages?: Array<{ role: string; content: unknown }> } | undefined;
  return (body?.messages ?? [])
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`);
}

describe("slash commands in a Telegram chat", () => {
  it("publishes the chat commands of the shared registry as the menu", async () => {
    const menu = await tg.waitFor(() => (tg.commands().length > 0 ? tg.commands() : undefined), {
      what: "the command menu",
    });
    const names = menu.map((c) => c.command);
    for (const name of ["new", "resume", "retry", "undo", "model", "queue", "reload_mcp", "sethome", "help"])
      expect(names).toContain(name);
    expect(names).not.toContain("quit");
    expect(names).not.toContain("browser");
  }, 30_000);

  it("answers an unknown /word with the closest commands and sends a path to the model", async () => {
    const before = llm.chatRequests.length;
    const unknown = await say(OWNER, "/modle gpt-5");
    expect(unknown).toContain("Unknown command /modle");
    expect(unknown).toContain("/model");
    expect(llm.chatRequests.length).toBe(before);

    llm.enqueue(reply().text("That file is a path, not a command."));
    expect(await say(OWNER, "/etc/hosts is empty?")).toBe("That file is a path, not a command.");
    expect(llm.chatRequests.length).toBe(before + 1);
    expect(conversation(llm.chatRequests.at(-1))).toContain("user: /etc/hosts is empty?");
  }, 30_000);

  it("refuses admin-only commands to a non-admin and lets the admin switch the model", async () => {
    const before = llm.chatRequests.length;
    expect(await say(GUEST, "/model rogue-model")).toContain("/model is for this bot's admins only");
    expect(await say(GUEST, "/yolo")).toContain("/yolo is for this bot's admins only");
    expect(llm.chatRequests.length).toBe(before);

    expect(await say(OWNER, "/model other-model")).toMatch(/Model set to (<b>)?other-model/);
    llm.enqueue(reply().text("Hi from the other model."));
    expect(await say(OWNER, "hello")).toBe("Hi from the other model.");
    expect((llm.chatRequests.at(-1)?.body as { model?: string } | undefined)?.model).toBe("other-model");
  }, 30_000);

  it("/retry asks again in place of the last answer; /undo takes the turn back", async () => {
    llm.enqueue(reply().text("five"));
    expect(await say(OWNER, "what is 2+2?")).toBe("five");
    llm.enqueue(reply().text("four"));
    const retrying = tg.nextBotMessage(OWNER);
    await tg.client({ userId: OWNER }).sendText("/retry");
    expect((await retrying(20_000)).text).toContain("Retrying: what is 2+2?");
    await tg.waitFor(() => tg.botMessages(OWNER).some((m) => m.text === "four"), {
      what: "the retried answer",
    });
    const retried = conversation(llm.chatRequests.at(-1));
    expect(retried.filter((m) => m === "user: what is 2+2?")).toHaveLength(1);
    expect(retried).not.toContain("assistant: five");

    expect(await say(OWNER, "/undo")).toMatch(/Undid 1 turn \(2 messages\)/);
    llm.enqueue(reply().text("noted"));
    expect(await say(OWNER, "next topic")).toBe("noted");
    const after = conversation(llm.chatRequests.at(-1)).join("\n");
    expect(after).not.toContain("what is 2+2?");
    expect(after).toContain("hello");
  }, 40_000);

  it("/resume shows a numbered list and resumes the number the user answers", async () => {
    expect(await say(OWNER, "/new")).toContain("New conversation started");
    const list = await say(OWNER, "/resume");
    expect(list).toContain("Reply with a number");
    const number = /(\d+)\.\s[^\n]*etc\/hosts/.exec(list)?.[1];
    expect(number, list).toBeDefined();
    expect(await say(OWNER, number ?? "")).toContain("Resumed");
    llm.enqueue(reply().text("You asked about /etc/hosts."));
    expect(await say(OWNER, "what did I ask first?")).toBe("You asked about /etc/hosts.");
    expect(conversation(llm.chatRequests.at(-1))).toContain("user: /etc/hosts is empty?");
  }, 40_000);

  it("/q is /queue: a message queued during a turn is sent after it", async () => {
    expect(await say(OWNER, "/q")).toContain("The queue is empty.");
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    llm.respondWith(async (request) => {
      if (!JSON.stringify(request.body).includes("slow task")) return undefined;
      if (JSON.stringify(request.body).includes("and then this")) return undefined;
      await gate;
      return reply().text("slow task done");
    });
    try {
      const count = llm.chatRequests.length;
      await tg.client({ userId: OWNER }).sendText("slow task");
      await llm.waitForRequests(count + 1);
      expect(await say(OWNER, "/q and then this")).toContain("Queued (1 waiting)");
      llm.enqueue(reply().text("queued one answered"));
      release();
      await tg.waitFor(() => tg.botMessages(OWNER).some((m) => m.text === "queued one answered"), {
        timeoutMs: 20_000,
        what: "the queued message's answer",
      });
      const texts = tg.botMessages(OWNER).map((m) => m.text);
      expect(texts.indexOf("slow task done")).toBeLessThan(texts.indexOf("queued one answered"));
      expect(conversation(llm.chatRequests.at(-1))).toContain("user: and then this");
    } finally {
      llm.respondWith(undefined);
    }
  }, 40_000);

  it("/<skill-name> [request] sends the skill with the request to the model", async () => {
    llm.enqueue(reply().text("staging runs v1.2.3"));
    const loaded = await say(OWNER, "/deploy-check staging");
    expect(loaded).toContain("Loaded skill deploy-check");
    await tg.waitFor(() => tg.botMessages(OWNER).some((m) => m.text === "staging runs v1.2.3"), {
      timeoutMs: 20_000,
      what: "the skill's answer",
    });
    const sent = conversation(llm.chatRequests.at(-1)).at(-1) ?? "";
    expect(sent).toContain("Call the health endpoint");
    expect(sent).toContain("staging");
  }, 30_000);

  it("/help lists what a chat offers, grouped", async () => {
    const help = await say(GUEST, "/help");
    for (const text of ["Session", "Turn", "/resume", "/queue", "/approve"]) expect(help).toContain(text);
    expect(help).not.toContain("/quit");
    expect(help).not.toContain("/browser");
  }, 30_000);
});
