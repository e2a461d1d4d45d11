/**
 * Slack's Events API behind a load balancer: two gateway instances (two HTTP-mode adapters) share
 * the taken-message ids, as the instances on one PostgreSQL do (`AdapterContext.deliveries`; a
 * shared in-memory store stands in for the database's table here). Slack sends a `message` and an
 * `app_mention` event for one mention, and retries an event it thinks failed: whichever instance
 * each request reaches, the message is handed to the agent once.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSlackAdapter } from "../../../src/gateway/platforms/slack.js";
import type { InboundMessage } from "../../../src/gateway/platforms/types.js";
import {
  memoryWebhookDeliveries,
  type WebhookDeliveries,
} from "../../../src/state/gateway/webhook-deliveries.js";
import {
  channelEvent,
  dmEvent,
  type FakeSlack,
  mentionEvent,
  SlackRequestSender,
  slackTs,
  startFakeSlack,
} from "../../support/fake-slack.js";

const SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function instance(
  slack: FakeSlack,
  deliveries: WebhookDeliveries | undefined,
  inbox: InboundMessage[],
) {
  const dir = await mkdtemp(join(tmpdir(), "hermes-slack-lb-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const adapter = createSlackAdapter(
    {
      home: dir,
      env: {
        SLACK_BOT_TOKEN: slack.botToken,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
        SLACK_API_URL: slack.apiUrl,
      },
      settings: {},
      mediaDir: join(dir, "cache", "media"),
      maxInboundMediaBytes: 1024 * 1024,
      ...(deliveries ? { deliveries } : {}),
    },
    { mode: "http", host: "127.0.0.1", port: 0 },
  );
  await adapter.connect({
    onMessage: (m) => inbox.push(m),
    onAction: () => undefined,
    onError: () => undefined,
  });
  cleanups.push(() => adapter.disconnect());
  return new SlackRequestSender({
    url: `http://127.0.0.1:${adapter.httpAddress()?.port}/slack/events`,
    signingSecret: SIGNING_SECRET,
    teamId: slack.teamId,
    botUserId: slack.botUserId,
  });
}

async function settle(inbox: InboundMessage[], sender: SlackRequestSender, text: string): Promise<void> {
  await sender.event(dmEvent(text, { channel: "D0MARK" }));
  const deadline = Date.now() + 10_000;
  while (!inbox.some((m) => m.text === text) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
}

describe("Slack's Events API on two instances", () => {
  it("a mention's two events and a retry, spread over both instances, reach the agent once", async () => {
    const slack = await startFakeSlack();
    cleanups.push(() => slack.stop());
    const shared = memoryWebhookDeliveries();
    const inbox: InboundMessage[] = [];
    const a = await instance(slack, shared, inbox);
    const b = await instance(slack, shared, inbox);
    const ts = slackTs();
    const text = `<@${slack.botUserId}> is the deploy done?`;
    await a.event(mentionEvent(text, { ts }));
    await b.event(channelEvent(text, { ts }));
    // Slack retries the app_mention (no 200 seen in time); the load balancer picks B.
    await b.event(mentionEvent(text, { ts }));
    await settle(inbox, a, "marker a");
    await settle(inbox, b, "marker b");
    expect(inbox.filter((m) => m.messageId === ts).map((m) => m.text)).toEqual(["is the deploy done?"]);
  });

  it("without a shared store (one instance each, the old way) both instances would answer", async () => {
    const slack = await startFakeSlack();
    cleanups.push(() => slack.stop());
    const inbox: InboundMessage[] = [];
    const a = await instance(slack, undefined, inbox);
    const b = await instance(slack, undefined, inbox);
    const ts = slackTs();
    const text = `<@${slack.botUserId}> twice?`;
    await a.event(mentionEvent(text, { ts }));
    await b.event(channelEvent(text, { ts }));
    await settle(inbox, a, "marker c");
    await settle(inbox, b, "marker d");
    expect(inbox.filter((m) => m.messageId === ts)).toHaveLength(2);
  });
});
