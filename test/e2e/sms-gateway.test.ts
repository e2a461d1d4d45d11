/**
 * SMS through the whole gateway: `hermes gateway run` (the built CLI) receives Twilio webhooks
 * signed by the official `twilio` package exactly as Twilio signs them, and answers through a
 * loopback fake of Twilio's REST API. The owner's text is answered in plain text, cut into
 * messages of at most 1600 characters; a stranger gets a pairing code and never reaches the agent;
 * forged or unsigned webhooks are refused; a dangerous command waits for a "yes"; an MMS picture
 * comes in and a file goes out as MMS; a webhook Twilio retries and a send whose connection drops
 * are neither lost nor doubled.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import twilio from "twilio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm, turnsAsking } from "../support/fake-llm.js";
import { type FakeTwilio, startFakeTwilio } from "../support/fake-twilio.js";
import { freePort } from "../support/free-port.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";

const OWNER = "+15551230001";
const STRANGER = "+15559870002";
const BOT = "+15550009999";

let llm: FakeLlm;
let tw: FakeTwilio;
let h: { home: string; cwd: string };
let env: Record<string, string>;
let gateway: GatewayProcess;
let webhookUrl = "";
let sidSeq = 0;

/** Posts an inbound-message webhook as Twilio would, signed with the account's auth token. */
async function inbound(
  from: string,
  body: string,
  extra: Record<string, string> = {},
  options: { signature?: string; sid?: string } = {},
): Promise<{ status: number; sid: string }> {
  const sid = options.sid ?? `SM${String(++sidSeq).padStart(32, "a")}`;
  const params: Record<string, string> = {
    ToCountry: "US",
    SmsMessageSid: sid,
    NumMedia: "0",
    SmsSid: sid,
    SmsStatus: "received",
    Body: body,
    To: BOT,
    NumSegments: "1",
    MessageSid: sid,
    AccountSid: tw.sid,
    From: from,
    ApiVersion: "2010-04-01",
    ...extra,
  };
  const signature = options.signature ?? twilio.getExpectedTwilioSignature(tw.token, webhookUrl, params);
  const res = await fetch(webhookUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
    body: new URLSearchParams(params),
  });
  await res.text();
  return { status: res.status, sid };
}

beforeAll(async () => {
  llm = await startFakeLlm();
  tw = await startFakeTwilio();
  const port = await freePort();
  webhookUrl = `http://127.0.0.1:${port}/webhooks/twilio`;
  h = tempHome(fakeProviderConfig(llm.url, 'display:\n  tool_progress: "off"\n'));
  env = {
    TWILIO_ACCOUNT_SID: tw.sid,
    TWILIO_AUTH_TOKEN: tw.token,
    TWILIO_PHONE_NUMBER: BOT,
    TWILIO_API_URL: tw.url,
    SMS_WEBHOOK_PORT: String(port),
    SMS_WEBHOOK_PUBLIC_URL: `http://127.0.0.1:${port}`,
    SMS_ALLOWED_USERS: OWNER,
  };
  gateway = await startGatewayProcess(h, env, /^Gateway running.*sms/);
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await tw?.stop();
  await llm?.close();
});

const turnsFor = (text: string) => turnsAsking(llm, text);

