/**
 * One browser per task (`ToolContext.taskId`), kept in the process-wide `ToolRuntime`: opened on
 * the first browser call, reused by every later call of the task (including calls an
 * `execute_code` script makes), closed after `browser.inactivity_timeout` seconds without use and
 * when the runtime is disposed. Calls on one session run one at a time.
 */

import type { ConsoleMessage, Dialog, Page } from "playwright-core";
import { abortable } from "../../util/abortable.js";
import { keyEnv } from "../key-env.js";
import type { ToolContext, ToolRuntime } from "../types.js";
import type { LookupFn, UrlGuardOptions } from "../web/url-guard.js";
import { type BrowserConnection, connect } from "./backends.js";
import { type BlockedNavigation, guardPage } from "./guard.js";
import { type BrowserSettings, readBrowserSettings } from "./settings.js";

const RUNTIME_KEY = "browser:sessions";
/** Console messages and page errors kept per session (oldest dropped first). */
const LOG_LIMIT = 200;

export interface ConsoleEntry {
  type: string;
  text: string;
}

export interface PageErrorEntry {
  message: string;
}

/** An open browser for one task. */
export class BrowserSession {
  readonly settings: BrowserSettings;
  /** How URLs this session opens are checked (private addresses refused unless allowed). */
  readonly policy: UrlGuardOptions;
  readonly connection: BrowserConnection;
  /** The tab the tools act on: the latest one opened that is still open. */
  page: Page;
  readonly consoleMessages: ConsoleEntry[] = [];
  readonly pageErrors: PageErrorEntry[] = [];
  /** Navigations refused since the last tool call read them. */
  readonly blocked: BlockedNavigation[] = [];
  /** References shown by the latest snapshot (`e5`, `f1e2`). */
  refs = new Set<string>();
  /** Resolves once the session is closed, for whatever reason. */
  readonly closed: Promise<void>;
  private markClosed!: () => void;
  private isClosed = false;
  private tail: Promise<unknown> = Promise.resolve();
  private busy = 0;
  private pages: Page[] = [];
  private readonly adoptions = new WeakMap<Page, Promise<void>>();

  private constructor(
    settings: BrowserSettings,
    policy: UrlGuardOptions,
    connection: BrowserConnection,
    page: Page,
  ) {
    this.settings = settings;
    this.policy = policy;
    this.connection = connection;
    this.page = page;
    this.closed = new Promise((resolve) => {
      this.markClosed = resolve;
    });
  }

  /** Opens the backend and the first tab. */
  static async open(
    settings: BrowserSettings,
    policy: UrlGuardOptions,
    signal?: AbortSignal,
  ): Promise<BrowserSession> {
    const connection = await connect(settings.backend, {
      timeoutMs: Math.max(settings.navigationTimeoutMs, 30_000),
      signal,
    });
    try {
      const page = await connection.context.newPage();
      const session = new BrowserSession(settings, policy, connection, page);
      await session.adopt(page);
      connection.context.on("page", (popup) => void session.adoptPopup(popup));
      connection.browser.on("disconnected", () => session.finish());
      return session;
    } catch (error) {
      await connection.close().catch(() => undefined);
      throw error;
    }
  }

  get isOpen(): boolean {
    return !this.isClosed;
  }

  /** Whether a call is running now (the inactivity timer must not close the browser under it). */
  get active(): boolean {
    return this.busy > 0;
  }

