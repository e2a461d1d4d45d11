import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  browserCloseTool,
  browserNavigateTool,
  browserSessions,
  browserSnapshotTool,
} from "../../../../src/tools/browser/index.js";
import {
  browserConfig,
  browserContext,
  CHROMIUM,
  call,
  callError,
  type DevToolsChromium,
  NO_CHROMIUM_REASON,
  type Site,
  startDevToolsChromium,
  startSite,
} from "./helpers.js";

interface BrowserbaseCall {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A stand-in for api.browserbase.com whose sessions are the given DevTools endpoint. */
async function startFakeBrowserbase(
  connectUrl: string,
  status = 201,
): Promise<{ url: string; calls: BrowserbaseCall[]; close(): Promise<void> }> {
  const calls: BrowserbaseCall[] = [];
  const server: Server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
    });
    req.on("end", () => {
      calls.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: JSON.parse(text || "null"),
      });
      res.writeHead(req.url === "/v1/sessions" ? status : 200, { "content-type": "application/json" });
      if (req.url === "/v1/sessions" && status === 201)
        res.end(JSON.stringify({ id: "bb-session-1", connectUrl }));
      else if (req.url === "/v1/sessions") res.end(JSON.stringify({ error: "Unauthorized" }));
      else res.end(JSON.stringify({ id: "bb-session-1", status: "COMPLETED" }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe.skipIf(!CHROMIUM)(`remote browser backends (${CHROMIUM ?? NO_CHROMIUM_REASON})`, () => {
  let site: Site;
  let chrome: DevToolsChromium;

  beforeAll(async () => {
    site = await startSite();
    chrome = await startDevToolsChromium(CHROMIUM ?? "");
  });

  afterAll(async () => {
    await chrome?.stop();
    await site?.close();
  });

  it("drives a Chrome the user started, through BROWSER_CDP_URL, and leaves it running on close", async () => {
    const ctx = browserContext({
      // No local Chromium: the CDP endpoint alone must be enough.
      config: browserConfig({ executable_path: "/nonexistent/chromium" }),
      env: { PATH: process.env.PATH, BROWSER_CDP_URL: chrome.httpUrl },
    });
    try {
      const nav = await call(browserNavigateTool, { url: `${site.url}/form` }, ctx);
      expect(nav).toMatchObject({ success: true, title: "Sign up" });
      const session = await browserSessions(ctx.runtime).peek(ctx.taskId);
      expect(session?.connection.backend).toBe("cdp");
      expect(await call(browserCloseTool, {}, ctx)).toMatchObject({ closed: true });
      expect(chrome.process.exitCode).toBeNull();
      // The page this task opened is gone from the user's browser; its own tab stays.
      const targets = (await (await fetch(`${chrome.httpUrl}/json/list`)).json()) as { url: string }[];
      expect(targets.map((t) => t.url)).not.toContain(`${site.url}/form`);
    } finally {
      await ctx.runtime.dispose();
    }
  });

  it("says what to check when the CDP endpoint does not answer", async () => {
    const ctx = browserContext({ env: { PATH: process.env.PATH, BROWSER_CDP_URL: "http://127.0.0.1:9" } });
    try {
      const message = await callError(browserNavigateTool, { url: `${site.url}/form` }, ctx);
      expect(message).toMatch(
        /^Could not connect to the Chrome DevTools endpoint http:\/\/127\.0\.0\.1:9\/: /,
      );
      expect(message).toContain("--remote-debugging-port");
    } finally {
      await ctx.runtime.dispose();
    }
  });

  it("creates a Browserbase session over its REST API, browses in it, and releases it on close", async () => {
    const bb = await startFakeBrowserbase(chrome.wsUrl);
    const ctx = browserContext({
      config: browserConfig({ executable_path: "/nonexistent/chromium" }),
      env: {
        PATH: process.env.PATH,
        BROWSERBASE_API_KEY: "bb-test-key",
        BROWSERBASE_PROJECT_ID: "proj-42",
        BROWSERBASE_API_URL: bb.url,
      },
    });
    try {
      const nav = await call(browserNavigateTool, { url: `${site.url}/images` }, ctx);
      expect(nav).toMatchObject({ success: true, title: "Gallery" });
      expect((await call(browserSnapshotTool, {}, ctx)).snapshot).toContain('heading "Gallery"');
      const created = bb.calls[0];
      expect(created).toMatchObject({ method: "POST", path: "/v1/sessions", body: { projectId: "proj-42" } });
      expect(created?.headers["x-bb-api-key"]).toBe("bb-test-key");
      expect((await browserSessions(ctx.runtime).peek(ctx.taskId))?.connection.backend).toBe("browserbase");

      await call(browserCloseTool, {}, ctx);
      expect(bb.calls[1]).toMatchObject({
        method: "POST",
        path: "/v1/sessions/bb-session-1",
        body: { projectId: "proj-42", status: "REQUEST_RELEASE" },
      });
    } finally {
      await ctx.runtime.dispose();
      await bb.close();
    }
  });

  it("reports a Browserbase refusal with what to check", async () => {
    const bb = await startFakeBrowserbase(chrome.wsUrl, 401);
    const ctx = browserContext({
      env: {
        PATH: process.env.PATH,
        BROWSERBASE_API_KEY: "wrong",
        BROWSERBASE_PROJECT_ID: "proj-42",
        BROWSERBASE_API_URL: bb.url,
      },
    });
    try {
      expect(await callError(browserNavigateTool, { url: `${site.url}/form` }, ctx)).toBe(
        'Browserbase refused to create a session (HTTP 401: {"error":"Unauthorized"}). Check BROWSERBASE_API_KEY.',
      );
    } finally {
      await ctx.runtime.dispose();
      await bb.close();
    }
  });
});
