/**
 * Drives the dashboard's page in real Chromium (Debian's, through playwright-core, as the browser
 * tools do). One browser per test file; each page records what a person would call broken (console
 * errors, uncaught exceptions, failed requests, 5xx answers) so a test can assert there were none,
 * and screenshots go to test-artifacts/dashboard/ (kept by CI as artifacts).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import type { RunningDashboard } from "./dashboard.js";

export const CHROMIUM = process.env["HERMES_TEST_CHROMIUM"] ?? "/usr/bin/chromium";
export const ARTIFACTS = join(process.cwd(), "test-artifacts", "dashboard");

/** Whether Chromium is installed here (tests skip with a reason when it is not). */
export const hasChromium = existsSync(CHROMIUM);

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--disable-dev-shm-usage", "--no-sandbox"],
  });
}

export interface DashboardPage {
  page: Page;
  /** Console errors, page errors, failed requests and 5xx answers seen so far. */
  problems: string[];
  /** Navigates to `#/<hash>` within the open page (no reload). */
  go(hash: string): Promise<void>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** The hash route to open, e.g. `sessions` or `sessions/<id>`. */
  hash?: string;
  colorScheme?: "light" | "dark";
  viewport?: { width: number; height: number };
  /** Leave the token off the URL (to see the page's signed-out state). */
  withoutToken?: boolean;
  /** Answers with these statuses are expected by the test and not recorded as problems. */
  allowStatuses?: number[];
}

/** Opens the dashboard at the URL `hermes dashboard` printed (token included), at `#/<hash>`. */
export async function openDashboard(
  browser: Browser,
  dash: RunningDashboard,
  options: OpenOptions = {},
): Promise<DashboardPage> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 860 },
    colorScheme: options.colorScheme ?? "light",
  });
  const page = await context.newPage();
  const problems: string[] = [];
  const allowed = new Set(options.allowStatuses ?? []);
  page.on("console", (message) => {
    if (message.type() !== "error") return;
    // Chromium also logs each non-2xx fetch as a console error; the page's API calls are judged by
    // status below. Anything else that failed to load (the tab's icon, an asset) is a problem: the
    // browser's own requests, such as /favicon.ico, never reach the response listener.
    if (/Failed to load resource: the server responded with a status of (\d+)/.test(message.text())) {
      const at = message.location().url;
      if (at && new URL(at).pathname.startsWith("/api/")) return;
    }
    problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("requestfailed", (request) => {
    const reason = request.failure()?.errorText ?? "";
    if (reason.includes("ERR_ABORTED")) return;
    problems.push(`request failed: ${request.method()} ${request.url()} ${reason}`);
  });
  page.on("response", (response) => {
    const status = response.status();
    if (status >= 400 && !allowed.has(status) && !(status === 401 && options.withoutToken)) {
      problems.push(`HTTP ${status}: ${response.request().method()} ${new URL(response.url()).pathname}`);
    }
  });
  const url = new URL(dash.url);
  if (options.withoutToken) url.searchParams.delete("token");
  url.hash = `#/${options.hash ?? ""}`;
  await page.goto(url.href, { waitUntil: "domcontentloaded" });
  await page.waitForSelector("main#main");
  return {
    page,
    problems,
    go: async (hash: string) => {
      await page.evaluate(`window.location.hash = ${JSON.stringify(`#/${hash}`)}`);
      // The page's CSP forbids eval, so waitForFunction with a string cannot run there: poll instead.
      const want = JSON.stringify(`#/${hash}`);
      for (let i = 0; i < 100; i++) {
        if (await page.evaluate(`window.location.hash.startsWith(${want})`)) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`the page did not reach #/${hash}`);
    },
    close: () => context.close(),
  };
}

/**
 * Evaluates a JavaScript expression in the page. Tests pass strings (this project's test code is
 * typed without the DOM library): `evaluate<string>(page, "document.title")`.
 */
export function evaluate<T>(page: Page, expression: string): Promise<T> {
  return page.evaluate(expression) as Promise<T>;
}

/** Saves a full-page screenshot as test-artifacts/dashboard/<name>.png; returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name.replace(/[^\w.-]+/g, "-")}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