  /** Runs `fn` after the calls already queued on this session. */
  run<T>(fn: (session: BrowserSession) => Promise<T>): Promise<T> {
    const result = this.tail.then(async () => {
      if (this.isClosed) throw new Error("The browser was closed; call browser_navigate to open a new one.");
      this.busy++;
      try {
        if (this.page.isClosed()) await this.reopenTab();
        return await fn(this);
      } finally {
        this.busy--;
      }
    });
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Takes the refusals collected since the last call. */
  takeBlocked(): BlockedNavigation[] {
    return this.blocked.splice(0);
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    try {
      await this.connection.close();
    } finally {
      this.markClosed();
    }
  }

  private finish(): void {
    this.isClosed = true;
    this.markClosed();
  }

  /**
   * Makes a tab that a page of ours opened (target=_blank, window.open) the current tab, once its
   * guard is on. Resolves when done; tabs the user opens in an attached Chrome are left alone.
   */
  follow(popup: Page): Promise<void> {
    return this.adoptions.get(popup) ?? this.adoptPopup(popup);
  }

  private async adoptPopup(popup: Page): Promise<void> {
    const opener = await popup.opener().catch(() => null);
    if (!opener || !this.pages.includes(opener)) return;
    await this.adopt(popup).catch(() => popup.close().catch(() => undefined));
  }

  /** The current tab closed itself (window.close()) and no other is left: open a blank one. */
  private async reopenTab(): Promise<void> {
    const open = this.pages.filter((p) => !p.isClosed());
    const last = open[open.length - 1];
    if (last) {
      this.page = last;
      return;
    }
    await this.adopt(await this.connection.context.newPage());
  }

  /** Wires a new tab (guard, timeouts, logs, dialogs) and makes it the current tab. */
  private adopt(page: Page): Promise<void> {
    let adoption = this.adoptions.get(page);
    if (!adoption) {
      adoption = this.wire(page);
      this.adoptions.set(page, adoption);
    }
    return adoption;
  }

  private async wire(page: Page): Promise<void> {
    page.setDefaultTimeout(this.settings.actionTimeoutMs);
    page.setDefaultNavigationTimeout(this.settings.navigationTimeoutMs);
    page.on("console", (message: ConsoleMessage) => {
      push(this.consoleMessages, { type: message.type(), text: message.text() });
    });
    page.on("pageerror", (error: Error) => {
      push(this.pageErrors, { message: error.stack?.split("\n")[0] ?? error.message });
    });
    // Nobody can answer a dialog mid-call: alerts and leave-page prompts are accepted, confirm and
    // prompt dialogs declined, and each is logged where browser_console shows it.
    page.on("dialog", (dialog: Dialog) => {
      const type = dialog.type();
      const accept = type === "alert" || type === "beforeunload";
      push(this.consoleMessages, {
        type: "dialog",
        text: `${type} dialog ${accept ? "accepted" : "dismissed"}: ${dialog.message()}`,
      });
      void (accept ? dialog.accept() : dialog.dismiss()).catch(() => undefined);
    });
    page.on("close", () => {
      this.pages = this.pages.filter((p) => p !== page);
      const last = this.pages[this.pages.length - 1];
      if (this.page === page && last) this.page = last;
    });
    await guardPage(page, this.policy, (b) => this.blocked.push(b));
    this.pages.push(page);
    this.page = page;
  }
}

function push<T>(list: T[], entry: T): void {
  list.push(entry);
  if (list.length > LOG_LIMIT) list.splice(0, list.length - LOG_LIMIT);
}

interface Slot {
  session: Promise<BrowserSession>;
  timer?: ReturnType<typeof setTimeout> | undefined;
}

export interface BrowserSessionsOptions {
  /** Name resolution for the private-address check (default: the system resolver). */
  lookup?: LookupFn | undefined;
  /** Which resolved addresses count as internal (default: the URL guard's private ranges). */
  isBlockedAddress?: ((address: string) => boolean) | undefined;
}

/** Every task's browser in one runtime. */
export class BrowserSessions {
  private readonly options: BrowserSessionsOptions;
  private readonly slots = new Map<string, Slot>();
  /** Why a task's previous browser ended, told once to the next call. */
  private readonly endings = new Map<string, string>();

  constructor(options: BrowserSessionsOptions = {}) {
    this.options = options;
  }

  /** The URL check for sessions opened with `settings`. */
  policy(settings: BrowserSettings): UrlGuardOptions {
    return {
      allowPrivate: settings.allowPrivate,
      lookup: this.options.lookup,
      isBlockedAddress: this.options.isBlockedAddress,
    };
  }

  /** The task's session, opened now when it has none. */
  async acquire(taskId: string, settings: BrowserSettings, signal?: AbortSignal): Promise<BrowserSession> {
    const existing = this.slots.get(taskId);
    if (existing) {
      const session = await existing.session;
      if (session.isOpen) return session;
      this.slots.delete(taskId);
    }
    const opening = BrowserSession.open(settings, this.policy(settings), signal);
    const slot: Slot = { session: opening };
    this.slots.set(taskId, slot);
    try {
      const session = await opening;
      void session.closed.then(() => {
        // Still in the map: nobody here closed it, so the browser crashed or was closed outside.
        if (this.slots.get(taskId) === slot) {
          clearTimeout(slot.timer);
          this.slots.delete(taskId);
          this.endings.set(
            taskId,
            "The browser stopped unexpectedly (it crashed or was closed from outside).",
          );
        }
      });
      return session;
    } catch (error) {
      if (this.slots.get(taskId) === slot) this.slots.delete(taskId);
      throw error;
    }
  }

