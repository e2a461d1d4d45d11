/**
 * Slack Socket Mode on two instances: only the lease holder opens a socket (one
 * `apps.connections.open` with the app token, one socket at the fake Slack, a user's event reaches
 * the holder alone); the standby is connected send-only over the Web API and still answers. A
 * drained holder hands the socket over at once; a holder that dies (stops renewing) loses it after
 * the lease TTL and the standby opens its own. Real Slack adapter against the local fake.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connectionLease } from "../../../../src/gateway/coordination/leased-connection.js";
import { createSlackAdapter } from "../../../../src/gateway/platforms/slack.js";
import {
  dmEvent,
  type FakeSlack,
  SlackRequestSender,
  slackTs,
  startFakeSlack,
} from "../../../support/fake-slack.js";
import { leasedInstances } from "../../../support/leased-instances.js";

const WAIT = { timeout: 15_000, interval: 20 };
let slack: FakeSlack;
const env = () => ({
  SLACK_BOT_TOKEN: slack.botToken,
  SLACK_APP_TOKEN: slack.appToken,
  SLACK_API_URL: slack.apiUrl,
});
const leased = leasedInstances("slack", createSlackAdapter, env);

beforeEach(async () => {
  slack = await startFakeSlack();
});
afterEach(async () => {
  await leased.stop();
  await slack.stop();
});

const sender = () => new SlackRequestSender({ url: "unused", signingSecret: "unused", teamId: slack.teamId });
const say = (text: string) =>
  slack.sendEnvelope("events_api", sender().eventCallback(dmEvent(text, { ts: slackTs() })));

async function pair() {
  const pair = await leased.pair(WAIT);
  await slack.waitForSocket();
  await new Promise((r) => setTimeout(r, 300));
  return pair;
}

describe("Slack Socket Mode under a lease", () => {
  it("is opened by the holder alone, the standby sends over the Web API, and a drain hands it over at once", async () => {
    const { hub, holder, standby } = await pair();
    expect(slack.callsTo("apps.connections.open")).toHaveLength(1);
    expect(slack.socketCount()).toBe(1);

    await say("who holds the socket?");
    await vi.waitFor(() => expect(holder.inbox).toHaveLength(1), WAIT);
    expect(standby.inbox).toHaveLength(0);
    // Send-only: the standby answers a chat whose turn it runs.
    await standby.adapter.send({ chatId: "D0DM" }, "answered by the standby");
    const posted = await slack.waitForCall(
      "chat.postMessage",
      (c) => c.args["text"] === "answered by the standby",
    );
    expect(posted.token).toBe(slack.botToken);

    const started = Date.now();
    await holder.connection.handOver();
    await vi.waitFor(() => expect(hub.leaseHolder(connectionLease("slack", env())!)).toBe(standby.id), WAIT);
    // Released, not lapsed: inside the 1 s TTL a dead holder's lease would need.
    expect(Date.now() - started).toBeLessThan(1_000);
    await vi.waitFor(() => expect(standby.connection.active).toBe(true), WAIT);
    await vi.waitFor(() => expect(slack.callsTo("apps.connections.open")).toHaveLength(2), WAIT);
    await vi.waitFor(() => expect(slack.socketCount()).toBe(1), WAIT);
    await say("and now?");
    await vi.waitFor(() => expect(standby.inbox.map((m) => m.text)).toContain("and now?"), WAIT);
    expect(holder.inbox.map((m) => m.text)).toEqual(["who holds the socket?"]);
  }, 40_000);

  it("passes to the standby when the holder dies, within the lease TTL, one socket at a time", async () => {
    const { hub, holder, standby } = await pair();
    const killedAt = Date.now();
    hub.kill(holder.id);
    await vi.waitFor(() => expect(standby.connection.active).toBe(true), WAIT);
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    await vi.waitFor(() => expect(slack.callsTo("apps.connections.open")).toHaveLength(2), WAIT);
    await vi.waitFor(() => expect(slack.socketCount()).toBe(1), WAIT);
    await say("still there?");
    await vi.waitFor(() => expect(standby.inbox.map((m) => m.text)).toContain("still there?"), WAIT);
    expect(holder.inbox).toHaveLength(0);
  }, 40_000);
});
