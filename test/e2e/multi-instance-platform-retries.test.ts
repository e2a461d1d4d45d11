/**
 * Webhook-style platforms behind a load balancer (issue 27): Twilio (SMS) and WhatsApp Cloud are
 * served by both of two real `hermes gateway run` processes sharing one PostgreSQL, and the test
 * plays the load balancer. Twilio and Meta retry a webhook they think failed, and the retry may
 * reach the other instance: it must not start a second turn there. Each delivery is answered
 * once, whichever instance takes it, and a new message still gets its answer.
 */
import { createServer } from "node:net";
import twilio from "twilio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type FakeTwilio, startFakeTwilio } from "../support/fake-twilio.js";
import { type FakeWhatsAppCloud, startFakeWhatsAppCloud } from "../support/fake-whatsapp-cloud.js";
import { type GatewayCluster, startCluster } from "../support/gateway-cluster.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";

const OWNER = "+15551230001";
const BOT = "+15550009999";

let pg: PostgresFixture;
let llm: FakeLlm;
let tw: FakeTwilio;
let wa: FakeWhatsAppCloud;
let cluster: GatewayCluster;
const sms: string[] = [];
const whatsapp: string[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  if (postgresSkipReason) return;
  pg = await startPostgres();
  llm = await startFakeLlm();
  tw = await startFakeTwilio();
  wa = await startFakeWhatsAppCloud();
  llm.respondWith((request) => {
    const said = [...JSON.stringify(request.body).matchAll(/say (\w+)/g)].at(-1)?.[1] ?? "nothing";
    return reply().text(`You said ${said}.`).usage({ prompt: 10, completion: 3 });
  });
  cluster = await startCluster(
    {
      databaseUrl: await pg.createDatabase(),
      llmUrl: llm.url,
      apiServer: false,
      config: 'display:\n  tool_progress: "off"\n',
      env: {
        TWILIO_ACCOUNT_SID: tw.sid,
        TWILIO_AUTH_TOKEN: tw.token,
        TWILIO_PHONE_NUMBER: BOT,
        TWILIO_API_URL: tw.url,
        SMS_ALLOWED_USERS: OWNER,
        WHATSAPP_CLOUD_ACCESS_TOKEN: wa.accessToken,
        WHATSAPP_CLOUD_PHONE_NUMBER_ID: wa.phoneNumberId,
        WHATSAPP_CLOUD_APP_SECRET: wa.appSecret,
        WHATSAPP_CLOUD_VERIFY_TOKEN: "verify-cluster",
        WHATSAPP_CLOUD_GRAPH_URL: wa.url,
        WHATSAPP_CLOUD_ALLOW_ALL_USERS: "true",
      },
      perInstance: async (index) => {
        const smsPort = await freePort();
        const waPort = await freePort();
        sms[index] = `http://127.0.0.1:${smsPort}/webhooks/twilio`;
        whatsapp[index] = `http://127.0.0.1:${waPort}/whatsapp/webhook`;
        return {
          SMS_WEBHOOK_PORT: String(smsPort),
          SMS_WEBHOOK_PUBLIC_URL: `http://127.0.0.1:${smsPort}`,
          WHATSAPP_CLOUD_WEBHOOK_PORT: String(waPort),
        };
      },
      ready: /^Gateway running.*sms.*|^Gateway running.*whatsapp_cloud.*/,
    },
    2,
  );
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await wa?.stop();
  await tw?.stop();
  await llm?.close();
  await pg?.dispose();
}, 60_000);

/** A Twilio inbound-message webhook for `sid`, signed for the instance's own URL. */
async function twilioPost(url: string, sid: string, body: string): Promise<number> {
  const params: Record<string, string> = {
    SmsMessageSid: sid,
    SmsSid: sid,
    MessageSid: sid,
    NumMedia: "0",
    SmsStatus: "received",
    Body: body,
    To: BOT,
    From: OWNER,
    AccountSid: tw.sid,
    ApiVersion: "2010-04-01",
  };
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-twilio-signature": twilio.getExpectedTwilioSignature(tw.token, url, params),
    },
    body: new URLSearchParams(params),
  });
  await res.text();
  return res.status;
}

const turnsSaying = (word: string) =>
  llm.chatRequests.filter((r) => JSON.stringify(r.body).includes(`say ${word}`)).length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(postgresSkipReason)("webhook-style platforms on two instances", () => {
  it("a Twilio retry that reaches the other instance is not answered twice", async () => {
    const sid = `SM${"r".repeat(32)}`;
    expect(await twilioPost(sms[0]!, sid, "please say alpha")).toBe(200);
    await tw.waitForMessage((m) => m.to === OWNER && m.body === "You said alpha.");
    // Twilio did not see the 200 in time and retries; the load balancer picks the other instance.
    expect(await twilioPost(sms[1]!, sid, "please say alpha")).toBe(200);
    await sleep(2_000);
    expect(turnsSaying("alpha")).toBe(1);
    expect(tw.messages.filter((m) => m.body === "You said alpha.")).toHaveLength(1);
    // A new message reaching the other instance is answered there as usual.
    expect(await twilioPost(sms[1]!, `SM${"s".repeat(32)}`, "please say bravo")).toBe(200);
    await tw.waitForMessage((m) => m.to === OWNER && m.body === "You said bravo.");
  }, 60_000);

  it("a WhatsApp Cloud re-delivery that reaches the other instance is not answered twice", async () => {
    const user = "15550000077";
    const first = await wa.deliver(whatsapp[1]!, user, {
      type: "text",
      text: { body: "please say charlie" },
    });
    expect(first.status).toBe(200);
    await wa.waitFor((m) => m.to === user && m.text === "You said charlie.", 30_000);
    const again = await wa.deliver(
      whatsapp[0]!,
      user,
      { type: "text", text: { body: "please say charlie" } },
      { id: first.id },
    );
    expect(again.status).toBe(200);
    await sleep(2_000);
    expect(turnsSaying("charlie")).toBe(1);
    expect(wa.sent.filter((m) => m.to === user && m.text === "You said charlie.")).toHaveLength(1);
  }, 60_000);
});
