/**
 * The Config and Logs pages in real Chromium against `hermes dashboard` over a seeded home: a typo
 * is refused next to its field with the did-you-mean and nothing is written, a valid edit lands in
 * config.yaml and survives a reload, the dashboard's own auth is refused with a reason, a secret
 * from `.env` and one from config.yaml never reach the page's DOM or any API answer unmasked, and
 * the Logs page shows, filters and follows the log files. Plus the log routes' guards over raw HTTP.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { dashboardClient, http, type RunningDashboard, startDashboardProcess } from "../support/dashboard.js";
import {
  evaluate,
  hasChromium,
  launchBrowser,
  openDashboard,
  saveScreenshot,
} from "../support/dashboard-browser.js";

const ENV_SECRET = "sk-or-v1-feedfacecafebeef0123456789abcdef";
const FILE_SECRET = "sk-file-0badc0de0badc0de0badc0de0badc0de";
let h: { home: string; cwd: string };
let dash: RunningDashboard;
let browser: Browser;
let api: ReturnType<typeof dashboardClient>;
const configFile = () => join(h.home, "config.yaml");
const agentLog = () => join(h.home, "logs", "agent.log");

function logLine(level: string, session: string, message: string, minute = 0): string {
  return `2026-11-26T10:${String(minute).padStart(2, "0")}:00.000Z ${level} ${session} hermes.agent: ${message}\n`;
}

beforeAll(async () => {
  h = tempHome();
  writeFileSync(
    configFile(),
    `${fakeProviderConfig("http://127.0.0.1:9/v1")}# the terminal's own settings\nterminal:\n  timeout: 120\nmemory:\n  api_key: ${FILE_SECRET}\n`,
  );
  writeFileSync(join(h.home, ".env"), `OPENROUTER_API_KEY=${ENV_SECRET}\nTELEGRAM_ALLOWED_USERS=42\n`);
  mkdirSync(join(h.home, "logs"), { recursive: true });
  writeFileSync(
    agentLog(),
    logLine("INFO", "sess-alpha", "turn started", 1) +
      logLine("DEBUG", "sess-alpha", "cache warm", 2) +
      logLine("WARNING", "sess-beta", "slow tool terminal", 3) +
      logLine("ERROR", "sess-beta", `provider refused key ${ENV_SECRET}`, 4) +
      logLine("INFO", "sess-gamma", "pelican search done", 5),
  );
  writeFileSync(join(h.home, "logs", "errors.log"), logLine("ERROR", "sess-beta", "only in errors.log", 4));
  dash = await startDashboardProcess(h);
  api = dashboardClient(dash, dash.token ?? "");
  if (hasChromium) browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await dash?.stop();
});

/** Every text the page holds: the DOM's markup and the live values of its form fields. */
function pageText(page: Page): Promise<string> {
  return evaluate<string>(
    page,
    `document.documentElement.outerHTML + "\\n" + [...document.querySelectorAll("input, textarea, select")].map((e) => e.value).join("\\n")`,
  );
}

