/**
 * `hermes mcp serve` against a running `hermes gateway run` with the Telegram emulator, driven by
 * the official MCP SDK client: all twelve tools. The live ones reach the gateway through its
 * control socket (`<home>/gateway.sock`): an approval asked in Telegram is answered with
 * permissions_respond, messages_send arrives in the Telegram chat (redacted), events follow the
 * chat; `hermes gateway status` reads the same socket. Once the gateway stops, the live tools say
 * that none runs.
 */
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, HERMES_BIN, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";
import { PNG_1X1 } from "../support/images.js";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.js";

const OWNER = 1001;
const STRANGER = 2002;

let llm: FakeLlm;
let tg: TelegramEmulator;
let h: { home: string; cwd: string };
let env: Record<string, string>;
let gateway: GatewayProcess;
let client: Client;

type TextResult = {
  content: Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
  isError?: boolean;
};
const text = (result: unknown) =>
  (result as TextResult).content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("");
async function call<T = Record<string, unknown>>(
  name: string,
  args: Record<string, unknown> = {},
): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as TextResult;
  if (result.isError) throw new Error(`${name} failed: ${text(result)}`);
  return JSON.parse(text(result)) as T;
}

interface Event {
  cursor: number;
  type: string;
  session_key?: string;
  role?: string;
  content?: string;
  [k: string]: unknown;
}

/** Waits (events_wait) for the first event after `cursor` that `match` accepts. */
async function waitEvent(cursor: number, match: (e: Event) => boolean): Promise<Event> {
  let after = cursor;
  for (;;) {
    const { event } = await call<{ event: Event | null }>("events_wait", {
      after_cursor: after,
      timeout_ms: 20_000,
    });
    if (!event) throw new Error("no matching event within 20 s");
    if (match(event)) return event;
    after = event.cursor;
  }
}

beforeAll(async () => {
  llm = await startFakeLlm();
  tg = await startTelegramEmulator({ botUsername: "hermes_test_bot" });
  h = tempHome(fakeProviderConfig(llm.url, 'display:\n  tool_progress: "off"\n'));
  env = {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.apiRoot,
    TELEGRAM_ALLOWED_USERS: String(OWNER),
    TELEGRAM_HOME_CHANNEL: String(OWNER),
  };
  // A socket file left by a crashed gateway is replaced, not an obstacle.
  writeFileSync(join(h.home, "gateway.sock"), "stale");
  gateway = await startGatewayProcess(h, env);
  client = new Client({ name: "test-client", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [HERMES_BIN, "mcp", "serve"],
      cwd: h.cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: h.home, HERMES_HOME: h.home, NO_COLOR: "1" },
      stderr: "pipe",
    }),
  );
}, 60_000);

afterAll(async () => {
  await client?.close();
  await gateway?.stop();
  await tg?.stop();
  await llm?.close();
});

const owner = () => tg.client({ userId: OWNER, username: "owner", firstName: "Owner" });

