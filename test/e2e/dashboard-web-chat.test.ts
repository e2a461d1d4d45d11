/**
 * The chat page in real Chromium against the fake LLM: an answer shows while it still streams and
 * as markdown when done; a dangerous command asks with an approval card (focus moves to it), Deny
 * keeps the command from running and Approve once runs it; Stop kills a long-running command's
 * process; a provider failure mid-stream shows an error and gives the message back; the
 * conversation resumes from its URL with its history, and it is listed with source dashboard.
 * Screenshots of each state go to test-artifacts/dashboard/.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { dashboardClient, type RunningDashboard, startDashboardProcess } from "../support/dashboard.js";
import {
  evaluate,
  hasChromium,
  launchBrowser,
  openDashboard,
  saveScreenshot,
} from "../support/dashboard-browser.js";
import {
  disconnectMidStream,
  type FakeLlm,
  reply,
  stallMidStream,
  startFakeLlm,
} from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { isRunning, waitFor } from "../unit/tools/terminal/helpers.js";

const llm = useFakeLlm();
let titles: FakeLlm;
let h: { home: string; cwd: string };
let dash: RunningDashboard;
let browser: Browser;
/** The first conversation of the file, once the resume test found it. */
let resumedId = "";

beforeAll(async () => {
  // New sessions get a title from the auxiliary model: its own fake, so the scripts stay in order.
  titles = await startFakeLlm();
  titles.respondWith(() => reply().text("Pelican talk"));
  const aux = `auxiliary:\n  title_generation:\n    base_url: ${titles.url}\n    model: title-model\n`;
  h = tempHome(fakeProviderConfig(llm.url, `approvals:\n  timeout: 60\n${aux}`));
  dash = await startDashboardProcess(h);
  if (hasChromium) browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await dash?.stop();
  await titles?.close();
});

const box = (page: Page) => page.getByLabel("Message", { exact: true });

async function say(page: Page, text: string): Promise<void> {
  await box(page).fill(text);
  await box(page).press("Enter");
}

/** Waits until the turn is over (the Stop button is gone and Send is back). */
async function idle(page: Page): Promise<void> {
  await expect.poll(() => page.getByRole("button", { name: "Stop" }).count(), { timeout: 20_000 }).toBe(0);
}

