import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChatRelay } from "../../../../src/gateway/coordination/chat-relay.js";
import { fromWire, isChatInput, toWire } from "../../../../src/gateway/coordination/relay-wire.js";
import { ReloadBus } from "../../../../src/gateway/coordination/reloads.js";
import type { InboundMessage } from "../../../../src/gateway/platforms/types.js";
import {
  type CoordinationMessage,
  type Coordinator,
  localCoordinator,
} from "../../../../src/state/coordination.js";
import { coordinatorHub } from "../../../support/coordinator-hub.js";

const until = async (probe: () => boolean, what: string) => {
  const end = Date.now() + 5000;
  while (!probe()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

describe("reloads across instances", () => {
  it("a reload announced on one instance runs the refresh on every instance, the announcer included", async () => {
    const hub = coordinatorHub();
    const buses = ["a", "b", "c"].map((id) => new ReloadBus(hub.join(id)));
    const ran: string[] = [];
    buses.forEach((bus, i) => {
      bus.on("skills", () => void ran.push(`skills@${i}`));
      bus.on("webhooks", () => void ran.push(`webhooks@${i}`));
    });
    await buses[1]?.announce("skills");
    await until(() => ran.length === 3, "three refreshes");
    expect(ran.sort()).toEqual(["skills@0", "skills@1", "skills@2"]);
    for (const bus of buses) bus.close();
  });

  it("a refresh asked for again while it runs runs once more afterwards, never twice at once; failures are reported", async () => {
    const bus = new ReloadBus(localCoordinator(), (line) => problems.push(line));
    const problems: string[] = [];
    let running = 0;
    let most = 0;
    let runs = 0;
    bus.on("memory", async () => {
      running++;
      most = Math.max(most, running);
      runs++;
      await new Promise((r) => setTimeout(r, 30));
      running--;
    });
    bus.on("memory", () => {
      throw new Error("mirror unreachable");
    });
    for (let i = 0; i < 5; i++) await bus.announce("memory");
    await new Promise((r) => setTimeout(r, 5));
    await bus.settled();
    expect(most).toBe(1);
    expect(runs).toBeGreaterThanOrEqual(1);
    expect(runs).toBeLessThanOrEqual(2);
    expect(problems.some((p) => p.includes("reload memory: mirror unreachable"))).toBe(true);
    bus.close();
  });
});

describe("messages crossing to another instance", () => {
  it("carries a user's file inside the message and writes it into the receiver's own media cache", async () => {
    const root = mkdtempSync(join(tmpdir(), "hermes-wire-"));
    const file = join(root, "note.ogg");
    writeFileSync(file, Buffer.from([1, 2, 3, 4]));
    const wire = await toWire({
      source: { platform: "telegram", chatType: "dm", chatId: "7", userId: "7" },
      text: "listen",
      media: [{ kind: "voice", path: file, fileName: "../../etc/passwd", mimeType: "audio/ogg" }],
    });
    const json = JSON.parse(JSON.stringify(wire));
    const back = await fromWire(json, join(root, "other-instance", "media"));
    const media = back.media?.[0];
    expect(media?.kind).toBe("voice");
    expect(dirname(media?.path ?? "")).toBe(join(root, "other-instance", "media"));
    expect(media?.path).not.toContain("..");
    expect(readFileSync(media?.path ?? "")).toEqual(Buffer.from([1, 2, 3, 4]));
    expect(statSync(media?.path ?? "").mode & 0o777).toBe(0o600);
  });

  it("a file that cannot be carried becomes a note in the text, not a silent loss", async () => {
    const wire = await toWire({
      source: { platform: "telegram", chatType: "dm", chatId: "7", userId: "7" },
      text: "see attached",
      media: [{ kind: "document", path: "/nonexistent/report.pdf", fileName: "report.pdf" }],
    });
    const back = await fromWire(wire, mkdtempSync(join(tmpdir(), "hermes-wire-")));
    expect(back.media).toBeUndefined();
    expect(back.text).toMatch(/^see attached\n\[A document \(report\.pdf\) was not carried over/);
  });

  it("ignores forwarded payloads of the wrong shape", () => {
    expect(
      isChatInput({ key: "k", platform: "telegram", hops: 1, message: { source: { chatId: "1" } } }),
    ).toBe(false);
    expect(isChatInput("chat.input")).toBe(false);
    expect(
      isChatInput({
        key: "k",
        platform: "telegram",
        hops: 0,
        message: { source: { chatId: "1", userId: "2" } },
      }),
    ).toBe(true);
  });
});

describe("a cached agent after another instance ran the chat", () => {
  it("is dropped when the stored session grew or the chat points at another session, kept otherwise", async () => {
    const hub = coordinatorHub();
    const relay = new ChatRelay(hub.join("a"), { home: mkdtempSync(join(tmpdir(), "hermes-relay-")) });
    let count = 4;
    let current = "s1";
    const forgotten: string[] = [];
    const chat = { id: "s1", loadRecord: async () => ({ messageCount: count }) };
    relay.attach(() => undefined, {
      cached: async () => ({ chat, current }),
      forget: (key) => forgotten.push(key),
    });
    const message = {
      source: { platform: "telegram", chatType: "dm" as const, chatId: "1", userId: "1" },
      text: "x",
    };
    const turn = async () => {
      const release = await relay.admit("k", message);
      release?.();
      await until(() => hub.chatHolder("k") === undefined, "released");
    };
    await turn(); // first claim here: nothing remembered yet, so the cached agent is not trusted
    expect(forgotten).toEqual(["k"]);
    await turn(); // nothing changed since this instance let it go
    expect(forgotten).toEqual(["k"]);
    count = 6; // another instance ran a turn in the same session
    await turn();
    expect(forgotten).toEqual(["k", "k"]);
    current = "s2"; // another instance started a new session for the chat
    await turn();
    expect(forgotten).toEqual(["k", "k", "k"]);
    relay.close();
  });
});

describe("a forwarded message read back late", () => {
  it("is left to its sender (which routes it again) when older than half the receipt wait, taken otherwise", async () => {
    const base = localCoordinator();
    let deliver: ((m: CoordinationMessage) => void) | undefined;
    const sent: Array<[string, string, unknown]> = [];
    const coordinator: Coordinator = {
      ...base,
      subscribe(handler) {
        deliver = handler;
        return () => undefined;
      },
      async send(to, topic, payload) {
        sent.push([to, topic, payload]);
      },
    };
    const lines: string[] = [];
    const relay = new ChatRelay(coordinator, {
      home: mkdtempSync(join(tmpdir(), "hermes-relay-")),
      receiptWaitMs: 3_000,
      log: (line) => lines.push(line),
    });
    const handled: string[] = [];
    relay.attach(() => ({ onMessage: (m) => void handled.push(m.text), onAction: () => undefined }));
    const input = (text: string, id: string) => ({
      key: "telegram:1",
      platform: "telegram",
      hops: 1,
      id,
      message: { source: { platform: "telegram", chatId: "1", userId: "7", chatType: "dm" as const }, text },
    });
    deliver!({ topic: "chat.input", from: "b", payload: input("stale", "s1"), ageMs: 2_000 });
    deliver!({ topic: "chat.input", from: "b", payload: input("late but in time", "s2"), ageMs: 900 });
    deliver!({ topic: "chat.input", from: "b", payload: input("live", "s3") });
    await until(() => handled.length === 2, "two handled");
    expect(handled).toEqual(["late but in time", "live"]);
    expect(sent.map(([to, topic, p]) => [to, topic, (p as { id: string }).id])).toEqual([
      ["b", "chat.receipt", "s2"],
      ["b", "chat.receipt", "s3"],
    ]);
    expect(lines.join("\n")).toMatch(/arrived 2000 ms late; its sender routes it again/);
    relay.close();
  });
});

describe("a forwarded message sent twice", () => {
  it("is confirmed each time and taken once; passed on and sent back, it is taken again", async () => {
    const base = localCoordinator();
    let deliver: ((m: CoordinationMessage) => void) | undefined;
    const sent: Array<[string, string, { id?: string }]> = [];
    let holder: string | undefined;
    const coordinator: Coordinator = {
      ...base,
      subscribe(handler) {
        deliver = handler;
        return () => undefined;
      },
      async send(to, topic, payload) {
        sent.push([to, topic, payload as { id?: string }]);
      },
      async claimChat(key) {
        return holder ? { heldBy: holder } : base.claimChat(key);
      },
    };
    const relay = new ChatRelay(coordinator, { home: mkdtempSync(join(tmpdir(), "hermes-relay-")) });
    const handled: InboundMessage[] = [];
    relay.attach(() => ({ onMessage: (m) => void handled.push(m), onAction: () => undefined }));
    const input = (id: string) => ({
      key: "telegram:1",
      platform: "telegram",
      hops: 1,
      id,
      message: {
        source: { platform: "telegram", chatId: "1", userId: "7", chatType: "dm" as const },
        text: id,
      },
    });
    deliver!({ topic: "chat.input", from: "b", payload: input("m1") });
    await until(() => handled.length === 1, "the first copy handled");
    // The sender gave up waiting for the receipt and sent it again: confirmed, not handled twice.
    deliver!({ topic: "chat.input", from: "b", payload: input("m1") });
    await until(() => sent.filter(([, topic]) => topic === "chat.receipt").length === 2, "two receipts");
    await new Promise((r) => setTimeout(r, 50));
    expect(handled.map((m) => m.text)).toEqual(["m1"]);
    // This instance passes the message on (the chat moved to "c"), with the id it came with...
    holder = "c";
    expect(await relay.admit("telegram:1", handled[0]!)).toBeNull();
    const passed = sent.find(([to, topic]) => to === "c" && topic === "chat.input");
    expect(passed?.[2].id).toBe("m1");
    // ...and when it comes back here, it is taken again.
    deliver!({ topic: "chat.input", from: "c", payload: input("m1") });
    await until(() => handled.length === 2, "the message taken again after passing it on");
    relay.close();
  });
});