describe.skipIf(!hasChromium)("the Config page in Chromium", () => {
  it("refuses a config edit with a typo next to the field, offers the meant key and writes nothing", async () => {
    const before = readFileSync(configFile(), "utf8");
    const tab = await openDashboard(browser, dash, { hash: "config", allowStatuses: [422] });
    const page = tab.page;
    await page.getByLabel("Key", { exact: true }).fill("modle.default");
    await page.getByLabel("Value", { exact: true }).first().fill("other-model");
    await page.getByRole("button", { name: "Save", exact: true }).first().click();
    const problem = page.locator("#set-key-name-problem");
    await expect.poll(() => problem.textContent()).toMatch(/unknown key "modle".*did you mean "model"/);
    expect(await page.getByLabel("Key", { exact: true }).getAttribute("aria-invalid")).toBe("true");
    expect(await page.getByLabel("Key", { exact: true }).getAttribute("aria-describedby")).toBe(
      "set-key-name-problem",
    );
    expect(readFileSync(configFile(), "utf8")).toBe(before);
    await saveScreenshot(page, "config-typo-refused");
    await page.getByRole("button", { name: "Use model.default" }).click();
    expect(await page.getByLabel("Key", { exact: true }).inputValue()).toBe("model.default");
    // A wrong word for a key with fixed choices is refused next to the value.
    await page.getByLabel("Key", { exact: true }).fill("agent.reasoning_effort");
    await page.getByLabel("Value", { exact: true }).first().fill("hihg");
    await page.getByRole("button", { name: "Save", exact: true }).first().click();
    await expect
      .poll(() => page.locator("#set-key-value-problem").textContent())
      .toMatch(/did you mean "high"/);
    expect(readFileSync(configFile(), "utf8")).toBe(before);
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("writes a valid edit to config.yaml with its comments kept, and it survives a reload", async () => {
    const tab = await openDashboard(browser, dash, { hash: "config" });
    const page = tab.page;
    await page.getByRole("button", { name: "Edit agent.max_turns" }).click();
    const input = page.getByLabel("New value for agent.max_turns");
    expect(await evaluate(page, "document.activeElement?.id")).toBe("edit-agent_max_turns");
    await input.fill("33");
    await input.press("Enter");
    await expect.poll(() => readFileSync(configFile(), "utf8")).toMatch(/max_turns: 33/);
    // The focus returns to the row's Edit button, so the keyboard carries on from there.
    await expect
      .poll(() => evaluate(page, `document.activeElement?.getAttribute("aria-label")`))
      .toBe("Edit agent.max_turns");
    expect(readFileSync(configFile(), "utf8")).toContain("# the terminal's own settings");
    // The set-any-key form, for a key the file did not have.
    await page.getByLabel("Key", { exact: true }).fill("compression.threshold");
    await page.getByLabel("Value", { exact: true }).first().fill("0.7");
    await page.getByRole("button", { name: "Save", exact: true }).first().click();
    await expect.poll(() => readFileSync(configFile(), "utf8")).toMatch(/threshold: 0\.7/);
    // A key that guards the agent (its approval policy) is the signed-in human's to set here.
    await page.getByLabel("Key", { exact: true }).fill("approvals.mode");
    await page.getByLabel("Value", { exact: true }).first().fill("smart");
    await page.getByRole("button", { name: "Save", exact: true }).first().click();
    await expect.poll(() => readFileSync(configFile(), "utf8")).toMatch(/mode: smart/);
    await page.reload();
    const row = page.getByRole("row").filter({ has: page.getByText("agent.max_turns", { exact: true }) });
    await expect.poll(() => row.textContent()).toMatch(/33/);
    expect(await row.textContent()).toMatch(/changed/);
    expect(await row.textContent()).toMatch(/config\.yaml/);
    // Only changed: the edited keys are there, an untouched default is not.
    await page.getByLabel(/Only changed from the defaults/).check();
    await expect.poll(() => page.getByText("compression.threshold", { exact: true }).count()).toBe(1);
    expect(await page.getByText("agent.clarify_timeout", { exact: true }).count()).toBe(0);
    await saveScreenshot(page, "config-changed-only");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("says why the dashboard's own auth cannot be changed from the page, and changes nothing", async () => {
    const before = readFileSync(configFile(), "utf8");
    const tab = await openDashboard(browser, dash, { hash: "config", allowStatuses: [403] });
    const page = tab.page;
    await page.getByLabel("Key", { exact: true }).fill("dashboard.auth.token");
    await page.getByLabel("Value", { exact: true }).first().fill("x".repeat(32));
    await page.getByRole("button", { name: "Save", exact: true }).first().click();
    await expect
      .poll(() => page.locator("#set-key-name-problem").textContent())
      .toMatch(/The dashboard may not change this key: dashboard\.\*/);
    expect(readFileSync(configFile(), "utf8")).toBe(before);
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("never shows a secret unmasked: not in the DOM of any view, not in any API answer", async () => {
    const tab = await openDashboard(browser, dash, { hash: "config" });
    const page = tab.page;
    const answers: Array<Promise<string>> = [];
    page.on("response", (response) => {
      if (new URL(response.url()).pathname.startsWith("/api/")) answers.push(response.text().catch(() => ""));
    });
    await page.reload();
    await page.getByText("model.api_key", { exact: true }).waitFor();
    const texts = [await pageText(page)];
    await tab.go("config?view=yaml");
    await page.getByRole("heading", { name: "config.yaml as written" }).waitFor();
    const yaml = (await page.locator("pre.config-yaml").textContent()) ?? "";
    expect(yaml).toContain("# the terminal's own settings");
    expect(yaml).toContain('api_key: "sk-f****"');
    texts.push(await pageText(page));
    await saveScreenshot(page, "config-yaml-masked");
    await tab.go("config?view=env");
    await page.getByText("OPENROUTER_API_KEY", { exact: true }).waitFor();
    expect(await page.getByText("TELEGRAM_ALLOWED_USERS", { exact: true }).count()).toBe(1);
    texts.push(await pageText(page));
    await saveScreenshot(page, "config-env-names");
    await tab.go("logs");
    await page.getByText(/provider refused key/).waitFor();
    texts.push(await pageText(page));
    await page.waitForLoadState("networkidle");
    const bodies = await Promise.all(answers);
    // The config (effective, defaults, masked YAML, .env names), the log list and the log lines.
    expect(bodies.some((b) => b.includes('"env_file"') && b.includes("OPENROUTER_API_KEY"))).toBe(true);
    expect(bodies.some((b) => b.includes("provider refused key"))).toBe(true);
    for (const text of [...texts, ...bodies]) {
      expect(text).not.toContain(ENV_SECRET);
      expect(text).not.toContain(FILE_SECRET);
      expect(text).not.toContain(ENV_SECRET.slice(8, 28));
      expect(text).not.toContain(FILE_SECRET.slice(8, 28));
    }
    expect(tab.problems).toEqual([]);
    await tab.close();
  });
  it("sets a credential in .env from the page without ever showing it back, and refuses other names", async () => {
    const secret = "sk-ant-api03-0123456789abcdefFEDCBA9876543210";
    const tab = await openDashboard(browser, dash, { hash: "config?view=env", allowStatuses: [403] });
    const page = tab.page;
    await page.getByLabel("Variable", { exact: true }).fill("ANTHROPIC_API_KEY");
    await page.getByLabel("Value", { exact: true }).fill(secret);
    expect(await page.getByLabel("Value", { exact: true }).getAttribute("type")).toBe("password");
    await page.getByRole("button", { name: "Save to .env" }).click();
    await page.getByText("ANTHROPIC_API_KEY", { exact: true }).waitFor();
    expect(readFileSync(join(h.home, ".env"), "utf8")).toContain(`ANTHROPIC_API_KEY=${secret}`);
    expect(await page.getByLabel("Value", { exact: true }).inputValue()).toBe("");
    expect(await pageText(page)).not.toContain(secret.slice(10));
    const before = readFileSync(join(h.home, ".env"), "utf8");
    await page.getByLabel("Variable", { exact: true }).fill("NODE_OPTIONS");
    await page.getByLabel("Value", { exact: true }).fill("--require /tmp/evil.js");
    await page.getByRole("button", { name: "Save to .env" }).click();
    await expect
      .poll(() => page.locator("#env-name-problem").textContent())
      .toMatch(/may not change this key: NODE_OPTIONS is not an allowlist or credential name/);
    expect(readFileSync(join(h.home, ".env"), "utf8")).toBe(before);
    await saveScreenshot(page, "config-env-refused");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });
});

describe.skipIf(!hasChromium)("the Logs page in Chromium", () => {
  it("shows the seeded lines coloured by level, and filters by level, session and text", async () => {
    const tab = await openDashboard(browser, dash, { hash: "logs" });
    const page = tab.page;
    const lines = page.locator(".log-line");
    await expect.poll(() => lines.count()).toBe(5);
    expect(await page.locator(".log-line.lvl-error").textContent()).toMatch(/provider refused key/);
    expect(await page.locator(".log-line.lvl-warning").textContent()).toMatch(/slow tool/);
    await saveScreenshot(page, "logs-all");
    await page.getByLabel("Level").selectOption("WARNING");
    await expect.poll(() => lines.count()).toBe(2);
    expect(page.url()).toMatch(/level=WARNING/);
    await page.getByLabel("Level").selectOption("");
    await expect.poll(() => lines.count()).toBe(5);
    await page.getByLabel("Session").fill("sess-alpha");
    await expect
      .poll(() => lines.allTextContents())
      .toEqual([expect.stringMatching(/turn started/), expect.stringMatching(/cache warm/)]);
    expect(page.url()).toMatch(/session=sess-alpha/);
    await page.getByLabel("Session").fill("");
    await expect.poll(() => lines.count()).toBe(5);
    await page.getByLabel("Search").fill("PELICAN");
    await expect.poll(() => lines.count()).toBe(1);
    expect(await page.locator(".log-line mark").textContent()).toBe("pelican");
    await page.getByLabel("Search").fill("");
    await page.getByLabel("File").selectOption("errors");
    await expect.poll(() => lines.allTextContents()).toEqual([expect.stringMatching(/only in errors\.log/)]);
    await saveScreenshot(page, "logs-errors-file");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("takes a time from the URL: only lines since then, and the Since box says which", async () => {
    const tab = await openDashboard(browser, dash, { hash: "logs?since=2026-11-26T10:03:00Z" });
    const lines = tab.page.locator(".log-line");
    await expect
      .poll(() => lines.allTextContents())
      .toEqual([
        expect.stringMatching(/slow tool/),
        expect.stringMatching(/provider refused key/),
        expect.stringMatching(/pelican search done/),
      ]);
    expect(await tab.page.getByLabel("Since").inputValue()).toBe("2026-11-26T10:03:00Z");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("follows: a line appended to the file after the page opened appears, filters still apply", async () => {
    const tab = await openDashboard(browser, dash, { hash: "logs?level=INFO" });
    const page = tab.page;
    const lines = page.locator(".log-line");
    await expect.poll(() => lines.count()).toBeGreaterThan(0);
    const start = await lines.count();
    await page.getByRole("button", { name: "Follow" }).click();
    expect(await page.getByRole("button", { name: "Following" }).getAttribute("aria-pressed")).toBe("true");
    appendFileSync(agentLog(), logLine("DEBUG", "sess-delta", "hidden by the level filter", 6));
    appendFileSync(agentLog(), logLine("INFO", "sess-delta", "appended after the page opened", 7));
    await expect
      .poll(() => lines.last().textContent(), { timeout: 10_000 })
      .toMatch(/appended after the page opened/);
    expect(await lines.count()).toBe(start + 1);
    await saveScreenshot(page, "logs-follow");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });
});

describe("the log routes over raw HTTP", () => {
  it("answers nothing without the token, and never reads a file named by the request", async () => {
    for (const path of ["/api/logs", "/api/logs?name=agent", "/api/logs/files", "/api/logs?after=1-0"]) {
      const r = await http(dash.port, "GET", path);
      expect(r.status, path).toBe(401);
      expect(r.text).not.toContain("turn started");
    }
    for (const name of [
      "../../etc/passwd",
      "agent.log",
      "/etc/passwd",
      "..%2F..%2Fconfig.yaml",
      "__proto__",
    ]) {
      const r = await api.get(`/api/logs?name=${encodeURIComponent(name)}`);
      expect(r.status, name).toBe(400);
      expect(r.json()["error"]).toMatch(/name must be one of agent, errors, gateway/);
    }
    for (const after of ["x", "1-", "-1-5", "1-2-3", "99999999999999999999999-1"]) {
      const r = await api.get(`/api/logs?after=${encodeURIComponent(after)}`);
      expect(r.status, after).toBe(400);
    }
    // Neither filter tells whether a hidden secret is in some line.
    for (const probe of [`session=${ENV_SECRET.slice(0, 20)}`, `q=${ENV_SECRET.slice(0, 20)}`]) {
      const r = await api.get(`/api/logs?name=agent&${probe}`);
      expect(r.json()["lines"], probe).toEqual([]);
    }
    expect((await api.get("/api/logs?level=LOUD")).status).toBe(400);
    expect((await api.get("/api/logs?since=yesterday-ish")).status).toBe(400);
    expect((await api.get(`/api/logs?q=${"a".repeat(201)}`)).status).toBe(400);
  });

  it("gives a cursor with the tail and, after it, only the lines appended since", async () => {
    const tail = (await api.get("/api/logs?name=agent&lines=2")).json();
    expect(tail["lines"]).toHaveLength(2);
    const cursor = String(tail["cursor"]);
    expect(cursor).toMatch(/^\d+-\d+$/);
    const none = (await api.get(`/api/logs?name=agent&after=${cursor}`)).json();
    expect(none["lines"]).toEqual([]);
    expect(none["cursor"]).toBe(cursor);
    appendFileSync(agentLog(), logLine("ERROR", "sess-eps", `follow leak ${ENV_SECRET}`, 8));
    appendFileSync(agentLog(), "2026-11-26T10:09:00.000Z INFO sess-eps hermes: half a li");
    const next = await api.get(`/api/logs?name=agent&after=${cursor}`);
    const lines = next.json()["lines"] as string[];
    expect(lines).toEqual([expect.stringMatching(/follow leak/)]);
    expect(next.text).not.toContain(ENV_SECRET);
    appendFileSync(agentLog(), "ne\n");
    const rest = (await api.get(`/api/logs?name=agent&after=${String(next.json()["cursor"])}`)).json();
    expect(rest["lines"]).toEqual([expect.stringMatching(/half a line$/)]);
  });

  it("refuses a config change without the token, the CSRF token or from a foreign Origin", async () => {
    const before = readFileSync(configFile(), "utf8");
    const body = JSON.stringify({ key: "agent.max_turns", value: "7" });
    const csrf = await api.csrf();
    const origin = `http://127.0.0.1:${dash.port}`;
    const auth = `Bearer ${dash.token ?? ""}`;
    const noToken = await http(dash.port, "PUT", "/api/config", {
      headers: { "x-csrf-token": csrf, origin },
      body,
    });
    expect(noToken.status).toBe(401);
    const noCsrf = await http(dash.port, "PUT", "/api/config", {
      headers: { authorization: auth, origin },
      body,
    });
    expect(noCsrf.status).toBe(403);
    const foreign = await http(dash.port, "PUT", "/api/config", {
      headers: { authorization: auth, "x-csrf-token": csrf, origin: "http://evil.example" },
      body,
    });
    expect(foreign.status).toBe(403);
    const typo = await api.send("PUT", "/api/config", { key: "modle.default", value: "x" });
    expect(typo.status).toBe(422);
    expect(typo.json()).toMatchObject({ key: "modle", suggestion: "model", did_you_mean: "model.default" });
    expect(readFileSync(configFile(), "utf8")).toBe(before);
  });
});
