/**
 * Spoken replies on Telegram end to end: `hermes gateway run` (the built CLI) against the Telegram
 * Bot API emulator, the fake LLM, Edge's read-aloud service faked on loopback (real WebSocket
 * protocol, real MP3) and Groq's transcription API faked on loopback. `/voice tts` makes every
 * answer arrive as text and then as a voice note that ffprobe finds to be Ogg/Opus; the text Edge
 * is asked to speak is the redacted answer without code; a failing Edge still delivers the text
 * with a short note; `/voice on` answers a spoken voice note (transcribed) with a voice note and a
 * typed message with text only; a stranger cannot change the mode; no temp audio is left.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findBinary } from "../../src/tools/media/shared.js";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { type FakeEdgeTts, startFakeEdgeTts } from "../support/fake-edge-tts.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type FakeSpeechApi, startFakeSpeechApi } from "../support/fake-speech-api.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";
import { probeAudio } from "../support/ogg-opus.js";
import {
  type BotMessage,
  startTelegramEmulator,
  type TelegramEmulator,
} from "../support/telegram-emulator.js";

const ready = ["espeak-ng", "ffmpeg", "ffprobe"].every((b) => findBinary(b, process.env) !== undefined);
const OWNER = 1001;
const STRANGER = 2002;
const TOKEN = `ghp_${"Zq8Lm3Xv7Rt2".repeat(3)}`;

let llm: FakeLlm;
let tg: TelegramEmulator;
let edge: FakeEdgeTts;
let stt: FakeSpeechApi;
let h: { home: string; cwd: string };
let gateway: GatewayProcess;
let tmp: string;
let question: Buffer;

/** Audio made offline: espeak-ng speaks `text`, ffmpeg encodes it (`args` choose the format). */
function spoken(text: string, name: string, args: string[]): Buffer {
  const wav = join(tmp, `${name}.wav`);
  const out = join(tmp, name);
  execFileSync("espeak-ng", ["-w", wav, text]);
  execFileSync("ffmpeg", ["-v", "error", "-y", "-i", wav, ...args, out]);
  return readFileSync(out);
}

beforeAll(async () => {
  if (!ready) return;
  llm = await startFakeLlm();
  tg = await startTelegramEmulator({ botUsername: "hermes_voice_bot" });
  h = tempHome(
    fakeProviderConfig(
      llm.url,
      'display:\n  tool_progress: "off"\ntts:\n  provider: edge\n  fallback: false\nstt:\n  provider: groq\n',
    ),
  );
  // The gateway's temp folders go here, so the test can see that none is left behind.
  tmp = join(h.home, "tmp");
  mkdirSync(tmp);
  edge = await startFakeEdgeTts(
    spoken("Here is the answer.", "answer.mp3", ["-ar", "24000", "-ac", "1", "-b:a", "48k"]),
  );
  stt = await startFakeSpeechApi();
  question = spoken("What time is it?", "question.ogg", ["-c:a", "libopus", "-b:a", "32k"]);
  stt.register(question, "What time is it?");
  gateway = await startGatewayProcess(h, {
    TELEGRAM_BOT_TOKEN: tg.token,
    TELEGRAM_API_ROOT: tg.apiRoot,
    TELEGRAM_ALLOWED_USERS: String(OWNER),
    HERMES_EDGE_TTS_URL: edge.url,
    GROQ_API_KEY: stt.keys.groq,
    GROQ_BASE_URL: `${stt.url}/openai/v1`,
    TMPDIR: tmp,
  });
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await tg?.stop();
  await llm?.close();
  await edge?.close();
  await stt?.close();
});

const owner = () => tg.client({ userId: OWNER, username: "owner", firstName: "Owner" });

/** The bot messages to `chat` after the first `from`, once `done` says they are complete. */
async function botMessagesAfter(
  from: number,
  done: (messages: BotMessage[]) => boolean,
  chat: number = OWNER,
): Promise<BotMessage[]> {
  return tg.waitFor(
    () => {
      const messages = tg.botMessages(chat).slice(from);
      return done(messages) ? messages : undefined;
    },
    { timeoutMs: 30_000, what: "the bot's messages" },
  );
}
const isVoice = (m: BotMessage) => /^sendvoice$/i.test(m.method);

async function command(text: string): Promise<string> {
  const next = tg.nextBotMessage(OWNER);
  await owner().sendText(text);
  return (await next(20_000)).text ?? "";
}

