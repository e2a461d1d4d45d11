/**
 * The REPL's voice mode (`/voice`, `hermes --voice`): push-to-talk on `voice.record_key`
 * (Ctrl+B), an utterance ended by silence, the record key again, or `max_recording_seconds`;
 * the transcript shown and sent as the user's message; spoken answers under `/voice tts`
 * (markdown and code stripped, long answers cut at a sentence); barge-in (the record key or any
 * key stops playback). Its state (listening, transcribing, thinking, speaking) leads the status
 * line. Nothing is recorded unless voice mode is on, and temp audio is removed whatever happens.
 */
import { rmSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Paint, VoiceControl } from "../../commands/index.js";
import {
  localModelDownloadNotice,
  planStt,
  planTts,
  synthesize,
  transcribe,
} from "../../tools/media/speech/index.js";
import type { ApprovalDecision, ApprovalRequest } from "../../tools/types.js";
import { onProcessExit } from "../../util/exit-reaper.js";
import {
  type Playback,
  playerArgv,
  probeMicrophone,
  type Recording,
  recorderArgv,
  startPlayback,
  startRecording,
  type Utterance,
} from "./audio-io.js";
import { ctrlLetter, type VoiceSettings, voiceSettings } from "./settings.js";
import { textForSpeech } from "./speech-text.js";
import {
  approvalSpeech,
  parseSpokenApproval,
  type SpokenApprovals,
  spokenChoices,
} from "./spoken-approval.js";
import { beepWav } from "./wav.js";

export type VoiceState = "idle" | "listening" | "transcribing" | "thinking" | "speaking";

export interface VoiceHost {
  /** Shows notices above the prompt. */
  print(...lines: string[]): void;
  /** Redraws the status line. */
  refresh(): void;
  /** Sends the transcript as the user's message. */
  send(text: string): void;
  /** A turn is running. */
  busy(): boolean;
  paint: Paint;
}

export interface VoiceModeOptions {
  config: unknown;
  env: Readonly<Record<string, string | undefined>>;
  home: string;
  host: VoiceHost;
}

/** A key as node:readline reports it. */
export interface KeyInfo {
  name?: string | undefined;
  ctrl?: boolean | undefined;
  meta?: boolean | undefined;
}

