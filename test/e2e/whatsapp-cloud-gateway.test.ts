/**
 * WhatsApp Cloud API through the whole gateway: `hermes gateway run` (the built CLI) answers Meta's
 * subscription handshake, takes webhooks signed as Meta signs them (`X-Hub-Signature-256`) from a
 * loopback fake of the Cloud API, and answers through the fake's Graph API. The owner's message
 * is answered in WhatsApp markup after a read receipt with typing; forged or unsigned webhooks are
 * refused; a stranger gets a pairing code and never reaches the agent; a dangerous command waits
 * for a button press; a picture comes in and a file goes out (uploaded, then sent by media id);
 * a re-delivered webhook, Graph answering 503 and Graph being down for a while neither lose nor
 * double a message; outside the 24-hour window the answer goes as the configured template.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm, turnsAsking } from "../support/fake-llm.js";
import { type FakeWhatsAppCloud, startFakeWhatsAppCloud } from "../support/fake-whatsapp-cloud.js";
import { freePort } from "../support/free-port.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";

const OWNER = "15551230001";
const STRANGER = "15559870002";
const VERIFY = "verify-token-for-the-handshake";

let llm: FakeLlm;
let wa: FakeWhatsAppCloud;
let h: { home: string; cwd: string };
let env: Record<string, string>;
let gateway: GatewayProcess;
let webhookUrl = "";

const text = (from: string, body: string, options?: Parameters<FakeWhatsAppCloud["deliver"]>[3]) =>
  wa.deliver(webhookUrl, from, { type: "text", text: { body } }, options);

const turnsFor = (text: string) => turnsAsking(llm, text);

beforeAll(async () => {
  llm = await startFakeLlm();
  wa = await startFakeWhatsAppCloud();
  const port = await freePort();
  webhookUrl = `http://127.0.0.1:${port}/whatsapp/webhook`;
  h = tempHome(fakeProviderConfig(llm.url, 'display:\n  tool_progress: "off"\n'));
  env = {
    WHATSAPP_CLOUD_ACCESS_TOKEN: wa.accessToken,
    WHATSAPP_CLOUD_PHONE_NUMBER_ID: wa.phoneNumberId,
    WHATSAPP_CLOUD_APP_SECRET: wa.appSecret,
    WHATSAPP_CLOUD_VERIFY_TOKEN: VERIFY,
    WHATSAPP_CLOUD_GRAPH_URL: wa.url,
    WHATSAPP_CLOUD_WEBHOOK_PORT: String(port),
    WHATSAPP_CLOUD_TEMPLATE_NAME: "hermes_reply",
    WHATSAPP_CLOUD_TEMPLATE_LANGUAGE: "en_GB",
    WHATSAPP_CLOUD_ALLOWED_USERS: OWNER,
  };
  gateway = await startGatewayProcess(h, env, /^Gateway running.*whatsapp_cloud/);
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await wa?.stop();
  await llm?.close();
});

describe("the WhatsApp Cloud API gateway", () => {
  it("answers Meta's subscription handshake only for the verify token", async () => {
    const ok = await fetch(
      `${webhookUrl}?hub.mode=subscribe&hub.verify_token=${VERIFY}&hub.challenge=1158201444`,
    );
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("1158201444");
    const wrong = await fetch(`${webhookUrl}?hub.mode=subscribe&hub.verify_token=guess&hub.challenge=1`);
    expect(wrong.status).toBe(403);
    const health = await fetch(webhookUrl.replace("/whatsapp/webhook", "/health"));
    expect(((await health.json()) as { status: string }).status).toBe("ok");
  });

  it("answers the owner in WhatsApp markup after a read receipt with typing", async () => {
    llm.enqueue(reply().text("## Status\n**All good**, see [the page](https://example.com)."));
    const res = await text(OWNER, "status?");
    expect(res.status).toBe(200);
    const answer = await wa.waitFor((m) => m.to === OWNER && m.text.startsWith("*Status*"));
    expect(answer.type).toBe("text");
    expect(answer.text).toBe("*Status*\n*All good*, see the page (https://example.com).");
    expect(wa.typing).toContain(res.id);
    expect(turnsFor("status?")).toBe(1);
  }, 30_000);

  it("refuses forged, tampered and unsigned webhooks before the agent sees them", async () => {
    const forged = await text(OWNER, "run rm -rf / please", { signature: `sha256=${"0".repeat(64)}` });
    expect(forged.status).toBe(401);
    // A signature for another body does not carry over.
    const other = JSON.stringify({ object: "whatsapp_business_account", entry: [] });
    const { createHmac } = await import("node:crypto");
    const good = `sha256=${createHmac("sha256", wa.appSecret).update(other).digest("hex")}`;
    const tampered = await text(OWNER, "tampered", { signature: good });
    expect(tampered.status).toBe(401);
    const unsigned = await fetch(webhookUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ object: "whatsapp_business_account", entry: [] }),
    });
    expect(unsigned.status).toBe(401);
    // Signed with another app's secret.
    const otherApp = `sha256=${createHmac("sha256", "someone-elses-secret").update("x").digest("hex")}`;
    expect((await text(OWNER, "other app", { signature: otherApp })).status).toBe(401);
    expect(turnsFor("run rm -rf")).toBe(0);
    expect(turnsFor("tampered")).toBe(0);
    expect(turnsFor("other app")).toBe(0);
  }, 30_000);

  it("gives a stranger a pairing code and never reaches the agent", async () => {
    await text(STRANGER, "let me in", { name: "Mallory" });
    const code = await wa.waitFor((m) => m.to === STRANGER);
    expect(code.text).toMatch(/hermes pairing approve whatsapp_cloud [A-Z0-9]{8}/);
    expect(turnsFor("let me in")).toBe(0);
    const list = await runHermes(["pairing", "list"], { ...h, env });
    expect(list.stdout).toContain(STRANGER);
  }, 30_000);

  it("waits for a button press before running a dangerous command", async () => {
    const victim = join(h.cwd, "cache-dir");
    mkdirSync(victim);
    llm.enqueue(
      reply().toolCall("terminal", { command: `rm -rf ${victim}` }),
      reply().text("Cache cleared."),
    );
    await text(OWNER, "clear the cache");
    const ask = await wa.waitFor((m) => m.type === "interactive" && m.text.includes("Approval needed"));
    expect(ask.text).toContain(`rm -rf ${victim}`);
    expect(ask.text).not.toContain("**");
    expect(existsSync(victim)).toBe(true);
    const rows = (
      ask.payload["interactive"] as {
        action: { sections: Array<{ rows: Array<{ id: string; title: string }> }> };
      }
    ).action.sections[0]?.rows;
    const once = rows?.find((r) => r.title === "Approve once");
    expect(once, JSON.stringify(rows)).toBeDefined();
    // A stranger pressing the same button (a forwarded prompt) does not answer it.
    await wa.deliver(webhookUrl, STRANGER, {
      type: "interactive",
      interactive: { type: "list_reply", list_reply: { id: once?.id, title: once?.title } },
    });
    expect(existsSync(victim)).toBe(true);
    await wa.deliver(webhookUrl, OWNER, {
      type: "interactive",
      context: { from: "15550009999", id: ask.id },
      interactive: { type: "list_reply", list_reply: { id: once?.id, title: once?.title } },
    });
    await wa.waitFor((m) => m.text === "Cache cleared.");
    expect(existsSync(victim)).toBe(false);
  }, 40_000);

  it("takes a picture in and sends a file out by uploaded media id", async () => {
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");
    const mediaId = wa.userMedia(png, "image/png");
    const chart = join(h.cwd, "chart.png");
    writeFileSync(chart, Buffer.from("89504e470d0a1a0a6368617274", "hex"));
    llm.enqueue(reply().text(`A red dot. Here is a chart.\nMEDIA:${chart}`));
    await wa.deliver(webhookUrl, OWNER, {
      type: "image",
      image: { id: mediaId, mime_type: "image/png", sha256: "x", caption: "what is this?" },
    });
    const image = await wa.waitFor((m) => m.type === "image");
    const asked = JSON.stringify(llm.chatRequests.at(-1)?.body);
    expect(asked).toContain("what is this?");
    const saved = /saved at ([^\]"\\]+\.png)/.exec(asked)?.[1];
    expect(saved, asked).toBeDefined();
    expect(readFileSync(saved ?? "")).toEqual(png);
    const uploaded = wa.uploads.get((image.payload["image"] as { id: string }).id);
    expect(uploaded?.bytes).toEqual(readFileSync(chart));
    expect(uploaded?.mimeType).toBe("image/png");
    await wa.waitFor((m) => m.text === "A red dot. Here is a chart.");
  }, 30_000);

  it("takes a re-delivered webhook once and rides out Graph errors and an outage", async () => {
    llm.enqueue(reply().text("Answered once."));
    wa.failNext(2);
    const first = await text(OWNER, "are you there?");
    // Meta did not hear back in time and delivers the same message again.
    await text(OWNER, "are you there?", { id: first.id });
    await wa.waitFor((m) => m.text === "Answered once.");
    expect(turnsFor("are you there?")).toBe(1);
    expect(wa.sent.filter((m) => m.text === "Answered once.").length).toBe(1);

    // Graph is down while the agent answers: the send is retried until it is back.
    await wa.pause();
    llm.enqueue(reply().text("Back again."));
    const before = gateway.stderr().length;
    await text(OWNER, "still there?");
    await new Promise<void>((resolve) => {
      const check = () =>
        /could not reach/.test(gateway.stderr().slice(before)) ? resolve() : setTimeout(check, 20);
      check();
    });
    await wa.resume();
    await wa.waitFor((m) => m.text === "Back again.");
    expect(wa.sent.filter((m) => m.text === "Back again.").length).toBe(1);
    expect(turnsFor("still there?")).toBe(1);
  }, 60_000);

  it("answers with the template once the 24-hour window has closed", async () => {
    llm.enqueue(reply().text("Your **report** is ready.\nSee the attachment."));
    const res = await text(OWNER, "report?");
    // The user's window closed while the agent worked (as after a long job).
    wa.closeWindow(OWNER);
    const sent = await wa.waitFor((m) => m.type === "template" && m.to === OWNER);
    expect(res.status).toBe(200);
    const template = sent.payload["template"] as { name: string; language: { code: string } };
    expect(template.name).toBe("hermes_reply");
    expect(template.language.code).toBe("en_GB");
    expect(sent.text).toBe("Your *report* is ready. · See the attachment.");
  }, 30_000);

  it("hermes send writes to a number without the agent, as a template when no window is open", async () => {
    const sent = await runHermes(["send", "-t", "whatsapp_cloud:15557770003", "Backup **finished**."], {
      ...h,
      env,
    });
    expect(sent.code, sent.stderr).toBe(0);
    const msg = await wa.waitFor((m) => m.to === "15557770003");
    expect(msg.type).toBe("template");
    expect(msg.text).toBe("Backup *finished*.");
    llm.enqueue(reply().text("Still listening."));
    await text(OWNER, "ping");
    await wa.waitFor((m) => m.text === "Still listening.");
  }, 30_000);
});

describe("a personal WhatsApp account through the built CLI", () => {
  it("loads the real baileys from node_modules and says the account is not paired yet", async () => {
    const home = tempHome(fakeProviderConfig(llm.url));
    const personal = await startGatewayProcess(home, { WHATSAPP_ENABLED: "true" });
    try {
      expect(personal.stderr()).toMatch(/whatsapp: not started: WhatsApp is not paired yet/);
      expect(personal.stderr()).not.toMatch(/could not be loaded/);
    } finally {
      await personal.stop();
    }
  }, 60_000);
});
