import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { findChromium } from "../../../../src/tools/browser/settings.js";
import type { ToolContext, ToolDefinition } from "../../../../src/tools/types.js";
import { makeToolContext } from "../../../support/tool-context.js";

/** The Chromium the tests drive, or undefined when none is installed (those tests are skipped). */
export const CHROMIUM: string | undefined = (() => {
  const found = findChromium({}, process.env);
  return "path" in found ? found.path : undefined;
})();

export const NO_CHROMIUM_REASON =
  "skipped: no Chromium installed (apt-get install chromium, or set CHROME_PATH)";

export type BrowserCtx = ReturnType<typeof makeToolContext>;

/** The default config with `browser` and `security` sections merged in. */
export function browserConfig(
  browser: Record<string, unknown> = {},
  security: Record<string, unknown> = { allow_private_urls: true },
): Record<string, unknown> {
  const config = defaultConfig() as unknown as Record<string, unknown>;
  const currentSecurity = (config["security"] ?? {}) as Record<string, unknown>;
  return {
    ...config,
    browser: { executable_path: CHROMIUM, ...browser },
    security: { ...currentSecurity, ...security },
  };
}

/** A tool context whose config points the browser at the test Chromium and allows 127.0.0.1. */
export function browserContext(overrides: Partial<ToolContext> = {}): BrowserCtx {
  return makeToolContext({
    config: browserConfig(),
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    ...overrides,
  });
}

/** Runs a tool's handler and returns its result object (tests read fields off it). */
export async function call(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<Record<string, unknown>> {
  return (await tool.handler(args as never, ctx)) as Record<string, unknown>;
}

/** Runs a tool's handler and returns the message of the error it throws. */
export async function callError(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<string> {
  try {
    await tool.handler(args as never, ctx);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${tool.name} did not fail`);
}

/** 1x1 transparent PNG. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

export interface Site {
  url: string;
  port: number;
  /** Paths requested so far, in order. */
  hits: string[];
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

function html(res: ServerResponse, body: string, status = 200): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8" });
  res.end(`<!doctype html><html><head>${body}</html>`);
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Pages the scripted sessions visit. `extra` adds or replaces routes. */
export async function startSite(host = "127.0.0.1", extra: Record<string, Handler> = {}): Promise<Site> {
  const hits: string[] = [];
  const routes: Record<string, Handler> = {
    "/form": (_req, res) =>
      html(
        res,
        `<title>Sign up</title></head><body><h1>Sign up</h1>
        <form method="post" action="/submit">
          <label>Name <input name="name"></label>
          <label>Email <input name="email" type="email"></label>
          <label>Plan <select name="plan"><option>Free</option><option>Pro</option></select></label>
          <label><input type="checkbox" name="news" value="yes"> Send news</label>
          <button type="submit">Create account</button>
        </form><p><a href="/images">Gallery</a></p></body>`,
      ),
    "/submit": (_req, res, body) => {
      const form = new URLSearchParams(body);
      const rows = [...form.entries()].map(([k, v]) => `<li>${escapeHtml(k)}=${escapeHtml(v)}</li>`).join("");
      html(res, `<title>Welcome</title></head><body><h1>Account created</h1><ul>${rows}</ul></body>`);
    },
    "/console": (_req, res) =>
      html(
        res,
        `<title>Noisy</title><script>
          console.log("hello from the page");
          console.warn("careful now");
          setTimeout(() => { throw new Error("boom from the page"); }, 0);
        </script></head><body><p>noisy page</p></body>`,
      ),
    "/images": (_req, res) =>
      html(
        res,
        `<title>Gallery</title></head><body><h1>Gallery</h1>
        <img src="/img/cat.png" alt="A cat" width="40" height="30"><img src="/img/dog.png" alt="A dog"></body>`,
      ),
    "/popup": (_req, res) =>
      html(
        res,
        `<title>Links</title></head><body><button onclick="alert('Saved!')">Save</button>
        <button onclick="document.title = confirm('Really?') ? 'Confirmed' : 'Declined'">Delete</button>
        <a href="/images" target="_blank">Open gallery</a></body>`,
      ),
    "/covered": (_req, res) =>
      html(
        res,
        `<title>Covered</title></head><body><button>Hidden treasure</button>
        <div style="position:fixed;inset:0;background:rgba(0,0,0,.5)"></div></body>`,
      ),
    "/long": (_req, res) =>
      html(
        res,
        `<title>Long</title></head><body>${Array.from({ length: 700 }, (_, i) => `<p>Paragraph ${i} with some filler text to make the page long.</p>`).join("")}<button>Bottom button</button></body>`,
      ),
    "/hang": (_req, res) => {
      // Sends the start of a page and never finishes it.
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.write(
        `<!doctype html><html><head><title>Slow</title></head><body><h1>Partial content</h1>${" ".repeat(4096)}`,
      );
    },
  };
  Object.assign(routes, extra);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    hits.push(path);
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    req.on("end", () => {
      if (path.startsWith("/img/")) {
        res.writeHead(200, { "content-type": "image/png" });
        res.end(PNG);
        return;
      }
      const route = routes[path];
      if (route) route(req, res, body);
      else html(res, "<title>Not found</title></head><body><h1>Nothing here</h1></body>", 404);
    });
  });
  const sockets = new Set<import("node:net").Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A Chromium started with a DevTools port, as a user would run one for BROWSER_CDP_URL. */
export interface DevToolsChromium {
  /** ws://127.0.0.1:PORT/devtools/browser/ID */
  wsUrl: string;
  /** http://127.0.0.1:PORT */
  httpUrl: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export async function startDevToolsChromium(executable: string): Promise<DevToolsChromium> {
  const profile = mkdtempSync(join(tmpdir(), "hermes-cdp-"));
  const child = spawn(
    executable,
    [
      "--headless=new",
      "--no-sandbox",
      "--disable-dev-shm-usage",
      "--remote-debugging-port=0",
      "--remote-debugging-address=127.0.0.1",
      `--user-data-dir=${profile}`,
      "about:blank",
    ],
    // Its own process group, so stop() ends the browser and every helper it started at once.
    { stdio: ["ignore", "ignore", "pipe"], detached: true },
  );
  const wsUrl = await new Promise<string>((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error(`Chromium printed no DevTools URL:\n${text}`)), 30_000);
    child.stderr?.on("data", (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(text);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`Chromium exited (${code}) before listening:\n${text}`));
    });
  });
  const port = new URL(wsUrl).port;
  return {
    wsUrl,
    httpUrl: `http://127.0.0.1:${port}`,
    process: child,
    stop: async () => {
      const group = child.pid;
      if (group !== undefined) {
        try {
          process.kill(-group, "SIGKILL");
        } catch {
          // The group is already gone.
        }
        // The profile is removed only once no helper of the browser is left to write into it.
        const deadline = Date.now() + 10_000;
        while (groupAlive(group) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      }
      rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    },
  };
}

/** Whether any process of the group led by `pgid` is still alive (signal 0 only checks). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