describe.skipIf(!ready)("spoken replies on Telegram", () => {
  it("/voice tts: the answer comes as text, then as an Ogg/Opus voice note of its words", async () => {
    expect(await command("/voice tts")).toMatch(/every answer also comes as a voice note/);
    const stored = JSON.parse(readFileSync(join(h.home, "gateway_voice_mode.json"), "utf8"));
    expect(stored).toEqual({ [`telegram:${OWNER}`]: "all" });
    expect(await command("/voice status")).toMatch(/^Voice mode: tts/);

    llm.enqueue(reply().text("It is **sunny** today.\n\n```sh\ncurl wttr.in\n```"));
    const from = tg.botMessages(OWNER).length;
    await owner().sendText("what's the weather?");
    const out = await botMessagesAfter(from, (m) => m.some(isVoice));
    const text = out.find((m) => !isVoice(m));
    expect(text?.text).toContain("It is <b>sunny</b> today.");
    expect(out.indexOf(text as BotMessage)).toBeLessThan(out.findIndex(isVoice));
    const voice = out.find(isVoice);
    const probe = probeAudio(voice?.file?.bytes ?? Buffer.alloc(0));
    expect(probe).toMatchObject({ container: "ogg", codec: "opus" });
    expect(probe.seconds).toBeGreaterThan(0.5);
    expect(edge.turns.at(-1)?.text).toBe("It is sunny today.");
  }, 60_000);

  it("speaks the redacted answer: a secret never reaches the speech service or the voice note", async () => {
    llm.enqueue(reply().text(`Your token is ${TOKEN} and it expires soon.`));
    const turns = edge.turns.length;
    const from = tg.botMessages(OWNER).length;
    await owner().sendText("what is my github token?");
    const out = await botMessagesAfter(from, (m) => m.some(isVoice));
    expect(edge.turns.length).toBe(turns + 1);
    const said = edge.turns.at(-1)?.text ?? "";
    expect(said).toMatch(/^Your token is .+ and it expires soon\.$/);
    expect(said).not.toContain(TOKEN);
    expect(said).not.toContain("Zq8Lm3Xv7Rt2");
    expect(JSON.stringify(edge.turns)).not.toContain(TOKEN);
    expect(out.map((m) => m.text ?? "").join("\n")).not.toContain(TOKEN);
  }, 60_000);

  it("still delivers the text when speech fails, with a short note, and leaves no temp audio", async () => {
    edge.mode = "unavailable";
    try {
      llm.enqueue(reply().text("The meeting moved to Friday."));
      const from = tg.botMessages(OWNER).length;
      await owner().sendText("when is the meeting?");
      const out = await botMessagesAfter(from, (m) => m.some((x) => x.text?.startsWith("🔇")));
      expect(out.map((m) => m.text)).toContain("The meeting moved to Friday.");
      expect(out.some(isVoice)).toBe(false);
      expect(out.find((m) => m.text?.startsWith("🔇"))?.text).toMatch(
        /^🔇 No voice note this time \(.+\); the text above is the answer\.$/,
      );
    } finally {
      edge.mode = "normal";
    }
    expect(readdirSync(tmp).filter((f) => f.startsWith("hermes-"))).toEqual([]);
  }, 60_000);

  it("/voice on: a voice note is transcribed and answered with a voice note; typed text gets text", async () => {
    expect(await command("/voice on")).toMatch(/when you send a voice note/);
    llm.enqueue(reply().text("It is nine o'clock."));
    const from = tg.botMessages(OWNER).length;
    await owner().sendVoice(question, { fileName: "question.ogg" });
    const out = await botMessagesAfter(from, (m) => m.some(isVoice));
    expect(out.map((m) => m.text)).toContain("It is nine o'clock.");
    expect(JSON.stringify(llm.chatRequests.at(-1)?.body)).toContain("What time is it?");
    expect(stt.requests.some((r) => r.path.endsWith("/audio/transcriptions"))).toBe(true);

    llm.enqueue(reply().text("Typed answer."));
    const typedFrom = tg.botMessages(OWNER).length;
    const turns = edge.turns.length;
    await owner().sendText("and typed?");
    await botMessagesAfter(typedFrom, (m) => m.some((x) => x.text === "Typed answer."));
    await new Promise((r) => setTimeout(r, 500));
    expect(tg.botMessages(OWNER).slice(typedFrom).some(isVoice)).toBe(false);
    expect(edge.turns.length).toBe(turns);
  }, 60_000);

  it("a stranger cannot change voice replies: they get a pairing code, the mode stays", async () => {
    const before = readFileSync(join(h.home, "gateway_voice_mode.json"), "utf8");
    const requests = llm.chatRequests.length;
    const next = tg.nextBotMessage(STRANGER);
    await tg.client({ userId: STRANGER, username: "stranger" }).sendText("/voice tts");
    expect((await next(20_000)).text).toMatch(/hermes pairing approve telegram/);
    expect(readFileSync(join(h.home, "gateway_voice_mode.json"), "utf8")).toBe(before);
    expect(before).not.toContain(String(STRANGER));
    expect(llm.chatRequests.length).toBe(requests);
    expect(existsSync(join(h.home, "gateway_voice_mode.json"))).toBe(true);
  }, 30_000);
});
