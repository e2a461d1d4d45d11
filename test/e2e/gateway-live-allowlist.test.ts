/**
 * Allowlist edits reach a running gateway without a restart: `hermes gateway run` (the built CLI)
 * against the Telegram emulator and the fake LLM, with `TELEGRAM_ALLOWED_USERS` in the home's
 * `.env`. `hermes config set` swaps the allowed user while the gateway runs: the removed user's
 * next message is refused (no model call) and the new one is answered. A garbled `.env` keeps the
 * previous list (and is reported); a pairing-approved user stays allowed through every edit; a
 * user removed while an approval waits cannot press its button.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.js";

const FIRST = 1001;
const SECOND = 3003;
const PAIRED = 5005;

let llm: FakeLlm;
let tg: TelegramEmulator;
let h: { home: string; cwd: string };
let env: Record<string, string>;
let gateway: GatewayProcess;

beforeAll(async () => {
  llm = await startFakeLlm();
  tg = await startTelegramEmulator({ botUsername: "hermes_live_bot" });
  h = tempHome(fakeProviderConfig(llm.url, 'display:\n  tool_progress: "off"\napprovals:\n  timeout: 3\n'));
  // Only the token and API root come from the real environment; the allowlist lives in .env.
  env = { TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.apiRoot };
  writeFileSync(join(h.home, ".env"), `# allowlists\nTELEGRAM_ALLOWED_USERS=${FIRST}\n`, { mode: 0o600 });
  gateway = await startGatewayProcess(h, env);
  expect(gateway.line).toContain("telegram");
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await tg?.stop();
  await llm?.close();
});

const user = (id: number) => tg.client({ userId: id, username: `user${id}`, firstName: `User ${id}` });

/** How many messages from `id` the gateway has turned away (a pairing code offered or withheld). */
const refusals = (id: number) =>
  gateway
    .stderr()
    .match(new RegExp(`(sent a pairing code to unknown user|pairing request from) ${id}\\b`, "g"))?.length ??
  0;

async function answered(id: number, text: string, answer: string): Promise<void> {
  llm.enqueue(reply().text(answer));
  const next = tg.nextBotMessage(id);
  await user(id).sendText(text);
  expect((await next(20_000)).text).toBe(answer);
}

/** Sends `text` as `id` and waits until the gateway has turned it away; no model call is made. */
async function refused(id: number, text: string): Promise<void> {
  const calls = llm.chatRequests.length;
  const before = refusals(id);
  await user(id).sendText(text);
  await tg.waitFor(() => refusals(id) > before, { timeoutMs: 20_000, what: `the refusal of ${id}` });
  expect(llm.chatRequests.length).toBe(calls);
  expect(JSON.stringify(llm.chatRequests.map((r) => r.body))).not.toContain(text);
}

async function configSet(value: string): Promise<void> {
  const set = await runHermes(["config", "set", "TELEGRAM_ALLOWED_USERS", value], { ...h, env });
  expect(set.code, set.stderr).toBe(0);
}

describe("allowlist edits while the gateway runs", () => {
  it("answers the allowed user and refuses a stranger", async () => {
    await answered(FIRST, "hello there", "Hello, first user.");
    await refused(SECOND, "let me in");
  }, 40_000);

  it("applies `hermes config set` from the very next message: the removed user is refused, the added one answered", async () => {
    await configSet(String(SECOND));
    expect(readFileSync(join(h.home, ".env"), "utf8")).toContain(`TELEGRAM_ALLOWED_USERS=${SECOND}`);
    await refused(FIRST, "am I still in? secret-question-1");
    await answered(SECOND, "and me?", "Welcome, second user.");
  }, 40_000);

  it("keeps a pairing-approved user allowed whatever the allowlist becomes", async () => {
    const next = tg.nextBotMessage(PAIRED);
    await user(PAIRED).sendText("hi");
    const offer = await next(20_000);
    const code = /hermes pairing approve telegram ([A-Z0-9]{8})/.exec(offer.text ?? "")?.[1];
    expect(code, offer.text).toBeDefined();
    const approved = await runHermes(["pairing", "approve", "telegram", code ?? ""], { ...h, env });
    expect(approved.code, approved.stderr).toBe(0);
    await answered(PAIRED, "paired now", "Hello, paired user.");
    await configSet(String(FIRST));
    await answered(PAIRED, "still here?", "Still here.");
    await answered(FIRST, "back again", "Welcome back, first user.");
    await refused(SECOND, "what about me? secret-question-2");
  }, 60_000);

  it("keeps the previous list when .env is garbled, says so, and applies the fixed file", async () => {
    // An unterminated quote, then an allow-all flag: read naively this would open the gate.
    writeFileSync(
      join(h.home, ".env"),
      `TELEGRAM_ALLOWED_USERS="${SECOND}\nTELEGRAM_ALLOW_ALL_USERS=true\n`,
      { mode: 0o600 },
    );
    await refused(SECOND, "garbled file, secret-question-3");
    await answered(FIRST, "still allowed?", "Yes, first user.");
    expect(gateway.stderr()).toMatch(/\.env was not applied: line 1 opens a " quote that never closes/);
    const log = readFileSync(join(h.home, "logs", "gateway.log"), "utf8");
    expect(log).toContain("was not applied");
    // `hermes config set` still writes, and says the gateway will not take it.
    const set = await runHermes(["config", "set", "SIGNAL_ALLOWED_USERS", "+15550001"], { ...h, env });
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toContain("a running gateway keeps its allowlists until it is fixed");
    await refused(SECOND, "after config set, secret-question-5");

    writeFileSync(join(h.home, ".env"), `TELEGRAM_ALLOWED_USERS=${SECOND}\n`, { mode: 0o600 });
    await answered(SECOND, "fixed now?", "Fixed, second user.");
    await refused(FIRST, "and me? secret-question-4");
  }, 60_000);

  it("refuses the approval button of a user removed while the approval waits", async () => {
    const victim = join(h.cwd, "keep-me");
    mkdirSync(victim);
    writeFileSync(join(victim, "data.txt"), "x");
    llm.enqueue(
      reply().toolCall("terminal", { command: `rm -rf ${victim}` }),
      reply().text("It was not run."),
    );
    const ask = tg.nextBotMessage(SECOND);
    await user(SECOND).sendText("clean up keep-me");
    const question = await ask(20_000);
    const approve = (question.reply_markup?.inline_keyboard?.flat() ?? []).find(
      (b) => b.text === "Approve once",
    );
    expect(approve, question.text).toBeDefined();

    await configSet(String(FIRST));
    const queryId = await user(SECOND).press(question, approve?.callback_data ?? "");
    const ack = await tg.waitFor(() => tg.callbackAnswers().find((a) => a.callback_query_id === queryId), {
      what: "the button's answer",
    });
    expect(ack.text).toBe("You are not allowed to do that.");
    // The approval times out (approvals.timeout: 3) and the command never runs.
    await tg.waitForBotMessage((m) => m.chat_id === String(SECOND) && m.text === "It was not run.", 20_000);
    expect(existsSync(join(victim, "data.txt"))).toBe(true);
  }, 40_000);
});
