/**
 * Voice mode's whole chain without a sound card: the "microphone" (voice-rig.ts) delivers an
 * espeak-ng utterance through sox, silence detection ends it, the fake Groq speech API transcribes
 * the uploaded WAV, and spoken answers (espeak-ng) reach the "speaker", where sox measures them.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VoiceMode, type VoiceState } from "../../../../src/cli/voice/voice-mode.js";
import { type FakeSpeechApi, startFakeSpeechApi } from "../../../support/fake-speech-api.js";
import {
  hasAudioTools,
  plainPaint,
  soxStat,
  tempFolder,
  until,
  uploadedAudio,
  voiceRig,
} from "../../../support/voice-rig.js";

const paint = plainPaint;

let speech: FakeSpeechApi;
beforeEach(async () => {
  speech = await startFakeSpeechApi();
});
afterEach(async () => {
  await speech.close();
});

function setup(
  rig: ReturnType<typeof voiceRig> | null,
  extraEnv: Record<string, string> = {},
  voice: Record<string, unknown> = {},
) {
  const printed: string[] = [];
  const sent: string[] = [];
  const states: VoiceState[] = [];
  let mode: VoiceMode;
  const config = {
    stt: { provider: "groq", groq: { base_url: `${speech.url}/openai/v1` } },
    tts: { provider: "espeak-ng" },
    voice: { silence_duration: 1.0, ...voice },
  };
  const env = {
    PATH: process.env.PATH,
    GROQ_API_KEY: speech.keys.groq,
    ...(rig
      ? { HERMES_VOICE_RECORD_COMMAND: rig.recordCommand, HERMES_VOICE_PLAY_COMMAND: rig.playCommand }
      : {}),
    ...extraEnv,
  };
  mode = new VoiceMode({
    config,
    env,
    home: tempFolder("hermes-voice-home-"),
    host: {
      print: (...lines) => printed.push(...lines),
      refresh: () => {
        if (states.at(-1) !== mode.state) states.push(mode.state);
      },
      send: (text) => sent.push(text),
      busy: () => false,
      paint,
    },
  });
  return { mode, printed, sent, states };
}

const ctrlB = { name: "b", ctrl: true };

/** The pid a rig script wrote into `file`, once it is there in full (a test never signals 0). */
async function pidIn(file: string): Promise<number> {
  let pid = 0;
  await until(() => {
    pid = existsSync(file) ? Number(readFileSync(file, "utf8").trim()) : 0;
    return Number.isInteger(pid) && pid > 0;
  });
  return pid;
}

