/**
 * The inactivity heartbeat end to end: `hermes gateway run` (the built CLI) with the Telegram
 * emulator and the fake LLM, with `agent.gateway_notify_interval`, `gateway_timeout_warning` and
 * `gateway_timeout` set to fractions of a second. A turn longer than the notify interval gets a
 * "still working" note in its chat and then its answer; a turn stuck in a command past the timeout
 * is warned, stopped with a message (its command killed), and the chat goes on working after it.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.js";

const OWNER = 1001;

let llm: FakeLlm;
let tg: TelegramEmulator;
let h: { home: string; cwd: string };
let gateway: GatewayProcess;

beforeAll(async () => {
  llm = await startFakeLlm();
  tg = await startTelegramEmulator({ botUsername: "hermes_test_bot" });
  h = tempHome(
    fakeProviderConfig(
      llm.url,
      "  gateway_notify_interval: 0.4\n  gateway_timeout_warning: 2.5\n  gateway_timeout: 4\n" +
        'display:\n  tool_progress: "off"\n',
    ),
  );
  gateway = await startGatewayProcess(h, {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.apiRoot,
    TELEGRAM_ALLOWED_USERS: String(OWNER),
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await tg?.stop();
  await llm?.close();
});

const owner = () => tg.client({ userId: OWNER, username: "owner", firstName: "Owner" });
const texts = () => tg.botMessages(OWNER).map((m) => m.text ?? "");

/** Processes whose command line contains `marker` (the stuck command of the second test). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker)) found.push(Number(pid));
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

describe("the gateway's inactivity heartbeat", () => {
  it('a turn longer than the notify interval gets a "still working" note, then its answer', async () => {
    llm.enqueue(reply().toolCall("terminal", { command: "sleep 1.6" }), reply().text("Slept well."));
    await owner().sendText("take a short nap");
    await tg.waitFor(() => texts().includes("Slept well."), { timeoutMs: 30_000, what: "the answer" });
    const notes = texts().filter((t) => t.startsWith("⏳ Still working"));
    // Edited in place on Telegram: one note, however many intervals passed.
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^⏳ Still working \(\d+ s so far; step 1 of \d+, running terminal\)$/);
    // The command printed nothing for 1.6 s: below the warning, so no warning.
    expect(texts().some((t) => t.includes("No activity"))).toBe(false);
    const order = texts();
    expect(order.findIndex((t) => t.startsWith("⏳"))).toBeLessThan(order.indexOf("Slept well."));
  }, 40_000);

  it("a turn stuck past the timeout is warned, stopped with a message and its command killed", async () => {
    const marker = join(h.cwd, "woke-up");
    const requests = llm.chatRequests.length;
    llm.enqueue(reply().toolCall("terminal", { command: `sleep 41.75 && touch ${marker}` }));
    await owner().sendText("wait for the build");
    await tg.waitFor(() => processesWith("41.75").length > 0 || undefined, {
      timeoutMs: 20_000,
      what: "the stuck command",
    });
    const warning = await tg.waitFor(() => texts().find((t) => t.startsWith("⚠️ No activity for 2 s")), {
      timeoutMs: 20_000,
      what: "the warning",
    });
    expect(warning).toContain("/stop");
    const stopped = await tg.waitFor(() => texts().find((t) => t.startsWith("⏱️ I stopped this task")), {
      timeoutMs: 20_000,
      what: "the stop message",
    });
    expect(stopped).toContain("no activity for 4 s");
    expect(stopped).toContain("stuck in the terminal tool");
    expect(stopped).toContain("agent.gateway_timeout");
    await tg.waitFor(() => processesWith("41.75").length === 0 || undefined, {
      timeoutMs: 20_000,
      what: "the command to be killed",
    });
    expect(existsSync(marker)).toBe(false);
    // The model was not asked to go on after the stop.
    expect(llm.chatRequests.length).toBe(requests + 1);
    expect(gateway.stderr()).toContain("without activity");

    // The chat works as before.
    llm.enqueue(reply().text("Back at your service."));
    await owner().sendText("are you there?");
    await tg.waitFor(() => texts().includes("Back at your service."), {
      timeoutMs: 20_000,
      what: "the next answer",
    });
  }, 60_000);
});
