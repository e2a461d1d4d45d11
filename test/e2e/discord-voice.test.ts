/**
 * Discord voice channels end to end: `hermes gateway run` (the built CLI, real discord.js and
 * @discordjs/voice 0.18) against the fake Discord (REST + gateway) and its fake voice server
 * (TLS WebSocket + UDP, real RTP encryption), the fake LLM, Groq's and OpenAI's transcription APIs
 * faked on loopback and Edge's read-aloud service faked on loopback (espeak-ng behind it).
 *
 * Speech is made with espeak-ng, Opus-encoded and sent as a speaker's RTP; the bot's audio is
 * decrypted and decoded by the fake and measured (length, RMS). Covered: join/channel/leave, one
 * transcript per utterance into one conversation per channel, spoken and written answers, a
 * stranger ignored, barge-in, leaving mid-answer, STT and TTS fallbacks, approvals in the text
 * channel (buttons or a spoken no), both encryption modes, a DAVE-only server, forged packets,
 * shutdown while joined, and no temp audio left behind.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findBinary } from "../../src/tools/media/shared.js";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { type FakeDiscord, type FakeUser, startFakeDiscord } from "../support/fake-discord.js";
import { type FakeDiscordVoice, startFakeDiscordVoice } from "../support/fake-discord-voice.js";
import { type FakeEdgeTts, startFakeEdgeTts } from "../support/fake-edge-tts.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type FakeSpeechApi, startFakeSpeechApi } from "../support/fake-speech-api.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";

const ready = ["espeak-ng", "ffmpeg", "openssl"].every((b) => findBinary(b, process.env) !== undefined);

let llm: FakeLlm;
let discord: FakeDiscord;
let voice: FakeDiscordVoice;
let groq: FakeSpeechApi;
let openai: FakeSpeechApi;
let edge: FakeEdgeTts;
let gateway: GatewayProcess;
let h: { home: string; cwd: string };
let tmp: string;
let alice: FakeUser;
let bob: FakeUser;
let mallory: FakeUser;
let guild = "";
let general = "";
let lounge = "";
let den = "";
const wav: Record<string, string> = {};

/** espeak-ng says `text` into a WAV in the test's temp folder. */
function spoken(name: string, text: string): string {
  const file = join(tmp, `${name}.wav`);
  execFileSync("espeak-ng", ["-w", file, text]);
  return file;
}

beforeAll(async () => {
  if (!ready) return;
  llm = await startFakeLlm();
  discord = await startFakeDiscord();
  voice = await startFakeDiscordVoice(discord);
  alice = discord.addUser("alice");
  bob = discord.addUser("bob");
  mallory = discord.addUser("mallory");
  const g = discord.addGuild({
    name: "Hermes Lab",
    channels: [{ name: "general" }, { name: "Lounge", type: 2 }, { name: "Den", type: 2 }],
  });
  guild = g.id;
  [general = "", lounge = "", den = ""] = g.channels.map((c) => c.id);
  h = tempHome(
    fakeProviderConfig(
      llm.url,
      [
        'display:\n  tool_progress: "off"',
        "discord:\n  voice_silence_ms: 600",
        "stt:\n  provider: groq\n  fallback: [openai]",
        "tts:\n  provider: edge\n  fallback: [espeak-ng]",
        "",
      ].join("\n"),
    ),
  );
  tmp = join(h.home, "tmp");
  mkdirSync(tmp);
  const answerMp3 = join(tmp, "answer.mp3");
  execFileSync("ffmpeg", [
    "-v",
    "error",
    "-i",
    spoken("answer", "Here is the answer. It takes a few seconds to say, so you can talk over it."),
    "-ar",
    "24000",
    "-ac",
    "1",
    "-b:a",
    "48k",
    answerMp3,
  ]);
  edge = await startFakeEdgeTts(execFileSync("cat", [answerMp3]));
  groq = await startFakeSpeechApi();
  openai = await startFakeSpeechApi();
  wav.question = spoken("question", "What time is it?");
  wav.followup = spoken("followup", "And what about tomorrow?");
  wav.short = spoken("short", "Stop.");
  gateway = await startGatewayProcess(
    h,
    {
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiBase,
      DISCORD_ALLOWED_USERS: `${alice.id},${bob.id}`,
      NODE_EXTRA_CA_CERTS: voice.caFile,
      HERMES_EDGE_TTS_URL: edge.url,
      GROQ_API_KEY: groq.keys.groq,
      GROQ_BASE_URL: `${groq.url}/openai/v1`,
      VOICE_TOOLS_OPENAI_KEY: openai.keys.openai,
      STT_OPENAI_BASE_URL: `${openai.url}/v1`,
      TMPDIR: tmp,
    },
    /^Gateway running.*discord/,
  );
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
  await voice?.stop();
  await discord?.stop();
  await llm?.close();
  await edge?.close();
  await groq?.close();
  await openai?.close();
});