  /** The task's open session, if any (does not open one). */
  async peek(taskId: string): Promise<BrowserSession | undefined> {
    const slot = this.slots.get(taskId);
    if (!slot) return undefined;
    const session = await slot.session.catch(() => undefined);
    return session?.isOpen ? session : undefined;
  }

  /** Restarts the task's inactivity clock; when it runs out while a call is running, it waits for it. */
  touch(taskId: string, session: BrowserSession): void {
    const slot = this.slots.get(taskId);
    if (!slot) return;
    clearTimeout(slot.timer);
    const ms = session.settings.inactivityTimeoutMs;
    const fire = () => {
      if (this.slots.get(taskId) !== slot) return;
      if (session.active) {
        slot.timer = setTimeout(fire, ms);
        slot.timer.unref?.();
        return;
      }
      this.endings.set(taskId, `The browser was closed after ${formatSeconds(ms)} without use.`);
      void this.close(taskId);
    };
    slot.timer = setTimeout(fire, ms);
    slot.timer.unref?.();
  }

  /** The note about a browser that ended by itself, once. */
  takeEnding(taskId: string): string | undefined {
    const note = this.endings.get(taskId);
    this.endings.delete(taskId);
    return note;
  }

  /** Closes the task's browser; true when there was one. */
  async close(taskId: string): Promise<boolean> {
    const slot = this.slots.get(taskId);
    if (!slot) return false;
    this.slots.delete(taskId);
    clearTimeout(slot.timer);
    const session = await slot.session.catch(() => undefined);
    if (!session) return false;
    await session.close().catch(() => undefined);
    return true;
  }

  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.slots.keys()].map((taskId) => this.close(taskId)));
  }
}

/**
 * The runtime's browser sessions, created with a disposer on first use. `options` apply only when
 * this call creates them (a caller that wants its own URL check installs it before any tool runs).
 */
export function browserSessions(runtime: ToolRuntime, options: BrowserSessionsOptions = {}): BrowserSessions {
  return runtime.get(RUNTIME_KEY, () => {
    const sessions = new BrowserSessions(options);
    runtime.onDispose(() => sessions.closeAll());
    return sessions;
  });
}

/** The environment value `name`, keys included (see `keyEnv`). */
export function envValue(ctx: Pick<ToolContext, "env" | "secrets">, name: string): string | undefined {
  return keyEnv(ctx)[name];
}

/** The settings this call runs under. */
export function settingsFor(ctx: Pick<ToolContext, "config" | "env" | "secrets">): BrowserSettings {
  return readBrowserSettings(ctx.config, ctx.env, (name) => envValue(ctx, name));
}

/**
 * Runs `fn` on the task's browser, one call at a time, restarting the inactivity clock before and
 * after. With `open`, a browser is opened when the task has none and `note` tells about one that
 * ended by itself; without it, a task with no browser gets an error that says to navigate first.
 */
export async function withBrowser<T>(
  ctx: ToolContext,
  fn: (session: BrowserSession, note: string | undefined) => Promise<T>,
  options: { open?: boolean } = {},
): Promise<T> {
  const sessions = browserSessions(ctx.runtime);
  let session: BrowserSession | undefined;
  let note: string | undefined;
  if (options.open) {
    const settings = settingsFor(ctx);
    if (!(await sessions.peek(ctx.taskId))) ctx.progress(`starting the browser (${settings.backend.kind})`);
    session = await sessions.acquire(ctx.taskId, settings, ctx.signal);
    const ended = sessions.takeEnding(ctx.taskId);
    if (ended) note = `${ended} This is a new browser.`;
  } else {
    session = await sessions.peek(ctx.taskId);
    if (!session) {
      const ended = sessions.takeEnding(ctx.taskId);
      throw new Error(
        ended
          ? `${ended} Call browser_navigate to open the page again.`
          : "No page is open in the browser for this task; call browser_navigate first.",
      );
    }
  }
  const current = session;
  sessions.touch(ctx.taskId, current);
  // An interrupt before the action was queued says so; one after it may leave the action running.
  const started = !ctx.signal.aborted;
  try {
    return await abortable(
      current.run((s) => fn(s, note)),
      ctx.signal,
      () =>
        started
          ? new Error("Interrupted by the user; the browser action may still finish.")
          : new Error("Interrupted by the user."),
    );
  } finally {
    sessions.touch(ctx.taskId, current);
  }
}

function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}
