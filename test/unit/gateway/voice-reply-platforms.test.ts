/**
 * A spoken reply on each platform besides Telegram (which the gateway e2e test covers), through
 * the real adapter and its fake service: the speech engine (espeak-ng, then ffmpeg) makes Ogg/Opus
 * and the adapter carries it the platform's way: a WhatsApp voice note (ptt, Opus content type), a
 * Signal attachment, a Slack file upload, a Discord attachment. ffprobe checks what arrived.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";
import { VoiceReplies } from "../../../src/gateway/messaging/voice-reply.js";
import { createDiscordAdapter } from "../../../src/gateway/platforms/discord.js";
import { createSignalAdapter } from "../../../src/gateway/platforms/signal.js";
import { createSlackAdapter } from "../../../src/gateway/platforms/slack.js";
import type { AdapterContext, PlatformAdapter } from "../../../src/gateway/platforms/types.js";
import { createWhatsAppAdapter } from "../../../src/gateway/platforms/whatsapp.js";
import { findBinary } from "../../../src/tools/media/shared.js";
import { fakeBaileys } from "../../support/fake-baileys.js";
import { startFakeDiscord } from "../../support/fake-discord.js";
import { startFakeSignalCli } from "../../support/fake-signal-cli.js";
import { startFakeSlack } from "../../support/fake-slack.js";
import { probeAudio } from "../../support/ogg-opus.js";

const ready = ["espeak-ng", "ffmpeg", "ffprobe"].every((b) => findBinary(b, process.env) !== undefined);
const ANSWER = "Your **train** leaves at nine. `ignored code`";
const home = mkdtempSync(join(tmpdir(), "voice-platforms-"));
const config = { ...defaultConfig(), tts: { provider: "espeak-ng", fallback: false } } as HermesConfig;
const cleanups: Array<() => Promise<unknown>> = [];
let voice: VoiceReplies;
const failures: string[] = [];

beforeAll(() => {
  voice = new VoiceReplies({ home, config, env: process.env, log: (l) => failures.push(l) });
});
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
  expect(failures).toEqual([]);
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

function context(env: Record<string, string>): AdapterContext {
  return { home, env, settings: {}, mediaDir: join(home, "media"), maxInboundMediaBytes: 1e6 };
}
const quiet = { onMessage: () => undefined, onAction: () => undefined, onError: () => undefined };

async function connect(adapter: PlatformAdapter, receive = false): Promise<PlatformAdapter> {
  await adapter.connect(quiet, { receive });
  cleanups.push(() => adapter.disconnect());
  return adapter;
}

function expectVoiceNote(bytes: Buffer | undefined): void {
  const probe = probeAudio(bytes ?? Buffer.alloc(0));
  expect(probe).toMatchObject({ container: "ogg", codec: "opus" });
  expect(probe.seconds).toBeGreaterThan(0.5);
}

describe.skipIf(!ready)("a spoken reply", () => {
  it("reaches WhatsApp as a voice note (ptt) labelled Ogg/Opus", async () => {
    const fake = fakeBaileys();
    const adapter = createWhatsAppAdapter(context({ WHATSAPP_MODE: "bot" }), {
      load: async () => fake,
      reconnectDelayMs: () => 5,
      openTimeoutMs: 2000,
    });
    await connect(adapter, true);
    const friend = "15551230001@s.whatsapp.net";
    await voice.speak(adapter, { chatId: friend }, ANSWER);
    const sent = await fake.waitForSent((s) => s.jid === friend && "audio" in s.content);
    expect(sent.content).toMatchObject({ ptt: true, mimetype: "audio/ogg; codecs=opus" });
    expectVoiceNote(sent.content["audio"] as Buffer);
  }, 30_000);

  it("reaches Signal as an audio attachment", async () => {
    const fake = await startFakeSignalCli();
    cleanups.push(() => fake.stop());
    const adapter = createSignalAdapter(
      context({ SIGNAL_HTTP_URL: fake.url, SIGNAL_ACCOUNT: fake.account }),
      { retryInitialMs: 20 },
    );
    await connect(adapter);
    await voice.speak(adapter, { chatId: "+15551112222" }, ANSWER);
    const send = fake.calls.find((c) => c.method === "send");
    expect(send?.params["recipient"]).toEqual(["+15551112222"]);
    expect(send?.files).toHaveLength(1);
    expect(send?.files?.[0]).toMatchObject({ contentType: "audio/ogg", fileName: "reply.ogg" });
    expectVoiceNote(send?.files?.[0]?.bytes);
  }, 30_000);

  it("reaches Slack as a file upload in the thread", async () => {
    const slack = await startFakeSlack();
    cleanups.push(() => slack.stop());
    const adapter = createSlackAdapter(
      context({
        SLACK_BOT_TOKEN: slack.botToken,
        SLACK_SIGNING_SECRET: "s3cret",
        SLACK_API_URL: slack.apiUrl,
      }),
      { mode: "http", host: "127.0.0.1", port: 0 },
    );
    await connect(adapter);
    await voice.speak(adapter, { chatId: "C0GENERAL", threadId: "1700000000.000200" }, ANSWER);
    const complete = await slack.waitForCall("files.completeUploadExternal");
    expect(complete.args).toMatchObject({ channel_id: "C0GENERAL", thread_ts: "1700000000.000200" });
    expect(slack.uploads[0]?.filename).toBe("reply.ogg");
    expectVoiceNote(slack.uploads[0]?.bytes);
  }, 30_000);

  it("reaches Discord as an audio attachment", async () => {
    const fake = await startFakeDiscord();
    cleanups.push(() => fake.stop());
    const channel = fake.addGuild({ name: "Lab", channels: [{ name: "general" }] }).channels[0]?.id ?? "";
    const adapter = createDiscordAdapter(
      { ...context({ DISCORD_BOT_TOKEN: fake.token, DISCORD_API_URL: fake.apiBase }) },
      { connectTimeoutMs: 20_000 },
    );
    await connect(adapter);
    await voice.speak(adapter, { chatId: channel }, ANSWER);
    const upload = await fake.waitForCall("POST", `/channels/${channel}/messages`);
    expect(upload.files).toHaveLength(1);
    expect(upload.files[0]?.name).toBe("reply.ogg");
    expectVoiceNote(upload.files[0]?.data);
  }, 30_000);
});