describe("the SMS gateway (Twilio)", () => {
  it("answers the owner in plain text from the Twilio number", async () => {
    llm.enqueue(reply().text("## Status\n**All good**, see [the page](https://example.com)."));
    const res = await inbound(OWNER, "status?");
    expect(res.status).toBe(200);
    const sms = await tw.waitForMessage((m) => m.to === OWNER && m.body.startsWith("Status"));
    expect(sms.body).toBe("Status\nAll good, see the page (https://example.com).");
    expect(sms.from).toBe(BOT);
    expect(turnsFor("status?")).toBe(1);
  }, 30_000);

  it("cuts a long answer into messages of at most 1600 characters", async () => {
    const paragraphs = Array.from(
      { length: 12 },
      (_, i) => `Part ${i}: ${"lorem ipsum ".repeat(30).trim()}.`,
    );
    llm.enqueue(reply().text(paragraphs.join("\n\n")));
    const before = tw.messages.length;
    await inbound(OWNER, "tell me everything");
    await tw.waitForMessage((m) => m.body.includes("Part 11"));
    const pieces = tw.messages.slice(before);
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    for (const p of pieces) expect(p.body.length).toBeLessThanOrEqual(1600);
    expect(pieces.map((p) => p.body).join("\n\n")).toBe(paragraphs.join("\n\n"));
  }, 30_000);

  it("refuses forged and unsigned webhooks before the agent sees them", async () => {
    const forged = await inbound(
      OWNER,
      "run rm -rf / please",
      {},
      { signature: "AAAAAAAAAAAAAAAAAAAAAAAAAAA=" },
    );
    expect(forged.status).toBe(403);
    // Signed for different parameters: a tampered body does not carry over a valid signature.
    const good = twilio.getExpectedTwilioSignature(tw.token, webhookUrl, { Body: "hi", From: OWNER });
    const tampered = await inbound(OWNER, "tampered", {}, { signature: good });
    expect(tampered.status).toBe(403);
    const unsigned = await fetch(webhookUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ From: OWNER, Body: "no signature" }),
    });
    expect(unsigned.status).toBe(403);
    expect(turnsFor("run rm -rf")).toBe(0);
    expect(turnsFor("tampered")).toBe(0);
    expect(turnsFor("no signature")).toBe(0);
  }, 30_000);

  it("gives a stranger a pairing code and never reaches the agent", async () => {
    await inbound(STRANGER, "let me in");
    const code = await tw.waitForMessage((m) => m.to === STRANGER);
    expect(code.body).toMatch(/hermes pairing approve sms [A-Z0-9]{8}/);
    expect(turnsFor("let me in")).toBe(0);
    const list = await runHermes(["pairing", "list"], { ...h, env });
    expect(list.stdout).toContain(STRANGER);
  }, 30_000);

  it("waits for a yes before running a dangerous command", async () => {
    const victim = join(h.cwd, "cache-dir");
    mkdirSync(victim);
    llm.enqueue(
      reply().toolCall("terminal", { command: `rm -rf ${victim}` }),
      reply().text("Cache cleared."),
    );
    await inbound(OWNER, "clear the cache");
    const ask = await tw.waitForMessage((m) => m.body.includes("Approval needed"));
    expect(ask.body).toContain(`rm -rf ${victim}`);
    expect(ask.body).not.toContain("**");
    expect(existsSync(victim)).toBe(true);
    await inbound(OWNER, "yes");
    await tw.waitForMessage((m) => m.body === "Cache cleared.");
    expect(existsSync(victim)).toBe(false);
  }, 40_000);

  it("takes an MMS picture in and sends a file out as MMS", async () => {
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
    const mediaUrl = tw.media(png, "image/png");
    const chart = join(h.cwd, "chart.png");
    writeFileSync(chart, Buffer.from("89504e470d0a1a0a6368617274", "hex"));
    llm.enqueue(reply().text(`A red dot. Here is a chart.\nMEDIA:${chart}`));
    await inbound(OWNER, "what is this?", {
      NumMedia: "1",
      MediaUrl0: mediaUrl,
      MediaContentType0: "image/png",
    });
    const mms = await tw.waitForMessage((m) => m.mediaUrls.length > 0);
    const asked = JSON.stringify(llm.chatRequests.at(-1)?.body);
    const saved = /saved at ([^\]"\\]+\.png)/.exec(asked)?.[1];
    expect(saved, asked).toBeDefined();
    expect(readFileSync(saved ?? "")).toEqual(png);
    // Twilio fetches the file from the gateway's listener through the public URL.
    const fetched = await fetch(mms.mediaUrls[0] ?? "");
    expect(fetched.status).toBe(200);
    expect(Buffer.from(await fetched.arrayBuffer())).toEqual(readFileSync(chart));
    await tw.waitForMessage((m) => m.body === "A red dot. Here is a chart.");
    const guessed = await fetch(
      mms.mediaUrls[0]?.replace(/\/media\/[^/]+\//, "/media/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/") ?? "",
    );
    expect(guessed.status).toBe(404);
  }, 30_000);

  it("takes a webhook Twilio retries once, and a send whose connection drops goes out once", async () => {
    llm.enqueue(reply().text("Answered once."));
    tw.dropNextResponse();
    const requests = tw.requests;
    const first = await inbound(OWNER, "are you there?");
    // Twilio did not hear back in time and delivers the same message again.
    await inbound(OWNER, "are you there?", {}, { sid: first.sid });
    await tw.waitForMessage((m) => m.body === "Answered once.");
    // The reply's first POST lost its connection; the retry carried the same idempotency token.
    await new Promise<void>((resolve) => {
      const check = () => (tw.requests >= requests + 2 ? resolve() : setImmediate(check));
      check();
    });
    llm.enqueue(reply().text("Next."));
    await inbound(OWNER, "and now?");
    await tw.waitForMessage((m) => m.body === "Next.");
    expect(turnsFor("are you there?")).toBe(1);
    expect(tw.messages.filter((m) => m.body === "Answered once.").length).toBe(1);
  }, 40_000);

  it("hermes send texts a number without the agent and without taking the gateway's port", async () => {
    const sent = await runHermes(["send", "-t", `sms:${OWNER}`, "Backup **finished**."], { ...h, env });
    expect(sent.code, sent.stderr).toBe(0);
    await tw.waitForMessage((m) => m.body === "Backup finished.");
    llm.enqueue(reply().text("Still listening."));
    await inbound(OWNER, "ping");
    await tw.waitForMessage((m) => m.body === "Still listening.");
  }, 30_000);
});
