/**
 * The messaging gateway end to end: `hermes gateway run` (the built CLI) talks to a Telegram Bot
 * API emulator (telegram-test-api on loopback, driven through grammy) and to the fake LLM. The
 * owner's messages are answered; a stranger gets a pairing code and no answer until the owner runs
 * `hermes pairing approve`; a dangerous command waits for a button press; a long answer arrives in
 * pieces; `MEDIA:` sends a file; a cron job the agent creates runs on schedule and its output
 * arrives in the chat it was created from; `hermes send` delivers without the agent.
 */
import { createHmac } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.js";

const OWNER = 1001;
const STRANGER = 2002;

let llm: FakeLlm;
let tg: TelegramEmulator;
let h: { home: string; cwd: string };
let env: Record<string, string>;
let gateway: GatewayProcess;
let webhookUrl = "";

beforeAll(async () => {
  llm = await startFakeLlm();
  tg = await startTelegramEmulator({ botUsername: "hermes_test_bot" });
  h = tempHome(fakeProviderConfig(llm.url, 'display:\n  tool_progress: "off"\n'));
  env = {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.apiRoot,
    TELEGRAM_ALLOWED_USERS: String(OWNER),
    HERMES_CRON_TICK_SECONDS: "0.3",
    WEBHOOK_ENABLED: "true",
    WEBHOOK_PORT: "0",
  };
  const subscribed = await runHermes(
    [
      "webhook",
      "subscribe",
      "ci",
      "--prompt",
      "The CI run for {repository.full_name} finished: {conclusion}. Summarise it.",
      "--deliver",
      `telegram:${OWNER}`,
      "--secret",
      "ci-secret",
    ],
    { ...h, env },
  );
  expect(subscribed.code, subscribed.stderr).toBe(0);
  gateway = await startGatewayProcess(h, env);
  const line = gateway.line;
  expect(line).toContain("telegram");
  webhookUrl = /webhook (http:\/\/[^\s,]+)/.exec(line)?.[1] ?? "";
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await tg?.stop();
  await llm?.close();
});

const owner = () => tg.client({ userId: OWNER, username: "owner", firstName: "Owner" });

