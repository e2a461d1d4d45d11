/**
 * A chat's `/verbose` and `/yolo` as the router keeps them: from config at first, the shared
 * store's choice over them when several instances share one (what another instance stored is
 * applied before a command or turn here), saved only when a command changed them, and a store that
 * fails leaves the chat's setting working here with the problem said. Without a store (SQLite)
 * nothing is read or written.
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ChatSession } from "../../../src/agent/chat-session.js";
import type { HermesConfig } from "../../../src/config/defaults.js";
import { ChatToggles } from "../../../src/gateway/messaging/chat-toggles.js";
import type { Conversation } from "../../../src/gateway/messaging/router-types.js";
import { VoiceReplies } from "../../../src/gateway/messaging/voice-reply.js";
import type { MessageSource, PlatformAdapter } from "../../../src/gateway/platforms/types.js";
import type { ChatSettingsRecords, StoredChatSettings } from "../../../src/state/gateway/shared-approvals.js";

function memoryRecords(): ChatSettingsRecords & {
  rows: Map<string, StoredChatSettings>;
  voices: Map<string, string>;
  reads: number;
} {
  const rows = new Map<string, StoredChatSettings>();
  const voices = new Map<string, string>();
  const store = {
    rows,
    voices,
    reads: 0,
    async voiceMode(chat: string) {
      return voices.get(chat);
    },
    async setVoiceMode(chat: string, mode: string) {
      voices.set(chat, mode);
    },
    async get(key: string, voiceChat?: string) {
      store.reads++;
      const row = rows.get(key);
      const voice = voiceChat === undefined ? undefined : voices.get(voiceChat);
      if (!row && voice === undefined) return undefined;
      return { ...(row ?? {}), ...(voice !== undefined ? { voice } : {}) };
    },
    async set(key: string, settings: StoredChatSettings) {
      rows.set(key, { ...settings });
    },
  };
  return store;
}

const conversation = (key = "agent:main:telegram:dm:1"): Conversation =>
  ({ key, platform: "telegram", source: {}, busy: false, queue: [] }) as unknown as Conversation;
const chat = (yolo = false) => ({ agent: { yolo } }) as unknown as ChatSession;
const config = { display: { tool_progress: "new" } };

describe("per-chat toggles", () => {
  it("a change made through one instance holds on the other", async () => {
    const shared = memoryRecords();
    const a = new ChatToggles(config, shared, () => undefined);
    const b = new ChatToggles(config, shared, () => undefined);
    const onA = conversation();
    const { settings, before } = await a.forCommand(onA, chat());
    expect(settings).toMatchObject({ toolProgress: "new", yolo: false });
    settings.toolProgress = "verbose"; // what /verbose does
    settings.yolo = true; // what /yolo does
    expect(await a.save(onA, before)).toBeNull();
    expect(shared.rows.get(onA.key)).toEqual({ toolProgress: "verbose", yolo: true });

    // Instance B has never seen this chat: its next turn starts from the stored choice.
    const onB = conversation();
    await b.refresh(onB, chat(false));
    expect(onB.settings).toMatchObject({ toolProgress: "verbose", yolo: true });

    // B had its own older copy: the stored one wins before the next command there.
    const stale = conversation();
    stale.settings = { toolProgress: "off", busyMode: "interrupt", yolo: false };
    const again = await b.forCommand(stale, chat());
    expect(again.settings).toMatchObject({ toolProgress: "verbose", yolo: true, busyMode: "interrupt" });
  });

  it("saves only when a command changed a shared field", async () => {
    const shared = memoryRecords();
    const toggles = new ChatToggles(config, shared, () => undefined);
    const conv = conversation();
    const { before } = await toggles.forCommand(conv, chat());
    expect(await toggles.save(conv, before)).toBeNull();
    expect(shared.rows.size).toBe(0);
  });

  it("a failing store leaves the setting working here and says so", async () => {
    const lines: string[] = [];
    const broken: ChatSettingsRecords = {
      get: async () => {
        throw new Error("connection terminated");
      },
      set: async () => {
        throw new Error("connection terminated");
      },
      voiceMode: async () => {
        throw new Error("connection terminated");
      },
      setVoiceMode: async () => {
        throw new Error("connection terminated");
      },
    };
    const toggles = new ChatToggles(config, broken, (line) => lines.push(line));
    const conv = conversation();
    const { settings, before } = await toggles.forCommand(conv, chat(true));
    expect(settings.yolo).toBe(true);
    settings.yolo = false;
    expect(await toggles.save(conv, before)).toMatch(/could not share .*connection terminated/);
    expect(conv.settings?.yolo).toBe(false);
    expect(lines.join("\n")).toMatch(/could not read .*settings.*connection terminated/);
  });

  it("ignores stored values that are not settings", async () => {
    const shared = memoryRecords();
    shared.rows.set("k", { toolProgress: "shout", yolo: "yes" as unknown as boolean });
    const toggles = new ChatToggles(config, shared, () => undefined);
    const conv = conversation("k");
    await toggles.refresh(conv, chat(false));
    expect(conv.settings).toMatchObject({ toolProgress: "new", yolo: false });
  });

  it("without a shared store nothing is read or written", async () => {
    const toggles = new ChatToggles(config, undefined, () => undefined);
    const conv = conversation();
    await toggles.refresh(conv, chat());
    expect(conv.settings).toBeUndefined();
    const { settings, before } = await toggles.forCommand(conv, chat());
    settings.toolProgress = "all";
    expect(await toggles.save(conv, before)).toBeNull();
    expect(conv.settings?.toolProgress).toBe("all");
  });

  it("/voice chosen on one instance is the chat's mode on another; a store failure is said", async () => {
    const shared = memoryRecords();
    const home = () => mkdtempSync(join(tmpdir(), "hermes-voice-shared-"));
    const options = (h: string, chatSettings?: ChatSettingsRecords) => ({
      home: h,
      config: {} as HermesConfig,
      env: {},
      ...(chatSettings ? { chatSettings } : {}),
    });
    const a = new VoiceReplies(options(home(), shared));
    const b = new VoiceReplies(options(home(), shared));
    const adapter = { platform: "telegram", capabilities: { media: true } } as unknown as PlatformAdapter;
    const source = { platform: "telegram", chatId: "42", userId: "u", chatType: "dm" } as MessageSource;
    expect(await a.control(adapter, source).run("tts", "")).toEqual([expect.stringMatching(/./)]);
    expect(shared.voices.get("telegram:42")).toBe(a.mode(source));
    expect(b.mode(source)).toBe("off");
    // B reads it before the chat's next turn (ChatToggles.refresh) or its `/voice status`.
    const toggles = new ChatToggles(config, shared, () => undefined, b);
    const conv = conversation();
    conv.source = source;
    await toggles.refresh(conv, chat());
    expect(b.mode(source)).toBe(a.mode(source));
    await b.control(adapter, source).run("off", "");
    expect((await a.control(adapter, source).run("status", "")).join(" ")).toMatch(/off/i);

    const broken: ChatSettingsRecords = {
      ...shared,
      setVoiceMode: async () => {
        throw new Error("database is down");
      },
    };
    const lonely = new VoiceReplies(options(home(), broken));
    const lines = await lonely.control(adapter, source).run("tts", "");
    expect(lines.join("\n")).toMatch(/this instance only.*database is down/);
    expect(lonely.mode(source)).not.toBe("off");
  });
});