/** Text the bot posted in #general after REST call `from` that `match`es, waiting for it. */
async function postedAfter(from: number, match: RegExp | string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = discord.calls
      .slice(from)
      .filter((c) => c.method === "POST" && c.path === `/channels/${general}/messages`)
      .map((c) => String(c.body?.["content"] ?? ""))
      .find((content) => (typeof match === "string" ? content === match : match.test(content)));
    if (found !== undefined) return found;
    if (Date.now() > deadline) {
      const seen = discord.calls.slice(from).map((c) => `${c.method} ${c.path} ${JSON.stringify(c.body)}`);
      throw new Error(`no post matching ${String(match)}\n${seen.join("\n")}\n${gateway.stderr()}`);
    }
    await sleep(25);
  }
}

/** `user` types `text` to the bot in #general; resolves with the bot's answer matching `match`. */
async function typed(user: FakeUser, text: string, match: RegExp | string): Promise<string> {
  const from = discord.calls.length;
  discord.injectMessage({ channelId: general, author: user, content: `<@${discord.botUser.id}> ${text}` });
  return postedAfter(from, match);
}

const transcriptions = (api: FakeSpeechApi) =>
  api.requests.filter((r) => r.path.endsWith("/audio/transcriptions")).length;

async function joinLounge(): Promise<void> {
  voice.enterChannel(alice, guild, lounge);
  await sleep(100);
  expect(await typed(alice, "/voice join", /^🔊 Joined Lounge\./)).toContain("answer aloud");
  await voice.waitForBot(guild);
  expect(voice.botChannel(guild)).toBe(lounge);
}