describe("the Telegram gateway", () => {
  it("publishes its command menu and answers the owner", async () => {
    await tg.waitFor(() => tg.commands().some((c) => c.command === "new"), { what: "the command menu" });
    llm.enqueue(reply().text("Hello **owner**!"));
    const next = tg.nextBotMessage(OWNER);
    await owner().sendText("hello");
    const answer = await next(20_000);
    expect(answer.text).toBe("Hello <b>owner</b>!");
    expect(answer.parse_mode).toBe("HTML");
    const request = llm.chatRequests.at(-1);
    expect(JSON.stringify(request?.body)).toContain("hello");
  }, 30_000);

  it("gives a stranger a pairing code and no answer until the owner approves", async () => {
    const before = llm.chatRequests.length;
    const stranger = tg.client({ userId: STRANGER, username: "stranger" });
    const next = tg.nextBotMessage(STRANGER);
    await stranger.sendText("hi, who are you?");
    const pairing = await next(20_000);
    const code = /hermes pairing approve telegram ([A-Z0-9]{8})/.exec(pairing.text ?? "")?.[1];
    expect(code, pairing.text).toBeDefined();
    expect(llm.chatRequests.length).toBe(before);

    const approved = await runHermes(["pairing", "approve", "telegram", code ?? ""], { ...h, env });
    expect(approved.code, approved.stderr).toBe(0);

    llm.enqueue(reply().text("Welcome aboard."));
    const answer = tg.nextBotMessage(STRANGER);
    await stranger.sendText("hello again");
    expect((await answer(20_000)).text).toBe("Welcome aboard.");
  }, 40_000);

  it("waits for a button press before running a dangerous command", async () => {
    const victim = join(h.cwd, "old-build");
    mkdirSync(victim);
    writeFileSync(join(victim, "artifact.o"), "x");
    llm.enqueue(reply().toolCall("terminal", { command: `rm -rf ${victim}` }), reply().text("Cleaned up."));
    const ask = tg.nextBotMessage(OWNER);
    await owner().sendText("clean the old build");
    const question = await ask(20_000);
    const buttons = question.reply_markup?.inline_keyboard?.flat() ?? [];
    expect(buttons.map((b) => b.text)).toContain("Approve once");
    expect(question.text).toContain(`rm -rf ${victim}`);
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(victim)).toBe(true);

    const done = tg.nextBotMessage(OWNER);
    const approve = buttons.find((b) => b.text === "Approve once");
    await owner().press(question, approve?.callback_data ?? "");
    expect((await done(20_000)).text).toBe("Cleaned up.");
    expect(existsSync(victim)).toBe(false);
    expect(tg.callbackAnswers().length).toBeGreaterThan(0);
    const edited = tg.botMessages(OWNER).find((m) => m.message_id === question.message_id);
    expect(edited?.text).toContain("Approved once");
  }, 40_000);

  it("cuts a long answer into messages Telegram accepts", async () => {
    const paragraphs = Array.from(
      { length: 40 },
      (_, i) => `Paragraph ${i}: ${"lorem ipsum ".repeat(20).trim()}.`,
    );
    llm.enqueue(reply().text(paragraphs.join("\n\n")));
    const count = tg.botMessages(OWNER).length;
    await owner().sendText("write a lot");
    const last = await tg.waitFor(() => tg.botMessages(OWNER).find((m) => m.text?.includes("Paragraph 39")), {
      timeoutMs: 20_000,
      what: "the last piece",
    });
    const pieces = tg.botMessages(OWNER).slice(count);
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    for (const piece of pieces) expect((piece.text ?? "").length).toBeLessThanOrEqual(4096);
    expect(pieces.map((p) => p.text).join("\n\n")).toContain("Paragraph 0:");
    expect(last.text).toContain("Paragraph 39");
  }, 30_000);

  it("sends a MEDIA: file as a document", async () => {
    const report = join(h.cwd, "report.pdf");
    writeFileSync(report, "%PDF-1.4 fake report");
    llm.enqueue(reply().text(`Here is the report.\nMEDIA:${report}`));
    await owner().sendText("send me the report");
    const doc = await tg.waitFor(() => tg.botMessages(OWNER).find((m) => m.method === "sendDocument"), {
      timeoutMs: 20_000,
      what: "the document",
    });
    expect(doc.file?.bytes.toString()).toBe("%PDF-1.4 fake report");
    expect(doc.file?.fileName).toBe("report.pdf");
    expect(tg.botMessages(OWNER).some((m) => m.text === "Here is the report.")).toBe(true);
  }, 30_000);

  it("runs a cron job the agent created and delivers its output to this chat", async () => {
    const at = new Date(Date.now() + 3000).toISOString();
    llm.enqueue(
      reply().toolCall("cronjob", {
        action: "create",
        schedule: at,
        prompt: "Report the build status",
        name: "build-status",
      }),
      reply().text("Scheduled."),
      reply().text("Build status: all green."),
    );
    const scheduled = tg.nextBotMessage(OWNER);
    await owner().sendText("remind me of the build status in a few seconds");
    expect((await scheduled(20_000)).text).toBe("Scheduled.");
    const jobs = JSON.parse(readFileSync(join(h.home, "cron", "jobs.json"), "utf8"));
    const job = jobs.jobs.find((j: { name: string }) => j.name === "build-status");
    expect(job.deliver).toBe("origin");
    expect(job.origin).toMatchObject({ platform: "telegram", chat_id: String(OWNER) });
    const delivered = await tg.waitFor(
      () => tg.botMessages(OWNER).find((m) => m.text?.includes("Build status: all green.")),
      { timeoutMs: 30_000, what: "the cron output in the chat" },
    );
    expect(delivered.chat_id).toBe(String(OWNER));
  }, 60_000);

  it("a signed webhook runs the agent and its answer arrives in the chat; a forged one is refused", async () => {
    const body = JSON.stringify({ repository: { full_name: "acme/app" }, conclusion: "failure" });
    const sign = (secret: string) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
    const before = llm.chatRequests.length;
    const forged = await fetch(`${webhookUrl}/webhooks/ci`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-hub-signature-256": sign("wrong") },
      body,
    });
    expect(forged.status).toBe(401);
    llm.enqueue(reply().text("CI for acme/app failed; the test job broke."));
    const accepted = await fetch(`${webhookUrl}/webhooks/ci`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-hub-signature-256": sign("ci-secret") },
      body,
    });
    expect(accepted.status).toBeLessThan(300);
    await tg.waitFor(() => tg.botMessages(OWNER).find((m) => m.text?.includes("CI for acme/app failed")), {
      timeoutMs: 20_000,
      what: "the webhook's answer in the chat",
    });
    expect(llm.chatRequests.length).toBe(before + 1);
    const prompt = JSON.stringify(llm.chatRequests.at(-1)?.body);
    expect(prompt).toContain("The CI run for acme/app finished: failure.");
  }, 30_000);

  it("hermes send delivers to a chat without the agent while the gateway runs", async () => {
    const before = llm.chatRequests.length;
    const sent = await runHermes(["send", "-t", `telegram:${OWNER}`, "Deploy finished ✅"], { ...h, env });
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toContain(`Sent to telegram:${OWNER}`);
    await tg.waitFor(() => tg.botMessages(OWNER).find((m) => m.text === "Deploy finished ✅"), {
      what: "the sent message",
    });
    expect(llm.chatRequests.length).toBe(before);
    // The gateway still receives: a send-only connection did not take its updates.
    llm.enqueue(reply().text("Still here."));
    const next = tg.nextBotMessage(OWNER);
    await owner().sendText("are you there?");
    expect((await next(20_000)).text).toBe("Still here.");

    const noHome = await runHermes(["send", "-t", "telegram", "hi"], { ...h, env });
    expect(noHome.code).toBe(2);
    expect(noHome.stderr).toContain("TELEGRAM_HOME_CHANNEL");
  }, 40_000);

  it("stops cleanly on SIGTERM", async () => {
    expect(await gateway.stop()).toBe(0);
    expect(existsSync(join(h.home, "gateway.pid"))).toBe(false);
  }, 30_000);
});