describe.skipIf(!hasAudioTools)("voice mode", () => {
  it("records an utterance, ends it at the silence, transcribes it and sends the transcript", async () => {
    const rig = voiceRig("What is the capital of France", { leadSeconds: 0.3, tailSilence: 3 });
    speech.unregisteredText = "What is the capital of France?";
    const { mode, printed, sent, states } = setup(rig);
    expect(await mode.run("on")).toEqual([expect.stringContaining("Voice mode on: press Ctrl+B to talk")]);
    expect(mode.onKey(ctrlB)).toBe(true);
    await until(() => sent.length > 0);
    expect(sent).toEqual(["What is the capital of France?"]);
    expect(printed).toContain("🎙 What is the capital of France?");
    expect(states).toEqual(["idle", "listening", "transcribing", "thinking"]);
    // What went to the speech API: the spoken words (1.9 s) with the lead-in and a quarter second
    // after, not the three seconds of silence the microphone went on with.
    const upload = await uploadedAudio(speech.requests[0] as never, rig.dir);
    const stat = soxStat(upload);
    expect(stat.seconds).toBeGreaterThan(1.9);
    expect(stat.seconds).toBeLessThan(3);
    expect(stat.rms).toBeGreaterThan(0.02);
    // The start and stop beeps played; the recording's temp folder is gone.
    expect(rig.playedFiles().map((f) => f.replace(/.*-/, ""))).toEqual(["880.wav", "660.wav"]);
    const recordedTo = readFileSync(rig.micLog, "utf8").trim();
    await until(() => !existsSync(dirname(recordedTo)), 5000);
    await mode.answered("Paris.");
    expect(mode.state).toBe("idle");
  });

  it("speaks the answer under /voice tts without its code, and a key stops it (barge-in)", async () => {
    const rig = voiceRig("unused", { speakSeconds: 30 });
    const { mode, states, printed } = setup(rig, {}, { beep_enabled: false });
    expect(await mode.run("tts")).toEqual(["Spoken answers on (any key stops one)."]);
    const done = mode.answered(
      "The capital of **France** is Paris, a city on the Seine.\n\n```sh\nrm -rf /\n```\n\nIt has about two million people.",
    );
    await until(() => existsSync(join(rig.dir, "speaker.pid")));
    expect(mode.state).toBe("speaking");
    expect(mode.statusText()).toContain("speaking");
    const pid = await pidIn(join(rig.dir, "speaker.pid"));
    const started = Date.now();
    expect(mode.onKey({ name: "x" })).toBe(true);
    await done;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(states).toEqual(["idle", "speaking", "idle"]);
    // The speaker's whole process group was stopped (its `sleep 30` too).
    expect(() => process.kill(pid, 0)).toThrow();
    const [answer] = rig.playedFiles();
    const stat = soxStat(answer as string);
    expect(stat.seconds).toBeGreaterThan(3);
    expect(stat.seconds).toBeLessThan(9);
    expect(stat.rms).toBeGreaterThan(0.02);
    expect(printed).toEqual([]);
    // The synthesised answer's temp folder is gone.
    const playedFrom = readFileSync(join(rig.dir, "speaker.log"), "utf8").trim();
    expect(playedFrom).toMatch(/hermes-speak-/);
    expect(existsSync(dirname(playedFrom))).toBe(false);
  });

  it("talking over a spoken answer stops it, and what was said is the next message (barge-in)", async () => {
    // The microphone hears a second of the room, then the user's question, then quiet.
    const rig = voiceRig("What about Germany", {
      leadSeconds: 0.8,
      leadSilence: 1,
      tailSilence: 2,
      speakSeconds: 30,
    });
    speech.unregisteredText = "What about Germany?";
    const { mode, sent, states, printed } = setup(rig, {}, { beep_enabled: false });
    await mode.run("on");
    await mode.run("tts");
    const started = Date.now();
    await mode.answered("The capital of France is Paris. It lies on the Seine and has many bridges.");
    // The answer would have played 30 s: the user's words stopped it and were sent.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(sent).toEqual(["What about Germany?"]);
    expect(printed).toContain("🎙 What about Germany?");
    expect(states).toEqual(["idle", "speaking", "listening", "transcribing", "thinking"]);
    const speaker = await pidIn(join(rig.dir, "speaker.pid"));
    expect(() => process.kill(speaker, 0)).toThrow();
    // What was uploaded holds the whole question (from before the trigger), not the room after it.
    const words = soxStat(rig.speech).seconds;
    const upload = soxStat(await uploadedAudio(speech.requests[0] as never, rig.dir));
    expect(upload.seconds).toBeGreaterThan(words);
    expect(upload.seconds).toBeLessThan(words + 1.6);
    expect(upload.rms).toBeGreaterThan(0.02);
    // The answer's and the recording's temp folder is gone.
    const recordedTo = readFileSync(rig.micLog, "utf8").trim();
    await until(() => !existsSync(dirname(recordedTo)), 5000);
    await mode.answered(null);
    expect(mode.state).toBe("idle");
  });

  it("with only /voice tts the microphone stays closed while answers play; a key stops both", async () => {
    const rig = voiceRig("not for you", { leadSeconds: 0, leadSilence: 1, speakSeconds: 30 });
    const ttsOnly = setup(rig, {}, { beep_enabled: false });
    await ttsOnly.mode.run("tts");
    const done = ttsOnly.mode.answered("Paris is the capital of France.");
    await until(() => existsSync(join(rig.dir, "speaker.pid")));
    await new Promise((r) => setTimeout(r, 2500));
    expect(ttsOnly.mode.state).toBe("speaking");
    expect(existsSync(rig.micLog)).toBe(false);
    ttsOnly.mode.onKey({ name: "x" });
    await done;
    expect(ttsOnly.sent).toEqual([]);

    // Voice mode on, voice.barge_in false: no microphone either.
    const off = setup(rig, {}, { beep_enabled: false, barge_in: false });
    await off.mode.run("on");
    await off.mode.run("tts");
    const quiet = off.mode.answered("Paris is the capital of France.");
    await new Promise((r) => setTimeout(r, 2500));
    expect(existsSync(rig.micLog)).toBe(false);
    off.mode.onKey({ name: "x" });
    await quiet;

    // With barge-in on, a key still stops the answer, and the listening microphone stops with it.
    const rig2 = voiceRig("too late", { leadSeconds: 20, speakSeconds: 30 });
    const on = setup(rig2, {}, { beep_enabled: false });
    await on.mode.run("on");
    await on.mode.run("tts");
    const stopped = on.mode.answered("Paris is the capital of France.");
    await until(() => existsSync(join(rig2.dir, "mic.pid")));
    const mic = await pidIn(join(rig2.dir, "mic.pid"));
    on.mode.onKey({ name: "x" });
    await stopped;
    expect(() => process.kill(mic, 0)).toThrow();
    expect(on.sent).toEqual([]);
    expect(on.mode.state).toBe("idle");
    expect(speech.requests).toEqual([]);
  });

  it("the record key again ends the utterance at once, and max_recording_seconds ends it too", async () => {
    speech.unregisteredText = "Stop here.";
    const rig = voiceRig("Stop here", { leadSeconds: 0, tailSilence: 0.1, holdSeconds: 60 });
    const { mode, sent } = setup(rig, {}, { beep_enabled: false, silence_duration: 30 });
    await mode.run("on");
    mode.onKey(ctrlB);
    await until(() => existsSync(join(rig.dir, "mic.pid")));
    await new Promise((r) => setTimeout(r, 800));
    expect(mode.state).toBe("listening");
    const pid = await pidIn(join(rig.dir, "mic.pid"));
    mode.onKey(ctrlB);
    await until(() => sent.length > 0, 5000);
    expect(sent).toEqual(["Stop here."]);
    expect(() => process.kill(pid, 0)).toThrow();

    const capped = setup(rig, {}, { beep_enabled: false, silence_duration: 30, max_recording_seconds: 1 });
    await capped.mode.run("on");
    const started = Date.now();
    capped.mode.onKey(ctrlB);
    await until(() => capped.sent.length > 0, 8000);
    expect(Date.now() - started).toBeLessThan(4000);
    expect(capped.sent).toEqual(["Stop here."]);
  });

  it("Ctrl+C while listening stops the recorder and sends nothing", async () => {
    const rig = voiceRig("never sent", { leadSeconds: 30 });
    const { mode, printed, sent } = setup(rig, {}, { beep_enabled: false });
    await mode.run("on");
    mode.onKey(ctrlB);
    await until(() => existsSync(join(rig.dir, "mic.pid")));
    const pid = await pidIn(join(rig.dir, "mic.pid"));
    expect(mode.interrupt()).toBe(true);
    await until(() => printed.includes("⏹ Voice input cancelled."));
    expect(sent).toEqual([]);
    expect(mode.state).toBe("idle");
    expect(() => process.kill(pid, 0)).toThrow();
    expect(speech.requests).toEqual([]);
  });

  it("records nothing while voice mode is off, and nothing is sent for silence", async () => {
    const rig = voiceRig("hello", { leadSeconds: 0 });
    const { mode, printed, sent } = setup(rig, {}, { beep_enabled: false });
    expect(mode.onKey(ctrlB)).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(rig.micLog)).toBe(false);
    // A microphone that hears only quiet: "nothing heard", no request to the speech API.
    const quiet = setup(rig, {}, { beep_enabled: false, silence_threshold: 30000 });
    await quiet.mode.run("on");
    quiet.mode.onKey(ctrlB);
    await until(() => quiet.printed.length > 0);
    expect(quiet.printed[0]).toMatch(/^Nothing heard/);
    expect(quiet.sent).toEqual([]);
    expect(speech.requests).toEqual([]);
    expect(printed).toEqual([]);
    expect(sent).toEqual([]);
  });

  it("says plainly that no input device opened, without the sound library's noise, and stays off", async () => {
    const bin = tempFolder("hermes-fake-rec-");
    writeFileSync(
      join(bin, "rec"),
      [
        "#!/bin/sh",
        'for i in 1 2 3 4 5 6 7 8; do echo "ALSA lib conf.c:5180:(_snd_config_evaluate) function returned error: No such file or directory" >&2; done',
        'echo "rec FAIL sox: Sorry, there is no default audio device configured" >&2',
        "exit 1",
        "",
      ].join("\n"),
    );
    chmodSync(join(bin, "rec"), 0o755);
    const { mode } = setup(null, { PATH: bin });
    const error = await mode.run("on").catch((e: Error) => e);
    expect(String(error)).toMatch(
      /No input device could be opened \(sox: rec FAIL sox: Sorry, there is no default audio device configured\)\. Connect a microphone/,
    );
    expect(String(error)).not.toContain("ALSA lib");
    expect(mode.enabled).toBe(false);
  });

  it("records through an installed arecord (ALSA) when sox is absent, with no test seam", async () => {
    const bin = tempFolder("hermes-fake-arecord-");
    const speechWav = voiceRig("What is the capital of France").speech;
    speech.unregisteredText = "What is the capital of France?";
    // arecord's stand-in: a timed probe (-d) records 0.2 s of quiet; otherwise it "hears" the
    // words and stays open, as a microphone does, until it is stopped.
    writeFileSync(
      join(bin, "arecord"),
      [
        "#!/bin/sh",
        `echo "$@" >> '${bin}/arecord.log'`,
        "for out; do :; done",
        `case " $* " in *" -d "*) exec /usr/bin/sox -q -n -r 16000 -c 1 -b 16 -e signed-integer "$out" trim 0 0.2 ;; esac`,
        `echo $$ > '${bin}/arecord.pid'`,
        `/usr/bin/sox -q '${speechWav}' -r 16000 -c 1 -b 16 -e signed-integer "$out" pad 0.3 3`,
        "exec /bin/sleep 60",
        "",
      ].join("\n"),
    );
    chmodSync(join(bin, "arecord"), 0o755);
    const { mode, sent } = setup(null, { PATH: bin }, { beep_enabled: false });
    if (process.platform !== "linux") return;
    expect(await mode.run("on")).toEqual([expect.stringContaining("Voice mode on")]);
    expect((await mode.run("status")).join("\n")).toContain(`Recorder: ${join(bin, "arecord")}`);
    mode.onKey(ctrlB);
    await until(() => sent.length > 0);
    expect(sent).toEqual(["What is the capital of France?"]);
    const [probe, recording] = readFileSync(join(bin, "arecord.log"), "utf8").trim().split("\n");
    expect(probe).toMatch(/^-q -f S16_LE -c 1 -r 16000 -d 1 \S+probe\.wav$/);
    expect(recording).toMatch(/^-q -f S16_LE -c 1 -r 16000 \S+recording\.wav$/);
    // Stopped at the silence after the words, the whole group (its sleep too).
    const pid = await pidIn(join(bin, "arecord.pid"));
    await until(() => {
      try {
        process.kill(-pid, 0);
        return false;
      } catch {
        return true;
      }
    }, 5000);
    const upload = soxStat(await uploadedAudio(speech.requests[0] as never, bin));
    expect(upload.seconds).toBeGreaterThan(1.9);
    expect(upload.seconds).toBeLessThan(3);
  });

  it("says what to install when no recorder is there, and stays off", async () => {
    const empty = tempFolder("hermes-nopath-");
    const { mode } = setup(null, { PATH: empty });
    await expect(mode.run("on")).rejects.toThrow(/needs a recorder and none is installed: install sox/);
    expect(mode.enabled).toBe(false);
    expect(mode.onKey(ctrlB)).toBe(false);
    const status = (await mode.run("status")).join("\n");
    expect(status).toMatch(/Voice mode: off/);
    expect(status).toMatch(/Recorder: Voice input needs a recorder/);
    expect(status).toMatch(/Barge-in: a key, or talking over an answer \(voice mode on\)/);
  });
});
