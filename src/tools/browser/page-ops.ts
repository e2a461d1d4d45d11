/**
 * Steps the browser tools share: where the page is, waiting for an action's navigation to load,
 * resolving an `@e5` reference, and the result every action returns (page, fresh snapshot, notes).
 */
import type { Frame, Locator, Page, Request } from "playwright-core";
import { describeBlocked, refusal } from "./guard.js";
import type { BrowserSession } from "./session.js";
import { ACTION_SNAPSHOT_CHARS, parseRef, readAriaTree, renderSnapshot } from "./snapshot.js";

export interface PageInfo {
  url: string;
  title: string;
}

/** What every successful browser tool answers, plus tool-specific fields. */
export interface BrowserResult extends PageInfo {
  success: true;
  snapshot?: string;
  element_count?: number;
  /** Things the model should know: a page that did not finish loading, a blocked redirect. */
  note?: string;
  [key: string]: unknown;
}

/** Resolves with `fallback` when `work` takes longer than `ms`. */
export function within<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  return new Promise<T>((resolve) => {
    const timer = setTimeout(() => resolve(fallback), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      },
    );
  });
}

export function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === "TimeoutError";
}

/** The first line of an error, without Playwright's call log. */
export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split("\n").find((l) => l.trim() !== "") ?? message;
  return line.replace(/^[a-zA-Z.]+: /, "").trim();
}

/** Call-log lines that report progress rather than what stood in the way. */
const PROGRESS =
  /^(waiting|retrying|attempting|scrolling|done scrolling|locator resolved|element is visible, enabled and stable|performing|click action done|navigations have finished)/;

