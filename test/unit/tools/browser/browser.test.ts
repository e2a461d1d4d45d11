import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  browserBackTool,
  browserClickTool,
  browserCloseTool,
  browserConsoleTool,
  browserGetImagesTool,
  browserNavigateTool,
  browserPressTool,
  browserScrollTool,
  browserSessions,
  browserSnapshotTool,
  browserTypeTool,
} from "../../../../src/tools/browser/index.js";
import { waitFor } from "../terminal/helpers.js";
import {
  type BrowserCtx,
  browserConfig,
  browserContext,
  CHROMIUM,
  call,
  callError,
  NO_CHROMIUM_REASON,
  type Site,
  startSite,
} from "./helpers.js";

/** The `@eN` reference on the first snapshot line containing `label`. */
function refOf(snapshot: unknown, label: string): string {
  const line = String(snapshot)
    .split("\n")
    .find((l) => l.includes(label));
  const ref = line ? /\[@((?:f\d+)?e\d+)\]/.exec(line)?.[1] : undefined;
  if (!ref) throw new Error(`no reference for ${label} in:\n${String(snapshot)}`);
  return `@${ref}`;
}

describe.skipIf(!CHROMIUM)(`browser tools in a real Chromium (${CHROMIUM ?? NO_CHROMIUM_REASON})`, () => {
  let site: Site;
  let ctx: BrowserCtx;

  beforeAll(async () => {
    site = await startSite();
    ctx = browserContext();
  });

  afterAll(async () => {
    await ctx?.runtime.dispose();
    await site?.close();
  });

  it("fills a form by reference, submits it and reads the page the server answered", async () => {
    const nav = await call(browserNavigateTool, { url: `${site.url}/form` }, ctx);
    expect(nav).toMatchObject({ success: true, title: "Sign up", url: `${site.url}/form` });
    expect(nav.snapshot).toContain('heading "Sign up" [level=1]');
    expect(nav.element_count).toBeGreaterThanOrEqual(6);

    const typed = await call(
      browserTypeTool,
      { ref: refOf(nav.snapshot, 'textbox "Name"'), text: "Ada Lovelace" },
      ctx,
    );
    expect(typed).toMatchObject({ success: true, typed: "Ada Lovelace", title: "Sign up" });
    expect(typed.snapshot).toMatch(/textbox "Name" \[@e\d+\]: Ada Lovelace/);

    await call(
      browserTypeTool,
      { ref: refOf(typed.snapshot, 'textbox "Email"'), text: "ada@example.org" },
      ctx,
    );
    const plan = refOf(nav.snapshot, 'combobox "Plan"');
    expect(await callError(browserTypeTool, { ref: plan, text: "Platinum" }, ctx)).toBe(
      `Could not type into ${plan}: it has no option "Platinum"; its options are: Free, Pro`,
    );
    await call(browserTypeTool, { ref: plan, text: "pro" }, ctx);
    const ticked = await call(browserClickTool, { ref: refOf(nav.snapshot, 'checkbox "Send news"') }, ctx);
    expect(ticked.snapshot).toMatch(/checkbox "Send news" \[checked\]/);

    const done = await call(
      browserClickTool,
      { ref: refOf(ticked.snapshot, 'button "Create account"') },
      ctx,
    );
    expect(done).toMatchObject({ success: true, title: "Welcome", url: `${site.url}/submit` });
    expect(done.snapshot).toContain('heading "Account created"');
    for (const pair of ["name=Ada Lovelace", "email=ada@example.org", "plan=Pro", "news=yes"]) {
      expect(done.snapshot).toContain(pair);
    }

    const back = await call(browserBackTool, {}, ctx);
    expect(back).toMatchObject({ success: true, title: "Sign up", url: `${site.url}/form` });
    expect(back.snapshot).toContain('button "Create account"');
  });

  it("submits a field with Enter through browser_press", async () => {
    const nav = await call(browserNavigateTool, { url: `${site.url}/form` }, ctx);
    const name = refOf(nav.snapshot, 'textbox "Name"');
    await call(browserTypeTool, { ref: name, text: "Grace" }, ctx);
    const pressed = await call(browserPressTool, { key: "Enter" }, ctx);
    expect(pressed).toMatchObject({ success: true, pressed: "Enter", title: "Welcome" });
    expect(pressed.snapshot).toContain("name=Grace");
    expect(await callError(browserPressTool, { key: "Smash" }, ctx)).toMatch(/Unknown key "Smash".*Enter/);
  });

  it("refuses references the last snapshot did not show, saying to take a new snapshot", async () => {
    const nav = await call(browserNavigateTool, { url: `${site.url}/form` }, ctx);
    expect(await callError(browserClickTool, { ref: "@e9999" }, ctx)).toBe(
      "no element @e9999 in the last snapshot; take a new snapshot (browser_snapshot) and use a reference from it.",
    );
    expect(await callError(browserTypeTool, { ref: "the name box", text: "x" }, ctx)).toMatch(
      /"the name box" is not an element reference; pass one like @e5/,
    );
    // A reference from a page the browser has left is refused the same way.
    const oldRef = refOf(nav.snapshot, 'button "Create account"');
    await call(browserNavigateTool, { url: `${site.url}/images` }, ctx);
    expect(await callError(browserClickTool, { ref: oldRef }, ctx)).toContain(
      `no element ${oldRef} in the last snapshot`,
    );
  });

  it("collects console messages and page errors, evaluates expressions, and clears on request", async () => {
    await call(browserNavigateTool, { url: `${site.url}/console` }, ctx);
    const logs = await waitFor(
      async () => {
        const r = await call(browserConsoleTool, {}, ctx);
        return (r.total_errors as number) >= 1 ? r : undefined;
      },
      15_000,
      "the page error",
    );
    expect(logs).toMatchObject({ success: true, title: "Noisy" });
    expect(logs.console_messages).toEqual(
      expect.arrayContaining([
        { type: "log", text: "hello from the page" },
        { type: "warning", text: "careful now" },
      ]),
    );
    expect((logs.js_errors as { message: string }[])[0]?.message).toContain("boom from the page");

    expect(await call(browserConsoleTool, { expression: "document.title" }, ctx)).toMatchObject({
      result: "Noisy",
      result_type: "string",
    });
    expect(
      await call(browserConsoleTool, { expression: "Promise.resolve({ n: [1, 2] })" }, ctx),
    ).toMatchObject({
      result: { n: [1, 2] },
      result_type: "object",
    });
    expect(await call(browserConsoleTool, { expression: "document.querySelector('p')" }, ctx)).toMatchObject({
      result: "<p>noisy page</p>",
    });
    expect(await callError(browserConsoleTool, { expression: "notDefinedAnywhere.x" }, ctx)).toMatch(
      /The expression failed: .*notDefinedAnywhere/,
    );

    await call(browserConsoleTool, { clear: true }, ctx);
    expect(await call(browserConsoleTool, {}, ctx)).toMatchObject({ total_messages: 0, total_errors: 0 });
  });

  it("lists the page's images with address, alt text and sizes", async () => {
    await call(browserNavigateTool, { url: `${site.url}/images` }, ctx);
    const result = await call(browserGetImagesTool, {}, ctx);
    expect(result).toMatchObject({ success: true, title: "Gallery", count: 2 });
    expect(result.images).toEqual([
      {
        src: `${site.url}/img/cat.png`,
        alt: "A cat",
        width: 1,
        height: 1,
        displayed_width: 40,
        displayed_height: 30,
      },
      {
        src: `${site.url}/img/dog.png`,
        alt: "A dog",
        width: 1,
        height: 1,
        displayed_width: 1,
        displayed_height: 1,
      },
    ]);
  });

  it("cuts long snapshots with a note, gives more with full=true, and scrolls", async () => {
    const nav = await call(browserNavigateTool, { url: `${site.url}/long` }, ctx);
    const compact = String(nav.snapshot);
    expect(compact.length).toBeLessThanOrEqual(8_400);
    expect(compact).toMatch(/more lines not shown.*browser_snapshot with full=true/);
    expect(compact).not.toContain("Bottom button");

    const full = await call(browserSnapshotTool, { full: true }, ctx);
    expect(String(full.snapshot).length).toBeGreaterThan(compact.length);
    expect(String(full.snapshot).length).toBeLessThanOrEqual(30_400);
    expect(full).toMatchObject({ truncated: true, title: "Long" });

    const down = await call(browserScrollTool, { direction: "down" }, ctx);
    expect(down).toMatchObject({ success: true, scrolled: "down" });
    expect(down.scroll_y as number).toBeGreaterThan(0);
    const up = await call(browserScrollTool, { direction: "up" }, ctx);
    expect(up.scroll_y).toBe(0);
    expect((await call(browserScrollTool, { direction: "up" }, ctx)).note).toBe(
      "Already at the top of the page.",
    );
  });

  it("answers dialogs without hanging, logs them, and follows a link into a new tab", async () => {
    const nav = await call(browserNavigateTool, { url: `${site.url}/popup` }, ctx);
    await call(browserConsoleTool, { clear: true }, ctx);
    await call(browserClickTool, { ref: refOf(nav.snapshot, 'button "Save"') }, ctx);
    const declined = await call(browserClickTool, { ref: refOf(nav.snapshot, 'button "Delete"') }, ctx);
    expect(declined.title).toBe("Declined");
    expect((await call(browserConsoleTool, {}, ctx)).console_messages).toEqual([
      { type: "dialog", text: "alert dialog accepted: Saved!" },
      { type: "dialog", text: "confirm dialog dismissed: Really?" },
    ]);

    const opened = await call(browserClickTool, { ref: refOf(nav.snapshot, 'link "Open gallery"') }, ctx);
    expect(opened).toMatchObject({ success: true, title: "Gallery", url: `${site.url}/images` });
    expect(opened.note).toContain("opened a new tab");
    expect((await call(browserSnapshotTool, {}, ctx)).snapshot).toContain('heading "Gallery"');
  });

  it("gives up on an element it cannot click after the action timeout, saying why", async () => {
    const quick = browserContext({ config: browserConfig({ action_timeout: 1 }) });
    try {
      const nav = await call(browserNavigateTool, { url: `${site.url}/covered` }, quick);
      const ref = refOf(nav.snapshot, 'button "Hidden treasure"');
      const started = Date.now();
      const message = await callError(browserClickTool, { ref }, quick);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(message).toMatch(
        new RegExp(`^Could not click ${ref} within 1 s \\(.*intercepts pointer events\\)`),
      );
      expect(message).toContain("Take a new snapshot");
    } finally {
      await quick.runtime.dispose();
    }
  });

  it("says when there is nothing to go back to", async () => {
    const fresh = browserContext();
    try {
      await call(browserNavigateTool, { url: `${site.url}/form` }, fresh);
      expect(await callError(browserBackTool, {}, fresh)).toBe(
        "There is no previous page in this tab's history.",
      );
    } finally {
      await fresh.runtime.dispose();
    }
  });

  it("returns what loaded of a page that never finishes, within the navigation timeout", async () => {
    const slow = browserContext({ config: browserConfig({ navigation_timeout: 2 }) });
    try {
      const started = Date.now();
      const result = await call(browserNavigateTool, { url: `${site.url}/hang` }, slow);
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(result.note).toBe("The page did not finish loading within 2 s; this is what had loaded so far.");
      expect(result.snapshot).toContain('heading "Partial content"');
    } finally {
      await slow.runtime.dispose();
    }
  });

  it("asks to navigate first when no browser is open, and close ends the task's browser", async () => {
    const fresh = browserContext();
    try {
      expect(await callError(browserSnapshotTool, {}, fresh)).toBe(
        "No page is open in the browser for this task; call browser_navigate first.",
      );
      await call(browserNavigateTool, { url: `${site.url}/form` }, fresh);
      expect(fresh.progressNotes).toEqual(["starting the browser (local)"]);
      const session = await browserSessions(fresh.runtime).peek(fresh.taskId);
      expect(session?.connection.browser.isConnected()).toBe(true);
      expect(await call(browserCloseTool, {}, fresh)).toMatchObject({ success: true, closed: true });
      expect(session?.connection.browser.isConnected()).toBe(false);
      expect(await call(browserCloseTool, {}, fresh)).toMatchObject({ closed: false });
    } finally {
      await fresh.runtime.dispose();
    }
  });

  it("closes an idle browser after browser.inactivity_timeout and says so on the next call", async () => {
    const idle = browserContext({ config: browserConfig({ inactivity_timeout: 0.5 }) });
    try {
      await call(browserNavigateTool, { url: `${site.url}/form` }, idle);
      const session = await browserSessions(idle.runtime).peek(idle.taskId);
      if (!session) throw new Error("no session after navigate");
      await session.closed;
      expect(session.connection.browser.isConnected()).toBe(false);
      expect(await callError(browserSnapshotTool, {}, idle)).toBe(
        "The browser was closed after 0.5 s without use. Call browser_navigate to open the page again.",
      );
      const again = await call(browserNavigateTool, { url: `${site.url}/form` }, idle);
      expect(again).toMatchObject({ success: true, title: "Sign up" });
    } finally {
      await idle.runtime.dispose();
    }
  });

  it("gives each task its own browser and closes them all when the runtime is disposed", async () => {
    const a = browserContext();
    const b = browserContext({ runtime: a.runtime });
    await call(browserNavigateTool, { url: `${site.url}/form` }, a);
    await call(browserNavigateTool, { url: `${site.url}/images` }, b);
    expect((await call(browserSnapshotTool, {}, a)).title).toBe("Sign up");
    expect((await call(browserSnapshotTool, {}, b)).title).toBe("Gallery");
    const sessions = browserSessions(a.runtime);
    const browsers = [await sessions.peek(a.taskId), await sessions.peek(b.taskId)].map(
      (s) => s?.connection.browser,
    );
    await a.runtime.dispose();
    expect(browsers.map((x) => x?.isConnected())).toEqual([false, false]);
  });
});
