import { describe, expect, it } from "vitest";
import { findChromium, readBrowserSettings, resolveBackend } from "../../../../src/tools/browser/settings.js";

const present = (paths: string[]) => (p: string) => paths.includes(p);

describe("resolveBackend", () => {
  it("prefers a CDP URL, then Browserbase, then a local Chromium", () => {
    const exists = present(["/usr/bin/chromium"]);
    const bb = { BROWSERBASE_API_KEY: "k", BROWSERBASE_PROJECT_ID: "p" };
    expect(resolveBackend({ browser: { cdp_url: "ws://h:1/x" } }, bb, undefined, exists)).toEqual({
      kind: "cdp",
      url: "ws://h:1/x",
    });
    expect(resolveBackend({}, { ...bb, BROWSER_CDP_URL: "http://h:9222" }, undefined, exists)).toMatchObject({
      kind: "cdp",
    });
    expect(resolveBackend({}, bb, undefined, exists)).toEqual({
      kind: "browserbase",
      apiKey: "k",
      projectId: "p",
      apiUrl: "https://api.browserbase.com",
    });
    expect(resolveBackend({ browser: { cloud_provider: "local" } }, bb, undefined, exists)).toEqual({
      kind: "local",
      executablePath: "/usr/bin/chromium",
    });
  });

  it("reads the Browserbase key through `secret` when the tool environment scrubbed it", () => {
    const spec = resolveBackend(
      {},
      { BROWSERBASE_PROJECT_ID: "p" },
      (n) => (n === "BROWSERBASE_API_KEY" ? "k" : undefined),
      () => false,
    );
    expect(spec).toMatchObject({ kind: "browserbase", apiKey: "k" });
  });

  it("explains what is missing and how to install Chromium", () => {
    const spec = resolveBackend({}, { PATH: "/bin" }, undefined, () => false);
    expect(spec.kind).toBe("unavailable");
    expect(spec.kind === "unavailable" && spec.reason).toMatch(
      /No Chromium or Chrome was found.*apt-get install chromium/,
    );
  });
});

describe("findChromium", () => {
  it.each([
    [
      { browser: { executable_path: "/opt/chrome" } },
      {},
      ["/opt/chrome", "/usr/bin/chromium"],
      { path: "/opt/chrome" },
    ],
    [{}, { CHROME_PATH: "/x/chrome" }, ["/x/chrome", "/usr/bin/chromium"], { path: "/x/chrome" }],
    [{}, {}, ["/usr/bin/chromium"], { path: "/usr/bin/chromium" }],
    [{}, { PATH: "/a:/b" }, ["/b/google-chrome"], { path: "/b/google-chrome" }],
    [{}, { PATH: "/a:/b" }, ["/b/chromium-browser", "/a/google-chrome"], { path: "/b/chromium-browser" }],
  ])("%j %j finds it", (config, env, paths, expected) => {
    expect(findChromium(config, env, present(paths))).toEqual(expected);
  });

  it("does not fall back when an explicit path is missing", () => {
    expect(
      findChromium({ browser: { executable_path: "/nope" } }, {}, present(["/usr/bin/chromium"])),
    ).toEqual({
      reason: "browser.executable_path is /nope, which is not an executable file.",
    });
  });
});

describe("readBrowserSettings", () => {
  it("uses Hermes's defaults and honours both private-URL switches", () => {
    const defaults = readBrowserSettings({}, {});
    expect(defaults).toMatchObject({
      inactivityTimeoutMs: 120_000,
      navigationTimeoutMs: 30_000,
      actionTimeoutMs: 10_000,
      allowPrivate: false,
    });
    expect(readBrowserSettings({ security: { allow_private_urls: true } }, {}).allowPrivate).toBe(true);
    expect(readBrowserSettings({ browser: { allow_private_urls: true } }, {}).allowPrivate).toBe(true);
    const custom = readBrowserSettings({ browser: { inactivity_timeout: 5, navigation_timeout: "12" } }, {});
    expect(custom).toMatchObject({ inactivityTimeoutMs: 5000, navigationTimeoutMs: 12_000 });
    expect(readBrowserSettings({ browser: { inactivity_timeout: "soon" } }, {}).inactivityTimeoutMs).toBe(
      120_000,
    );
  });
});
