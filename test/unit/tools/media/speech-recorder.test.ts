import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findBinary } from "../../../../src/tools/media/shared.js";
import { findRecorder, probeInput } from "../../../../src/tools/media/speech/recorder.js";

const hasRec = findBinary("rec", process.env) !== undefined;
// This machine (and CI) has sox but no sound card: the probe must say so plainly.
const noSoundCard = !existsSync("/dev/snd");

describe("finding a recorder for voice input", () => {
  it("names what to install when no recorder exists, per platform", () => {
    expect(() => findRecorder({ PATH: "" }, "linux")).toThrow(
      /Voice input needs a recorder and none is installed: install sox \(apt install sox.*arecord/,
    );
    expect(() => findRecorder({ PATH: "" }, "darwin")).toThrow(/brew install sox.*brew install ffmpeg/);
  });

  it.skipIf(!hasRec)("records 16 kHz mono WAV with sox's rec, for a fixed time when asked", () => {
    const recorder = findRecorder({ PATH: process.env.PATH }, "linux");
    expect(recorder.name).toBe("sox");
    expect(recorder.args("/tmp/a.wav", 2)).toEqual([
      "-q",
      "-c",
      "1",
      "-r",
      "16000",
      "-b",
      "16",
      "/tmp/a.wav",
      "trim",
      "0",
      "2",
    ]);
  });

  it("uses ffmpeg's avfoundation input on macOS, and arecord on Linux without sox", () => {
    const bin = mkdtempSync(join(tmpdir(), "hermes-recorders-"));
    try {
      for (const name of ["ffmpeg", "arecord"]) {
        writeFileSync(join(bin, name), "#!/bin/sh\n");
        chmodSync(join(bin, name), 0o755);
      }
      const mac = findRecorder({ PATH: bin }, "darwin");
      expect(mac.name).toBe("ffmpeg");
      expect(mac.args("/tmp/a.wav", 0.2)).toEqual(
        expect.arrayContaining(["-f", "avfoundation", "-i", ":0", "-t", "0.2", "-ac", "1", "-ar", "16000"]),
      );
      expect(mac.args("/tmp/a.wav").at(-1)).toBe("/tmp/a.wav");
      const linux = findRecorder({ PATH: bin }, "linux");
      expect(linux.name).toBe("arecord");
      expect(linux.args("/tmp/a.wav")).toEqual([
        "-q",
        "-f",
        "S16_LE",
        "-c",
        "1",
        "-r",
        "16000",
        "/tmp/a.wav",
      ]);
      // ffmpeg alone is not a Linux recorder here: it says what to install.
      const ffmpegOnly = mkdtempSync(join(tmpdir(), "hermes-recorders-"));
      writeFileSync(join(ffmpegOnly, "ffmpeg"), "#!/bin/sh\n");
      chmodSync(join(ffmpegOnly, "ffmpeg"), 0o755);
      expect(() => findRecorder({ PATH: ffmpegOnly }, "linux")).toThrow(/install sox/);
      rmSync(ffmpegOnly, { recursive: true, force: true });
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it.skipIf(!hasRec || !noSoundCard)(
    "reports a missing input device clearly and leaves no probe file",
    async () => {
      const before = readdirSync(tmpdir()).filter((n) => n.startsWith("hermes-mic-")).length;
      await expect(probeInput({ PATH: process.env.PATH }, "linux")).rejects.toThrow(
        /No input device could be opened \(sox: .*\)\. Connect a microphone, or check that PulseAudio\/PipeWire \(pactl info\) or ALSA \(arecord -l\) lists one\./,
      );
      expect(readdirSync(tmpdir()).filter((n) => n.startsWith("hermes-mic-")).length).toBe(before);
    },
  );
});
