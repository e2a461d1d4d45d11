import { describe, expect, it } from "vitest";
import {
  BargeInDetector,
  beepWav,
  pcmOffset,
  rms,
  SilenceDetector,
  wavFile,
} from "../../../../src/cli/voice/wav.js";

const RATE = 16_000;

/** `seconds` of a tone at `amplitude` (0 gives silence), as 16-bit PCM. */
function tone(seconds: number, amplitude: number, freq = 300): Buffer {
  const n = Math.round(seconds * RATE);
  const b = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++)
    b.writeInt16LE(Math.round(Math.sin((2 * Math.PI * freq * i) / RATE) * amplitude), i * 2);
  return b;
}

describe("silence detection", () => {
  it("ends an utterance after speech followed by silence_duration of quiet", () => {
    const d = new SilenceDetector(200, 1.0);
    expect(d.push(tone(0.5, 0))).toBe("none");
    expect(d.push(tone(0.6, 5000))).toBe("speech-started");
    expect(d.push(tone(0.9, 0))).toBe("none");
    expect(d.ended).toBe(false);
    expect(d.push(tone(0.2, 0))).toBe("utterance-ended");
    expect(d.ended).toBe(true);
    // Kept: the lead-in, the speech and a quarter second, not the trailing second of quiet.
    expect(d.keepBytes()).toBe(Math.round(((500 + 600 + 250) * RATE) / 1000) * 2);
  });

  it("never ends on silence before anyone spoke, however long", () => {
    const d = new SilenceDetector(200, 0.5);
    for (let i = 0; i < 20; i++) expect(d.push(tone(0.5, 0))).toBe("none");
    expect(d.heard).toBe(false);
    expect(d.ended).toBe(false);
  });

  it("treats background noise under the threshold as silence and a pause shorter than the duration as speech", () => {
    const d = new SilenceDetector(200, 1.0);
    d.push(tone(0.3, 4000));
    d.push(tone(0.8, 150)); // hum at RMS ~106: quiet, but under a second of it
    expect(d.ended).toBe(false);
    d.push(tone(0.3, 4000)); // the speaker goes on: the count restarts
    d.push(tone(0.9, 150));
    expect(d.ended).toBe(false);
    d.push(tone(0.15, 150));
    expect(d.ended).toBe(true);
  });

  it("handles chunks of any size, even odd byte counts split mid-sample", () => {
    const pcm = Buffer.concat([tone(0.4, 6000), tone(1.2, 0)]);
    const d = new SilenceDetector(200, 1.0);
    let ended = false;
    for (let at = 0; at < pcm.length; at += 333)
      if (d.push(pcm.subarray(at, at + 333)) === "utterance-ended") ended = true;
    expect(ended).toBe(true);
  });

  it("measures RMS of 16-bit samples", () => {
    expect(rms(tone(0.1, 0))).toBe(0);
    expect(rms(tone(0.1, 1000))).toBeGreaterThan(700);
    expect(rms(tone(0.1, 1000))).toBeLessThan(710);
    expect(rms(Buffer.alloc(1))).toBe(0);
  });
});

describe("WAV handling", () => {
  it("finds the samples after the header and writes a header the length of the data", () => {
    const pcm = tone(0.25, 3000);
    const file = wavFile(pcm);
    expect(file.length).toBe(44 + pcm.length);
    expect(file.toString("ascii", 0, 4)).toBe("RIFF");
    expect(file.readUInt32LE(40)).toBe(pcm.length);
    expect(pcmOffset(file)).toBe(44);
  });

  it("skips chunks before data (a LIST chunk) and waits while the header is incomplete", () => {
    const list = Buffer.concat([Buffer.from("LIST"), Buffer.from([6, 0, 0, 0]), Buffer.from("abcdef")]);
    const plain = wavFile(tone(0.01, 100));
    const withList = Buffer.concat([plain.subarray(0, 36), list, plain.subarray(36)]);
    expect(pcmOffset(withList)).toBe(36 + 14 + 8);
    expect(pcmOffset(plain.subarray(0, 30))).toBeNull();
    expect(pcmOffset(Buffer.alloc(4))).toBeNull();
  });

  it("makes an audible beep", () => {
    const beep = beepWav(880);
    expect(rms(beep.subarray(44))).toBeGreaterThan(3000);
    expect(beep.readUInt32LE(40)).toBe(Math.round(0.12 * RATE) * 2);
  });
});

describe("barge-in detection (talking over a spoken answer)", () => {
  /** Feeds `pcm` in 100 ms reads (as the recorder file is read); the seconds fed when it tripped. */
  function tripAt(detector: BargeInDetector, pcm: Buffer): number | null {
    const step = RATE / 10;
    for (let at = 0; at < pcm.length; at += step * 2)
      if (detector.push(pcm.subarray(at, at + step * 2)))
        return Math.min(pcm.length, at + step * 2) / 2 / RATE;
    return null;
  }

  it("trips on a voice over a quiet room within half a second of it starting", () => {
    const d = new BargeInDetector(200);
    // Sine amplitude 4000 is RMS ~2830: ordinary speech close to the microphone.
    const at = tripAt(d, Buffer.concat([tone(0.6, 100), tone(1, 4000)]));
    expect(d.level).toBe(1500);
    expect(at).not.toBeNull();
    expect(at as number).toBeGreaterThan(0.8);
    expect(at as number).toBeLessThanOrEqual(1.1);
  });

  it("never trips on the answer's own bleed into the microphone, however long it plays", () => {
    // Bleed at RMS ~1400 throughout: the trigger sits three times over it.
    const d = new BargeInDetector(200);
    expect(tripAt(d, tone(30, 2000))).toBeNull();
    expect(d.level).toBeGreaterThan(4000 - 1);
    // Calibrated on a quiet start, bleed at RMS ~1060 stays under the trigger's minimum.
    const quietStart = new BargeInDetector(200);
    expect(tripAt(quietStart, Buffer.concat([tone(0.5, 50), tone(30, 1500)]))).toBeNull();
    expect(quietStart.level).toBe(1500);
  });

  it("ignores clicks, coughs and knocks shorter than the sustain window", () => {
    const d = new BargeInDetector(200);
    const knocks: Buffer[] = [tone(0.5, 50)];
    for (let i = 0; i < 20; i++) knocks.push(tone(0.15, 12_000), tone(0.4, 50));
    expect(tripAt(d, Buffer.concat(knocks))).toBeNull();
  });

  it("keeps counting through the short dips between words", () => {
    const d = new BargeInDetector(200);
    const words: Buffer[] = [tone(0.5, 50)];
    for (let i = 0; i < 5; i++) words.push(tone(0.27, 6000), tone(0.03, 50));
    expect(tripAt(d, Buffer.concat(words))).not.toBeNull();
  });

  it("never needs more than speech reaches, even over a loud answer", () => {
    const d = new BargeInDetector(200);
    // Loud bleed (RMS ~2800) puts the trigger at its ceiling; a voice at RMS ~5600 still trips it.
    expect(tripAt(d, Buffer.concat([tone(0.5, 4000), tone(2, 4000)]))).toBeNull();
    expect(d.level).toBe(4000);
    expect(tripAt(d, tone(1, 8000))).not.toBeNull();
  });
});
