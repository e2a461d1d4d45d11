/**
 * The audio helpers of Discord voice channels: Opus from a Discord client (48 kHz stereo, 20 ms
 * frames, encoded here with opusscript) decoded back, folded to the 16 kHz mono the recogniser
 * gets, and wrapped in a WAV that ffprobe reads with the right rate, channels and length.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  opusDecoder,
  SPEECH_RATE,
  stereoMs,
  toSpeechPcm,
  wavFile,
} from "../../../src/gateway/platforms/discord-voice-audio.js";
import { findBinary } from "../../../src/tools/media/shared.js";
import { encodeOpus, FRAME_BYTES, measure } from "../../support/fake-discord-voice-rtp.js";

const dir = mkdtempSync(join(tmpdir(), "discord-voice-audio-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `seconds` of a 440 Hz tone at half scale, 48 kHz stereo s16le. */
function tone(seconds: number): Buffer {
  const frames = Math.round(seconds * 48_000);
  const pcm = Buffer.alloc(frames * 4);
  for (let i = 0; i < frames; i++) {
    const v = Math.round(Math.sin((2 * Math.PI * 440 * i) / 48_000) * 16_000);
    pcm.writeInt16LE(v, i * 4);
    pcm.writeInt16LE(v, i * 4 + 2);
  }
  return pcm;
}

describe("Discord voice audio", () => {
  it("decodes a client's Opus frames back to audio of the same length and level", () => {
    const source = tone(1);
    const decoder = opusDecoder();
    const pcm = Buffer.concat(encodeOpus(source).map((p) => decoder.decode(p) ?? Buffer.alloc(0)));
    decoder.close();
    expect(pcm.length).toBe(50 * FRAME_BYTES);
    expect(stereoMs(pcm.length)).toBe(1000);
    const level = measure(pcm).rms;
    expect(level).toBeGreaterThan(measure(source).rms * 0.7);
    expect(level).toBeLessThan(measure(source).rms * 1.3);
  });

  it("skips a damaged packet instead of throwing, and refuses work once closed", () => {
    const decoder = opusDecoder();
    expect(decoder.decode(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x00]))).toBeUndefined();
    decoder.close();
    decoder.close();
    expect(decoder.decode(encodeOpus(tone(0.02))[0] ?? Buffer.alloc(0))).toBeUndefined();
  });

  it("folds 48 kHz stereo to 16 kHz mono, averaging channels and samples", () => {
    const stereo = Buffer.alloc(12 * 2);
    // Two output samples: (L,R) pairs 100/300 three times, then -600/0 three times.
    for (let i = 0; i < 3; i++) {
      stereo.writeInt16LE(100, i * 4);
      stereo.writeInt16LE(300, i * 4 + 2);
      stereo.writeInt16LE(-600, 12 + i * 4);
      stereo.writeInt16LE(0, 12 + i * 4 + 2);
    }
    const mono = toSpeechPcm(stereo);
    expect([mono.readInt16LE(0), mono.readInt16LE(2)]).toEqual([200, -300]);
    expect(toSpeechPcm(Buffer.alloc(7)).length).toBe(0);
  });

  it.skipIf(!findBinary("ffprobe", process.env))(
    "writes a WAV ffprobe reads as 16 kHz mono of the right length",
    () => {
      const file = join(dir, "utterance.wav");
      writeFileSync(file, wavFile(toSpeechPcm(tone(1.5))));
      const probe = JSON.parse(
        execFileSync("ffprobe", ["-v", "error", "-show_streams", "-show_format", "-of", "json", file], {
          encoding: "utf8",
        }),
      ) as {
        streams: { sample_rate: string; channels: number; codec_name: string }[];
        format: { duration: string };
      };
      expect(probe.streams[0]).toMatchObject({
        sample_rate: String(SPEECH_RATE),
        channels: 1,
        codec_name: "pcm_s16le",
      });
      expect(Number(probe.format.duration)).toBeCloseTo(1.5, 2);
    },
  );
});