describe.skipIf(!ready)("Discord voice channels", () => {
  it("refuses /voice join until the user is in a voice channel, and only into their own channel", async () => {
    expect(await typed(alice, "/voice join", /voice channel/)).toMatch(
      /Join a voice channel in this server first/,
    );
    voice.enterChannel(alice, guild, lounge);
    await sleep(100);
    expect(await typed(alice, `/voice join ${den}`, /only bring me/)).toMatch(
      /You can only bring me into the voice channel you are in \(🔊 Lounge\), not Den\./,
    );
    expect(voice.stateUpdates).toEqual([]);
    expect(await typed(alice, "/voice channel", /voice channel/)).toMatch(/^Not in a voice channel/);
    const dm = discord.dmChannel(alice).id;
    const from = discord.calls.length;
    discord.injectMessage({ author: alice, content: "/voice join" });
    await discord.waitForCall("POST", (p) => p === `/channels/${dm}/messages` && discord.calls.length > from);
    const answer = discord.calls.slice(from).find((c) => c.path === `/channels/${dm}/messages`);
    expect(String(answer?.body?.["content"])).toMatch(/Voice channels belong to a server/);
    expect(voice.stateUpdates).toEqual([]);
  }, 60_000);

  it("joins, transcribes a spoken question and answers aloud and in text; /voice channel tells who is heard", async () => {
    await joinLounge();
    expect(voice.stateUpdates.at(-1)).toMatchObject({
      guild_id: guild,
      channel_id: lounge,
      self_deaf: false,
    });
    expect(await typed(alice, "/voice channel", /^🔊 In Lounge/)).toContain(`<#${general}>`);
    expect(await typed(alice, "/voice channel", /Listening to/)).toMatch(/Listening to: alice\./);

    groq.unregisteredText = "What time is it?";
    llm.enqueue(reply().text("It is nine o'clock."));
    const from = discord.calls.length;
    const packets = voice.packets.length;
    await voice.speak(alice, guild, wav.question ?? "");
    expect(await postedAfter(from, /^🎙️ alice: /)).toBe("🎙️ alice: What time is it?");
    await postedAfter(from, "It is nine o'clock.");
    expect(JSON.stringify(llm.chatRequests.at(-1)?.body)).toContain("What time is it?");

    // The recogniser got a real recording of the question: a 16 kHz mono WAV about as long.
    const upload = groq.requests.filter((r) => r.path.endsWith("/audio/transcriptions")).at(-1);
    const body = upload?.body ?? Buffer.alloc(0);
    const riff = body.indexOf("RIFF");
    expect(riff).toBeGreaterThan(0);
    expect(body.readUInt32LE(riff + 24)).toBe(16_000);
    const seconds = body.readUInt32LE(riff + 40) / 32_000;
    expect(seconds).toBeGreaterThan(0.8);
    expect(seconds).toBeLessThan(4);

    await voice.waitForBotSpeech(packets);
    const said = voice.botAudio(packets);
    expect(said.seconds).toBeGreaterThan(2);
    expect(said.seconds).toBeLessThan(15);
    expect(said.rms).toBeGreaterThan(0.02);
    expect(edge.turns.at(-1)?.text).toBe("It is nine o'clock.");
    expect(voice.rejected).toEqual([]);
  }, 90_000);

  it("keeps one conversation for the channel: a second speaker's turn sees the first one's", async () => {
    voice.enterChannel(bob, guild, lounge);
    groq.unregisteredText = "And what about tomorrow?";
    llm.enqueue(reply().text("Tomorrow it is ten."));
    const from = discord.calls.length;
    const packets = voice.packets.length;
    await voice.speak(bob, guild, wav.followup ?? "");
    expect(await postedAfter(from, /^🎙️ bob: /)).toBe("🎙️ bob: And what about tomorrow?");
    await postedAfter(from, "Tomorrow it is ten.");
    const request = JSON.stringify(llm.chatRequests.at(-1)?.body);
    expect(request).toContain("What time is it?");
    expect(request).toContain("It is nine o'clock.");
    expect(request).toContain("And what about tomorrow?");
    await voice.waitForBotSpeech(packets);
  }, 60_000);

  it("ignores a stranger: nothing transcribed, nothing asked, no barge-in; /voice channel counts them", async () => {
    voice.enterChannel(mallory, guild, lounge);
    const asked = transcriptions(groq) + transcriptions(openai);
    const requests = llm.chatRequests.length;
    const from = discord.calls.length;
    await voice.speak(mallory, guild, wav.question ?? "");
    await sleep(2_000);
    expect(transcriptions(groq) + transcriptions(openai)).toBe(asked);
    expect(llm.chatRequests.length).toBe(requests);
    expect(
      discord.calls.slice(from).filter((c) => String(c.body?.["content"] ?? "").startsWith("🎙️")),
    ).toEqual([]);
    const status = await typed(alice, "/voice channel", /Listening to/);
    expect(status).toMatch(/Listening to: alice, bob\./);
    expect(status).toMatch(/Ignoring 1 other person\./);
    expect(status).not.toContain("mallory");

    // Talking over an answer does not cut it off either.
    groq.unregisteredText = "What time is it?";
    llm.enqueue(reply().text("It is nine o'clock."));
    const asking = discord.calls.length;
    await voice.speak(alice, guild, wav.question ?? "");
    await postedAfter(asking, "It is nine o'clock.");
    const answer = voice.packets.length;
    for (let i = 0; i < 200 && voice.packets.length < answer + 25; i++) await sleep(25);
    await voice.speak(mallory, guild, wav.short ?? "");
    await voice.waitForBotSpeech(answer);
    expect(voice.botAudio(answer).seconds).toBeGreaterThan(3.5);
  }, 60_000);

  it("drops forged audio under an allowed speaker's SSRC and keeps listening to the real one", async () => {
    const asked = transcriptions(groq);
    for (let i = 0; i < 20; i++) voice.forge(alice, guild);
    await sleep(1_500);
    expect(transcriptions(groq)).toBe(asked);
    expect(gateway.child.exitCode).toBeNull();
    expect(gateway.stderr()).toMatch(/dropped 1 audio packet\(s\) in \d+ that failed decryption/);
    groq.unregisteredText = "What time is it?";
    llm.enqueue(reply().text("Still here."));
    const from = discord.calls.length;
    await voice.speak(alice, guild, wav.question ?? "");
    await postedAfter(from, "Still here.");
    await voice.waitForBotSpeech(voice.packets.length);
  }, 60_000);

  it("stops speaking when an allowed user talks over it (barge-in), then answers the new words", async () => {
    groq.unregisteredText = "What time is it?";
    llm.enqueue(reply().text("It is nine o'clock."));
    const from = discord.calls.length;
    await voice.speak(alice, guild, wav.question ?? "");
    await postedAfter(from, "It is nine o'clock.");
    const packets = voice.packets.length;
    // Wait for the answer to be under way, then talk over it.
    for (let i = 0; i < 200 && voice.packets.length < packets + 25; i++) await sleep(25);
    expect(voice.packets.length).toBeGreaterThanOrEqual(packets + 25);
    groq.unregisteredText = "Stop.";
    llm.enqueue(reply().text("Okay."));
    const next = discord.calls.length;
    const { startedAt: interrupted } = await voice.speak(alice, guild, wav.short ?? "");
    await postedAfter(next, "Okay.");
    const answered = Date.now();
    const okay = voice.packets.length;
    // Silent from just after the interruption until the new answer (spoken after its text).
    const tail = voice.packets.filter((p) => p.at > interrupted + 500 && p.at < answered);
    expect(tail).toEqual([]);
    const spoken = voice.packets.slice(packets).filter((p) => p.at <= interrupted + 500);
    // The full answer lasts over 4 s; it was cut at about 0.5 s plus the time to notice.
    expect(spoken.length * 0.02).toBeLessThan(2.5);
    // The new words are answered aloud in full.
    await voice.waitForBotSpeech(okay);
    expect(voice.botAudio(okay).seconds).toBeGreaterThan(2);
  }, 90_000);

  it("falls back: Groq failing → OpenAI transcribes; Edge failing → espeak-ng speaks", async () => {
    groq.mode = "error";
    edge.mode = "unavailable";
    try {
      openai.unregisteredText = "What time is it?";
      llm.enqueue(reply().text("Nine."));
      const before = transcriptions(openai);
      const from = discord.calls.length;
      const packets = voice.packets.length;
      await voice.speak(alice, guild, wav.question ?? "");
      await postedAfter(from, "Nine.");
      expect(transcriptions(openai)).toBe(before + 1);
      await voice.waitForBotSpeech(packets);
      const said = voice.botAudio(packets);
      expect(said.seconds).toBeGreaterThan(0.3);
      expect(said.rms).toBeGreaterThan(0.02);
      expect(gateway.stderr()).toMatch(/speech-to-text: groq failed .*trying openai/);
      expect(gateway.stderr()).toMatch(/text-to-speech: edge failed .*trying espeak-ng/);
    } finally {
      groq.mode = "normal";
      edge.mode = "normal";
    }
  }, 90_000);

  it("asks for approval of a dangerous command in the text channel and runs it after the press", async () => {
    const victim = join(h.cwd, "voice-victim");
    mkdirSync(victim);
    groq.unregisteredText = "Remove the victim folder.";
    llm.enqueue(reply().toolCall("terminal", { command: `rm -rf ${victim}` }), reply().text("Removed it."));
    const from = discord.calls.length;
    await voice.speak(alice, guild, wav.question ?? "");
    const hasButtons = (body: Record<string, unknown> | undefined) =>
      ((body?.["components"] as unknown[] | undefined) ?? []).length > 0;
    for (let i = 0; i < 1200 && !discord.calls.slice(from).some((c) => hasButtons(c.body)); i++)
      await sleep(25);
    const prompt = discord.calls.slice(from).find((c) => hasButtons(c.body));
    expect(prompt?.path).toBe(`/channels/${general}/messages`);
    const rows = prompt?.body?.["components"] as Array<{
      components: Array<{ label: string; custom_id: string }>;
    }>;
    const approve = rows.flatMap((r) => r.components).find((b) => b.label === "Approve once");
    expect(existsSync(victim)).toBe(true);
    const askId = [...discord.messages.values()]
      .filter((m) => m["channel_id"] === general && Array.isArray(m["components"]))
      .filter((m) => (m["components"] as unknown[]).length > 0)
      .at(-1)?.["id"] as string;
    discord.pressButton({ messageId: askId, customId: approve?.custom_id ?? "", user: alice });
    await postedAfter(from, "Removed it.");
    expect(existsSync(victim)).toBe(false);
  }, 90_000);

  it("a spoken no answers the approval prompt: the command is refused and the folder stays", async () => {
    const keep = join(h.cwd, "voice-keep");
    mkdirSync(keep);
    groq.unregisteredText = "Remove the keep folder.";
    llm.enqueue(reply().toolCall("terminal", { command: `rm -rf ${keep}` }), reply().text("Left it alone."));
    const from = discord.calls.length;
    await voice.speak(alice, guild, wav.question ?? "");
    const hasButtons = (body: Record<string, unknown> | undefined) =>
      ((body?.["components"] as unknown[] | undefined) ?? []).length > 0;
    for (let i = 0; i < 1200 && !discord.calls.slice(from).some((c) => hasButtons(c.body)); i++)
      await sleep(25);
    groq.unregisteredText = "No.";
    await voice.speak(alice, guild, wav.short ?? "");
    await postedAfter(from, "Left it alone.");
    expect(existsSync(keep)).toBe(true);
    const body = llm.chatRequests.at(-1)?.body as { messages?: { role: string; content: unknown }[] };
    const result = (body.messages ?? []).filter((m) => m.role === "tool").at(-1);
    expect(JSON.stringify(result?.content)).toMatch(/denied/i);
  }, 90_000);

  it("leaving mid-answer: the text still arrives, nothing more is spoken or heard, no temp audio is left", async () => {
    groq.unregisteredText = "What time is it?";
    llm.enqueue(reply().text("It is late.").delay(2_500));
    const from = discord.calls.length;
    await voice.speak(alice, guild, wav.question ?? "");
    await postedAfter(from, /^🎙️ alice: /);
    expect(await typed(alice, "/voice leave", /^👋/)).toBe("👋 Left Lounge.");
    const left = Date.now();
    await voice.waitForBot(guild, false);
    expect(voice.stateUpdates.at(-1)).toMatchObject({ guild_id: guild, channel_id: null });
    await postedAfter(from, "It is late.");
    await sleep(1_500);
    expect(voice.packets.filter((p) => p.at > left + 300)).toEqual([]);
    await expect(voice.speak(alice, guild, wav.short ?? "")).rejects.toThrow(/no voice session/);
    expect(await typed(alice, "/voice leave", /voice channel/)).toBe(
      "I'm not in a voice channel in this server.",
    );
    // The terminal tool's shell folder (the approval test) is not audio; nothing else may remain.
    expect(readdirSync(tmp).filter((f) => f.startsWith("hermes-") && !f.startsWith("hermes-shell-"))).toEqual(
      [],
    );
  }, 60_000);

  it("speaks the XChaCha20-Poly1305 mode when that is what the server offers", async () => {
    voice.modes = ["aead_xchacha20_poly1305_rtpsize"];
    await joinLounge();
    const description = voice.received.filter((p) => p.op === 1).at(-1)?.d as { data?: { mode?: string } };
    expect(description.data?.mode).toBe("aead_xchacha20_poly1305_rtpsize");
    groq.unregisteredText = "What time is it?";
    llm.enqueue(reply().text("Half past nine."));
    const from = discord.calls.length;
    const packets = voice.packets.length;
    await voice.speak(alice, guild, wav.question ?? "");
    await postedAfter(from, "Half past nine.");
    await voice.waitForBotSpeech(packets);
    expect(voice.botAudio(packets).rms).toBeGreaterThan(0.02);
    expect(voice.rejected).toEqual([]);
    expect(await typed(alice, "/voice leave", /^👋/)).toBe("👋 Left Lounge.");
  }, 90_000);

  it("says so and gives up when Discord demands DAVE end-to-end encryption (close 4017)", async () => {
    voice.refuseWith = 4017;
    try {
      const updates = voice.stateUpdates.length;
      const identifies = voice.received.filter((p) => p.op === 0).length;
      expect(await typed(alice, "/voice join", /Could not connect/)).toMatch(
        /Could not connect to 🔊 Lounge: Discord requires its DAVE end-to-end encryption for this call, which @discordjs\/voice 0\.18 does not implement\./,
      );
      await sleep(1_000);
      expect(voice.received.filter((p) => p.op === 0).length - identifies).toBeLessThanOrEqual(4);
      expect(voice.stateUpdates.at(-1)).toMatchObject({ guild_id: guild, channel_id: null });
      expect(voice.stateUpdates.length - updates).toBeLessThanOrEqual(6);
      expect(voice.botChannel(guild)).toBeUndefined();
      expect(await typed(alice, "/voice channel", /voice channel/)).toMatch(/^Not in a voice channel/);
    } finally {
      voice.refuseWith = undefined;
    }
  }, 60_000);

  it("leaves the voice channel and removes its temp folder when the gateway shuts down", async () => {
    voice.modes = ["aead_aes256_gcm_rtpsize", "aead_xchacha20_poly1305_rtpsize"];
    await joinLounge();
    expect(readdirSync(tmp).some((f) => f.startsWith("hermes-discord-voice-"))).toBe(true);
    await gateway.stop();
    expect(voice.stateUpdates.at(-1)).toMatchObject({ guild_id: guild, channel_id: null });
    expect(readdirSync(tmp).filter((f) => f.startsWith("hermes-discord-voice-"))).toEqual([]);
  }, 60_000);
});