describe("hermes mcp serve with a running gateway", () => {
  it("offers upstream's ten tools plus conversations_search and hermes_prompt", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "attachments_fetch",
      "channels_list",
      "conversation_get",
      "conversations_list",
      "conversations_search",
      "events_poll",
      "events_wait",
      "hermes_prompt",
      "messages_read",
      "messages_send",
      "permissions_list_open",
      "permissions_respond",
    ]);
    const respond = tools.find((t) => t.name === "permissions_respond");
    expect(Object.keys(respond?.inputSchema.properties ?? {})).toEqual(["id", "decision"]);
    // The socket only its owner can use.
    expect(statSync(join(h.home, "gateway.sock")).mode & 0o777).toBe(0o600);
  });

  it("follows a chat through events, lists and reads it, and fetches its photo", async () => {
    const start = await call<{ events: Event[]; next_cursor: number }>("events_poll", { after_cursor: 0 });
    expect(start.events.map((e) => `${e.type} ${e["platform"]}`)).toContain("platform_up telegram");

    llm.enqueue(reply().text("A single **dot**."));
    const answer = tg.nextBotMessage(OWNER);
    await owner().sendPhoto(PNG_1X1, { caption: "what is this?" });
    expect((await answer(20_000)).text).toBe("A single <b>dot</b>.");
    const inbound = await waitEvent(start.next_cursor, (e) => e.type === "message" && e.role === "user");
    expect(inbound.content).toBe("what is this?");
    const out = await waitEvent(inbound.cursor, (e) => e.type === "message" && e.role === "assistant");
    expect(out.content).toBe("A single **dot**.");
    expect(out.session_key).toBe(inbound.session_key);
    // A stranger's message never shows up.
    const pairing = tg.nextBotMessage(STRANGER);
    await tg.client({ userId: STRANGER }).sendText("let me in");
    expect((await pairing(20_000)).text).toContain("hermes pairing approve telegram");
    const after = await call<{ events: Event[] }>("events_poll", { after_cursor: out.cursor });
    expect(after.events.filter((e) => e.type === "message")).toEqual([]);

    const key = inbound.session_key as string;
    const listed = await call<{ conversations: Array<Record<string, unknown>> }>("conversations_list", {
      platform: "telegram",
    });
    expect(listed.conversations).toEqual([
      expect.objectContaining({
        session_key: key,
        platform: "telegram",
        chat_type: "dm",
        user_name: "owner",
      }),
    ]);
    const got = await call("conversation_get", { session_key: key });
    expect(got).toMatchObject({ session_key: key, chat_id: String(OWNER), platform: "telegram" });
    const read = await call<{ messages: Array<{ id: string; role: string; content: string }> }>(
      "messages_read",
      {
        session_key: key,
      },
    );
    expect(read.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(read.messages[0]?.content).toMatch(/^what is this\?\n\[The user sent a photo, saved at .*\]$/);

    const fetched = (await client.callTool({
      name: "attachments_fetch",
      arguments: { session_key: key, message_id: read.messages[0]?.id },
    })) as TextResult;
    expect(fetched.isError).toBeFalsy();
    const listing = JSON.parse(text(fetched)) as { attachments: Array<{ type: string; path: string }> };
    expect(listing.attachments).toEqual([
      { type: "photo", path: expect.stringContaining(join(h.home, "cache")) },
    ]);
    const image = fetched.content.find((c) => c.type === "image");
    expect(Buffer.from(image?.data ?? "", "base64").equals(PNG_1X1)).toBe(true);

    const hits = await call<{ results: Array<{ session_key: string | null }> }>("conversations_search", {
      query: "dot",
    });
    expect(hits.results.map((r) => r.session_key)).toContain(key);
  }, 60_000);

  it("sends to a Telegram chat from channels_list, redacted like every send", async () => {
    const { channels } = await call<{ channels: Array<{ target: string; home?: boolean }> }>("channels_list");
    expect(channels).toContainEqual(expect.objectContaining({ target: `telegram:${OWNER}`, home: true }));
    const secret = "sk-proj-Zx81kQ7bVt3mPq9LwR2nYc5dHs6fJg4a";
    const arrives = tg.nextBotMessage(OWNER);
    const sent = await call("messages_send", {
      target: `telegram:${OWNER}`,
      message: `Build **finished**. Key: ${secret}`,
    });
    expect(sent).toMatchObject({ success: true, platform: "telegram", chat_id: String(OWNER) });
    const message = await arrives(20_000);
    expect(message.text).toContain("Build <b>finished</b>.");
    expect(message.text).not.toContain(secret);

    // MEDIA: attaches a file as any send does; a secret file is refused, never sent.
    const chart = join(h.cwd, "chart.png");
    writeFileSync(chart, PNG_1X1);
    writeFileSync(join(h.cwd, ".env"), "TOKEN=x\n");
    const count = tg.botMessages(OWNER).length;
    await call("messages_send", {
      target: "telegram",
      message: `Chart:\nMEDIA:${chart}\nMEDIA:${join(h.cwd, ".env")}`,
    });
    const photo = await tg.waitFor(
      () =>
        tg
          .botMessages(OWNER)
          .slice(count)
          .find((m) => m.method === "sendPhoto"),
      {
        timeoutMs: 20_000,
        what: "the chart",
      },
    );
    expect(photo.file).toBeDefined();
    const texts = tg
      .botMessages(OWNER)
      .slice(count)
      .map((m) => m.text ?? "")
      .join("\n");
    expect(texts).toMatch(/Could not attach .*\.env: refused \(a secret or key file\)/);
    expect(
      tg
        .botMessages(OWNER)
        .slice(count)
        .filter((m) => m.method === "sendDocument"),
    ).toEqual([]);

    const unknown = (await client.callTool({
      name: "messages_send",
      arguments: { target: "discord:123", message: "hi" },
    })) as TextResult;
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/discord is not connected to this gateway \(connected: telegram\)/);
  }, 30_000);

  it("answers an approval asked in Telegram through permissions_respond", async () => {
    const victim = join(h.cwd, "old-build");
    mkdirSync(victim);
    writeFileSync(join(victim, "artifact.o"), "x");
    const { next_cursor } = await call<{ next_cursor: number }>("events_poll", {
      after_cursor: 0,
      limit: 200,
    });
    llm.enqueue(reply().toolCall("terminal", { command: `rm -rf ${victim}` }), reply().text("Cleaned up."));
    const ask = tg.nextBotMessage(OWNER);
    await owner().sendText("clean the old build");
    const question = await ask(20_000);
    expect(question.text).toContain(`rm -rf ${victim}`);

    const requested = await waitEvent(next_cursor, (e) => e.type === "approval_requested");
    const open = await call<{ count: number; approvals: Array<Record<string, unknown>> }>(
      "permissions_list_open",
    );
    expect(open.count).toBe(1);
    expect(open.approvals[0]).toMatchObject({
      id: requested["approval_id"],
      command: `rm -rf ${victim}`,
      platform: "telegram",
      chat_id: String(OWNER),
      protected_path: false,
    });

    // While it waits, `hermes gateway status` sees the running turn and the open approval.
    const status = await runHermes(["gateway", "status"], { ...h, env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/Gateway: running \(pid \d+, since .*, version /);
    expect(status.stdout).toMatch(/telegram\s+connected/);
    expect(status.stdout).toContain("Running turns: 1");
    expect(status.stdout).toContain("Pending approvals: 1");
    expect(existsSync(victim)).toBe(true);

    const bad = (await client.callTool({
      name: "permissions_respond",
      arguments: { id: open.approvals[0]?.["id"], decision: "yes please" },
    })) as TextResult;
    expect(bad.isError).toBe(true);
    const done = tg.nextBotMessage(OWNER);
    const answered = await call("permissions_respond", {
      id: open.approvals[0]?.["id"],
      decision: "allow-once",
    });
    expect(answered).toEqual({
      resolved: true,
      approval_id: open.approvals[0]?.["id"],
      decision: "allow-once",
    });
    expect((await done(20_000)).text).toBe("Cleaned up.");
    expect(existsSync(victim)).toBe(false);
    const resolved = await waitEvent(requested.cursor, (e) => e.type === "approval_resolved");
    expect(resolved).toMatchObject({
      decision: "once",
      by: "control",
      approval_id: requested["approval_id"],
    });
    expect((await call<{ count: number }>("permissions_list_open")).count).toBe(0);
    const again = (await client.callTool({
      name: "permissions_respond",
      arguments: { id: open.approvals[0]?.["id"], decision: "deny" },
    })) as TextResult;
    expect(text(again)).toMatch(/No pending approval/);
  }, 60_000);

  it("runs hermes_prompt, times out an idle events_wait, and says when no gateway runs", async () => {
    llm.enqueue(reply().text("Forty-two."));
    const prompt = await call<{ answer: string; status: string }>("hermes_prompt", { prompt: "The answer?" });
    expect(prompt).toMatchObject({ status: "completed", answer: "Forty-two." });
    const { next_cursor } = await call<{ next_cursor: number }>("events_poll", {
      after_cursor: 0,
      limit: 200,
    });
    const idle = await call("events_wait", { after_cursor: next_cursor, timeout_ms: 200 });
    expect(idle).toMatchObject({ reason: "timeout" });

    const json = await runHermes(["gateway", "status", "--json"], { ...h, env });
    expect(JSON.parse(json.stdout)).toMatchObject({ running: true, source: "control", running_turns: [] });

    expect(await gateway.stop()).toBe(0);
    expect(existsSync(join(h.home, "gateway.sock"))).toBe(false);
    for (const name of ["channels_list", "events_poll", "permissions_list_open"]) {
      const result = (await client.callTool({ name, arguments: {} })) as TextResult;
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/No gateway is running for .*hermes gateway start/);
    }
    // The stored conversations stay readable.
    const listed = await call<{ count: number }>("conversations_list");
    expect(listed.count).toBe(2);
    const stopped = await runHermes(["gateway", "status"], { ...h, env });
    expect(stopped.code).toBe(1);
    expect(stopped.stdout.trim()).toBe("Gateway: not running");
  }, 60_000);
});
