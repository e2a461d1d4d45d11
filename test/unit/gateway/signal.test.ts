import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSignalAdapter } from "../../../src/gateway/platforms/signal.js";
import type { InboundMessage } from "../../../src/gateway/platforms/types.js";
import { type FakeSignalCli, startFakeSignalCli } from "../../support/fake-signal-cli.js";

let fake: FakeSignalCli;
const dir = mkdtempSync(join(tmpdir(), "signal-unit-"));
const make = (env: Record<string, string> = {}, maxInboundMediaBytes = 1e6) =>
  createSignalAdapter(
    {
      home: dir,
      env: { SIGNAL_HTTP_URL: fake.url, SIGNAL_ACCOUNT: fake.account, ...env },
      settings: {},
      mediaDir: join(dir, "media"),
      maxInboundMediaBytes,
    },
    { retryInitialMs: 20 },
  );
const handlers = (messages: InboundMessage[] = [], errors: string[] = []) => ({
  onMessage: (m: InboundMessage) => messages.push(m),
  onAction: () => undefined,
  onError: (e: string) => errors.push(e),
});
const until = async (check: () => boolean, what: string) => {
  const end = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
};

beforeAll(async () => {
  fake = await startFakeSignalCli();
});
afterAll(async () => {
  await fake.stop();
});

describe("the Signal adapter", () => {
  it("refuses to start without SIGNAL_ACCOUNT or a reachable daemon, saying what to do", async () => {
    const noAccount = make({ SIGNAL_ACCOUNT: "" });
    await expect(noAccount.connect(handlers())).rejects.toThrow(/SIGNAL_ACCOUNT is not set/);
    const unreachable = make({ SIGNAL_HTTP_URL: "http://127.0.0.1:9" });
    await expect(unreachable.connect(handlers())).rejects.toThrow(
      /could not reach signal-cli at http:\/\/127\.0\.0\.1:9.*daemon --http/,
    );
  });

  it("reports a recipient Signal does not know and a daemon error as PlatformErrors", async () => {
    const a = make();
    await a.connect(handlers(), { receive: false });
    fake.unregistered.add("+19990000000");
    await expect(a.send({ chatId: "+19990000000" }, "hi")).rejects.toThrow(
      /UNREGISTERED_FAILURE.*not registered/,
    );
    await expect(a.send({ chatId: "" }, "hi")).rejects.toThrow(/without a recipient/);
    await expect(a.send({ chatId: "+1" }, "   ")).rejects.toThrow(/empty message/);
    const wrong = make({ SIGNAL_ACCOUNT: "+10000000000" });
    await wrong.connect(handlers(), { receive: false });
    await expect(wrong.send({ chatId: "+1" }, "hi")).rejects.toThrow(
      /signal-cli refused send: Specified account does not exist/,
    );
    await a.disconnect();
    await wrong.disconnect();
  });

  it("sends to a group named as hermes send spells it, and edits with editTimestamp", async () => {
    const a = make();
    await a.connect(handlers(), { receive: false });
    const sent = await a.send({ chatId: "group", threadId: "R3JvdXA=" }, "to the group");
    expect(fake.calls.at(-1)?.params).toMatchObject({ groupId: "R3JvdXA=", message: "to the group" });
    await a.edit({ chatId: "group:R3JvdXA=" }, sent.messageId, "fixed");
    expect(fake.calls.at(-1)?.params).toMatchObject({
      groupId: "R3JvdXA=",
      message: "fixed",
      editTimestamp: Number(sent.messageId.split(":")[0]),
    });
    await expect(a.edit({ chatId: "+1" }, "nonsense", "x")).rejects.toThrow(/not a Signal message id/);
    await a.disconnect();
  });

  it("refuses missing and empty files before calling the daemon", async () => {
    const a = make();
    await a.connect(handlers(), { receive: false });
    const empty = join(dir, "empty.txt");
    writeFileSync(empty, "");
    await expect(
      a.sendMedia({ chatId: "+1" }, { kind: "document", path: join(dir, "nope.pdf") }),
    ).rejects.toThrow(/does not exist/);
    await expect(a.sendMedia({ chatId: "+1" }, { kind: "document", path: empty })).rejects.toThrow(
      /is empty/,
    );
    await a.disconnect();
  });

  it("notes an attachment over the inbound limit instead of downloading it", async () => {
    const messages: InboundMessage[] = [];
    const a = make({}, 10);
    await a.connect(handlers(messages));
    fake.dm("+15551112222", "big file", {
      attachments: [fake.attachment(Buffer.alloc(64), "application/pdf", "big.pdf")],
    });
    await until(() => messages.length === 1, "the message");
    expect(messages[0]?.media).toBeUndefined();
    expect(messages[0]?.text).toMatch(
      /big file\n\n\[an attachment \(big\.pdf\) could not be downloaded: .*over the 10-byte limit/,
    );
    await a.disconnect();
  });

  it("keeps reconnecting while the daemon refuses the stream, and stops on disconnect", async () => {
    const errors: string[] = [];
    const messages: InboundMessage[] = [];
    const a = make();
    await a.connect(handlers(messages, errors));
    const before = fake.connections.length;
    fake.dropStreams();
    await until(() => fake.connections.length > before, "a reconnect");
    expect(errors.some((e) => /event stream lost .*reconnecting in/.test(e))).toBe(true);
    fake.dm("+15551112222", "after reconnect");
    await until(() => messages.some((m) => m.text === "after reconnect"), "the message");
    // disconnect resolves only when the stream loop has ended: nothing reconnects after it.
    await a.disconnect();
    const after = fake.connections.length;
    fake.dm("+15551112222", "after disconnect");
    await a.disconnect();
    expect(fake.connections.length).toBe(after);
    expect(messages.some((m) => m.text === "after disconnect")).toBe(false);
  });
});
