/**
 * Slack through the whole gateway: `hermes gateway run` (the built CLI) with Bolt in HTTP mode
 * receives Events API requests signed as Slack signs them, answers through a local fake of the
 * Slack Web API, asks for approval with Block Kit buttons, threads channel answers, pairs
 * strangers, and refuses requests with a bad signature.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import {
  blockActionPayload,
  dmEvent,
  type FakeSlack,
  mentionEvent,
  SlackRequestSender,
  slackTs,
  startFakeSlack,
} from "../support/fake-slack.js";
import { freePort } from "../support/free-port.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";

const SECRET = "slack-signing-secret-for-tests";
let llm: FakeLlm;
let slack: FakeSlack;
let sender: SlackRequestSender;
let h: { home: string; cwd: string };
let env: Record<string, string>;
let gateway: GatewayProcess;

beforeAll(async () => {
  llm = await startFakeLlm();
  slack = await startFakeSlack();
  const port = await freePort();
  h = tempHome(fakeProviderConfig(llm.url, 'display:\n  tool_progress: "off"\n'));
  env = {
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: slack.apiUrl,
    SLACK_HTTP_PORT: String(port),
    SLACK_ALLOWED_USERS: "U0ALICE",
  };
  sender = new SlackRequestSender({
    url: `http://127.0.0.1:${port}/slack/events`,
    signingSecret: SECRET,
    teamId: slack.teamId,
    botUserId: slack.botUserId,
  });
  gateway = await startGatewayProcess(h, env, /^Gateway running.*slack/);
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await slack?.stop();
  await llm?.close();
});

const posts = (predicate: (args: Record<string, unknown>) => boolean) =>
  slack.waitForCall("chat.postMessage", (c) => predicate(c.args), 20_000);

describe("the Slack gateway (Bolt HTTP mode)", () => {
  it("answers a DM in mrkdwn", async () => {
    llm.enqueue(reply().text("Hello **Alice**, see [the docs](https://example.com)."));
    const res = await sender.event(dmEvent("hello"));
    expect(res.status).toBe(200);
    const post = await posts((a) => a["channel"] === "D0DM");
    expect(post.args["text"]).toBe("Hello *Alice*, see <https://example.com|the docs>.");
    expect(post.token).toBe(slack.botToken);
  }, 30_000);

  it("answers a channel mention in a thread under it", async () => {
    llm.enqueue(reply().text("All systems nominal."));
    const ts = slackTs();
    await sender.event(mentionEvent(`<@${slack.botUserId}> status?`, { ts }));
    const post = await posts((a) => a["text"] === "All systems nominal.");
    expect(post.args).toMatchObject({ channel: "C0GENERAL", thread_ts: ts });
    const asked = JSON.stringify(llm.chatRequests.at(-1)?.body);
    expect(asked).toContain("status?");
    expect(asked).not.toContain(`<@${slack.botUserId}>`);
  }, 30_000);

  it("asks with Block Kit buttons before a dangerous command and runs it after the press", async () => {
    const victim = join(h.cwd, "cache-dir");
    mkdirSync(victim);
    llm.enqueue(
      reply().toolCall("terminal", { command: `rm -rf ${victim}` }),
      reply().text("Cache cleared."),
    );
    await sender.event(dmEvent("clear the cache"));
    const ask = await posts((a) => Array.isArray(a["blocks"]));
    const blocks = ask.args["blocks"] as Array<{
      type: string;
      elements?: Array<{ value?: string; text?: { text?: string } }>;
    }>;
    const buttons = blocks.flatMap((b) => (b.type === "actions" ? (b.elements ?? []) : []));
    const approve = buttons.find((b) => b.text?.text === "Approve once");
    expect(approve?.value).toMatch(/^ap:/);
    expect(existsSync(victim)).toBe(true);
    // The button's value names the pending approval; the press answers it whatever message it came from.
    const messageTs = slackTs();
    const pressed = await sender.interaction(
      blockActionPayload({
        teamId: slack.teamId,
        userId: "U0ALICE",
        channelId: "D0DM",
        messageTs,
        value: approve?.value ?? "",
      }),
    );
    expect(pressed.status).toBe(200);
    await posts((a) => a["text"] === "Cache cleared.");
    expect(existsSync(victim)).toBe(false);
    const update = await slack.waitForCall("chat.update", (c) =>
      String(c.args["text"]).includes("Approved once"),
    );
    expect(update.args["channel"]).toBe("D0DM");
  }, 40_000);

  it("pairs a stranger instead of answering", async () => {
    const before = llm.chatRequests.length;
    await sender.event(dmEvent("hi there", { user: "U0MALLORY", channel: "D0MALLORY" }));
    const code = await posts((a) => a["channel"] === "D0MALLORY");
    expect(String(code.args["text"])).toMatch(/hermes pairing approve slack [A-Z0-9]{8}/);
    expect(llm.chatRequests.length).toBe(before);
    const list = await runHermes(["pairing", "list"], { ...h, env });
    expect(list.stdout).toContain("U0MALLORY");
  }, 30_000);

  it("refuses a request with a bad signature and keeps serving", async () => {
    const before = llm.chatRequests.length;
    const forged = await sender.event(dmEvent("run rm -rf / please"), { signature: "v0=deadbeef" });
    expect(forged.status).toBe(401);
    llm.enqueue(reply().text("Still fine."));
    await sender.event(dmEvent("ping"));
    await posts((a) => a["text"] === "Still fine.");
    expect(llm.chatRequests.length).toBe(before + 1);
  }, 30_000);

  it("hermes send posts without the agent and without taking the gateway's port", async () => {
    const sent = await runHermes(["send", "-t", "slack:C0GENERAL", "Release **1.2** is out."], { ...h, env });
    expect(sent.code, sent.stderr).toBe(0);
    await posts((a) => a["channel"] === "C0GENERAL" && a["text"] === "Release *1.2* is out.");
    llm.enqueue(reply().text("Still listening."));
    await sender.event(dmEvent("you there?"));
    await posts((a) => a["text"] === "Still listening.");
  }, 30_000);
});
