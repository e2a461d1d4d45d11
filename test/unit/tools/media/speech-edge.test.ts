import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findBinary } from "../../../../src/tools/media/shared.js";
import { edgeChunks, edgeSynthesize, escapeSsml, secMsGec } from "../../../../src/tools/media/speech/edge.js";
import { synthesize } from "../../../../src/tools/media/speech/synthesize.js";
import { type FakeEdgeTts, startFakeEdgeTts } from "../../../support/fake-edge-tts.js";

const hasEspeak = findBinary("espeak-ng", process.env) !== undefined;
const hasFfmpeg = findBinary("ffmpeg", process.env) !== undefined;
const dir = mkdtempSync(join(tmpdir(), "edge-tts-test-"));
let fake: FakeEdgeTts;
/** Real MP3 (espeak-ng speech encoded as Edge's 24 kHz mono 48 kbit/s) when the tools exist. */
let mp3 = Buffer.from("ID3\u0004\u0000not-really-mpeg", "latin1");

beforeAll(async () => {
  if (hasEspeak && hasFfmpeg) {
    const wav = join(dir, "voice.wav");
    execFileSync("espeak-ng", ["-w", wav, "Hello from the Edge voice."]);
    execFileSync("ffmpeg", [
      "-v",
      "error",
      "-y",
      "-i",
      wav,
      "-ar",
      "24000",
      "-ac",
      "1",
      "-b:a",
      "48k",
      join(dir, "v.mp3"),
    ]);
    mp3 = readFileSync(join(dir, "v.mp3"));
  }
  fake = await startFakeEdgeTts(mp3);
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  fake.mode = "normal";
  fake.skewMs = 0;
  fake.turns.length = 0;
  fake.refused.length = 0;
  fake.errors.length = 0;
});

const base = () => ({
  voice: "en-US-AriaNeural",
  url: fake.url,
  timeoutMs: 5000,
  maxBytes: 16 * 1024 * 1024,
});

describe("Edge TTS over its WebSocket protocol", () => {
  it("passes the service's handshake and message checks and returns the streamed MP3 bytes", async () => {
    const audio = await edgeSynthesize("Good morning, Hermes.", base());
    expect(fake.refused).toEqual([]);
    expect(fake.errors).toEqual([]);
    expect(audio.equals(mp3)).toBe(true);
    expect(fake.turns).toEqual([
      expect.objectContaining({
        voice: "en-US-AriaNeural",
        rate: "+0%",
        pitch: "+0Hz",
        volume: "+0%",
        text: "Good morning, Hermes.",
      }),
    ]);
  });

  it("passes voice and prosody from config through the engine", async () => {
    const out = join(dir, "de.mp3");
    const result = await synthesize("Guten Morgen.", {
      config: { tts: { provider: "edge", speed: 1.25, edge: { voice: "de-DE-KatjaNeural", pitch: "-5Hz" } } },
      env: { HERMES_EDGE_TTS_URL: fake.url, PATH: process.env.PATH },
      home: dir,
      outputPath: out,
    });
    expect(result).toMatchObject({ provider: "edge", format: "mp3", attempts: [] });
    expect(readFileSync(out).equals(mp3)).toBe(true);
    expect(fake.turns[0]).toMatchObject({ voice: "de-DE-KatjaNeural", rate: "+25%", pitch: "-5Hz" });
  });

  it("escapes SSML: markup in the text is spoken as text, never read as elements", async () => {
    const attack = `</prosody></voice><voice name='en-US-GuyNeural'>evil & "quoted" <break time='99s'/>`;
    await edgeSynthesize(attack, base());
    expect(fake.errors).toEqual([]);
    expect(fake.turns).toHaveLength(1);
    expect(fake.turns[0]?.voice).toBe("en-US-AriaNeural");
    expect(fake.turns[0]?.text).toBe(attack);
    expect(fake.turns[0]?.ssml).not.toContain("<break");
    expect(escapeSsml("a\u0000b\u001fc")).toBe("a b c");
  });

  it("refuses a configured voice or prosody that would inject markup, before connecting", async () => {
    await expect(edgeSynthesize("hi", { ...base(), voice: "en-US-AriaNeural'><x a='" })).rejects.toThrow(
      /not an Edge voice name/,
    );
    await expect(edgeSynthesize("hi", { ...base(), rate: "+0%' volume='+100%" })).rejects.toThrow(
      /tts\.edge\.rate/,
    );
    expect(fake.turns).toHaveLength(0);
  });

  it("times out a stream that never sends turn.end and closes the socket", async () => {
    fake.mode = "no-turn-end";
    const started = Date.now();
    await expect(edgeSynthesize("Hello.", { ...base(), timeoutMs: 700 })).rejects.toThrow(
      /Edge TTS sent no end of turn within 0\.7 s/,
    );
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("stops reading an endless audio stream at the byte limit", async () => {
    fake.mode = "endless-audio";
    await expect(edgeSynthesize("Hello.", { ...base(), maxBytes: 2 * 1024 * 1024 })).rejects.toThrow(
      /more than 2 MB of audio/,
    );
  });

  it("retries once with the server's clock when the time-based token is refused", async () => {
    fake.skewMs = 3 * 3600 * 1000;
    const audio = await edgeSynthesize("Clock check.", base());
    expect(fake.refused).toEqual(["Sec-MS-GEC"]);
    expect(audio.length).toBe(mp3.length);
  });

  it("computes Sec-MS-GEC from 5-minute steps of Windows file time", () => {
    const t = Date.UTC(2026, 10, 26, 12, 0, 0);
    expect(secMsGec(t)).toMatch(/^[0-9A-F]{64}$/);
    expect(secMsGec(t + 299_000)).toBe(secMsGec(t));
    expect(secMsGec(t + 300_000)).not.toBe(secMsGec(t));
  });

  it("splits long text into chunks under 4 KiB without cutting an entity", () => {
    const text = escapeSsml(`${"word & ".repeat(900)}end`);
    const chunks = edgeChunks(text);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(Buffer.byteLength(chunk)).toBeLessThanOrEqual(4096);
      expect(chunk).not.toMatch(/&[a-z]*$/);
    }
    expect(chunks.join(" ").replace(/\s+/g, " ")).toBe(text.replace(/\s+/g, " "));
  });
});

describe.skipIf(!hasEspeak)("Edge unreachable: espeak-ng speaks instead", () => {
  it("falls back when the service refuses, logs why, and leaves no temp files", async () => {
    fake.mode = "unavailable";
    const temp = mkdtempSync(join(tmpdir(), "edge-fallback-tmp-"));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = temp;
    const lines: string[] = [];
    try {
      const out = join(dir, "fallback.wav");
      const result = await synthesize("The network is down.", {
        config: {},
        env: { HERMES_EDGE_TTS_URL: fake.url, PATH: process.env.PATH },
        home: dir,
        outputPath: out,
        log: (line) => lines.push(line),
      });
      expect(result.provider).toBe("espeak-ng");
      expect(result.attempts).toEqual([
        { provider: "edge", error: "Edge TTS refused the connection (HTTP 503)." },
      ]);
      expect(lines).toEqual([
        "text-to-speech: edge failed (Edge TTS refused the connection (HTTP 503).); trying espeak-ng",
      ]);
      expect(readFileSync(out).subarray(0, 4).toString("latin1")).toBe("RIFF");
      expect(readdirSync(temp)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      rmSync(temp, { recursive: true, force: true });
    }
  });
});
