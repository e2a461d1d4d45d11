/**
 * The microphone and the speaker for voice mode. Recording runs the recorder (sox `rec`,
 * `arecord`, ffmpeg avfoundation: tools/media/speech/recorder.ts) into a WAV file and reads the
 * file as it grows, feeding a `SilenceDetector`; the utterance ends at silence after speech, on
 * `stop()`, or at `max_recording_seconds`. Playback runs `play`/`aplay`/`ffplay`/`afplay`. Both
 * run in their own process group, so stopping them stops everything they started, and hermes
 * exiting (Ctrl+D, /quit, SIGTERM, the terminal closing) kills them: a microphone never stays
 * open behind a Hermes that is gone.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, open, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findBinary } from "../../tools/media/shared.js";
import { findRecorder } from "../../tools/media/speech/index.js";
import { onProcessExit } from "../../util/exit-reaper.js";
import type { VoiceSettings } from "./settings.js";
import { BargeInDetector, pcmOffset, SilenceDetector, wavFile } from "./wav.js";

type Env = Readonly<Record<string, string | undefined>>;

const POLL_MS = 100;
/** What a barge-in keeps from before it tripped, so the first words are not lost. */
const PRE_ROLL_BYTES = 1.2 * 32_000;

function fill(argv: readonly string[], field: string, path: string): string[] {
  const filled = argv.map((a) => a.replaceAll(`{${field}}`, path));
  return filled.some((a, i) => a !== argv[i]) ? filled : [...filled, path];
}

/** Starts `argv` in its own process group, killed with hermes if it is still running then. */
function startGroup(argv: readonly string[], env: Env): ChildProcess {
  const [program, ...args] = argv;
  const child = spawn(program ?? "", args, {
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
    env: env as NodeJS.ProcessEnv,
  });
  const forget = onProcessExit(() => signalGroup(child, "SIGKILL"));
  child.once("exit", forget);
  child.once("error", forget);
  return child;
}

/** Signals the whole process group; a group already gone is fine. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Gone already.
  }
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.once("exit", (code) => resolve(code));
    child.once("error", () => resolve(-1));
  });
}

/** Stops a group politely (SIGINT lets sox/arecord finish the file), then firmly. */
async function stopGroup(child: ChildProcess): Promise<void> {
  signalGroup(child, "SIGINT");
  const done = exited(child);
  const late = await Promise.race([done.then(() => false), new Promise((r) => setTimeout(r, 1500, true))]);
  if (late) {
    signalGroup(child, "SIGKILL");
    await done;
  }
}

export interface Utterance {
  /** A clean 16 kHz mono WAV, cut after the last speech. */
  path: string;
  seconds: number;
  /** Speech was heard (something over the threshold). */
  heard: boolean;
}

export interface Recording {
  /** Ends the utterance now (the record key pressed again). */
  stop(): void;
  /** Resolves with the utterance; rejects with an AbortError on `signal`. */
  readonly done: Promise<Utterance>;
}

/** The argv that records into `output`: the test seam's command, else the installed recorder. */
export function recorderArgv(settings: VoiceSettings, env: Env, output: string): string[] {
  if (settings.recordCommand) return fill(settings.recordCommand, "output", output);
  const recorder = findRecorder(env);
  return [recorder.program, ...recorder.args(output)];
}

/**
 * Records a fifth of a second from the default input (as tools/media/speech's `probeInput`), and
 * when that fails says so with the recorder's own last words, not the sound library's noise
 * before them (ALSA prints a dozen lines before the one that matters).
 */
