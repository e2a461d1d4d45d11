/**
 * Gateway hooks and plugin commands in chats, through `hermes gateway run` (the built CLI) with the
 * Telegram emulator and the fake LLM. Hook folders under `<home>/hooks/` run only when
 * `gateway_hooks.enabled` names them: the enabled recorder sees `gateway:startup`, `session:start`,
 * `agent:start`, `agent:step`, `agent:end`, `command:*` and `session:reset`; a folder that is not
 * enabled never runs; a throwing and a hanging hook are logged and the turn is answered anyway.
 * An enabled plugin's slash command answers in the chat and appears in the bot's command menu.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";
import { writePlugin } from "../support/plugin-fixtures.js";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.js";

const OWNER = 1001;

let llm: FakeLlm;
let tg: TelegramEmulator;
let h: { home: string; cwd: string };
let gateway: GatewayProcess;
let eventsFile: string;
let ignoredMarker: string;

function writeHook(name: string, events: string[], handler: string, file = "handler.mjs"): void {
  const dir = join(h.home, "hooks", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "HOOK.yaml"),
    `name: ${name}\ndescription: test hook ${name}\nevents:\n${events.map((e) => `  - "${e}"`).join("\n")}\n`,
  );
  writeFileSync(join(dir, file), handler);
}

type Recorded = Record<string, unknown> & { event: string };
const recorded = (): Recorded[] =>
  existsSync(eventsFile)
    ? readFileSync(eventsFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Recorded)
    : [];

beforeAll(async () => {
  llm = await startFakeLlm();
  tg = await startTelegramEmulator({ botUsername: "hermes_test_bot" });
  h = tempHome(
    fakeProviderConfig(
      llm.url,
      'display:\n  tool_progress: "off"\n' +
        "gateway_hooks:\n  enabled: [recorder, thrower, hanger]\n  timeout: 0.5\n" +
        "plugins:\n  enabled: [pinger]\n",
    ),
  );
  eventsFile = join(h.cwd, "hook-events.jsonl");
  ignoredMarker = join(h.cwd, "ignored-ran.txt");
  writeHook(
    "recorder",
    [
      "gateway:startup",
      "session:start",
      "agent:start",
      "agent:step",
      "agent:end",
      "command:*",
      "session:reset",
    ],
    `import { appendFileSync } from "node:fs";
export async function handle(event, context) {
  appendFileSync(${JSON.stringify(eventsFile)}, JSON.stringify({ event, ...context }) + "\\n");
  // A hook gets its own copy: changing it changes nothing for the gateway or the other hooks.
  context.platform = "tampered";
}
`,
  );
  // Present but not enabled: must never run.
  writeHook(
    "ignored",
    ["agent:start", "gateway:startup"],
    `import { writeFileSync } from "node:fs";
export default function (event) { writeFileSync(${JSON.stringify(ignoredMarker)}, event); }
`,
  );
  writeHook(
    "thrower",
    ["agent:start", "command:*"],
    `export function handle() { throw new Error("thrower broke"); }\n`,
  );
  writeHook("hanger", ["agent:end"], `export const handle = () => new Promise(() => {});\n`, "handler.js");
  // handler.js in a folder without "type": "module" is CommonJS; write it as such.
  writeFileSync(
    join(h.home, "hooks", "hanger", "handler.js"),
    "module.exports = { handle: () => new Promise(() => {}) };\n",
  );
  writePlugin(
    join(h.home, "plugins"),
    "pinger",
    `export function register(ctx) {
  ctx.registerCommand("ping", (args) => "pong " + args + " from " + ctx.name, { description: "answers pong" });
}
`,
  );
  gateway = await startGatewayProcess(h, {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.apiRoot,
    TELEGRAM_ALLOWED_USERS: String(OWNER),
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await tg?.stop();
  await llm?.close();
});

const owner = () => tg.client({ userId: OWNER, username: "owner", firstName: "Owner" });
const texts = () => tg.botMessages(OWNER).map((m) => m.text ?? "");

describe("gateway hooks", () => {
  it("an enabled hook sees startup, the turn's agent events and a command; others fail harmlessly", async () => {
    await tg.waitFor(() => recorded().some((e) => e.event === "gateway:startup"), {
      what: "gateway:startup",
    });
    expect(recorded().find((e) => e.event === "gateway:startup")?.["platforms"]).toEqual(["telegram"]);

    llm.enqueue(reply().toolCall("terminal", { command: "echo hooked" }), reply().text("All done."));
    await owner().sendText("run echo please");
    await tg.waitFor(() => texts().includes("All done."), { timeoutMs: 30_000, what: "the answer" });
    await tg.waitFor(() => recorded().some((e) => e.event === "agent:end"), { what: "agent:end" });

    const events = recorded();
    const start = events.find((e) => e.event === "agent:start");
    const end = events.find((e) => e.event === "agent:end");
    const step = events.find((e) => e.event === "agent:step");
    expect(start).toMatchObject({ platform: "telegram", user_id: String(OWNER), message: "run echo please" });
    expect(String(start?.["session_id"])).toMatch(/\S/);
    expect(step).toMatchObject({ iteration: 1, tool_names: ["terminal"], session_id: start?.["session_id"] });
    expect(end).toMatchObject({
      platform: "telegram",
      message: "run echo please",
      response: "All done.",
      session_id: start?.["session_id"],
    });
    expect(events.find((e) => e.event === "session:start")?.["session_id"]).toBe(start?.["session_id"]);
    const order = events.map((e) => e.event);
    expect(order.indexOf("agent:start")).toBeLessThan(order.indexOf("agent:step"));
    expect(order.indexOf("agent:step")).toBeLessThan(order.indexOf("agent:end"));

    // The hook that is present but not enabled never ran.
    expect(existsSync(ignoredMarker)).toBe(false);
    // The throwing and the hanging hook were logged, one line each per event, and the turn went on.
    await tg.waitFor(() => gateway.stderr().includes('hook "hanger" did not finish agent:end'), {
      what: "the hung hook's message",
    });
    expect(gateway.stderr()).toContain('hooks: hook "thrower" failed on agent:start: thrower broke');
  }, 60_000);

  it("a plugin's slash command answers in the chat, is in the menu, and fires command:<name>", async () => {
    expect(tg.commands().map((c) => c.command)).toContain("ping");
    await owner().sendText("/ping there");
    await tg.waitFor(() => texts().some((t) => t.startsWith("pong there")), { what: "the plugin's answer" });
    expect(texts()).toContain("pong there from pinger");
    await tg.waitFor(() => recorded().some((e) => e.event === "command:ping"), { what: "command:ping" });
    expect(recorded().find((e) => e.event === "command:ping")).toMatchObject({
      platform: "telegram",
      user_id: String(OWNER),
      command: "ping",
      args: "there",
    });
    // The copy the recorder changed did not reach the thrower or the gateway's next event.
    expect(recorded().every((e) => e["platform"] !== "tampered")).toBe(true);
  }, 30_000);

  it("/new fires command:new and session:reset, and the next turn starts a new session", async () => {
    await owner().sendText("/new");
    await tg.waitFor(() => recorded().some((e) => e.event === "session:reset"), { what: "session:reset" });
    expect(recorded().find((e) => e.event === "command:new")).toMatchObject({ command: "new" });
    const first = recorded().find((e) => e.event === "agent:start")?.["session_id"];
    llm.enqueue(reply().text("Fresh start."));
    await owner().sendText("hello again");
    await tg.waitFor(() => texts().includes("Fresh start."), { what: "the second answer" });
    await tg.waitFor(() => recorded().filter((e) => e.event === "agent:start").length === 2, {
      what: "the second agent:start",
    });
    const second = recorded().filter((e) => e.event === "agent:start")[1]?.["session_id"];
    expect(second).toBeTruthy();
    expect(second).not.toBe(first);
  }, 30_000);
});