describe.skipIf(!hasChromium)("the chat page in Chromium", () => {
  it("shows the answer while it streams, renders markdown when done, and Stop ends a stalled answer", async () => {
    const tab = await openDashboard(browser, dash, { hash: "chat" });
    const { page } = tab;
    await page.locator("#page-title").waitFor();
    expect(await page.locator("#page-title").textContent()).toBe("Chat");
    // The model sends the start of its answer, then nothing more: the page must show it already.
    llm.enqueue(stallMidStream(2, reply().text("Pelicans are large water birds with a throat pouch.")));
    await say(page, "tell me about pelicans");
    const answer = page.locator(".chat-msg.assistant").last();
    await expect.poll(() => answer.textContent(), { timeout: 15_000 }).toMatch(/Pelicans/);
    expect(await page.getByRole("button", { name: "Stop" }).isVisible()).toBe(true);
    expect(await answer.getAttribute("aria-busy")).toBe("true");
    await saveScreenshot(page, "chat-streaming");
    await page.getByRole("button", { name: "Stop" }).click();
    await idle(page);

    llm.enqueue(reply().text("They eat **fish**, mostly.\n\n- herring\n- sardines"));
    await say(page, "what do they eat?");
    await expect
      .poll(() => page.locator(".chat-msg.assistant strong").last().textContent(), { timeout: 15_000 })
      .toBe("fish");
    await idle(page);
    expect(await page.locator(".chat-msg.assistant li").count()).toBe(2);
    const link = page.getByRole("link", { name: "Transcript in Sessions" });
    const target = (await link.getAttribute("href")) ?? "";
    expect(target).toMatch(/^#\/sessions\/\w/);
    expect(new URL(page.url()).hash).toBe(target.replace("sessions", "chat"));
    await saveScreenshot(page, "chat-answer");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("asks before a dangerous command: Deny runs nothing, Approve once runs it", async () => {
    const tab = await openDashboard(browser, dash, { hash: "chat" });
    const { page } = tab;
    const victim = join(h.cwd, "victim");
    mkdirSync(victim, { recursive: true });
    const marker = join(h.cwd, "marker");
    const command = `rm -rf ${victim} && touch ${marker}`;
    llm.enqueue(reply().toolCall("terminal", { command }), reply().text("Understood, I left it alone."));
    await say(page, "clean up the victim folder");
    const card = page.getByRole("region", { name: /Approval needed/ });
    await card.waitFor({ timeout: 15_000 });
    expect(await card.locator("pre").textContent()).toBe(command);
    // The question takes the focus, on its safest answer.
    await expect.poll(() => evaluate(page, "document.activeElement?.textContent")).toBe("Deny");
    const labels = await card.getByRole("button").allTextContents();
    expect(labels).toEqual(["Deny", "Approve once", "Approve for this session", "Always approve"]);
    await saveScreenshot(page, "chat-approval");
    await page.keyboard.press("Enter");
    await expect
      .poll(() => page.getByText("Understood, I left it alone.").count(), { timeout: 15_000 })
      .toBe(1);
    await idle(page);
    expect(await card.getByRole("status").textContent()).toBe("Denied");
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(victim)).toBe(true);
    await saveScreenshot(page, "chat-denied");

    llm.enqueue(reply().toolCall("terminal", { command }), reply().text("Cleaned up."));
    await say(page, "now really clean it up");
    const second = page.getByRole("region", { name: /Approval needed/ }).last();
    await second.getByRole("button", { name: "Approve once" }).click();
    await expect.poll(() => page.getByText("Cleaned up.").count(), { timeout: 15_000 }).toBe(1);
    await idle(page);
    expect(existsSync(marker)).toBe(true);
    expect(existsSync(victim)).toBe(false);
    // The command's line is there, collapsed, and opens to its result.
    const tool = page.locator("details.chat-tool").last();
    expect(await tool.getAttribute("open")).toBeNull();
    await tool.locator("summary").click();
    expect(await tool.getAttribute("open")).not.toBeNull();
    await saveScreenshot(page, "chat-approved");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("Stop kills a long-running command's process", async () => {
    const tab = await openDashboard(browser, dash, { hash: "chat" });
    const { page } = tab;
    const pidFile = join(h.cwd, "sleep.pid");
    llm.enqueue(reply().toolCall("terminal", { command: `sh -c 'echo $$ > ${pidFile}; exec sleep 300'` }));
    await say(page, "wait five minutes");
    const pid = await waitFor(
      () => (existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").trim()) || null : null),
      15_000,
      "the command to start",
    );
    expect(isRunning(pid)).toBe(true);
    await expect.poll(() => page.locator("details.chat-tool.running").count()).toBe(1);
    await saveScreenshot(page, "chat-running-command");
    await page.getByRole("button", { name: "Stop" }).click();
    await idle(page);
    await waitFor(() => !isRunning(pid), 10_000, "the command's process to end");
    expect(isRunning(pid)).toBe(false);
    // The page still works: the next message is answered.
    llm.enqueue(reply().text("Stopped waiting."));
    await say(page, "never mind");
    await expect.poll(() => page.getByText("Stopped waiting.").count(), { timeout: 15_000 }).toBe(1);
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("shows a provider failure mid-stream, gives the message back, and carries on", async () => {
    const tab = await openDashboard(browser, dash, { hash: "chat" });
    const { page } = tab;
    llm.enqueue(disconnectMidStream(2, reply().text("This answer will break off halfway through.")));
    await say(page, "a question that fails");
    await expect.poll(() => page.locator(".chat-error").count(), { timeout: 20_000 }).toBeGreaterThan(0);
    await idle(page);
    expect(await box(page).inputValue()).toBe("a question that fails");
    await saveScreenshot(page, "chat-error");
    llm.enqueue(reply().text("Answered on the second try."));
    await box(page).press("Enter");
    await expect
      .poll(() => page.getByText("Answered on the second try.").count(), { timeout: 15_000 })
      .toBe(1);
    expect(await box(page).inputValue()).toBe("");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("asks the agent's question (clarify) with its choices; the answer reaches the model", async () => {
    const tab = await openDashboard(browser, dash, { hash: "chat" });
    const { page } = tab;
    llm.enqueue(
      reply().toolCall("clarify", {
        question: "Which bird should I describe?",
        choices: ["Pelican", "Heron"],
      }),
      reply().text("Herons it is."),
    );
    await say(page, "describe a bird");
    const card = page.getByRole("region", { name: /Which bird should I describe/ });
    await card.waitFor({ timeout: 15_000 });
    await expect.poll(() => evaluate(page, "document.activeElement?.textContent")).toBe("Pelican");
    await saveScreenshot(page, "chat-question");
    await card.getByRole("button", { name: "Heron" }).click();
    await expect.poll(() => page.getByText("Herons it is.").count(), { timeout: 15_000 }).toBe(1);
    await idle(page);
    expect(await card.getByRole("status").textContent()).toBe("Answered: Heron");
    const sent = llm.chatRequests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(String(sent.messages.filter((m) => m.role === "tool").at(-1)?.content)).toContain("Heron");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("resumes a conversation from its URL with its history; it is listed with source dashboard", async () => {
    const api = dashboardClient(dash, dash.token ?? "");
    const sessions = (await api.get("/api/sessions?source=dashboard")).json()["sessions"] as Array<{
      id: string;
      source: string;
      title: string | null;
    }>;
    expect(sessions.length).toBeGreaterThanOrEqual(4);
    expect(new Set(sessions.map((s) => s.source))).toEqual(new Set(["dashboard"]));
    // Newest first: the first conversation of this file is the last; a later one got its title.
    const pelicans = sessions.at(-1);
    resumedId = pelicans?.id ?? "";
    expect(sessions.some((s) => s.title === "Pelican talk")).toBe(true);
    const tab = await openDashboard(browser, dash, { hash: `chat/${pelicans?.id}` });
    const { page } = tab;
    await expect.poll(() => page.getByText("tell me about pelicans").count(), { timeout: 10_000 }).toBe(1);
    expect(await page.locator(".chat-msg.assistant strong").first().textContent()).toBe("fish");
    llm.enqueue(reply().text("Yes, the same conversation."));
    await say(page, "are we still talking?");
    await expect
      .poll(() => page.getByText("Yes, the same conversation.").count(), { timeout: 15_000 })
      .toBe(1);
    await idle(page);
    const sent = llm.chatRequests.at(-1)?.body as { messages: Array<{ content: unknown }> };
    expect(JSON.stringify(sent.messages)).toContain("what do they eat?");
    await saveScreenshot(page, "chat-resumed");
    // Commands in the box go through the shared registry; /new and /resume move the transcript too.
    await say(page, "/new");
    await expect.poll(() => page.getByText("tell me about pelicans").count(), { timeout: 10_000 }).toBe(0);
    await expect.poll(() => new URL(page.url()).hash).not.toBe(`#/chat/${resumedId}`);
    await say(page, `/resume ${resumedId}`);
    await expect.poll(() => page.getByText("tell me about pelicans").count(), { timeout: 10_000 }).toBe(1);
    expect(new URL(page.url()).hash).toBe(`#/chat/${resumedId}`);
    await saveScreenshot(page, "chat-command-resume");
    // Keyboard: Shift+Enter makes a new line instead of sending.
    await box(page).fill("line one");
    await box(page).press("Shift+Enter");
    await box(page).type("line two");
    expect(await box(page).inputValue()).toBe("line one\nline two");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("fits a phone-width window, in the dark theme too, with a conversation on it", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const tab = await openDashboard(browser, dash, {
        hash: resumedId ? `chat/${resumedId}` : "chat",
        viewport: { width: 375, height: 740 },
        colorScheme,
      });
      await tab.page.locator("#page-title").waitFor();
      if (resumedId) await tab.page.getByText("Yes, the same conversation.").waitFor();
      const overflow = await evaluate<number>(
        tab.page,
        "document.documentElement.scrollWidth - window.innerWidth",
      );
      expect(overflow).toBeLessThanOrEqual(0);
      expect(await box(tab.page).isVisible()).toBe(true);
      await saveScreenshot(tab.page, `chat-phone-${colorScheme}`);
      expect(tab.problems).toEqual([]);
      await tab.close();
    }
  });
});
