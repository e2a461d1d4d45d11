/** The browser tools that move around and act on the page: navigate, snapshot, click, type, press, scroll, back, close. */
import { Type } from "@sinclair/typebox";
import type { CDPSession, Page } from "playwright-core";
import { type CheckContext, defineTool } from "../types.js";
import { checkUrl, UrlBlockedError, type UrlGuardOptions, WebFetchError } from "../web/url-guard.js";
import { playwrightInstalled } from "./backends.js";
import backDescription from "./browser-back.md";
import clickDescription from "./browser-click.md";
import closeDescription from "./browser-close.md";
import navigateDescription from "./browser-navigate.md";
import pressDescription from "./browser-press.md";
import scrollDescription from "./browser-scroll.md";
import snapshotDescription from "./browser-snapshot.md";
import typeDescription from "./browser-type.md";
import { describeBlocked } from "./guard.js";
import {
  actionError,
  actionResult,
  type BrowserResult,
  firstLine,
  followPopup,
  isTimeout,
  joinNotes,
  leaveForBlank,
  locate,
  pageInfo,
  perform,
  seconds,
  snapshotOf,
} from "./page-ops.js";
import { historyLength, matchOption, scrollDocument, tagName } from "./page-scripts.js";
import { type BrowserSession, browserSessions, settingsFor, withBrowser } from "./session.js";
import { resolveBackend } from "./settings.js";
import { FULL_SNAPSHOT_CHARS, SNAPSHOT_CHARS } from "./snapshot.js";

const TOOLSET = "browser";

/** Offered only when playwright-core loads and some backend (CDP, Browserbase, local Chromium) is there. */
export function browserAvailable(ctx: CheckContext): boolean {
  return playwrightInstalled() && resolveBackend(ctx.config, ctx.env).kind !== "unavailable";
}

/** `example.com/x` means https; only http and https may be opened. */
export function normalizeUrl(input: string): string {
  const url = input.trim();
  if (url === "") throw new Error("url is empty: pass the address to open, e.g. https://example.com.");
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  if (scheme === "http" || scheme === "https") return url;
  // "localhost:8080/x" parses as scheme "localhost"; a scheme followed by "//" or a known one is real.
  if (scheme && (url.slice(scheme.length + 1).startsWith("//") || KNOWN_SCHEMES.has(scheme))) {
    throw new Error(`Only http and https pages can be opened, not ${scheme}: (${url}).`);
  }
  return `https://${url}`;
}

const KNOWN_SCHEMES = new Set([
  "file",
  "data",
  "javascript",
  "about",
  "chrome",
  "blob",
  "ftp",
  "view-source",
  "ws",
  "wss",
]);

async function vetTarget(url: string, policy: UrlGuardOptions): Promise<void> {
  try {
    await checkUrl(url, policy);
  } catch (error) {
    if (error instanceof UrlBlockedError) {
      throw new Error(describeBlocked({ url, address: error.address, redirect: false, subframe: false }));
    }
    if (error instanceof WebFetchError) throw new Error(error.message);
    throw error;
  }
}

async function navigate(
  session: BrowserSession,
  url: string,
  note: string | undefined,
): Promise<BrowserResult> {
  const page = session.page;
  const { navigationTimeoutMs } = session.settings;
  session.takeBlocked();
  let loadNote: string | undefined;
  let status: number | undefined;
  try {
    const response = await page.goto(url, { waitUntil: "domcontentloaded", timeout: navigationTimeoutMs });
    status = response?.status();
    await page.waitForLoadState("load", { timeout: 3000 }).catch(() => undefined);
  } catch (error) {
    const blocked = session.takeBlocked()[0];
    if (blocked) {
      await leaveForBlank(page);
      throw new Error(describeBlocked(blocked));
    }
    if (!isTimeout(error)) throw new Error(`Could not open ${url}: ${firstLine(error)}`);
    // Keep what arrived; stop the rest so the page does not keep loading in the background.
    await page.evaluate("window.stop()").catch(() => undefined);
    loadNote = `The page did not finish loading within ${seconds(navigationTimeoutMs)}; this is what had loaded so far.`;
  }
  const statusNote =
    status !== undefined && status >= 400 ? `The server answered HTTP ${status}.` : undefined;
  return actionResult(session, {}, { maxChars: SNAPSHOT_CHARS, note: joinNotes(note, statusNote, loadNote) });
}

