import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChatRelay } from "../../../../src/gateway/coordination/chat-relay.js";
import { fromWire, isChatInput, toWire } from "../../../../src/gateway/coordination/relay-wire.js";
import { ReloadBus } from "../../../../src/gateway/coordination/reloads.js";
import { localCoordinator } from "../../../../src/state/coordination.js";
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
      bus.on("webhooks", () => void ran.push(`webhooks@${i}`));
    });
    await buses[1]?.announce("webhooks");
    await until(() => ran.length === 3, "three refreshes");
    expect(ran.sort()).toEqual(["webhooks@0", "webhooks@1", "webhooks@2"]);
    for (const bus of buses) bus.close();
  });

  it("a refresh asked for again while it runs runs once more afterwards, never twice at once; failures are reported", async () => {
    const bus = new ReloadBus(localCoordinator(), (line) => problems.push(line));
    const problems: string[] = [];
    let running = 0;
    let most = 0;
    let runs = 0;
    bus.on("webhooks", async () => {
      running++;
      most = Math.max(most, running);
      runs++;
      await new Promise((r) => setTimeout(r, 30));
      running--;
    });
    bus.on("webhooks", () => {
      throw new Error("mirror unreachable");
    });
    for (let i = 0; i < 5; i++) await bus.announce("webhooks");
    await new Promise((r) => setTimeout(r, 5));
    await bus.settled();
    expect(most).toBe(1);
    expect(runs).toBeGreaterThanOrEqual(1);
    expect(runs).toBeLessThanOrEqual(2);
    expect(problems.some((p) => p.includes("reload webhooks: mirror unreachable"))).toBe(true);
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
