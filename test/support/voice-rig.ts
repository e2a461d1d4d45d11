/**
 * Audio devices for voice-mode tests, without a sound card: a "microphone" script that writes an
 * espeak-ng utterance (resampled by sox to 16 kHz mono, with silence around it) into the file the
 * recorder would write, and a "speaker" script that keeps a copy of everything played. Both are
 * handed to Hermes through voice mode's test seam (HERMES_VOICE_RECORD_COMMAND / _PLAY_COMMAND).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

/** Temp folders made for the importing test file's rigs and homes, removed after its tests. */
const made = new Set<string>();
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
  made.clear();
});

/** A temp folder removed once the test file's tests have run (rigs, homes, fake programs). */
export function tempFolder(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

export const hasAudioTools =
  spawnSync("espeak-ng", ["--version"]).status === 0 && spawnSync("sox", ["--version"]).status === 0;

export interface VoiceRig {
  dir: string;
  /** The espeak-ng WAV the microphone "hears". */
  speech: string;
  /** Where the speaker keeps what it played. */
  played: string;
  /** Every file the recorder was asked to write, one per line. */
  micLog: string;
  recordCommand: string;
  playCommand: string;
  /** Files played, oldest first. */
  playedFiles(): string[];
}

/**
 * `words` spoken by espeak-ng; the microphone waits `leadSeconds` (the user reaching for the key),
 * then delivers the speech with `leadSilence` (0.3) seconds of quiet before it and `tailSilence`
 * (3) after it. `speakSeconds` is how
 * long the speaker takes to play an answer (beeps play at once); `holdSeconds` keeps the
 * recorder running that long after the words.
 */
export function voiceRig(
  words: string,
  options: {
    leadSeconds?: number;
    leadSilence?: number;
    tailSilence?: number;
    speakSeconds?: number;
    holdSeconds?: number;
  } = {},
): VoiceRig {
  const dir = tempFolder("hermes-voice-rig-");
  const speech = join(dir, "speech.wav");
  const played = join(dir, "played");
  const micLog = join(dir, "mic.log");
  mkdirSync(played);
  execFileSync("espeak-ng", ["-w", speech, words]);
  const mic = join(dir, "mic.sh");
  writeFileSync(
    mic,
    [
      "#!/bin/sh",
      `echo "$1" >> '${micLog}'`,
      `echo $$ > '${dir}/mic.pid'`,
      `sleep ${options.leadSeconds ?? 1}`,
      `${options.holdSeconds ? "" : "exec "}sox -q '${speech}' -r 16000 -c 1 -b 16 -e signed-integer "$1" pad ${options.leadSilence ?? 0.3} ${options.tailSilence ?? 3}`,
      // A microphone left open: the recorder keeps running after the words.
      ...(options.holdSeconds ? [`sleep ${options.holdSeconds}`] : []),
      "",
    ].join("\n"),
  );
  const speaker = join(dir, "speaker.sh");
  writeFileSync(
    speaker,
    [
      "#!/bin/sh",
      `echo "$1" >> '${dir}/speaker.log'`,
      `cp "$1" '${played}/'"$(date +%s%N)-$(basename "$1")"`,
      `case "$1" in *beep*) ;; *) echo $$ > '${dir}/speaker.pid'; sleep ${options.speakSeconds ?? 3} ;; esac`,
      "",
    ].join("\n"),
  );
  chmodSync(mic, 0o755);
  chmodSync(speaker, 0o755);
  return {
    dir,
    speech,
    played,
    micLog,
    recordCommand: `${mic} {output}`,
    playCommand: `${speaker} {input}`,
    playedFiles: () =>
      readdirSync(played)
        .sort()
        .map((f) => join(played, f)),
  };
}

/** sox's figures for an audio file: length in seconds and RMS amplitude (0..1). */
export function soxStat(file: string): { seconds: number; rms: number } {
  const out = spawnSync("sox", [file, "-n", "stat"], { encoding: "utf8" }).stderr;
  const field = (name: string) => Number(new RegExp(`${name}:\\s+([-\\d.e]+)`).exec(out)?.[1] ?? Number.NaN);
  return { seconds: field("Length \\(seconds\\)"), rms: field("RMS\\s+amplitude") };
}

/** The audio file a speech-to-text request uploaded (multipart `file`). */
export async function uploadedAudio(
  request: { headers: Record<string, unknown>; body: Buffer },
  into: string,
): Promise<string> {
  const form = await new Request("http://x/", {
    method: "POST",
    headers: { "content-type": String(request.headers["content-type"]) },
    body: request.body,
  }).formData();
  const file = form.get("file") as File;
  const path = join(into, `uploaded-${Date.now()}.wav`);
  writeFileSync(path, Buffer.from(await file.arrayBuffer()));
  return path;
}

/** Polls `check` every 25 ms until it holds; throws after `ms`. */
export async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A voice host's `paint` that leaves text as it is (no colours to strip in assertions). */
export const plainPaint = {
  bold: (t: string) => t,
  dim: (t: string) => t,
  red: (t: string) => t,
  green: (t: string) => t,
  yellow: (t: string) => t,
  cyan: (t: string) => t,
};