export async function probeMicrophone(env: Env): Promise<void> {
  const recorder = findRecorder(env); // throws naming what to install
  const dir = await mkdtemp(join(tmpdir(), "hermes-mic-"));
  try {
    const child = startGroup([recorder.program, ...recorder.args(join(dir, "probe.wav"), 0.2)], env);
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => {
      if (stderr.length < 20_000) stderr += c.toString("utf8");
    });
    const timer = setTimeout(() => signalGroup(child, "SIGKILL"), 10_000);
    const code = await exited(child);
    clearTimeout(timer);
    if (code === 0) return;
    const said = stderr
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("ALSA lib"))
      .at(-1);
    throw new Error(
      `No input device could be opened (${recorder.name}${said ? `: ${said.slice(0, 160)}` : `: exit ${code}`}). Connect a microphone, or check that PulseAudio/PipeWire (pactl info) or ALSA (arecord -l) lists one.`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function startRecording(options: {
  settings: VoiceSettings;
  env: Env;
  dir: string;
  signal: AbortSignal;
  onSpeech?: () => void;
  /**
   * Listen for someone talking over a spoken answer: nothing counts until a `BargeInDetector`
   * trips (then `onTrigger` runs); only the last 1.2 s before that is kept, and from there the
   * utterance ends as any other does.
   */
  bargeIn?: { onTrigger(): void };
}): Recording {
  const { settings, env, dir, signal } = options;
  const barge = options.bargeIn ? new BargeInDetector(settings.silenceThreshold) : null;
  const raw = join(dir, "recording.wav");
  const argv = recorderArgv(settings, env, raw);
  let stopRequested = false;
  let wake: () => void = () => undefined;
  const done = (async (): Promise<Utterance> => {
    const child = startGroup(argv, env);
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => {
      if (stderr.length < 2000) stderr += c.toString("utf8");
    });
    let spawnError: Error | null = null;
    child.once("error", (e) => {
      spawnError = e;
    });
    const ended = exited(child);
    const detector = new SilenceDetector(settings.silenceThreshold, settings.silenceDuration);
    let started = Date.now();
    let read = 0;
    let offset: number | null = null;
    const chunks: Buffer[] = [];
    const onAbort = () => wake();
    signal.addEventListener("abort", onAbort);
    const drain = async () => {
      const handle = await open(raw, "r").catch(() => null);
      if (!handle) return;
      try {
        const { size } = await handle.stat();
        if (size <= read) return;
        const buf = Buffer.alloc(size - read);
        await handle.read(buf, 0, buf.length, read);
        read = size;
        let data = buf;
        if (offset === null) {
          chunks.push(buf);
          const head = Buffer.concat(chunks);
          offset = pcmOffset(head);
          if (offset === null) return;
          chunks.length = 0;
          data = head.subarray(offset);
        }
        if (barge && !barge.tripped) {
          // Until someone talks over the answer, keep only the pre-roll.
          chunks.push(data);
          const recent = Buffer.concat(chunks);
          chunks.length = 0;
          if (!barge.push(data)) {
            const from = Math.max(0, recent.length - PRE_ROLL_BYTES);
            chunks.push(recent.subarray(from - (from % 2))); // whole samples only
            return;
          }
          data = recent;
          started = Date.now(); // max_recording_seconds counts from here
          options.bargeIn?.onTrigger();
        }
        chunks.push(data);
        const wasHeard = detector.heard;
        detector.push(data);
        if (!wasHeard && detector.heard) options.onSpeech?.();
      } finally {
        await handle.close();
      }
    };
    let exitedAlone = false;
    try {
      for (;;) {
        await drain();
        if (signal.aborted || stopRequested || detector.ended) break;
        if (Date.now() - started >= settings.maxRecordingSeconds * 1000) break;
        const tick = new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, POLL_MS);
        });
        const alone = await Promise.race([tick.then(() => false), ended.then(() => true)]);
        if (alone) {
          exitedAlone = true;
          await drain();
          break;
        }
      }
    } finally {
      signal.removeEventListener("abort", onAbort);
      await stopGroup(child);
    }
    if (signal.aborted) throw Object.assign(new Error("Recording stopped."), { name: "AbortError" });
    if (spawnError) throw new Error(`The recorder could not start: ${(spawnError as Error).message}`);
    const code = await ended;
    if (offset === null && !detector.heard) {
      if (exitedAlone && code !== 0)
        throw new Error(
          `No input device could be opened (${argv[0]}: ${stderr.trim().slice(0, 200) || `exit ${code}`}). Connect a microphone, or check that PulseAudio/PipeWire (pactl info) or ALSA (arecord -l) lists one.`,
        );
    }
    let pcm = Buffer.concat(chunks);
    if (detector.ended) pcm = pcm.subarray(0, detector.keepBytes());
    const path = join(dir, "utterance.wav");
    await writeFile(path, wavFile(pcm));
    return { path, seconds: pcm.length / 32_000, heard: detector.heard };
  })();
  return {
    stop: () => {
      stopRequested = true;
      wake();
    },
    done,
  };
}

/** The argv that plays `file`: the test seam's command, else an installed player, else null. */
export function playerArgv(
  settings: VoiceSettings,
  env: Env,
  file: string,
  platform: NodeJS.Platform = process.platform,
): string[] | null {
  if (settings.playCommand) return fill(settings.playCommand, "input", file);
  const wav = file.endsWith(".wav");
  const play = findBinary("play", env);
  if (play) return [play, "-q", file];
  const ffplay = findBinary("ffplay", env);
  if (ffplay) return [ffplay, "-nodisp", "-autoexit", "-loglevel", "quiet", file];
  if (platform === "darwin") {
    const afplay = findBinary("afplay", env);
    if (afplay) return [afplay, file];
  }
  const aplay = wav ? findBinary("aplay", env) : undefined;
  return aplay ? [aplay, "-q", file] : null;
}

export interface Playback {
  /** Stops playback (its whole process group) at once. */
  stop(): void;
  /** Resolves when playback ended or was stopped. */
  readonly done: Promise<void>;
}

export function startPlayback(argv: readonly string[], env: Env): Playback {
  const child = startGroup(argv, env);
  child.on("error", () => undefined);
  return {
    stop: () => signalGroup(child, "SIGKILL"),
    done: exited(child).then(() => undefined),
  };
}