export const browserNavigateTool = defineTool({
  name: "browser_navigate",
  toolset: TOOLSET,
  description: navigateDescription,
  parameters: Type.Object({
    url: Type.String({ description: "http(s) URL." }),
  }),
  emoji: "🌐",
  check: browserAvailable,
  async handler(args, ctx) {
    const url = normalizeUrl(args.url);
    const sessions = browserSessions(ctx.runtime);
    const settings = settingsFor(ctx);
    const open = await sessions.peek(ctx.taskId);
    if (!open && settings.backend.kind === "unavailable") throw new Error(settings.backend.reason);
    // Vet before opening a browser, so a refused URL costs no launch.
    await vetTarget(url, open?.policy ?? sessions.policy(settings));
    return withBrowser(ctx, (session, note) => navigate(session, url, note), { open: true });
  },
});

export const browserSnapshotTool = defineTool({
  name: "browser_snapshot",
  toolset: TOOLSET,
  description: snapshotDescription,
  parameters: Type.Object({
    full: Type.Optional(
      Type.Boolean({
        description: "Longer outline with link URLs.",
      }),
    ),
  }),
  emoji: "📸",
  check: browserAvailable,
  parallelSafe: false,
  handler: (args, ctx) =>
    withBrowser(ctx, async (session) => {
      const full = args.full === true;
      const info = await pageInfo(session);
      const snap = await snapshotOf(session, { maxChars: full ? FULL_SNAPSHOT_CHARS : SNAPSHOT_CHARS, full });
      return { success: true, url: info.url, title: info.title, ...snap };
    }),
});

export const browserClickTool = defineTool({
  name: "browser_click",
  toolset: TOOLSET,
  description: clickDescription,
  parameters: Type.Object({
    ref: Type.String({ description: "Reference, e.g. @e5." }),
  }),
  emoji: "👆",
  check: browserAvailable,
  handler: (args, ctx) =>
    withBrowser(ctx, async (session) => {
      const { id, locator } = await locate(session, args.ref);
      const { actionTimeoutMs, navigationTimeoutMs } = session.settings;
      const outcome = await perform(session.page, navigationTimeoutMs, async () => {
        try {
          await locator.click({ timeout: actionTimeoutMs });
        } catch (error) {
          throw actionError("click", id, error, actionTimeoutMs);
        }
      });
      const note = outcome.popup ? await followPopup(session, outcome.popup) : outcome.note;
      return actionResult(session, { clicked: `@${id}` }, { note });
    }),
});

export const browserTypeTool = defineTool({
  name: "browser_type",
  toolset: TOOLSET,
  description: typeDescription,
  parameters: Type.Object({
    ref: Type.String({
      description: "Field reference, e.g. @e3.",
    }),
    text: Type.String({ description: "Text to enter." }),
  }),
  emoji: "⌨️",
  check: browserAvailable,
  handler: (args, ctx) =>
    withBrowser(ctx, async (session) => {
      const { id, locator } = await locate(session, args.ref);
      const timeout = session.settings.actionTimeoutMs;
      // Filling a field does not navigate; no need to watch for a page load.
      try {
        const tag = await locator.evaluate(tagName, undefined, { timeout });
        if (tag === "SELECT") {
          const match = await locator.evaluate(matchOption, args.text, { timeout });
          if ("labels" in match) {
            throw new Error(`it has no option "${args.text}"; its options are: ${match.labels.join(", ")}`);
          }
          await locator.selectOption({ value: match.value }, { timeout });
        } else {
          await locator.fill(args.text, { timeout });
        }
      } catch (error) {
        throw actionError("type into", id, error, timeout);
      }
      return actionResult(session, { typed: args.text, element: `@${id}` });
    }),
});

