/**
 * The Sessions page in real Chromium, over a home whose sessions the built CLI recorded against the
 * fake LLM: one with a tool call, one on another model, a parent with a subagent child, and one
 * whose messages and title carry HTML and a `javascript:` link. The list loads without a console
 * error; a search finds a session and opens its transcript at the hit, the tool call collapsed until
 * opened; filters narrow the list and live in the URL; rename refuses a taken title visibly; delete
 * asks first (cancel keeps the session); export downloads a JSONL line that parses; lineage links
 * go both ways; markup in titles and messages stays text.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { dashboardClient, http, type RunningDashboard, startDashboardProcess } from "../support/dashboard.js";
import {
  type DashboardPage,
  evaluate,
  hasChromium,
  launchBrowser,
  openDashboard,
  saveScreenshot,
} from "../support/dashboard-browser.js";
import { type RecordedRequest, reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();
let h: { home: string; cwd: string };
let dash: RunningDashboard;
let browser: Browser;
let api: ReturnType<typeof dashboardClient>;
const ids = { pelican: "", lisbon: "", parent: "", child: "", hostile: "" };

const HOSTILE_TITLE = `<script>window.__pwned="title"</script><img src=x onerror="window.__pwned='title-img'">`;
const HOSTILE_ASK = `Explain <img src=x onerror="window.__pwned='user'"> and <script>window.__pwned='user2'</script> zanzibar`;
const HOSTILE_ANSWER = `Zanzibar notes: [click me](javascript:window.__pwned='link') and <img src=x onerror="window.__pwned='md'"> <script>window.__pwned='md2'</script> end.`;

type Hit = { sessionId: string; messageId: number };

async function searchIds(q: string): Promise<string[]> {
  const hits = (await api.get(`/api/sessions?q=${encodeURIComponent(q)}`)).json()["hits"] as Hit[];
  return [...new Set(hits.map((x) => x.sessionId))];
}

async function ask(args: string[]): Promise<void> {
  const result = await runHermes(args, { ...h, timeoutMs: 30_000 });
  expect(result.code, result.stderr).toBe(0);
}

const isChild = (r: RecordedRequest) =>
  String((r.body as { messages: Array<{ content: unknown }> }).messages[0]?.content ?? "").startsWith(
    "You are a subagent",
  );
const toolResults = (r: RecordedRequest) =>
  (r.body as { messages: Array<{ role: string }> }).messages.filter((m) => m.role === "tool").length;

beforeAll(async () => {
  h = tempHome();
  writeFileSync(join(h.home, "config.yaml"), fakeProviderConfig(llm.url));
  llm.enqueue(
    reply().toolCall("memory", { action: "add", target: "memory", content: "User keeps a pelican notebook" }),
    reply().text("Pelicans **scoop** fish with their throat pouches."),
  );
  await ask(["-q", "Tell me how pelicans catch fish"]);
  llm.enqueue(reply().text("It is sunny in Lisbon."));
  await ask(["-q", "What is the weather in Lisbon", "-m", "other-model"]);
  llm.enqueue(reply().text(HOSTILE_ANSWER));
  await ask(["-q", HOSTILE_ASK]);
  llm.respondWith((request) => {
    if (isChild(request)) return reply().text("Counted seven herons on the quay.");
    if (toolResults(request) === 0)
      return reply().toolCall("delegate_task", { tasks: [{ goal: "count the herons" }] });
    return reply().text("The subagent counted seven herons.");
  });
  await ask(["-q", "Delegate a heron count"]);
  llm.respondWith(undefined);

  dash = await startDashboardProcess(h);
  api = dashboardClient(dash, dash.token ?? "");
  ids.pelican = (await searchIds("pelicans"))[0] ?? "";
  ids.lisbon = (await searchIds("Lisbon"))[0] ?? "";
  ids.hostile = (await searchIds("zanzibar"))[0] ?? "";
  const list = (await api.get("/api/sessions?limit=50")).json()["sessions"] as Array<{
    id: string;
    source: string;
    parentSessionId: string | null;
  }>;
  const child = list.find((s) => s.parentSessionId !== null);
  ids.child = child?.id ?? "";
  ids.parent = child?.parentSessionId ?? "";
  for (const [k, v] of Object.entries(ids)) expect(v, `seeded session ${k}`).not.toBe("");
  const renamed = await api.send("PATCH", `/api/sessions/${ids.hostile}`, { title: HOSTILE_TITLE });
  expect(renamed.status, renamed.text).toBe(200);
  const titled = await api.send("PATCH", `/api/sessions/${ids.pelican}`, { title: "Pelican notes" });
  expect(titled.status, titled.text).toBe(200);
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await dash?.stop();
});

const rows = (tab: DashboardPage) => tab.page.locator("tr.session-row");

describe.skipIf(!hasChromium)("the Sessions page in Chromium", () => {
  it("lists every session newest first with the totals, in both themes and at phone width", async () => {
    const tab = await openDashboard(browser, dash, { hash: "sessions" });
    await expect.poll(() => rows(tab).count(), { timeout: 10_000 }).toBe(5);
    await expect
      .poll(() => tab.page.locator("#page-title + p").textContent())
      .toMatch(/5 sessions, \d+ messages/);
    expect(await tab.page.getByRole("link", { name: "Pelican notes" }).count()).toBe(1);
    await saveScreenshot(tab.page, "sessions-list");
    await tab.page.getByLabel("Theme").selectOption("dark");
    await saveScreenshot(tab.page, "sessions-list-dark");
    expect(tab.problems).toEqual([]);
    await tab.close();

    const phone = await openDashboard(browser, dash, {
      hash: "sessions",
      viewport: { width: 375, height: 740 },
    });
    await expect.poll(() => rows(phone).count(), { timeout: 10_000 }).toBe(5);
    const overflow = await evaluate<number>(
      phone.page,
      "document.documentElement.scrollWidth - window.innerWidth",
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await saveScreenshot(phone.page, "sessions-list-phone");
    expect(phone.problems).toEqual([]);
    await phone.close();
  });

  it("finds a session by search and opens its transcript at the hit; the tool call is collapsed until opened", async () => {
    const tab = await openDashboard(browser, dash, { hash: "sessions" });
    const page = tab.page;
    await rows(tab).first().waitFor();
    await page.locator("body").press("/");
    expect(await evaluate(page, "document.activeElement?.id")).toBe("session-q");
    await page.keyboard.type("pelicans");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator(".hit").count(), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(page.url()).toContain("q=pelicans");
    expect((await page.locator(".hit mark").first().textContent())?.toLowerCase()).toBe("pelicans");
    await saveScreenshot(page, "sessions-search");

    // Keyboard: the hit's link opens the transcript.
    const link = page.locator(".hit a").first();
    await link.focus();
    await page.keyboard.press("Enter");
    await expect
      .poll(() => evaluate<string>(page, "location.hash"))
      .toMatch(new RegExp(`^#/sessions/${ids.pelican}`));
    await expect.poll(() => page.locator("#page-title").textContent()).toBe("Pelican notes");
    await expect.poll(() => page.locator(".msg.hit").count()).toBe(1);
    expect(await page.locator(".msg.hit mark").first().textContent()).toMatch(/pelicans/i);
    const call = page.locator("details.tool-call").first();
    expect(await call.locator("summary").textContent()).toContain("Tool call: memory");
    expect(await call.getAttribute("open")).toBeNull();
    expect(await call.locator("pre").isVisible()).toBe(false);
    await call.locator("summary").click();
    await expect.poll(() => call.locator("pre").isVisible()).toBe(true);
    expect(await call.locator("pre").textContent()).toContain("pelican notebook");
    const result = page.locator("article.msg.tool details").first();
    expect(await result.getAttribute("open")).toBeNull();
    // Markdown renders: the answer's **scoop** is bold.
    expect(await page.locator(".msg.assistant strong", { hasText: "scoop" }).count()).toBe(1);
    await saveScreenshot(page, "sessions-transcript");

    // A hit inside a tool call's arguments opens that call.
    await tab.go("sessions?q=notebook");
    await expect.poll(() => page.locator(".hit").count()).toBe(1);
    await page.locator(".hit a").first().click();
    await expect.poll(() => page.locator(".msg.hit details.tool-call").getAttribute("open")).not.toBeNull();
    expect(await page.locator(".msg.hit details.tool-call pre").textContent()).toContain("pelican notebook");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("narrows the list by source, model and date, kept in the URL", async () => {
    const tab = await openDashboard(browser, dash, { hash: "sessions" });
    const page = tab.page;
    await expect.poll(() => rows(tab).count(), { timeout: 10_000 }).toBe(5);
    await page.getByLabel("Source").selectOption("subagent");
    await expect.poll(() => rows(tab).count()).toBe(1);
    expect(page.url()).toContain("source=subagent");
    expect(await rows(tab).first().textContent()).toContain("subagent");
    await page.getByRole("button", { name: "Clear filters" }).click();
    await expect.poll(() => rows(tab).count()).toBe(5);

    await page.getByLabel("Model").fill("other-model");
    await page.getByLabel("Model").press("Enter");
    await expect.poll(() => rows(tab).count()).toBe(1);
    expect(page.url()).toContain("model=other-model");
    expect(await rows(tab).first().textContent()).toContain("Lisbon");

    // A reload keeps the filter; a date range before any session empties the list with a hint.
    await page.reload();
    await expect.poll(() => rows(tab).count(), { timeout: 10_000 }).toBe(1);
    await page.getByLabel("To").fill("2001-01-01");
    await expect.poll(() => page.locator(".empty").textContent()).toMatch(/No session matches these filters/);
    await page.getByRole("button", { name: "Clear filters" }).click();
    await expect.poll(() => rows(tab).count()).toBe(5);

    // Search combined with a filter: the Lisbon session is not on fake-model.
    await tab.go("sessions?q=Lisbon&model=fake-model");
    await expect.poll(() => page.locator(".empty").textContent()).toMatch(/No message matches/);
    await tab.go("sessions?q=Lisbon&model=other-model");
    await expect.poll(() => page.locator(".hit").count()).toBe(2);
    for (const target of await page.locator(".hit a").all())
      expect(await target.getAttribute("href")).toMatch(new RegExp(`^#/sessions/${ids.lisbon}\\?`));
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("renames inline; a title another session has is refused where the person typed it", async () => {
    const tab = await openDashboard(browser, dash, { hash: `sessions/${ids.lisbon}`, allowStatuses: [409] });
    const page = tab.page;
    // Escape leaves the form without a change.
    await page.getByRole("button", { name: "Rename" }).click();
    await page.getByLabel("Title").fill("Never saved");
    await page.getByLabel("Title").press("Escape");
    await expect.poll(() => page.getByLabel("Title").count()).toBe(0);
    expect(await page.locator("#page-title").textContent()).toBe("What is the weather in Lisbon");
    await page.getByRole("button", { name: "Rename" }).click();
    const title = page.getByLabel("Title");
    await expect.poll(() => evaluate(page, "document.activeElement?.id")).toBe("session-title");
    await title.fill("Pelican notes");
    await title.press("Enter");
    await expect.poll(() => page.getByRole("alert").first().textContent()).toMatch(/already has that title/);
    await expect.poll(() => evaluate(page, "document.activeElement?.id")).toBe("session-title");
    await title.fill("Lisbon weather");
    await page.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => page.locator("#page-title").textContent()).toBe("Lisbon weather");
    const listed = await runHermes(["sessions", "list"], h);
    expect(listed.stdout).toContain("Lisbon weather");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("exports the session as a JSONL download whose line parses", async () => {
    const tab = await openDashboard(browser, dash, { hash: `sessions/${ids.pelican}` });
    const page = tab.page;
    await page.getByRole("button", { name: "Export JSONL" }).waitFor();
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export JSONL" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`hermes-session-${ids.pelican}.jsonl`);
    const path = await download.path();
    const lines = readFileSync(path, "utf8").trim().split("\n");
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0] ?? "") as {
      id: string;
      title: string;
      messages: Array<{ role: string }>;
    };
    expect(line.id).toBe(ids.pelican);
    expect(line.title).toBe("Pelican notes");
    expect(line.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("follows lineage links from a parent to its subagent and back", async () => {
    const tab = await openDashboard(browser, dash, { hash: `sessions/${ids.parent}` });
    const page = tab.page;
    const lineage = page.getByRole("navigation", { name: "Lineage" });
    await lineage.waitFor({ timeout: 10_000 });
    expect(await lineage.locator(".badge").first().textContent()).toBe("subagent");
    await lineage.getByRole("link").first().click();
    await expect.poll(() => evaluate<string>(page, "location.hash")).toBe(`#/sessions/${ids.child}`);
    await expect.poll(() => page.locator(".msg.assistant").first().textContent()).toContain("seven herons");
    const back = page.getByRole("navigation", { name: "Lineage" }).getByRole("link").first();
    await back.click();
    await expect.poll(() => evaluate<string>(page, "location.hash")).toBe(`#/sessions/${ids.parent}`);
    await expect
      .poll(() => page.locator("details.tool-call summary").first().textContent())
      .toContain("delegate_task");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("asks before deleting: cancel keeps the session, confirm removes it and returns to the list", async () => {
    const tab = await openDashboard(browser, dash, { hash: `sessions/${ids.lisbon}` });
    const page = tab.page;
    await page.getByRole("button", { name: "Delete" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain("Lisbon weather");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect.poll(() => dialog.count()).toBe(0);
    expect((await api.get(`/api/sessions/${ids.lisbon}`)).status).toBe(200);

    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await expect.poll(() => evaluate<string>(page, "location.hash")).toBe(`#/sessions`);
    await expect.poll(() => rows(tab).count(), { timeout: 10_000 }).toBe(4);
    expect((await api.get(`/api/sessions/${ids.lisbon}`)).status).toBe(404);
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("shows markup in titles, messages and snippets as text: nothing runs, javascript: is no link", async () => {
    const tab = await openDashboard(browser, dash, { hash: "sessions" });
    const page = tab.page;
    await expect
      .poll(() => page.getByText(HOSTILE_TITLE, { exact: true }).count(), { timeout: 10_000 })
      .toBe(1);
    await tab.go("sessions?q=zanzibar");
    await expect.poll(() => page.locator(".hit").count()).toBeGreaterThan(0);
    expect(await page.locator(".hit .snippet").first().textContent()).toContain("<img src=x onerror=");
    expect(await page.locator(".hit .snippet img, .hit .snippet script").count()).toBe(0);

    await page.locator(".hit a").first().click();
    await expect.poll(() => page.locator("#page-title").textContent()).toBe(HOSTILE_TITLE);
    await expect.poll(() => page.locator(".msg.assistant").count()).toBe(1);
    expect(await page.locator(".msg.user").textContent()).toContain(
      `<script>window.__pwned='user2'</script>`,
    );
    expect(await page.locator(".msg.assistant").textContent()).toContain(
      `<img src=x onerror="window.__pwned='md'">`,
    );
    expect(await page.locator("main img, main script").count()).toBe(0);
    expect(await page.getByText("click me").count()).toBe(1);
    expect(await page.getByRole("link", { name: "click me" }).count()).toBe(0);
    expect(
      await evaluate(page, "Array.from(document.links).filter(a => a.protocol === 'javascript:').length"),
    ).toBe(0);
    expect(await evaluate(page, "window.__pwned ?? null")).toBeNull();
    await saveScreenshot(page, "sessions-transcript-markup");
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("shows a hostile session id or query from the address as text in the error or empty state", async () => {
    const id = `<img src=x onerror="window.__pwned='id'">`;
    const tab = await openDashboard(browser, dash, {
      hash: `sessions/${encodeURIComponent(id)}`,
      allowStatuses: [400],
    });
    const page = tab.page;
    await expect
      .poll(() => page.getByRole("alert").first().textContent(), { timeout: 10_000 })
      .toMatch(/not a session id/);
    await tab.go(`sessions?q=${encodeURIComponent(`<script>window.__pwned='q'</script>`)}`);
    await expect
      .poll(() => page.locator(".empty").textContent())
      .toContain(`“<script>window.__pwned='q'</script>”`);
    expect(await page.locator("main img, main script").count()).toBe(0);
    expect(await evaluate(page, "window.__pwned ?? null")).toBeNull();
    expect(tab.problems).toEqual([]);
    await tab.close();
  });

  it("answers the facets route only with the token", async () => {
    expect((await http(dash.port, "GET", "/api/sessions/facets")).status).toBe(401);
    const facets = (await api.get("/api/sessions/facets")).json();
    expect(facets["sessions"]).toBe(4);
    expect(Object.keys(facets["bySource"] as object).sort()).toEqual(["cli", "subagent"]);
  });
});
