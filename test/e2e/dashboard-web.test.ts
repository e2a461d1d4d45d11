/**
 * The dashboard's page shell in real Chromium: the URL `hermes dashboard` printed opens the page,
 * the token moves out of the address bar, every registered page loads from the nav without a
 * console error, the keyboard reaches the content, the theme switch works in both schemes, a
 * phone-width window still shows the nav, and a page opened without the token says how to sign in.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { type RunningDashboard, startDashboardProcess } from "../support/dashboard.js";
import {
  evaluate,
  hasChromium,
  launchBrowser,
  openDashboard,
  saveScreenshot,
} from "../support/dashboard-browser.js";

let dash: RunningDashboard;
let browser: Browser;

beforeAll(async () => {
  const h = tempHome();
  writeFileSync(join(h.home, "config.yaml"), fakeProviderConfig("http://127.0.0.1:9/v1"));
  dash = await startDashboardProcess(h);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await dash?.stop();
});

describe.skipIf(!hasChromium)("the dashboard page in Chromium", () => {
  it("opens from the printed URL, drops the token from the address bar and keeps it for API calls", async () => {
    const tab = await openDashboard(browser, dash);
    await tab.page.getByRole("heading", { level: 1 }).first().waitFor();
    expect(new URL(tab.page.url()).searchParams.get("token")).toBeNull();
    expect(await evaluate(tab.page, `sessionStorage.getItem("hermes-dashboard-token")`)).toBe(dash.token);
    expect(await tab.page.title()).toMatch(/Hermes/);
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("loads every page in the nav without a console error and screenshots each", async () => {
    const tab = await openDashboard(browser, dash);
    const links = tab.page.getByRole("navigation", { name: "Pages" }).getByRole("link");
    const count = await links.count();
    expect(count).toBeGreaterThan(0);
    for (let i = 0; i < count; i++) {
      const link = links.nth(i);
      const name = (await link.textContent()) ?? String(i);
      await link.click();
      await expect.poll(() => link.getAttribute("aria-current")).toBe("page");
      await tab.page.locator("#page-title").waitFor();
      await tab.page.waitForLoadState("networkidle");
      await saveScreenshot(tab.page, `shell-${name.toLowerCase()}`);
    }
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("lets the keyboard skip to the content and switch the theme, in light and dark", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const tab = await openDashboard(browser, dash, { colorScheme });
      const page = tab.page;
      await page.keyboard.press("Tab");
      expect(await evaluate(page, "document.activeElement?.textContent")).toBe("Skip to content");
      await page.keyboard.press("Enter");
      expect(await evaluate(page, "document.activeElement?.id")).toBe("main");
      expect(await page.locator("#page-title").textContent()).not.toBe("");
      await expect.poll(() => page.getByRole("alert").count()).toBe(0);
      const background = () => evaluate<string>(page, "getComputedStyle(document.body).backgroundColor");
      const start = await background();
      const other = colorScheme === "light" ? "dark" : "light";
      await page.getByLabel("Theme").selectOption(other);
      await expect.poll(() => evaluate(page, "document.documentElement.dataset.theme")).toBe(other);
      await expect.poll(background).not.toBe(start);
      await saveScreenshot(page, `shell-theme-${other}`);
      await page.reload();
      expect(await evaluate(page, "document.documentElement.dataset.theme")).toBe(other);
      expect(tab.problems).toEqual([]);
      await tab.close();
    }
  });

  it("fits a phone-width window: no sideways scrolling of the page, the nav still reachable", async () => {
    const tab = await openDashboard(browser, dash, { viewport: { width: 375, height: 740 } });
    await tab.page.locator("#page-title").waitFor();
    const overflow = await evaluate<number>(
      tab.page,
      "document.documentElement.scrollWidth - window.innerWidth",
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await expect.poll(() => tab.page.getByRole("navigation", { name: "Pages" }).isVisible()).toBe(true);
    await saveScreenshot(tab.page, "shell-phone");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("says how to sign in when opened without the token, and an unknown page says so", async () => {
    const tab = await openDashboard(browser, dash, { withoutToken: true });
    await evaluate(tab.page, "sessionStorage.clear()");
    await tab.page.reload();
    await expect
      .poll(() => tab.page.getByRole("alert").first().textContent(), { timeout: 10_000 })
      .toMatch(/URL `hermes dashboard` printed/);
    await tab.close();
    const lost = await openDashboard(browser, dash, { hash: "no-such-page" });
    await expect.poll(() => lost.page.getByRole("alert").first().textContent()).toMatch(/No page called/);
    await lost.close();
  });
});
