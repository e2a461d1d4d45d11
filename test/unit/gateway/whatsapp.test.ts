/**
 * The personal-account (baileys) adapter at baileys' socket/event seam: a fake `makeWASocket`
 * (its `ev` emitter, `sendMessage`) stands where baileys would be, since WhatsApp's wire protocol
 * cannot be faked faithfully.
 */
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type {
  AdapterHandlers,
  InboundMessage,
  PlatformAdapter,
} from "../../../src/gateway/platforms/types.js";
import { createWhatsAppAdapter } from "../../../src/gateway/platforms/whatsapp.js";
import {
  memoryWebhookDeliveries,
  type WebhookDeliveries,
} from "../../../src/state/gateway/webhook-deliveries.js";
import { fakeBaileys } from "../../support/fake-baileys.js";

const ME = "15550001111@s.whatsapp.net";
const FRIEND = "15551230001@s.whatsapp.net";
const GROUP = "1203630@g.us";

let adapters: PlatformAdapter[] = [];
afterEach(async () => {
  for (const a of adapters) await a.disconnect();
  adapters = [];
});

function setup(
  env: Record<string, string> = {},
  fakeOptions: Parameters<typeof fakeBaileys>[0] = {},
  deliveries?: WebhookDeliveries,
) {
  const home = mkdtempSync(join(tmpdir(), "hermes-wa-"));
  const fake = fakeBaileys(fakeOptions);
  const adapter = createWhatsAppAdapter(
    {
      home,
      env,
      settings: {},
      mediaDir: join(home, "cache", "media"),
      maxInboundMediaBytes: 1_000_000,
      ...(deliveries ? { deliveries } : {}),
    },
    { load: async () => fake, reconnectDelayMs: () => 5, openTimeoutMs: 2000 },
  );
  adapters.push(adapter);
  const messages: InboundMessage[] = [];
  const errors: string[] = [];
  let wake: (() => void) | undefined;
  const handlers: AdapterHandlers = {
    onMessage: (m) => {
      messages.push(m);
      wake?.();
    },
    onAction: () => undefined,
    onError: (e) => {
      errors.push(e);
      wake?.();
    },
  };
  const waitUntil = (check: () => boolean) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out; messages ${JSON.stringify(messages)} errors ${errors}`)),
        5000,
      );
      wake = () => {
        if (check()) {
          clearTimeout(timer);
          resolve();
        }
      };
      wake();
    });
  return { home, fake, adapter, handlers, messages, errors, waitUntil };
}

describe("the WhatsApp personal-account adapter", () => {
  it("in self-chat mode takes what you type in your own chat and marks its replies", async () => {
    const t = setup();
    await t.adapter.connect(t.handlers);
    const sock = t.fake.current();
    sock.receive({
      key: { remoteJid: ME, fromMe: true, id: "A1" },
      message: { conversation: "what's on today?" },
      pushName: "Me",
    });
    // Someone else writing to you is not for the agent in self-chat mode.
    sock.receive({
      key: { remoteJid: FRIEND, fromMe: false, id: "A2" },
      message: { conversation: "hi there" },
    });
    await t.waitUntil(() => t.messages.length === 1);
    expect(t.messages[0]).toMatchObject({
      text: "what's on today?",
      source: { platform: "whatsapp", chatType: "dm", chatId: ME, userId: "15550001111" },
    });
    const { messageId } = await t.adapter.send({ chatId: ME }, "## Plan\n**Gym** at 6");
    const out = await t.fake.waitForSent((s) => s.id === messageId);
    expect(out.content["text"]).toBe("☤ *Hermes Agent*\n────────────\n*Plan*\n*Gym* at 6");
    // The reply comes back from WhatsApp as a fromMe message in the same chat: not a new turn.
    await new Promise((r) => setImmediate(r));
    expect(t.messages).toHaveLength(1);
    await t.adapter.edit({ chatId: ME }, messageId, "**Gym** at 7");
    const edit = t.fake.sent.at(-1);
    expect(edit?.content).toMatchObject({
      text: "☤ *Hermes Agent*\n────────────\n*Gym* at 7",
      edit: { id: messageId, fromMe: true },
    });
  });

  it("in bot mode answers others, and in groups only when mentioned if that is required", async () => {
    const t = setup({ WHATSAPP_MODE: "bot", WHATSAPP_REQUIRE_MENTION: "true" });
    await t.adapter.connect(t.handlers);
    const sock = t.fake.current();
    sock.receive({
      key: { remoteJid: FRIEND, fromMe: false, id: "B1" },
      message: { extendedTextMessage: { text: "hello" } },
      pushName: "Ann",
    });
    sock.receive({
      key: { remoteJid: GROUP, participant: FRIEND, id: "B2" },
      message: { conversation: "chatter" },
    });
    sock.receive({
      key: { remoteJid: GROUP, participant: FRIEND, id: "B3" },
      message: {
        extendedTextMessage: {
          text: "@15550001111 help",
          contextInfo: { mentionedJid: ["15550001111@s.whatsapp.net"] },
        },
      },
    });
    sock.receive({
      key: { remoteJid: "status@broadcast", participant: FRIEND, id: "B4" },
      message: { conversation: "story" },
    });
    sock.receive({
      key: { remoteJid: FRIEND, fromMe: true, id: "B5" },
      message: { conversation: "typed on my phone" },
    });
    await t.waitUntil(() => t.messages.length === 2);
    expect(t.messages.map((m) => m.text)).toEqual(["hello", "@15550001111 help"]);
    expect(t.messages[0]?.source).toMatchObject({ chatType: "dm", userId: "15551230001", userName: "Ann" });
    expect(t.messages[1]?.source).toMatchObject({ chatType: "group", chatId: GROUP, userId: "15551230001" });
    expect(t.messages[1]?.mentioned).toBe(true);
    const { messageId } = await t.adapter.send({ chatId: FRIEND }, "Hi **Ann**");
    expect(t.fake.sent.find((s) => s.id === messageId)?.content["text"]).toBe("Hi *Ann*");
    await t.adapter.typing({ chatId: FRIEND });
    expect(t.fake.presence).toContainEqual({ type: "composing", jid: FRIEND });
  });

  it("downloads media into the cache and uploads files natively", async () => {
    const t = setup({ WHATSAPP_MODE: "bot" });
    await t.adapter.connect(t.handlers);
    const png = Buffer.from("89504e470d0a1a0a", "hex");
    t.fake.current().receive({
      key: { remoteJid: FRIEND, id: "M1" },
      message: { imageMessage: { mimetype: "image/png", caption: "what is this?" } },
      bytes: png,
    } as never);
    t.fake.current().receive({
      key: { remoteJid: FRIEND, id: "M2" },
      message: { audioMessage: { mimetype: "audio/ogg; codecs=opus", ptt: true } },
    });
    await t.waitUntil(() => t.messages.length === 2);
    const [image, voice] = t.messages;
    expect(image?.text).toBe("what is this?");
    expect(image?.media?.[0]?.kind).toBe("photo");
    expect(readFileSync(image?.media?.[0]?.path ?? "")).toEqual(png);
    expect(statSync(image?.media?.[0]?.path ?? "").mode & 0o777).toBe(0o600);
    // A download that fails still reaches the agent, saying so.
    expect(voice?.text).toMatch(/could not be downloaded: media expired/);
    const file = join(t.home, "chart.png");
    writeFileSync(file, png);
    const sent = await t.adapter.sendMedia(
      { chatId: FRIEND },
      { kind: "photo", path: file, caption: "**chart**" },
    );
    const media = t.fake.sent.find((s) => s.id === sent.messageId)?.content;
    expect(media?.["image"]).toEqual(png);
    expect(media?.["caption"]).toBe("*chart*");
    await expect(
      t.adapter.sendMedia({ chatId: FRIEND }, { kind: "document", path: join(t.home, "missing.pdf") }),
    ).rejects.toThrow(/does not exist/);
  });

  it("reconnects after a dropped connection, taking the messages that arrived meanwhile once", async () => {
    const t = setup({ WHATSAPP_MODE: "bot" });
    await t.adapter.connect(t.handlers);
    const first = t.fake.current();
    first.receive({
      key: { remoteJid: FRIEND, id: "R1" },
      message: { conversation: "before" },
      messageTimestamp: Math.floor(Date.now() / 1000),
    });
    await t.waitUntil(() => t.messages.length === 1);
    first.drop(428);
    await expect(t.adapter.send({ chatId: FRIEND }, "lost?")).rejects.toThrow(/not connected right now/);
    const second = await t.fake.waitForSocket(2);
    await t.waitUntil(() => t.errors.some((e) => /reconnecting/.test(e)));
    // WhatsApp hands over what came while we were away, and may repeat one we already took.
    const now = Math.floor(Date.now() / 1000);
    second.receive(
      { key: { remoteJid: FRIEND, id: "R1" }, message: { conversation: "before" }, messageTimestamp: now },
      "append",
    );
    second.receive(
      {
        key: { remoteJid: FRIEND, id: "R2" },
        message: { conversation: "while away" },
        messageTimestamp: now,
      },
      "append",
    );
    // Old history replayed on connect is not a message to answer.
    second.receive(
      {
        key: { remoteJid: FRIEND, id: "R0" },
        message: { conversation: "last year" },
        messageTimestamp: now - 86400 * 365,
      },
      "append",
    );
    await t.waitUntil(() => t.messages.length === 2);
    await new Promise((r) => setImmediate(r));
    expect(t.messages.map((m) => m.text)).toEqual(["before", "while away"]);
    expect(first.ended || t.fake.sockets.length === 2).toBe(true);
    await t.adapter.send({ chatId: FRIEND }, "back");
    expect(t.fake.sent.at(-1)?.content["text"]).toBe("back");
  });

  it("stops and says to pair again when WhatsApp logs the device out", async () => {
    const t = setup({ WHATSAPP_MODE: "bot" });
    await t.adapter.connect(t.handlers);
    t.fake.current().drop(401);
    await t.waitUntil(() => t.errors.some((e) => /logged this device out.*hermes whatsapp/.test(e)));
    expect(t.fake.sockets).toHaveLength(1);
  });

  it("refuses to start unpaired, keeps the session keys private, and names the install when baileys is missing", async () => {
    const t = setup({}, { paired: false });
    await expect(t.adapter.connect(t.handlers)).rejects.toThrow(/not paired yet.*hermes whatsapp/);
    const dir = join(t.home, "whatsapp", "session");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "creds.json")).mode & 0o777).toBe(0o600);
    const home = mkdtempSync(join(tmpdir(), "hermes-wa-"));
    const missing = createWhatsAppAdapter(
      { home, env: {}, settings: {}, mediaDir: home, maxInboundMediaBytes: 1 },
      {
        load: async () =>
          (await import("../../../src/gateway/platforms/whatsapp-baileys.js")).loadBaileys(
            () => import("baileys-not-installed-anywhere" as string),
          ),
      },
    );
    await expect(missing.connect(t.handlers)).rejects.toThrow(/optional package baileys.*npm install/);
  });
});

describe("the linked WhatsApp device on several gateway instances", () => {
  it("a standby instance (send-only) hands nothing to the agent; the lease holder does, and takes over on hand-over", async () => {
    const { coordinatorHub } = await import("../../support/coordinator-hub.js");
    const { LeasedConnection } = await import("../../../src/gateway/coordination/leased-connection.js");
    const hub = coordinatorHub({ leaseTtlMs: 500 });
    // Each instance has its own home and its own linked device of the one account.
    const a = setup({ WHATSAPP_MODE: "bot" });
    const b = setup({ WHATSAPP_MODE: "bot" });
    const connections: InstanceType<typeof LeasedConnection>[] = [];
    const states: string[] = [];
    for (const [id, t] of [
      ["a", a],
      ["b", b],
    ] as const) {
      const connection = new LeasedConnection({
        coordinator: hub.join(id),
        lease: "whatsapp:linked-device",
        adapter: t.adapter,
        handlers: t.handlers,
        ttlMs: 500,
        onState: (state) => states.push(`${id} ${state}`),
      });
      await connection.start();
      connections.push(connection);
    }
    const [ca, cb] = connections as [
      InstanceType<typeof LeasedConnection>,
      InstanceType<typeof LeasedConnection>,
    ];
    const deadline = Date.now() + 5000;
    while (!ca.active && !cb.active && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const [holder, standby, standbyConnection] = ca.active ? [a, b, cb] : [b, a, ca];
    expect(standbyConnection.active).toBe(false);
    // Both devices see the message (WhatsApp fans out to every linked device); one answers.
    for (const t of [a, b])
      t.fake.current().receive({
        key: { remoteJid: FRIEND, fromMe: false, id: "L1" },
        message: { conversation: "who answers?" },
      });
    await holder.waitUntil(() => holder.messages.length === 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(standby.messages).toHaveLength(0);
    // Send-only still sends: the standby answers a chat whose turn it runs.
    const { messageId } = await standby.adapter.send({ chatId: FRIEND }, "from the standby");
    expect((await standby.fake.waitForSent((s) => s.id === messageId)).content["text"]).toBe(
      "from the standby",
    );
    // The holder drains: the standby takes the lease and receives from then on, the old holder no more.
    await (holder === a ? ca : cb).handOver();
    const until = Date.now() + 5000;
    while (!standbyConnection.active && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(standbyConnection.active).toBe(true);
    for (const t of [a, b])
      t.fake.current().receive({
        key: { remoteJid: FRIEND, fromMe: false, id: "L2" },
        message: { conversation: "and now?" },
      });
    await standby.waitUntil(() => standby.messages.length === 1);
    expect(standby.messages[0]?.text).toBe("and now?");
    await new Promise((r) => setTimeout(r, 50));
    expect(holder.messages.map((m) => m.text)).toEqual(["who answers?"]);
    await standbyConnection.handOver();
    expect(states.filter((s) => s.endsWith("receiving"))).toHaveLength(2);
  });
});

describe("a linked WhatsApp taken over from a dead holder", () => {
  it("answers what arrived after the holder died, and not what the holder already took", async () => {
    const { coordinatorHub } = await import("../../support/coordinator-hub.js");
    const { LeasedConnection } = await import("../../../src/gateway/coordination/leased-connection.js");
    const hub = coordinatorHub({ leaseTtlMs: 300 });
    // The database's table of taken ids, shared by both instances.
    const taken = memoryWebhookDeliveries();
    const a = setup({ WHATSAPP_MODE: "bot" }, {}, taken);
    const b = setup({ WHATSAPP_MODE: "bot" }, {}, taken);
    const lease = "whatsapp:linked-device";
    const ca = new LeasedConnection({
      coordinator: hub.join("a"),
      lease,
      adapter: a.adapter,
      handlers: a.handlers,
      ttlMs: 300,
    });
    await ca.start();
    const until = async (check: () => boolean) => {
      const deadline = Date.now() + 5000;
      while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(check()).toBe(true);
    };
    await until(() => ca.active);
    const cb = new LeasedConnection({
      coordinator: hub.join("b"),
      lease,
      adapter: b.adapter,
      handlers: b.handlers,
      ttlMs: 300,
    });
    await cb.start();
    const both = (id: string, text: string, devices = [a, b]) => {
      for (const t of devices)
        t.fake
          .current()
          .receive({ key: { remoteJid: FRIEND, fromMe: false, id }, message: { conversation: text } });
    };
    both("T1", "taken by a");
    await a.waitUntil(() => a.messages.length === 1);
    // A dies (no drain); a message comes while nobody holds the device: only B's device sees it.
    hub.kill("a");
    both("T2", "sent while nobody held it", [b]);
    await until(() => cb.active);
    await b.waitUntil(() => b.messages.length === 1);
    await new Promise((r) => setTimeout(r, 100));
    expect(b.messages.map((m) => m.text)).toEqual(["sent while nobody held it"]);
    expect(a.messages.map((m) => m.text)).toEqual(["taken by a"]);
    await cb.handOver();
  });
});

describe("pairing a personal account (hermes whatsapp)", () => {
  it("shows the QR code, survives WhatsApp's restart after the scan and reports the linked number", async () => {
    const { pairWhatsApp } = await import("../../../src/gateway/platforms/whatsapp-pair.js");
    const home = mkdtempSync(join(tmpdir(), "hermes-wa-"));
    const fake = fakeBaileys({ paired: false, openOn: "never" });
    const qrs: string[] = [];
    const linked = pairWhatsApp({
      baileys: fake,
      dir: join(home, "whatsapp", "session"),
      showQr: (q) => qrs.push(q),
      say: () => undefined,
    });
    const first = await fake.waitForSocket(1);
    first.ev.emit("connection.update", { qr: "2@abc,def,ghi" });
    expect(qrs).toEqual(["2@abc,def,ghi"]);
    first.drop(515);
    const second = await fake.waitForSocket(2);
    second.user = { id: "15550001111:9@s.whatsapp.net" };
    second.ev.emit("connection.update", { connection: "open" });
    await expect(linked).resolves.toBe("15550001111");
    expect(second.ended).toBe(true);
    expect(statSync(join(home, "whatsapp", "session")).mode & 0o777).toBe(0o700);
  });

  it("asks for a pairing code with --phone, and refuses what is not a number", async () => {
    const { pairWhatsApp } = await import("../../../src/gateway/platforms/whatsapp-pair.js");
    const home = mkdtempSync(join(tmpdir(), "hermes-wa-"));
    const fake = fakeBaileys({ paired: false, openOn: "never" });
    const said: string[] = [];
    const asked: string[] = [];
    const linked = pairWhatsApp({
      baileys: fake,
      dir: join(home, "s"),
      phone: "+1 555 000 1111",
      showQr: () => undefined,
      say: (l) => said.push(l),
    });
    const sock = await fake.waitForSocket(1);
    sock.requestPairingCode = async (n) => {
      asked.push(n);
      return "ABCD-EFGH";
    };
    sock.ev.emit("connection.update", { qr: "2@x" });
    sock.ev.emit("connection.update", { qr: "2@y" });
    await new Promise((r) => setImmediate(r));
    expect(asked).toEqual(["15550001111"]);
    expect(said.join("\n")).toContain("ABCD-EFGH");
    sock.user = { id: "15550001111@s.whatsapp.net" };
    sock.ev.emit("connection.update", { connection: "open" });
    await expect(linked).resolves.toBe("15550001111");
    await expect(
      pairWhatsApp({
        baileys: fake,
        dir: join(home, "t"),
        phone: "call me",
        showQr: () => undefined,
        say: () => undefined,
      }),
    ).rejects.toThrow(/not a phone number/);
  });

  it("fails with a clear line when the QR code cannot be drawn", async () => {
    const { pairWhatsApp } = await import("../../../src/gateway/platforms/whatsapp-pair.js");
    const home = mkdtempSync(join(tmpdir(), "hermes-wa-"));
    const fake = fakeBaileys({ paired: false, openOn: "never" });
    const linked = pairWhatsApp({
      baileys: fake,
      dir: join(home, "s"),
      showQr: () => {
        throw new Error("cannot draw the QR code: install qrencode");
      },
      say: () => undefined,
    });
    const sock = await fake.waitForSocket(1);
    sock.ev.emit("connection.update", { qr: "2@x" });
    await expect(linked).rejects.toThrow(/install qrencode/);
  });
});
