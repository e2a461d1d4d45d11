/**
 * Finding a way to record the default input for voice mode, and saying plainly what is missing
 * when there is none: sox's `rec` (PulseAudio or ALSA), `arecord` (ALSA), or `ffmpeg` with
 * avfoundation on macOS. `probeInput` records a fifth of a second so "installed but no microphone"
 * is reported before the user talks into nothing.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Env, findBinary, runProgram } from "../shared.js";

export interface Recorder {
  program: string;
  /** Arguments that record 16 kHz mono 16-bit WAV into `output` until stopped (or `seconds`). */
  args(output: string, seconds?: number): string[];
  name: "sox" | "arecord" | "ffmpeg";
}

const INSTALL: Record<string, string> = {
  linux: "install sox (apt install sox / dnf install sox) or alsa-utils for arecord",
  darwin: "install sox (brew install sox) or ffmpeg (brew install ffmpeg)",
};

/** The first recorder installed for `platform`; throws naming what to install. */
export function findRecorder(env: Env, platform: NodeJS.Platform = process.platform): Recorder {
  const rec = findBinary("rec", env) ?? findBinary("sox", env);
  if (rec) {
    const viaSox = rec.endsWith("/sox");
    return {
      name: "sox",
      program: rec,
      args: (output, seconds) => [
        ...(viaSox ? ["-d"] : []),
        "-q",
        "-c",
        "1",
        "-r",
        "16000",
        "-b",
        "16",
        output,
        ...(seconds ? ["trim", "0", String(seconds)] : []),
      ],
    };
  }
  if (platform === "linux") {
    const arecord = findBinary("arecord", env);
    if (arecord)
      return {
        name: "arecord",
        program: arecord,
        args: (output, seconds) => [
          "-q",
          "-f",
          "S16_LE",
          "-c",
          "1",
          "-r",
          "16000",
          ...(seconds ? ["-d", String(Math.max(1, Math.ceil(seconds)))] : []),
          output,
        ],
      };
  }
  if (platform === "darwin") {
    const ffmpeg = findBinary("ffmpeg", env);
    if (ffmpeg)
      return {
        name: "ffmpeg",
        program: ffmpeg,
        args: (output, seconds) => [
          "-v",
          "error",
          "-nostdin",
          "-y",
          "-f",
          "avfoundation",
          "-i",
          ":0",
          ...(seconds ? ["-t", String(seconds)] : []),
          "-ac",
          "1",
          "-ar",
          "16000",
          output,
        ],
      };
  }
  throw new Error(
    `Voice input needs a recorder and none is installed: ${INSTALL[platform] ?? "install sox"}.`,
  );
}

/**
 * Records 0.2 s from the default input; throws a message saying there is no usable input device
 * (and what to check) when the recorder cannot open one.
 */
export async function probeInput(env: Env, platform: NodeJS.Platform = process.platform): Promise<Recorder> {
  const recorder = findRecorder(env, platform);
  const dir = await mkdtemp(join(tmpdir(), "hermes-mic-"));
  try {
    await runProgram(recorder.program, recorder.args(join(dir, "probe.wav"), 0.2), {
      timeoutMs: 10_000,
      env,
    });
    return recorder;
  } catch (error) {
    const detail = (error as Error).message;
    throw new Error(
      `No input device could be opened (${recorder.name}: ${detail.slice(0, 200)}). Connect a microphone, or check that PulseAudio/PipeWire (pactl info) or ALSA (arecord -l) lists one.`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
