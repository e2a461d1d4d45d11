/**
 * `hermes dashboard` beside a running `hermes gateway run` with the Telegram emulator: the live
 * state comes over the gateway's control socket (telegram connected, the running turn, the pending
 * approval, which the API answers), and a stranger's pairing request approved through the API lets
 * that user reach the agent in Telegram. An approval that touches a protected path (Hermes's own
 * config) can only be denied from the dashboard, never approved.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { dashboardClient, type RunningDashboard, startDashboardProcess } from "../support/dashboard.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.js";

const OWNER = 5005;
const STRANGER = 6006;

let llm: FakeLlm;
let tg: TelegramEmulator;
let h: { home: string; cwd: string };
let gateway: GatewayProcess;
let dash: RunningDashboard;
let api: ReturnType<typeof dashboardClient>;

beforeAll(async () => {
  llm = await startFakeLlm();
  tg = await startTelegramEmulator({ botUsername: "hermes_dash_bot" });
  h = tempHome(fakeProviderConfig(llm.url, 'display:\n  tool_progress: "off"\n'));
  // The gateway reads its platform settings from .env, as the dashboard's allowlist view does.
  writeFileSync(
    join(h.home, ".env"),
    `TELEGRAM_BOT_TOKEN=${tg.token}\nTELEGRAM_API_ROOT=${tg.apiRoot}\nTELEGRAM_ALLOWED_USERS=${OWNER}\n`,
  );
  gateway = await startGatewayProcess(h, {});
  dash = await startDashboardProcess(h);
  api = dashboardClient(dash, dash.token ?? "");
}, 60_000);

afterAll(async () => {
  await dash?.stop();
  await gateway?.stop();
  await tg?.stop();
  await llm?.close();
});

describe("dashboard with a running gateway", () => {
  it("shows telegram connected and its allowlist", async () => {
    const live = (await api.get("/api/gateway")).json();
    expect(live["running"]).toBe(true);
    const platforms = live["platforms"] as Array<{ name: string; state: string }>;
    expect(platforms.find((p) => p.name === "telegram")?.state).toBe("connected");
    const allow = (await api.get("/api/allowlists")).json()["platforms"] as Record<
      string,
      { allowed_users: string[] }
    >;
    expect(allow["telegram"]?.allowed_users).toEqual([String(OWNER)]);
    const config = await api.get("/api/config");
    expect(config.text).not.toContain(tg.token);
  });

  it("lists a pending approval with the running turn and answers it", async () => {
    const victim = join(h.cwd, "old-build");
    mkdirSync(victim);
    writeFileSync(join(victim, "artifact.o"), "x");
    llm.enqueue(reply().toolCall("terminal", { command: `rm -rf ${victim}` }), reply().text("Cleaned up."));
    const ask = tg.nextBotMessage(OWNER);
    await tg.client({ userId: OWNER, username: "owner", firstName: "Owner" }).sendText("clean the old build");
    expect((await ask(20_000)).text).toContain(`rm -rf ${victim}`);

    const live = (await api.get("/api/gateway")).json();
    const approvals = live["approvals"] as Array<{ id: string; command: string }>;
    expect(approvals).toHaveLength(1);
    expect(approvals[0]?.command).toBe(`rm -rf ${victim}`);
    expect((live["running_turns"] as unknown[]).length).toBe(1);
    expect(existsSync(victim)).toBe(true);

    const bad = await api.send("POST", `/api/gateway/approvals/${approvals[0]?.id}`, { decision: "sure" });
    expect(bad.status).toBe(400);
    expect(existsSync(victim)).toBe(true);
    const done = tg.nextBotMessage(OWNER);
    const answered = await api.send("POST", `/api/gateway/approvals/${approvals[0]?.id}`, {
      decision: "once",
    });
    expect(answered.status, answered.text).toBe(200);
    expect((await done(20_000)).text).toBe("Cleaned up.");
    expect(existsSync(victim)).toBe(false);
  }, 60_000);

  it("a protected-path approval can be denied through the API, never approved", async () => {
    const config = join(h.home, "config.yaml");
    const before = readFileSync(config, "utf8");
    const command = `echo "approvals: {mode: off}" >> ${config}`;
    llm.enqueue(reply().toolCall("terminal", { command }), reply().text("Left it alone."));
    const ask = tg.nextBotMessage(OWNER);
    await tg.client({ userId: OWNER, username: "owner", firstName: "Owner" }).sendText("turn approvals off");
    expect((await ask(20_000)).text).toContain("config.yaml");

    const approvals = (await api.get("/api/gateway")).json()["approvals"] as Array<{
      id: string;
      protected_path: boolean;
    }>;
    expect(approvals).toHaveLength(1);
    expect(approvals[0]?.protected_path).toBe(true);
    const id = approvals[0]?.id ?? "";
    for (const decision of ["once", "session", "always"]) {
      const refused = await api.send("POST", `/api/gateway/approvals/${id}`, { decision });
      expect(refused.status, refused.text).not.toBe(200);
      expect(refused.text).toContain("only the chat's user can approve it");
    }
    expect(readFileSync(config, "utf8")).toBe(before);
    const done = tg.nextBotMessage(OWNER);
    const denied = await api.send("POST", `/api/gateway/approvals/${id}`, { decision: "deny" });
    expect(denied.status, denied.text).toBe(200);
    expect((await done(20_000)).text).toBe("Left it alone.");
    expect(readFileSync(config, "utf8")).toBe(before);
  }, 60_000);

  it("a pairing request approved through the API lets the stranger reach the agent", async () => {
    const stranger = tg.client({ userId: STRANGER, username: "stranger", firstName: "S" });
    const offer = tg.nextBotMessage(STRANGER);
    await stranger.sendText("let me in");
    const code =
      /hermes pairing approve telegram ([A-Z0-9]{8})/.exec((await offer(20_000)).text ?? "")?.[1] ?? "";
    expect(code).toMatch(/^[A-Z0-9]{8}$/);

    const pending = (await api.get("/api/pairing")).json()["pending"] as Array<{ userId: string }>;
    expect(pending.map((p) => p.userId)).toEqual([String(STRANGER)]);
    const approved = await api.send("POST", "/api/pairing/approve", { platform: "telegram", code });
    expect(approved.status, approved.text).toBe(200);

    llm.enqueue(reply().text("Welcome aboard."));
    const answer = tg.nextBotMessage(STRANGER);
    await stranger.sendText("hello agent");
    expect((await answer(20_000)).text).toBe("Welcome aboard.");
  }, 60_000);
});