export const browserPressTool = defineTool({
  name: "browser_press",
  toolset: TOOLSET,
  description: pressDescription,
  parameters: Type.Object({
    key: Type.String({ description: "Key, e.g. Enter or Control+A." }),
  }),
  emoji: "⌨️",
  check: browserAvailable,
  handler: (args, ctx) =>
    withBrowser(ctx, async (session) => {
      const outcome = await perform(session.page, session.settings.navigationTimeoutMs, async () => {
        try {
          await session.page.keyboard.press(args.key);
        } catch (error) {
          const message = firstLine(error);
          if (/unknown key/i.test(message)) {
            throw new Error(
              `Unknown key "${args.key}". Use names like Enter, Tab, Escape, Backspace, ArrowDown, PageDown, Home, F5, or combinations like Control+A.`,
            );
          }
          throw new Error(`Could not press ${args.key}: ${message}`);
        }
      });
      const note = outcome.popup ? await followPopup(session, outcome.popup) : outcome.note;
      return actionResult(session, { pressed: args.key }, { note });
    }),
});

export const browserScrollTool = defineTool({
  name: "browser_scroll",
  toolset: TOOLSET,
  description: scrollDescription,
  parameters: Type.Object({
    direction: Type.Union([Type.Literal("up"), Type.Literal("down")], {}),
  }),
  emoji: "📜",
  check: browserAvailable,
  handler: (args, ctx) =>
    withBrowser(ctx, async (session) => {
      const page = session.page;
      const sign = args.direction === "down" ? 1 : -1;
      const position = await page.evaluate(scrollDocument, sign);
      if (position.after === position.before && position.max === 0) {
        // The document itself does not scroll; an inner panel under the pointer may.
        const viewport = page.viewportSize() ?? { width: 1280, height: 800 };
        await page.mouse.move(viewport.width / 2, viewport.height / 2);
        await page.mouse.wheel(0, sign * Math.round(viewport.height * 0.8));
      }
      const edge =
        position.after === position.before
          ? `Already at the ${args.direction === "down" ? "bottom" : "top"} of the page.`
          : undefined;
      return actionResult(
        session,
        { scrolled: args.direction, scroll_y: position.after, scroll_max: position.max },
        { note: edge },
      );
    }),
});

/** Whether the tab has an earlier history entry other than the blank page every new tab starts on. */
async function hasEarlierPage(page: Page): Promise<boolean> {
  let cdp: CDPSession | undefined;
  try {
    cdp = await page.context().newCDPSession(page);
    const history = await cdp.send("Page.getNavigationHistory");
    const previous = history.entries[history.currentIndex - 1];
    return previous !== undefined && previous.url !== "about:blank";
  } catch {
    // Not a Chromium page (or the session failed): let goBack decide.
    return (await page.evaluate(historyLength).catch(() => 2)) > 1;
  } finally {
    await cdp?.detach().catch(() => undefined);
  }
}

export const browserBackTool = defineTool({
  name: "browser_back",
  toolset: TOOLSET,
  description: backDescription,
  parameters: Type.Object({}),
  emoji: "◀️",
  check: browserAvailable,
  handler: (_args, ctx) =>
    withBrowser(ctx, async (session) => {
      const page = session.page;
      if (!(await hasEarlierPage(page))) throw new Error("There is no previous page in this tab's history.");
      let note: string | undefined;
      try {
        await page.goBack({ waitUntil: "domcontentloaded", timeout: session.settings.navigationTimeoutMs });
      } catch (error) {
        const blocked = session.takeBlocked()[0];
        if (blocked) {
          await leaveForBlank(page);
          throw new Error(describeBlocked(blocked));
        }
        if (!isTimeout(error)) throw new Error(`Could not go back: ${firstLine(error)}`);
        note = `The previous page did not finish loading within ${seconds(session.settings.navigationTimeoutMs)}; this is what had loaded so far.`;
      }
      return actionResult(session, {}, { note });
    }),
});

export const browserCloseTool = defineTool({
  name: "browser_close",
  toolset: TOOLSET,
  description: closeDescription,
  parameters: Type.Object({}),
  emoji: "🚪",
  check: browserAvailable,
  async handler(_args, ctx) {
    const closed = await browserSessions(ctx.runtime).close(ctx.taskId);
    return {
      success: true,
      closed,
      message: closed ? "The browser was closed." : "No browser was open for this task.",
    };
  },
});