/** What a plan function says, or its error's message (what is missing). */
function described(plan: () => string): string {
  try {
    return plan() || "none";
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

const isAbort = (e: unknown) => e instanceof Error && e.name === "AbortError";

/**
 * A private temp folder for one utterance or one spoken answer. `remove()` deletes it; if hermes
 * exits first (Ctrl+D while listening, SIGTERM), the exit hook deletes it, so no audio is left.
 */
async function audioDir(prefix: string): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  const forget = onProcessExit(() => rmSync(path, { recursive: true, force: true }));
  return {
    path,
    remove: async () => {
      await rm(path, { recursive: true, force: true });
      forget(); // only now: hermes may exit while the folder is being removed
    },
  };
}

/** An approval question open on the prompt that a spoken answer may settle. */
interface PendingApproval {
  request: ApprovalRequest;
  answer: (decision: ApprovalDecision) => void;
  closed: boolean;
}

/** The microphone listening while an answer plays. */
interface BargeIn {
  abort: AbortController;
  recording: Recording;
  /** Someone talked over the answer: playback stopped and this is their utterance. */
  triggered: boolean;
}

export class VoiceMode implements VoiceControl, SpokenApprovals {
  enabled = false;
  tts = false;
  state: VoiceState = "idle";
  private readonly settings: VoiceSettings;
  private readonly key: string;
  private recording: Recording | null = null;
  private playback: Playback | null = null;
  private abort: AbortController | null = null;
  /** The running turn came from speech (its end leaves "thinking"). */
  private voiceTurn = false;
  /** The record key interrupted speech: listen once playback has stopped. */
  private listenAfterSpeech = false;
  /** The approval question a spoken answer may settle. */
  private approval: PendingApproval | null = null;
  /** The approval question the running recording answers. */
  private listeningFor: PendingApproval | null = null;
  /** The approval question being read aloud. */
  private speakingFor: PendingApproval | null = null;

  constructor(private readonly options: VoiceModeOptions) {
    this.settings = voiceSettings(options.config, options.env);
    this.key = ctrlLetter(this.settings.recordKey) ?? "b";
  }

  private get keyLabel(): string {
    return `Ctrl+${this.key.toUpperCase()}`;
  }

  private setState(state: VoiceState): void {
    this.state = state;
    this.options.host.refresh();
  }

  /** Back to rest: "thinking" while a spoken turn runs, else idle. */
  private rest(): void {
    this.setState(this.voiceTurn ? "thinking" : "idle");
  }

  /**
   * An approval question is on the prompt: under voice mode, offer a push-to-talk answer and,
   * under /voice tts, say what waits. Returns what to call once the question is settled.
   */
  approvalAsked(request: ApprovalRequest, answer: (decision: ApprovalDecision) => void): () => void {
    if (!this.enabled) return () => undefined;
    const pending: PendingApproval = { request, answer, closed: false };
    this.approval = pending;
    const p = this.options.host.paint;
    this.options.host.print(
      p.cyan(
        `🎙 Or press ${this.keyLabel} and say ${spokenChoices(request)}; anything else approves nothing.`,
      ),
    );
    if (this.tts && (this.state === "idle" || this.state === "thinking"))
      void this.speak(approvalSpeech(request));
    return () => {
      pending.closed = true;
      if (this.approval === pending) this.approval = null;
      if (this.listeningFor === pending) this.abort?.abort();
      else if (this.state === "speaking" && this.speakingFor === pending) this.stopSpeaking();
    };
  }

  async run(word: string): Promise<string[]> {
    const p = this.options.host.paint;
    if (word === "on") {
      if (!this.settings.recordCommand) await probeMicrophone(this.options.env);
      this.enabled = true;
      if (this.settings.autoTts) this.tts = true;
      this.options.host.refresh();
      const download = localModelDownloadNotice(this.options.config, this.options.env, this.options.home);
      return [
        `${p.green("🎙")} Voice mode on: press ${p.bold(this.keyLabel)} to talk; a pause of ${this.settings.silenceDuration}s, or ${this.keyLabel} again, sends it.${this.tts ? " Answers are spoken." : ""}`,
        ...(download ? [p.dim(download)] : []),
      ];
    }
    if (word === "off") {
      this.enabled = false;
      this.tts = false;
      this.interrupt();
      this.options.host.refresh();
      return [p.dim("Voice mode off: nothing is recorded and answers are not spoken.")];
    }
    if (word === "tts") {
      this.tts = !this.tts;
      if (!this.tts) this.stopSpeaking();
      this.options.host.refresh();
      return [p.dim(this.tts ? "Spoken answers on (any key stops one)." : "Spoken answers off.")];
    }
    return this.statusLines();
  }

  private statusLines(): string[] {
    const { config, env } = this.options;
    const p = this.options.host.paint;
    let recorder: string;
    try {
      recorder = recorderArgv(this.settings, env, "{output}")[0] ?? "none";
    } catch (error) {
      recorder = (error as Error).message;
    }
    const player = playerArgv(this.settings, env, "x.wav")?.[0] ?? "none found (install sox or ffmpeg)";
    const rows: Array<[string, string]> = [
      ["Voice mode", this.enabled ? `on (${this.keyLabel} to talk)` : "off"],
      ["Spoken answers", this.tts ? "on" : "off"],
      ["State", this.state],
      ["Recorder", recorder],
      ["Player", player],
      ["Speech to text", described(() => planStt(config, env).join(" → "))],
      ["Text to speech", described(() => planTts(config, env).chain.join(" → "))],
      [
        "Silence",
        `RMS < ${this.settings.silenceThreshold} for ${this.settings.silenceDuration}s; at most ${this.settings.maxRecordingSeconds}s`,
      ],
      [
        "Barge-in",
        this.settings.bargeIn
          ? "a key, or talking over an answer (voice mode on)"
          : "a key (voice.barge_in is false)",
      ],
    ];
    return p.table ? p.table(rows) : rows.map(([k, v]) => `${p.bold(`${k}:`)} ${v}`);
  }

  /** The voice part of the status line, or null when voice is idle and off. */
  statusText(): string | null {
    const p = this.options.host.paint;
    switch (this.state) {
      case "listening":
        return p.red(`● listening… (${this.keyLabel} sends, Ctrl+C cancels)`);
      case "transcribing":
        return p.yellow("✎ transcribing…");
      case "thinking":
        return p.cyan("🎙 thinking…");
      case "speaking":
        return p.green("🔊 speaking… (any key stops)");
      default:
        if (!this.enabled && !this.tts) return null;
        return p.cyan(
          this.enabled ? `🎙 voice on · ${this.keyLabel} to talk${this.tts ? " · tts" : ""}` : "🔊 tts on",
        );
    }
  }

  /** A key was pressed; true when voice mode took it. */
  onKey(key: KeyInfo | undefined): boolean {
    const recordKey = key?.ctrl === true && !key.meta && key.name === this.key;
    if (this.state === "speaking") {
      this.stopSpeaking();
      this.listenAfterSpeech = recordKey && this.enabled;
      return true;
    }
    if (!recordKey || !this.enabled) return false;
    if (this.state === "listening") {
      this.recording?.stop();
      return true;
    }
    // An approval question waits (a turn is running): the answer may be spoken.
    if (this.approval && (this.state === "idle" || this.state === "thinking")) {
      void this.listen();
      return true;
    }
    if (this.state !== "idle") return true;
    if (this.options.host.busy()) {
      this.options.host.print(
        this.options.host.paint.dim("A turn is running: talk once it ends (Ctrl+C stops it)."),
      );
      return true;
    }
    void this.listen();
    return true;
  }

  /** Ctrl+C: stops recording, transcribing or speaking; true when it stopped something. */
  interrupt(): boolean {
    if (this.state === "listening" || this.state === "transcribing") {
      this.abort?.abort();
      return true;
    }
    if (this.state === "speaking") {
      this.stopSpeaking();
      return true;
    }
    return false;
  }

  private stopSpeaking(): void {
    this.playback?.stop();
    this.abort?.abort();
  }

  private async beep(frequency: number, dir: string): Promise<void> {
    if (!this.settings.beepEnabled) return;
    const file = join(dir, `beep-${frequency}.wav`);
    await writeFile(file, beepWav(frequency));
    const argv = playerArgv(this.settings, this.options.env, file);
    if (argv) await startPlayback(argv, this.options.env).done;
  }

  /** One push-to-talk utterance: record, transcribe, send. */
  async listen(): Promise<void> {
    const { host, env } = this.options;
    const p = host.paint;
    const abort = new AbortController();
    this.abort = abort;
    const approval = this.approval;
    this.listeningFor = approval;
    const temp = await audioDir("hermes-voice-");
    const dir = temp.path;
    this.setState("listening");
    try {
      await this.beep(880, dir);
      if (abort.signal.aborted) throw Object.assign(new Error("cancelled"), { name: "AbortError" });
      this.recording = startRecording({ settings: this.settings, env, dir, signal: abort.signal });
      const utterance = await this.recording.done;
      this.recording = null;
      await this.beep(660, dir);
      await this.takeUtterance(utterance, approval, abort.signal);
    } catch (error) {
      this.rest();
      if (isAbort(error) || abort.signal.aborted) host.print(p.dim("⏹ Voice input cancelled."));
      else host.print(`${p.red("error:")} ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      this.recording = null;
      if (this.listeningFor === approval) this.listeningFor = null;
      if (this.abort === abort) this.abort = null;
      await temp.remove();
    }
  }

  /** A recorded utterance: transcribed, shown, and sent (or taken as an approval's answer). */
  private async takeUtterance(
    utterance: Utterance,
    approval: PendingApproval | null,
    signal: AbortSignal,
  ): Promise<void> {
    const { host, env, config, home } = this.options;
    const p = host.paint;
    if (!utterance.heard) {
      this.rest();
      host.print(
        p.dim(`Nothing heard (no sound over voice.silence_threshold ${this.settings.silenceThreshold}).`),
      );
      return;
    }
    this.setState("transcribing");
    const result = await transcribe(utterance.path, {
      config,
      env,
      home,
      signal,
      // A first-use model download reports in lines above the prompt, not over it.
      progress: { write: (text: string) => host.print(p.dim(text.trimEnd())), isTTY: false },
    });
    const text = result.text.trim();
    if (!text) {
      this.rest();
      host.print(p.dim("Nothing recognised in what was recorded."));
      return;
    }
    host.print(`${p.cyan("🎙")} ${text}`);
    if (approval) {
      this.rest();
      this.answerApproval(approval, text);
      return;
    }
    this.voiceTurn = true;
    this.setState("thinking");
    host.send(text);
  }

  /**
   * While an answer plays with voice mode on (never for an approval question, never with voice
   * mode off), the microphone listens for someone talking over it: that stops the answer, and
   * what they say is recorded (from a moment before they started) and sent like any utterance.
   */
  private startBargeIn(dir: string): BargeIn | null {
    if (!this.enabled || !this.settings.bargeIn || this.speakingFor) return null;
    const abort = new AbortController();
    const barge: BargeIn = {
      abort,
      triggered: false,
      recording: startRecording({
        settings: this.settings,
        env: this.options.env,
        dir,
        signal: abort.signal,
        bargeIn: {
          onTrigger: () => {
            // Only while the answer still plays (not after a key stopped it or it ended).
            if (!this.playback || this.abort?.signal.aborted || this.state !== "speaking") return;
            barge.triggered = true;
            this.playback?.stop();
            this.abort = abort;
            this.recording = barge.recording;
            this.setState("listening");
          },
        },
      }),
    };
    barge.recording.done.catch(() => undefined);
    return barge;
  }

  /** A spoken answer to an approval question: only a clear one settles it. */
  private answerApproval(approval: PendingApproval, text: string): void {
    const p = this.options.host.paint;
    if (approval.closed) {
      this.options.host.print(p.dim("That question was already settled: what you said was not used."));
      return;
    }
    const decision = parseSpokenApproval(text, approval.request);
    if (!decision) {
      this.options.host.print(
        p.yellow(
          `Not a clear answer, so nothing was approved: press ${this.keyLabel} and say ${spokenChoices(approval.request)}, or type it.`,
        ),
      );
      return;
    }
    approval.answer(decision);
  }

  /** The turn ended with `answer` (null: interrupted or failed): speak it under /voice tts. */
  async answered(answer: string | null): Promise<void> {
    const fromVoice = this.voiceTurn;
    this.voiceTurn = false;
    if (fromVoice && this.state === "thinking") this.setState("idle");
    if (!this.tts || !answer) return;
    const spoken = textForSpeech(answer);
    if (!spoken) return;
    await this.speak(spoken);
  }

  private async speak(text: string): Promise<void> {
    const { host, env, config, home } = this.options;
    const abort = new AbortController();
    this.abort = abort;
    this.speakingFor = this.approval;
    const temp = await audioDir("hermes-speak-");
    const dir = temp.path;
    let barge: BargeIn | null = null;
    this.setState("speaking");
    try {
      const audio = await synthesize(text, {
        config,
        env,
        home,
        outputPath: join(dir, "answer.wav"),
        allowOtherFormat: true,
        signal: abort.signal,
      });
      if (abort.signal.aborted) return;
      const argv = playerArgv(this.settings, env, audio.path);
      if (!argv) {
        host.print(
          host.paint.yellow("warning: no audio player found: install sox (play) or ffmpeg (ffplay)."),
        );
        return;
      }
      this.playback = startPlayback(argv, env);
      barge = this.startBargeIn(dir);
      await this.playback.done;
      this.playback = null;
      if (barge?.triggered) {
        // Someone talked over the answer: what they say is the next message.
        const heard = barge;
        barge = null;
        try {
          await this.takeUtterance(await heard.recording.done, null, heard.abort.signal);
        } catch (error) {
          this.rest();
          if (isAbort(error) || heard.abort.signal.aborted)
            host.print(host.paint.dim("⏹ Voice input cancelled."));
          else
            host.print(
              `${host.paint.red("error:")} ${error instanceof Error ? error.message : String(error)}`,
            );
        } finally {
          this.recording = null;
          if (this.abort === heard.abort) this.abort = null;
        }
      }
    } catch (error) {
      if (!isAbort(error) && !abort.signal.aborted)
        host.print(
          `${host.paint.red("error:")} speaking failed: ${error instanceof Error ? error.message : String(error)}`,
        );
    } finally {
      if (barge) {
        // The answer ended (or was stopped) with nobody talking over it: stop listening.
        barge.abort.abort();
        await barge.recording.done.catch(() => undefined);
        if (barge.triggered && this.state === "listening") this.rest();
      }
      this.playback = null;
      this.speakingFor = null;
      if (this.abort === abort) this.abort = null;
      if (this.state === "speaking") this.rest();
      await temp.remove();
      if (this.listenAfterSpeech && this.enabled) {
        this.listenAfterSpeech = false;
        void this.listen();
      }
    }
  }

  /** Stops whatever runs (the REPL is closing). */
  close(): void {
    this.interrupt();
  }
}
