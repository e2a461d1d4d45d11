/**
 * Spoken replies in chats: the per-chat mode store (upstream's file), when a voice note is due,
 * what text is spoken, and the voice note itself made by the real speech engine (espeak-ng, then
 * ffmpeg to Ogg/Opus) and handed to the adapter; a failing engine leaves a short note, no temp audio.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dispatchInput } from "../../../src/commands/index.js";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";
import { ReplyView } from "../../../src/gateway/messaging/reply.js";
import {
  type ChatVoiceMode,
  speechText,
  VOICE_MODE_FILE,
  VoiceReplies,
  voiceReplies,
} from "../../../src/gateway/messaging/voice-reply.js";
import type {
  InboundMessage,
  MessageSource,
  OutboundMedia,
  PlatformAdapter,
} from "../../../src/gateway/platforms/types.js";
import { findBinary } from "../../../src/tools/media/shared.js";
import { fakeContext, registry } from "../../support/command-context.js";
import { probeAudio } from "../../support/ogg-opus.js";

const ready = ["espeak-ng", "ffmpeg", "ffprobe"].every((b) => findBinary(b, process.env) !== undefined);
const dm: MessageSource = { platform: "telegram", chatType: "dm", chatId: "42", userId: "42" };
const text = (t: string): InboundMessage => ({ source: dm, text: t });
const voiceNote: InboundMessage = { source: dm, text: "", media: [{ kind: "voice", path: "/tmp/v.ogg" }] };

let home: string;
let tmp: string;
let savedTmp: string | undefined;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "voice-reply-"));
  // The engine and the voice reply make their temp folders here: the tests check they are gone.
  tmp = mkdtempSync(join(tmpdir(), "voice-reply-tmp-"));
  savedTmp = process.env["TMPDIR"];
  process.env["TMPDIR"] = tmp;
});
afterEach(() => {
  if (savedTmp === undefined) delete process.env["TMPDIR"];
  else process.env["TMPDIR"] = savedTmp;
});

function config(extra: Record<string, unknown> = {}): HermesConfig {
  return { ...defaultConfig(), tts: { provider: "espeak-ng", fallback: false }, ...extra } as HermesConfig;
}

/** An adapter that records texts and keeps each uploaded file's bytes (the file is removed after). */
function recordingAdapter(platform = "telegram", media = true) {
  const texts: string[] = [];
  const files: Array<{ media: OutboundMedia; bytes: Buffer }> = [];
  const adapter: PlatformAdapter = {
    platform,
    capabilities: {
      maxMessageLength: 4096,
      edit: true,
      buttons: true,
      typing: true,
      media,
      maxMediaBytes: 1e8,
    },
    connect: async () => undefined,
    disconnect: async () => undefined,
    send: async (_t, body) => {
      texts.push(body);
      return { messageId: String(texts.length) };
    },
    edit: async () => undefined,
    typing: async () => undefined,
    sendMedia: async (_t, m) => {
      files.push({ media: m, bytes: readFileSync(m.path) });
      return { messageId: "f" };
    },
  };
  return { adapter, texts, files };
}

describe("speechText", () => {
  it("drops code, attachments and markdown marks, keeping the words a person would say", () => {
    const answer = [
      "## Result",
      "The **build** passed, see [the log](https://ci.example/run/7) and `npm test`.",
      "```ts",
      "const secretPlan = 1;",
      "```",
      "- first point",
      "> a quote",
      "MEDIA:/tmp/chart.png",
      "snake_case_name stays _whole_.",
    ].join("\n");
    const spoken = speechText(answer);
    expect(spoken).toBe(
      "Result The build passed, see the log and . first point a quote snake_case_name stays whole.",
    );
    expect(spoken).not.toMatch(/secretPlan|https|MEDIA|```|\*\*/);
  });

  it("stays fast on answers shaped to make patterns backtrack", () => {
    for (const unit of ["[", "![", "<http://", "[a](", " \n", "- ", "_a", "```"]) {
      const started = performance.now();
      const spoken = speechText(unit.repeat(Math.ceil(300_000 / unit.length)));
      expect(spoken.length).toBeLessThanOrEqual(4001);
      expect(performance.now() - started, unit).toBeLessThan(1500);
    }
  });

  it("cuts a long answer at the last sentence that fits", () => {
    const long = `${"This sentence is here. ".repeat(30)}And a very long tail without any end`;
    const spoken = speechText(long, 200);
    expect(spoken.length).toBeLessThanOrEqual(200);
    expect(spoken.endsWith("here.")).toBe(true);
    expect(speechText("word ".repeat(100), 50)).toMatch(/word…$/);
  });
});

