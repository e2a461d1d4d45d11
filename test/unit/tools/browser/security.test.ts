import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  browserNavigateTool,
  browserSessions,
  browserSnapshotTool,
  browserTools,
} from "../../../../src/tools/browser/index.js";
import {
  browserConfig,
  browserContext,
  CHROMIUM,
  call,
  callError,
  NO_CHROMIUM_REASON,
  type Site,
  startSite,
} from "./helpers.js";

const PROTECTED = { allow_private_urls: false };

describe("browser tools without a browser", () => {
  it("are not offered, and say how to install Chromium, when executable_path names a missing file", async () => {
    const config = browserConfig({ executable_path: "/nonexistent/chromium" }, PROTECTED);
    const env = { PATH: process.env.PATH };
    for (const tool of browserTools) expect(await tool.check?.({ config, env })).toBe(false);
    const ctx = browserContext({ config, env });
    try {
      const message = await callError(browserNavigateTool, { url: "https://example.com" }, ctx);
      expect(message).toContain("browser.executable_path is /nonexistent/chromium");
      expect(message).toContain("apt-get install chromium");
      expect(message).toContain("BROWSER_CDP_URL");
    } finally {
      await ctx.runtime.dispose();
    }
  });

  it("are offered with a CDP endpoint or Browserbase keys even without a local Chromium", async () => {
    const config = browserConfig({ executable_path: "/nonexistent/chromium" }, PROTECTED);
    expect(
      await browserNavigateTool.check?.({ config, env: { BROWSER_CDP_URL: "http://127.0.0.1:9222" } }),
    ).toBe(true);
    const bb = { BROWSERBASE_API_KEY: "k", BROWSERBASE_PROJECT_ID: "p" };
    expect(await browserNavigateTool.check?.({ config, env: bb })).toBe(true);
  });

  it("refuses other schemes than http and https before opening anything", async () => {
    const ctx = browserContext({ config: browserConfig({}, PROTECTED) });
    try {
      expect(await callError(browserNavigateTool, { url: "file:///etc/passwd" }, ctx)).toBe(
        "Only http and https pages can be opened, not file: (file:///etc/passwd).",
      );
      expect(await callError(browserNavigateTool, { url: "javascript:alert(1)" }, ctx)).toContain(
        "not javascript:",
      );
      expect(await browserSessions(ctx.runtime).peek(ctx.taskId)).toBeUndefined();
    } finally {
      await ctx.runtime.dispose();
    }
  });
});

describe.skipIf(!CHROMIUM)(`private addresses in a real Chromium (${CHROMIUM ?? NO_CHROMIUM_REASON})`, () => {
  let outside: Site;
  let inside: Site;

  beforeAll(async () => {
    // 127.0.0.2 plays an internal host; 127.0.0.1 plays a public site that points at it.
    inside = await startSite("127.0.0.2", {
      "/secret": (_req, res) => {
        res.writeHead(200, { "content-type": "text/html" });
        res.end("<title>Secret</title><h1>internal admin</h1>");
      },
    });
    outside = await startSite("127.0.0.1", {
      "/to-inside": (_req, res) => {
        res.writeHead(302, { location: `${inside.url}/secret` });
        res.end();
      },
      "/framed": (_req, res) => {
        res.writeHead(200, { "content-type": "text/html" });
        res.end(`<title>Framed</title><h1>Outer page</h1><iframe src="${inside.url}/secret"></iframe>`);
      },
    });
  });

  afterAll(async () => {
    await outside?.close();
    await inside?.close();
  });

  it("refuses a loopback URL unless security.allow_private_urls is on, without contacting it", async () => {
    const ctx = browserContext({ config: browserConfig({}, PROTECTED) });
    try {
      const message = await callError(browserNavigateTool, { url: `${outside.url}/form` }, ctx);
      expect(message).toBe(
        `Refused to open ${outside.url}/form, which resolves to 127.0.0.1, a private, loopback or otherwise internal address; it was blocked. Set security.allow_private_urls: true in config.yaml to allow internal addresses.`,
      );
      expect(outside.hits).not.toContain("/form");
      expect(await browserSessions(ctx.runtime).peek(ctx.taskId)).toBeUndefined();
    } finally {
      await ctx.runtime.dispose();
    }
    const allowed = browserContext({ config: browserConfig({}, { allow_private_urls: true }) });
    try {
      expect(await call(browserNavigateTool, { url: `${outside.url}/form` }, allowed)).toMatchObject({
        success: true,
        title: "Sign up",
      });
    } finally {
      await allowed.runtime.dispose();
    }
  });

  it.skipIf(process.platform !== "linux")(
    "blocks a redirect to an internal address before it is requested",
    async () => {
      const ctx = browserContext({ config: browserConfig({}, PROTECTED) });
      browserSessions(ctx.runtime, { isBlockedAddress: (address) => address === "127.0.0.2" });
      try {
        const message = await callError(browserNavigateTool, { url: `${outside.url}/to-inside` }, ctx);
        expect(message).toMatch(
          /^The page redirected to http:\/\/127\.0\.0\.2:\d+\/secret, which resolves to 127\.0\.0\.2/,
        );
        expect(message).toContain("security.allow_private_urls");
        expect(outside.hits).toContain("/to-inside");
        expect(inside.hits).not.toContain("/secret");
        // The browser was left on a blank page, not on an error page for the internal address.
        expect((await call(browserSnapshotTool, {}, ctx)).url).toBe("about:blank");
      } finally {
        await ctx.runtime.dispose();
      }
    },
  );

  it.skipIf(process.platform !== "linux")(
    "blocks an iframe that points at an internal address and says so",
    async () => {
      const ctx = browserContext({ config: browserConfig({}, PROTECTED) });
      browserSessions(ctx.runtime, { isBlockedAddress: (address) => address === "127.0.0.2" });
      try {
        const result = await call(browserNavigateTool, { url: `${outside.url}/framed` }, ctx);
        expect(result).toMatchObject({ success: true, title: "Framed" });
        expect(result.snapshot).toContain('heading "Outer page"');
        expect(result.snapshot).not.toContain("internal admin");
        expect(result.note).toMatch(/^A frame in the page tried to load http:\/\/127\.0\.0\.2:\d+\/secret/);
        expect(inside.hits).not.toContain("/secret");
      } finally {
        await ctx.runtime.dispose();
      }
    },
  );
});
