/**
 * Browser settings from `config.yaml` (`browser.*`, `security.allow_private_urls`) and the
 * environment, and the choice of backend: a CDP endpoint when one is named, Browserbase when its
 * key and project are set, else a local Chromium found on this machine. Pure apart from the
 * file-existence probe, which is injectable.
 */
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { allowPrivateUrls } from "../web/url-guard.js";

type Env = Readonly<Record<string, string | undefined>>;
type Config = Readonly<Record<string, unknown>>;

export const DEFAULT_INACTIVITY_TIMEOUT_S = 120;
export const DEFAULT_NAVIGATION_TIMEOUT_S = 30;
export const DEFAULT_ACTION_TIMEOUT_S = 10;
export const DEFAULT_BROWSERBASE_API_URL = "https://api.browserbase.com";

/** Where the browser comes from. `unavailable` carries the message the model and user read. */
export type BackendSpec =
  | { kind: "local"; executablePath: string }
  | { kind: "cdp"; url: string }
  | { kind: "browserbase"; apiKey: string; projectId: string; apiUrl: string }
  | { kind: "unavailable"; reason: string };

export interface BrowserSettings {
  inactivityTimeoutMs: number;
  navigationTimeoutMs: number;
  actionTimeoutMs: number;
  /** Private, loopback and link-local addresses may be opened. */
  allowPrivate: boolean;
  backend: BackendSpec;
}

/** Names tried on PATH, in order, after the explicit settings and /usr/bin/chromium. */
const CHROMIUM_NAMES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"];

export const INSTALL_HINT =
  "Install Chromium with `apt-get install chromium` (Debian/Ubuntu; `dnf install chromium` on Fedora, " +
  "`brew install --cask chromium` on macOS), or set browser.executable_path in config.yaml to a " +
  "Chrome/Chromium binary, or set BROWSER_CDP_URL (browser.cdp_url) to the DevTools address of a " +
  "running Chrome (started with --remote-debugging-port=9222).";

function section(config: Config): Record<string, unknown> {
  const value = config["browser"];
  return value && typeof value === "object" ? (value as Record<string, unknown>) : {};
}

function text(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

function seconds(value: unknown, fallback: number): number {
  const n = typeof value === "string" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : fallback;
}

/** Whether `path` is an executable regular file. */
export function isExecutable(path: string): boolean {
  try {
    // Most candidates are missing: no error object for each of them.
    if (!statSync(path, { throwIfNoEntry: false })?.isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The Chromium binary to launch: `browser.executable_path`, else `CHROME_PATH`, else
 * /usr/bin/chromium, else the first of chromium, chromium-browser, google-chrome on PATH. An
 * explicit setting that names a missing file is reported, not silently replaced by another browser.
 */
export function findChromium(
  config: Config,
  env: Env,
  exists: (path: string) => boolean = isExecutable,
): { path: string } | { reason: string } {
  const configured = text(section(config)["executable_path"]);
  if (configured) {
    return exists(configured)
      ? { path: configured }
      : { reason: `browser.executable_path is ${configured}, which is not an executable file.` };
  }
  const fromEnv = text(env["CHROME_PATH"]);
  if (fromEnv) {
    return exists(fromEnv)
      ? { path: fromEnv }
      : { reason: `CHROME_PATH is ${fromEnv}, which is not an executable file.` };
  }
  const dirs = (env["PATH"] ?? "").split(delimiter).filter((d) => d !== "");
  const candidates = [
    "/usr/bin/chromium",
    ...CHROMIUM_NAMES.flatMap((name) => dirs.map((d) => join(d, name))),
  ];
  const found = candidates.find((p) => exists(p));
  if (found) return { path: found };
  return {
    reason:
      "No Chromium or Chrome was found (looked for /usr/bin/chromium, chromium-browser and google-chrome on PATH).",
  };
}

/**
 * Picks the backend. Order: a CDP URL (`browser.cdp_url`, `BROWSER_CDP_URL`), then Browserbase
 * (`BROWSERBASE_API_KEY` and `BROWSERBASE_PROJECT_ID`, unless `browser.cloud_provider` is
 * `local`), then local Chromium. `secret` reads names the tool environment has scrubbed.
 */
export function resolveBackend(
  config: Config,
  env: Env,
  secret: (name: string) => string | undefined = (name) => env[name],
  exists?: (path: string) => boolean,
): BackendSpec {
  const browser = section(config);
  const cdp = text(browser["cdp_url"]) ?? text(env["BROWSER_CDP_URL"]);
  if (cdp) return { kind: "cdp", url: cdp };
  const provider = text(browser["cloud_provider"])?.toLowerCase();
  const apiKey = text(secret("BROWSERBASE_API_KEY"));
  const projectId = text(env["BROWSERBASE_PROJECT_ID"]);
  if (provider !== "local" && apiKey && projectId) {
    const apiUrl = (text(env["BROWSERBASE_API_URL"]) ?? DEFAULT_BROWSERBASE_API_URL).replace(/\/+$/, "");
    return { kind: "browserbase", apiKey, projectId, apiUrl };
  }
  const chromium = findChromium(config, env, exists);
  if ("path" in chromium) return { kind: "local", executablePath: chromium.path };
  return {
    kind: "unavailable",
    reason: `The browser tools need Chromium. ${chromium.reason} ${INSTALL_HINT}`,
  };
}

/** Everything the browser tools read from the configuration, with Hermes's defaults. */
export function readBrowserSettings(
  config: Config,
  env: Env,
  secret?: (name: string) => string | undefined,
): BrowserSettings {
  const browser = section(config);
  return {
    inactivityTimeoutMs: seconds(browser["inactivity_timeout"], DEFAULT_INACTIVITY_TIMEOUT_S) * 1000,
    navigationTimeoutMs: seconds(browser["navigation_timeout"], DEFAULT_NAVIGATION_TIMEOUT_S) * 1000,
    // Python Hermes's browser.command_timeout bounds each browser command; it stands in when set.
    actionTimeoutMs:
      seconds(browser["action_timeout"], seconds(browser["command_timeout"], DEFAULT_ACTION_TIMEOUT_S)) *
      1000,
    // Python Hermes spells it browser.allow_private_urls; the shared switch is security.allow_private_urls.
    allowPrivate: allowPrivateUrls(config) || browser["allow_private_urls"] === true,
    backend: resolveBackend(config, env, secret),
  };
}