describe("the per-chat voice mode", () => {
  it("is kept in upstream's file, keyed platform:chat, and read again after a restart", () => {
    const first = new VoiceReplies({ home, config: config(), env: {} });
    expect(first.mode(dm)).toBe("off");
    first.setMode(dm, "all");
    first.setMode({ ...dm, platform: "slack", chatId: "C1" }, "voice_only");
    const stored = JSON.parse(readFileSync(join(home, VOICE_MODE_FILE), "utf8"));
    expect(stored).toEqual({ "slack:C1": "voice_only", "telegram:42": "all" });
    const again = new VoiceReplies({ home, config: config(), env: {} });
    expect(again.mode(dm)).toBe("all");
    expect(again.mode({ ...dm, chatId: "43" })).toBe("off");
  });

  it("follows voice.auto_tts for chats that never chose, and ignores junk in the file", () => {
    writeFileSync(
      join(home, VOICE_MODE_FILE),
      JSON.stringify({ "42": "all", "telegram:7": "loud", "telegram:8": "off" }),
    );
    const lines: string[] = [];
    const voice = new VoiceReplies({
      home,
      config: config({ voice: { auto_tts: true } }),
      env: {},
      log: (l) => lines.push(l),
    });
    expect(voice.mode(dm)).toBe("voice_only"); // the unprefixed "42" is not this chat's choice
    expect(voice.mode({ ...dm, chatId: "7" })).toBe("voice_only");
    expect(voice.mode({ ...dm, chatId: "8" })).toBe("off");
    writeFileSync(join(home, VOICE_MODE_FILE), "{broken");
    expect(new VoiceReplies({ home, config: config(), env: {}, log: (l) => lines.push(l) }).mode(dm)).toBe(
      "off",
    );
    expect(lines.join("\n")).toMatch(/ignoring .*gateway_voice_mode\.json/);
  });

  it("speaks after every answer with tts, after voice notes only with on, never with off", () => {
    const voice = new VoiceReplies({ home, config: config(), env: {} });
    const { adapter } = recordingAdapter();
    const target = { chatId: "42" };
    const due = (mode: ChatVoiceMode, batch: InboundMessage[]) => {
      voice.setMode(dm, mode);
      return voice.speaker(adapter, dm, batch, target) !== undefined;
    };
    expect([due("all", [text("hi")]), due("all", [voiceNote])]).toEqual([true, true]);
    expect([due("voice_only", [text("hi")]), due("voice_only", [text("a"), voiceNote])]).toEqual([
      false,
      true,
    ]);
    expect([due("off", [text("hi")]), due("off", [voiceNote])]).toEqual([false, false]);
    voice.setMode(dm, "all");
    const ha = recordingAdapter("homeassistant", false).adapter;
    expect(voice.speaker(ha, { ...dm, platform: "homeassistant" }, [text("x")], target)).toBeUndefined();
    expect(voice.unsupported(ha)).toMatch(/cannot carry audio/);
  });

  it("is one store per gateway", () => {
    const options = { home, config: config(), env: {} };
    expect(voiceReplies(options)).toBe(voiceReplies(options));
    expect(voiceReplies({ ...options })).not.toBe(voiceReplies(options));
  });
});

describe.skipIf(!ready)("a voice reply", () => {
  it("is an Ogg/Opus voice note of the spoken text, and its temp audio is gone after", async () => {
    const voice = new VoiceReplies({ home, config: config(), env: process.env });
    const { adapter, texts, files } = recordingAdapter();
    await voice.speak(adapter, { chatId: "42" }, "The **kitchen** lights are on now.\n```sh\nls\n```");
    expect(texts).toEqual([]);
    expect(files).toHaveLength(1);
    expect(files[0]?.media.kind).toBe("voice");
    expect(files[0]?.media.path).toMatch(/\.ogg$/);
    const probe = probeAudio(files[0]?.bytes ?? Buffer.alloc(0));
    expect(probe).toMatchObject({ container: "ogg", codec: "opus" });
    expect(probe.seconds).toBeGreaterThan(0.5);
    // Made in a private folder under the temp dir, and removed once sent.
    expect(files[0]?.media.path.startsWith(join(tmp, "hermes-voice-reply-"))).toBe(true);
    expect(existsSync(files[0]?.media.path ?? "")).toBe(false);
    expect(readdirSync(tmp)).toEqual([]);
  }, 30_000);

  it("that fails leaves a short note and no temp audio, and never throws", async () => {
    const lines: string[] = [];
    const broken = config({ tts: { provider: "espeak-ng", fallback: false } });
    const voice = new VoiceReplies({
      home,
      config: broken,
      env: { PATH: "/nonexistent" },
      log: (l) => lines.push(l),
    });
    const { adapter, texts, files } = recordingAdapter();
    await expect(voice.speak(adapter, { chatId: "42" }, "Hello there.")).resolves.toBeUndefined();
    expect(files).toEqual([]);
    expect(texts).toHaveLength(1);
    expect(texts[0]).toMatch(/^🔇 No voice note this time \(.+\); the text above is the answer\.$/);
    expect(lines.join("\n")).toMatch(/voice reply failed/);
    expect(readdirSync(tmp)).toEqual([]);
  }, 30_000);
});