/** What stood in the way of an action, from Playwright's call log ("<div> intercepts pointer events"). */
export function lastLogLine(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : "";
  const log = message.split("Call log:")[1];
  if (!log) return undefined;
  const lines = log
    .split("\n")
    .map((l) =>
      l
        .replace(/\u001b\[[0-9;]*m/g, "")
        .replace(/^\s*-\s*/, "")
        .replace(/^\d+ \u00d7 /, "")
        .trim(),
    )
    .filter((l) => l !== "" && !PROGRESS.test(l));
  return lines[lines.length - 1];
}

export function seconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

/**
 * Sends the page to about:blank after a refused navigation, once Chromium has shown its error
 * page for it (which would otherwise replace the blank page a moment later).
 */
export async function leaveForBlank(page: Page): Promise<void> {
  await page.waitForURL((url) => url.protocol === "chrome-error:", { timeout: 1000 }).catch(() => undefined);
  await page.goto("about:blank", { timeout: 5000 }).catch(() => undefined);
}

/**
 * The current page's URL and title. A page that ended up on a refused address anyway (a tab
 * opened before its guard was on) is sent to about:blank and the call fails with the reason.
 */
export async function pageInfo(session: BrowserSession): Promise<PageInfo> {
  const page = session.page;
  const url = page.url();
  if (!session.policy.allowPrivate) {
    const refused = await refusal(url, session.policy);
    if (refused) {
      await page.goto("about:blank", { timeout: 5000 }).catch(() => undefined);
      throw new Error(describeBlocked({ url, address: refused.address, redirect: false, subframe: false }));
    }
  }
  const title = await within(page.title(), 2000, "");
  return { url, title };
}

/** How long an action's navigation gets to start once the action itself is done (Enter, JS submit). */
const NAVIGATION_GRACE_MS = 500;

export interface ActionOutcome {
  /** Set when the new page did not finish loading in time. */
  note?: string | undefined;
  /** A tab the action opened (target=_blank, window.open). */
  popup?: Page | undefined;
}

/**
 * Runs an action (click, key press) and, when it starts a navigation of the page, waits for the
 * new document's DOMContentLoaded (bounded by the navigation timeout) and briefly for `load`.
 * Reports a tab the action opened instead of waiting for it.
 */
export async function perform(
  page: Page,
  navigationTimeoutMs: number,
  action: () => Promise<unknown>,
): Promise<ActionOutcome> {
  const main = page.mainFrame();
  let started = false;
  let settled = false;
  let popup: Page | undefined;
  let wake: () => void = () => {};
  const changed = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const isMain = (request: Request) => request.isNavigationRequest() && request.frame() === main;
  const onRequest = (request: Request) => {
    if (!isMain(request)) return;
    started = true;
    wake();
  };
  // A failed navigation (or a blocked redirect hop) ends the wait; so does a 204, which commits nothing.
  const onFailed = (request: Request) => {
    if (!isMain(request)) return;
    settled = true;
    wake();
  };
  const onFinished = (request: Request) => {
    if (!isMain(request)) return;
    void request.response().then((response) => {
      const status = response?.status();
      if (status === 204 || status === 205) {
        settled = true;
        wake();
      }
    });
  };
  const onCommit = (frame: Frame) => {
    if (frame !== main) return;
    settled = true;
    wake();
  };
  const onPopup = (opened: Page) => {
    popup = opened;
    wake();
  };
  page.on("request", onRequest);
  page.on("requestfailed", onFailed);
  page.on("requestfinished", onFinished);
  page.on("framenavigated", onCommit);
  page.on("popup", onPopup);
  const late = `The page did not finish loading within ${seconds(navigationTimeoutMs)}; this is what had loaded so far.`;
  try {
    await action();
    const deadline = Date.now() + navigationTimeoutMs;
    if (!started && !settled && !popup) await within(changed, NAVIGATION_GRACE_MS, undefined);
    if (popup) return { popup };
    if (!started && !settled) return {};
    while (!settled && Date.now() < deadline) {
      const step = new Promise<void>((resolve) => {
        wake = resolve;
      });
      await within(step, Math.max(0, deadline - Date.now()), undefined);
    }
    if (!settled) return { note: late };
    try {
      await page.waitForLoadState("domcontentloaded", { timeout: Math.max(1, deadline - Date.now()) });
    } catch (error) {
      return isTimeout(error) ? { note: late } : {};
    }
    await page.waitForLoadState("load", { timeout: 2000 }).catch(() => undefined);
    return {};
  } finally {
    page.off("request", onRequest);
    page.off("requestfailed", onFailed);
    page.off("requestfinished", onFinished);
    page.off("framenavigated", onCommit);
    page.off("popup", onPopup);
  }
}

/**
 * After an action that opened a tab: waits until the session has made it the current tab and it
 * has loaded (bounded), and returns the note the model reads.
 */
export async function followPopup(session: BrowserSession, popup: Page): Promise<string> {
  await session.follow(popup);
  const { navigationTimeoutMs } = session.settings;
  try {
    await popup.waitForLoadState("domcontentloaded", { timeout: navigationTimeoutMs });
  } catch (error) {
    if (isTimeout(error)) {
      return `It opened a new tab, now the current one, which did not finish loading within ${seconds(navigationTimeoutMs)}.`;
    }
  }
  await popup.waitForLoadState("load", { timeout: 2000 }).catch(() => undefined);
  return "It opened a new tab, which is now the current one (browser_back will not return to the old tab).";
}

/** The snapshot text and reference count; the session remembers the references for later calls. */
export async function snapshotOf(
  session: BrowserSession,
  options: { maxChars: number; full: boolean },
): Promise<{ snapshot: string; element_count: number; truncated: boolean }> {
  const page = session.page;
  let tree: Awaited<ReturnType<typeof readAriaTree>>;
  try {
    tree = await readAriaTree(page, { timeoutMs: session.settings.actionTimeoutMs });
  } catch {
    // The document was replaced under the snapshot (a navigation); read the new one.
    await page
      .waitForLoadState("domcontentloaded", { timeout: session.settings.actionTimeoutMs })
      .catch(() => {});
    tree = await readAriaTree(page, { timeoutMs: session.settings.actionTimeoutMs });
  }
  const rendered = renderSnapshot(tree, options);
  session.refs = new Set(rendered.refs);
  return { snapshot: rendered.text, element_count: rendered.refs.length, truncated: rendered.truncated };
}

/** Joins notes, leaving out empty ones; undefined when none remain. */
export function joinNotes(...notes: (string | undefined)[]): string | undefined {
  const kept = notes.filter((n): n is string => Boolean(n));
  return kept.length > 0 ? kept.join(" ") : undefined;
}

/** Page, fresh snapshot and notes (including navigations blocked during the action). */
export async function actionResult(
  session: BrowserSession,
  fields: Record<string, unknown>,
  options: { maxChars?: number; note?: string | undefined } = {},
): Promise<BrowserResult> {
  const info = await pageInfo(session);
  const snap = await snapshotOf(session, {
    maxChars: options.maxChars ?? ACTION_SNAPSHOT_CHARS,
    full: false,
  });
  const blocked = session.takeBlocked().map(describeBlocked);
  const note = joinNotes(options.note, ...blocked);
  return {
    success: true,
    ...fields,
    url: info.url,
    title: info.title,
    snapshot: snap.snapshot,
    element_count: snap.element_count,
    ...(note ? { note } : {}),
  };
}

/**
 * The element behind a reference from the latest snapshot. Throws when the text is not a
 * reference, the latest snapshot did not show it, or the element has left the page.
 */
export async function locate(
  session: BrowserSession,
  ref: string,
): Promise<{ id: string; locator: Locator }> {
  const id = parseRef(ref);
  if (!id) {
    throw new Error(
      `"${ref}" is not an element reference; pass one like @e5 from the latest browser_snapshot.`,
    );
  }
  if (!session.refs.has(id)) {
    throw new Error(
      `no element @${id} in the last snapshot; take a new snapshot (browser_snapshot) and use a reference from it.`,
    );
  }
  const locator = session.page.locator(`aria-ref=${id}`);
  const count = await locator.count().catch(() => 0);
  if (count === 0) {
    throw new Error(
      `element @${id} is no longer on the page (it changed since the last snapshot); take a new snapshot.`,
    );
  }
  return { id, locator };
}

/** A failed click or type, explained. */
export function actionError(verb: string, id: string, error: unknown, timeoutMs: number): Error {
  if (isTimeout(error)) {
    const why = lastLogLine(error);
    return new Error(
      `Could not ${verb} @${id} within ${seconds(timeoutMs)}${why ? ` (${why})` : ""}: it may be hidden, covered or disabled. Take a new snapshot, scroll to it, or try another element.`,
    );
  }
  return new Error(`Could not ${verb} @${id}: ${firstLine(error)}`);
}
