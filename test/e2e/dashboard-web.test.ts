/**
 * The dashboard's page shell in real Chromium: the URL `hermes dashboard` printed opens the page,
 * the token moves out of the address bar, every registered page loads from the nav without a
 * console error, the keyboard reaches the content, the theme switch works in both schemes, a
 * phone-width window still shows the nav, and a page opened without the token says how to sign in.
 * Every page in the nav also passes the audits of dashboard-audit.ts (accessible names, one h1,
 * unique ids, tab order, text contrast, no sideways scrolling) in both colour schemes at desktop
 * and phone width, and tabbing through it shows where the focus is.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { type RunningDashboard, startDashboardProcess } from "../support/dashboard.js";
import { A11Y_AUDIT, CONTRAST_AUDIT, OVERFLOW_AUDIT } from "../support/dashboard-audit.js";
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
  // A log with every level, so the audits see each level's colour on the Logs page.
  mkdirSync(join(h.home, "logs"), { recursive: true });
  writeFileSync(
    join(h.home, "logs", "agent.log"),
    ["DEBUG", "INFO", "WARNING", "ERROR"]
      .map((level, i) => `2026-11-26T10:0${i}:00.000Z ${level} s${i} hermes.agent: a ${level} line\n`)
      .join(""),
  );
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

  it("passes the accessibility, contrast and phone-width audits on every page, in light and dark", async () => {
    const failures: string[] = [];
    for (const colorScheme of ["light", "dark"] as const) {
      for (const viewport of [
        { width: 1280, height: 860 },
        { width: 375, height: 740 },
      ]) {
        const tab = await openDashboard(browser, dash, { colorScheme, viewport });
        const links = tab.page.getByRole("navigation", { name: "Pages" }).getByRole("link");
        const count = await links.count();
        expect(count).toBeGreaterThan(0);
        for (let i = 0; i < count; i++) {
          const link = links.nth(i);
          const name = ((await link.textContent()) ?? String(i)).toLowerCase();
          await link.click();
          await expect.poll(() => link.getAttribute("aria-current")).toBe("page");
          await tab.page.waitForLoadState("networkidle");
          await expect.poll(() => tab.page.locator(".loading").count()).toBe(0);
          const where = `${name} (${colorScheme}, ${viewport.width}px)`;
          for (const p of await evaluate<string[]>(tab.page, A11Y_AUDIT)) failures.push(`${where}: ${p}`);
          for (const p of await evaluate<string[]>(tab.page, CONTRAST_AUDIT)) failures.push(`${where}: ${p}`);
          const overflow = await evaluate<number>(tab.page, OVERFLOW_AUDIT);
          if (overflow > 0) failures.push(`${where}: the page scrolls sideways by ${overflow}px`);
          if (viewport.width === 375) await saveScreenshot(tab.page, `audit-${name}-${colorScheme}-phone`);
        }
        expect(tab.problems).toEqual([]);
        await tab.close();
      }
    }
    expect(failures).toEqual([]);
  });

  it("shows where the keyboard focus is on every page, never on something hidden", async () => {
    const tab = await openDashboard(browser, dash);
    const links = tab.page.getByRole("navigation", { name: "Pages" }).getByRole("link");
    const count = await links.count();
    const failures: string[] = [];
    let stops = 0;
    for (let i = 0; i < count; i++) {
      const link = links.nth(i);
      const name = (await link.textContent()) ?? String(i);
      await link.click();
      await expect.poll(() => link.getAttribute("aria-current")).toBe("page");
      await tab.page.waitForLoadState("networkidle");
      await evaluate(tab.page, `document.getElementById("page-title")?.focus()`);
      // Up to 40 stops from the page's heading on: each one visible and outlined.
      for (let stop = 0; stop < 40; stop++) {
        await tab.page.keyboard.press("Tab");
        const seen = await evaluate<{
          tag: string;
          tabIndex: number;
          text: string;
          width: number;
          outline: string;
        } | null>(
          tab.page,
          `(() => { const el = document.activeElement; if (!el || el === document.body) return null;
            const r = el.getBoundingClientRect(); const s = getComputedStyle(el);
            return { tag: el.tagName, tabIndex: el.tabIndex, text: (el.textContent || el.getAttribute("aria-label") || "").trim().slice(0, 30),
              width: r.width * r.height, outline: s.outlineStyle === "none" ? "" : s.outlineStyle + s.outlineWidth }; })()`,
        );
        if (seen === null) break;
        stops++;
        // Tab never stops on an element out of the tab order (a heading the shell focuses on page
        // change): being there means a script moved focus while the keyboard was moving it.
        if (seen.tabIndex < 0)
          failures.push(`${name}: Tab landed on ${seen.tag} "${seen.text}", out of the tab order`);
        else if (seen.outline === "")
          failures.push(`${name}: no focus outline on ${seen.tag} "${seen.text}"`);
        if (seen.width === 0) failures.push(`${name}: focus on an invisible ${seen.tag} "${seen.text}"`);
        if (seen.tag === "FOOTER" || seen.text.startsWith("Hermes-TS")) break;
      }
    }
    expect(stops).toBeGreaterThan(count * 2);
    expect(failures).toEqual([]);
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("has audits that catch what they look for (each fault planted in the page is reported)", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const tab = await openDashboard(browser, dash, { colorScheme, viewport: { width: 375, height: 740 } });
      await tab.page.locator("#page-title").waitFor();
      // The shared buttons, toasts and notes read well in this scheme before anything is planted.
      await evaluate(
        tab.page,
        `document.getElementById("main").insertAdjacentHTML("beforeend",
          '<button type="button" class="btn danger">Delete</button><button type="button" class="btn primary">Go</button>' +
          '<span class="badge ok">ok</span><span class="badge warn">warn</span><span class="badge bad">bad</span>' +
          '<span class="badge info">info</span><div class="note error">failed</div><mark>hit</mark>')`,
      );
      expect(await evaluate<string[]>(tab.page, CONTRAST_AUDIT)).toEqual([]);
      // Styles are set through the CSSOM: the page's CSP refuses inline style attributes.
      const faint = colorScheme === "light" ? "rgb(200, 200, 200)" : "rgb(50, 52, 56)";
      await evaluate(
        tab.page,
        `(() => {
          const main = document.getElementById("main");
          main.insertAdjacentHTML("beforeend",
            '<input id="planted"><button id="planted"></button><h1>Second</h1><img src="data:,">' +
            '<p class="planted-faint">faint words</p><label for="nowhere">orphan</label>' +
            '<a href="#/x" tabindex="2">jump</a><div class="planted-wide">too wide</div>');
          document.querySelector(".planted-faint").style.color = "${faint}";
          document.querySelector(".planted-wide").style.width = "900px";
        })()`,
      );
      const a11y = (await evaluate<string[]>(tab.page, A11Y_AUDIT)).join("\n");
      expect(a11y).toMatch(/form control without an accessible name: input#planted/);
      expect(a11y).toMatch(/button without text or aria-label: button#planted/);
      expect(a11y).toMatch(/2 visible h1 headings/);
      expect(a11y).toMatch(/duplicate id "planted"/);
      expect(a11y).toMatch(/image without alt/);
      expect(a11y).toMatch(/label for a missing control #nowhere/);
      expect(a11y).toMatch(/positive tabindex/);
      const contrast = (await evaluate<string[]>(tab.page, CONTRAST_AUDIT)).join("\n");
      expect(contrast).toMatch(/p\.planted-faint "faint words": contrast \d\.\d\d < 4\.5/);
      expect(await evaluate<number>(tab.page, OVERFLOW_AUDIT)).toBeGreaterThan(0);
      await tab.close();
    }
  });
});