describe("/voice in a chat", () => {
  /** `/voice ...` through the shared registry, as a chat on `platform` runs it. */
  function chat(platform = "telegram", media = true) {
    const voice = new VoiceReplies({ home, config: config(), env: {} });
    const source = { ...dm, platform };
    const { ctx, printed } = fakeContext({ surface: { kind: "chat", platform, isAdmin: false } });
    const withVoice = { ...ctx, voice: voice.control(recordingAdapter(platform, media).adapter, source) };
    const run = async (text: string) => {
      printed.length = 0;
      await dispatchInput(registry, text, withVoice);
      return printed.join("\n");
    };
    return { run, mode: () => voice.mode(source) };
  }

  it("sets upstream's modes by upstream's words and reports them", async () => {
    const c = chat();
    expect(await c.run("/voice")).toMatch(/^Voice mode: off: text replies only\.\nUse \/voice on/);
    expect(await c.run("/voice tts")).toMatch(/every answer also comes as a voice note/);
    expect(c.mode()).toBe("all");
    expect(await c.run("/voice status")).toMatch(/^Voice mode: tts/);
    await c.run("/voice ON");
    expect(c.mode()).toBe("voice_only");
    await c.run("/voice disable");
    expect(c.mode()).toBe("off");
    await c.run("/voice enable");
    expect(c.mode()).toBe("voice_only");
    expect(await c.run("/voice off")).toMatch(/Voice replies are off/);
    expect(JSON.parse(readFileSync(join(home, VOICE_MODE_FILE), "utf8"))).toEqual({ "telegram:42": "off" });
  });

  it("refuses unknown words without changing anything, and warns where voice notes cannot go", async () => {
    const c = chat();
    await c.run("/voice tts");
    expect(await c.run("/voice loud; rm -rf /")).toMatch(/Unknown \/voice argument/);
    expect(c.mode()).toBe("all");
    const ha = chat("homeassistant", false);
    expect(await ha.run("/voice tts")).toMatch(/⚠️ Home Assistant notifications cannot carry audio/);
    expect(await ha.run("/voice status")).toMatch(/⚠️ Home Assistant/);
  });
});

describe("ReplyView with a speaker", () => {
  const view = (adapter: PlatformAdapter, voice: (t: string) => Promise<void>) =>
    new ReplyView(
      adapter,
      { chatId: "42" },
      {
        stream: { enabled: false, editInterval: 1, bufferThreshold: 1, cursor: "" },
        progress: "off",
        onError: () => undefined,
        voice,
      },
    );

  it("speaks the redacted text after it was sent, without attachments or footer", async () => {
    const { adapter, texts, files } = recordingAdapter();
    const order: string[] = [];
    const spoken: string[] = [];
    const secret = `ghp_${"Zq8Lm3Xv7Rt2".repeat(3)}`;
    const chart = join(home, "chart.png");
    writeFileSync(chart, "png");
    await view(adapter, async (t) => {
      order.push(`voice after ${texts.length} text(s) and ${files.length} file(s)`);
      spoken.push(t);
    }).finish(`Token ${secret} rotated.\nMEDIA:${chart}`, "model · 3% context");
    expect(order).toEqual(["voice after 1 text(s) and 1 file(s)"]);
    expect(texts[0]).toContain("model · 3% context");
    expect(spoken).toHaveLength(1);
    expect(spoken[0]).toMatch(/^Token .+ rotated\.$/);
    expect(spoken[0]).not.toContain(secret);
    expect(spoken[0]).not.toMatch(/MEDIA|chart|context/);
  });

  it("does not speak an answer that already carries audio, nor a silent one", async () => {
    const { adapter } = recordingAdapter();
    const clip = join(home, "tts.ogg");
    writeFileSync(clip, "OggS");
    const spoken: string[] = [];
    await view(adapter, async (t) => void spoken.push(t)).finish(
      `Here it is.\n[[audio_as_voice]]\nMEDIA:${clip}`,
    );
    await view(adapter, async (t) => void spoken.push(t)).finish("[SILENT]");
    expect(spoken).toEqual([]);
  });
});
