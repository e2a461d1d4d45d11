/**
 * Opening a browser for one task: launch the local Chromium, attach to a CDP endpoint, or create a
 * Browserbase session over its REST API and attach to it. playwright-core is loaded on first use.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type * as Playwright from "playwright-core";
import type { Browser, BrowserContext, ChromiumBrowser } from "playwright-core";
import type { BackendSpec } from "./settings.js";

type PlaywrightModule = typeof Playwright;

/** An open browser and the context this task works in. */
export interface BrowserConnection {
  backend: "local" | "cdp" | "browserbase";
  browser: Browser;
  context: BrowserContext;
  /** Ends what this task opened: the launched browser, or the pages and connection it attached. */
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Bounds the launch, the CDP handshake and the Browserbase REST call. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

let playwright: PlaywrightModule | undefined;

/**
 * playwright-core, required from node_modules; `require` rather than `import()` because the CLI
 * bundle runs in a vm.Script, where a dynamic import has no loader.
 */
export function loadPlaywright(): PlaywrightModule {
  if (playwright) return playwright;
  const require = createRequire(import.meta.url);
  try {
    playwright = require("playwright-core") as PlaywrightModule;
  } catch (error) {
    throw new Error(
      `The browser tools need the playwright-core package, which could not be loaded (${(error as Error).message}). Reinstall Hermes-TS.`,
    );
  }
  return playwright;
}

/** Whether playwright-core can be found, without loading it. */
export function playwrightInstalled(): boolean {
  // Asked when a session lists its tools; a package does not come or go while the process runs,
  // so it is looked up once: its package.json in the folders `require` would search. (Resolving
  // the package itself goes through its `exports` map, which loads Node's ES-module resolver.)
  if (playwrightFound === undefined) {
    const dirs = createRequire(import.meta.url).resolve.paths("playwright-core") ?? [];
    playwrightFound = dirs.some((dir) => existsSync(join(dir, "playwright-core", "package.json")));
  }
  return playwrightFound;
}

let playwrightFound: boolean | undefined;

/** Opens the browser `spec` names. Throws a message the model can act on. */
export async function connect(spec: BackendSpec, options: ConnectOptions): Promise<BrowserConnection> {
  switch (spec.kind) {
    case "unavailable":
      throw new Error(spec.reason);
    case "local":
      return launchLocal(spec.executablePath, options);
    case "cdp":
      return attachCdp(spec.url, "cdp", options);
    case "browserbase":
      return openBrowserbase(spec, options);
  }
}

async function launchLocal(executablePath: string, options: ConnectOptions): Promise<BrowserConnection> {
  const { chromium } = loadPlaywright();
  let browser: ChromiumBrowser;
  try {
    browser = await chromium.launch({
      executablePath,
      headless: true,
      timeout: options.timeoutMs,
      // Containers often give /dev/shm only 64 MB, which crashes renderers of heavy pages.
      args: ["--disable-dev-shm-usage"],
    });
  } catch (error) {
    throw new Error(
      `Could not start Chromium at ${executablePath}: ${firstLine(error)}. Check that it runs (\`${executablePath} --version\`), or set browser.executable_path to another Chrome/Chromium.`,
    );
  }
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  return { backend: "local", browser, context, close: () => browser.close() };
}

async function attachCdp(
  url: string,
  backend: "cdp" | "browserbase",
  options: ConnectOptions,
  onClose?: () => Promise<void>,
): Promise<BrowserConnection> {
  const { chromium } = loadPlaywright();
  let browser: ChromiumBrowser;
  try {
    browser = await chromium.connectOverCDP(url, { timeout: options.timeoutMs });
  } catch (error) {
    const where =
      backend === "cdp" ? `the Chrome DevTools endpoint ${redactUrl(url)}` : "the Browserbase session";
    throw new Error(
      `Could not connect to ${where}: ${firstLine(error)}. ${
        backend === "cdp"
          ? "Check that Chrome is running with --remote-debugging-port and that BROWSER_CDP_URL (browser.cdp_url) points at it."
          : "Check BROWSERBASE_API_KEY and BROWSERBASE_PROJECT_ID, or try again."
      }`,
    );
  }
  // An attached Chrome keeps its own profile (logins, cookies) in the default context; use it, and
  // close only the pages this task opened so the user's own tabs stay.
  const existing = browser.contexts()[0];
  const context = existing ?? (await browser.newContext({ viewport: { width: 1280, height: 800 } }));
  const before = new Set(context.pages());
  return {
    backend,
    browser,
    context,
    async close() {
      const ours = context.pages().filter((p) => !before.has(p));
      await Promise.allSettled(ours.map((p) => p.close()));
      if (!existing) await context.close().catch(() => undefined);
      await browser.close().catch(() => undefined);
      await onClose?.();
    },
  };
}

interface BrowserbaseSession {
  id: string;
  connectUrl: string;
}

async function openBrowserbase(
  spec: Extract<BackendSpec, { kind: "browserbase" }>,
  options: ConnectOptions,
): Promise<BrowserConnection> {
  const session = await createBrowserbaseSession(spec, options);
  const release = () => releaseBrowserbaseSession(spec, session.id);
  try {
    return await attachCdp(session.connectUrl, "browserbase", options, release);
  } catch (error) {
    await release();
    throw error;
  }
}

async function createBrowserbaseSession(
  spec: Extract<BackendSpec, { kind: "browserbase" }>,
  options: ConnectOptions,
): Promise<BrowserbaseSession> {
  const signal = options.signal
    ? AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs)])
    : AbortSignal.timeout(options.timeoutMs);
  let response: Response;
  try {
    response = await fetch(`${spec.apiUrl}/v1/sessions`, {
      method: "POST",
      headers: { "X-BB-API-Key": spec.apiKey, "Content-Type": "application/json" },
      body: JSON.stringify({ projectId: spec.projectId }),
      signal,
    });
  } catch (error) {
    throw new Error(`Could not reach Browserbase at ${spec.apiUrl}: ${firstLine(error)}.`);
  }
  const body = await response.text().catch(() => "");
  if (!response.ok) {
    const hint =
      response.status === 401 || response.status === 403
        ? " Check BROWSERBASE_API_KEY."
        : response.status === 404
          ? " Check BROWSERBASE_PROJECT_ID."
          : response.status === 429
            ? " Too many concurrent sessions on this Browserbase plan; close others or wait."
            : "";
    throw new Error(
      `Browserbase refused to create a session (HTTP ${response.status}: ${body.slice(0, 300)}).${hint}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const record = parsed && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
  const id = record["id"];
  const connectUrl = record["connectUrl"];
  if (typeof id !== "string" || typeof connectUrl !== "string" || connectUrl === "") {
    throw new Error(`Browserbase answered without a session id and connectUrl: ${body.slice(0, 300)}`);
  }
  return { id, connectUrl };
}

/** Asks Browserbase to end the session now instead of at its timeout (best effort). */
async function releaseBrowserbaseSession(
  spec: Extract<BackendSpec, { kind: "browserbase" }>,
  id: string,
): Promise<void> {
  try {
    await fetch(`${spec.apiUrl}/v1/sessions/${encodeURIComponent(id)}`, {
      method: "POST",
      headers: { "X-BB-API-Key": spec.apiKey, "Content-Type": "application/json" },
      body: JSON.stringify({ projectId: spec.projectId, status: "REQUEST_RELEASE" }),
      signal: AbortSignal.timeout(5000),
    });
  } catch {
    // The session ends by itself at its timeout.
  }
}

/** A CDP URL without credentials or query tokens, for messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = parsed.search ? "?…" : "";
    return parsed.href;
  } catch {
    return url;
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split("\n").find((line) => line.trim() !== "") ?? message).trim();
}
