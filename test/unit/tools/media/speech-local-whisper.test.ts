/**
 * The in-process whisper.cpp engine (smart-whisper, loaded on first use). No whisper model is
 * reachable here and no npm package ships one (not even whisper.cpp's for-tests files), so the
 * model is a file with made-up weights in whisper.cpp's format (test/support/ggml-model.ts): it
 * loads and runs but recognises nothing. The engine's wiring is checked with a binding double
 * that records what it was given; the real package, when installed (or built elsewhere and named
 * by HERMES_TEST_SMART_WHISPER), runs on espeak-ng speech with that model.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VoiceMode } from "../../../../src/cli/voice/voice-mode.js";
import { localModelDownloadNotice, transcribe } from "../../../../src/tools/media/speech/index.js";
import {
  checkGgmlModel,
  decodeWav,
  loadWhisperBinding,
  setWhisperImporter,
  transcribeInProcess,
  type WhisperBinding,
} from "../../../../src/tools/media/speech/local-whisper.js";
import { writeGgmlModel } from "../../../support/ggml-model.js";
import { hasAudioTools, tempFolder, until, voiceRig } from "../../../support/voice-rig.js";

const dir = tempFolder("hermes-local-whisper-");

function wav(samples: number[], rate: number, channels: number, bits = 16, format = 1): Buffer {
  const width = bits / 8;
  const data = Buffer.alloc(samples.length * width);
  samples.forEach((v, i) => {
    if (format === 3) data.writeFloatLE(v, i * width);
    else data.writeInt16LE(Math.round(v * 32767), i * width);
  });
  const head = Buffer.alloc(44);
  head.write("RIFF", 0);
  head.writeUInt32LE(36 + data.length, 4);
  head.write("WAVEfmt ", 8);
  head.writeUInt32LE(16, 16);
  head.writeUInt16LE(format, 20);
  head.writeUInt16LE(channels, 22);
  head.writeUInt32LE(rate, 24);
  head.writeUInt32LE(rate * channels * width, 28);
  head.writeUInt16LE(channels * width, 32);
  head.writeUInt16LE(bits, 34);
  head.write("data", 36);
  head.writeUInt32LE(data.length, 40);
  return Buffer.concat([head, data]);
}

/** A whisper.cpp model file with made-up weights (test/support/ggml-model.ts), written once. */
let template: string | undefined;
async function ggmlLike(name: string): Promise<string> {
  if (!template) {
    template = join(dir, "template.bin");
    writeGgmlModel(template);
  }
  const path = join(dir, name);
  copyFileSync(template, path);
  return path;
}

interface Double {
  binding: WhisperBinding;
  loads: string[];
  runs: Array<{ samples: number; params: Record<string, unknown> }>;
}

function double(segments: string[]): Double {
  const loads: string[] = [];
  const runs: Double["runs"] = [];
  const binding: WhisperBinding = {
    WhisperModel: {
      load: async (file) => {
        loads.push(file);
        return { freed: false, free: async () => undefined };
      },
    },
    TranscribeTask: {
      run: async (_model, pcm, params) => {
        runs.push({ samples: pcm.length, params });
        return { result: Promise.resolve(segments.map((text) => ({ text }))) };
      },
    },
  };
  return { binding, loads, runs };
}

afterEach(() => setWhisperImporter(null));

describe("WAV input for whisper.cpp", () => {
  it("mixes to mono and resamples to 16 kHz", () => {
    // 0.5 s of 44.1 kHz stereo: left 0.5, right -0.1 -> mono 0.2.
    const frames = 22050;
    const stereo = Array.from({ length: frames * 2 }, (_v, i) => (i % 2 === 0 ? 0.5 : -0.1));
    const pcm = decodeWav(wav(stereo, 44100, 2), "x.wav");
    expect(pcm.length).toBe(8000);
    expect(pcm[100]).toBeCloseTo(0.2, 3);
    const float = decodeWav(wav([0.25, -0.25, 0.5], 16000, 1, 32, 3));
    expect(Array.from(float)).toEqual([0.25, -0.25, 0.5]);
    expect(() => decodeWav(Buffer.from("ID3\u0003 not a wav file at all"), "note.mp3")).toThrow(
      "note.mp3 is not a WAV file",
    );
    expect(() => decodeWav(wav([0, 0], 16000, 1, 16, 7), "a.wav")).toThrow(/unsupported WAV \(format 7/);
  });
});

describe("the in-process whisper.cpp engine", () => {
  it("says how to install it when smart-whisper is missing", async () => {
    setWhisperImporter(async (name) => {
      throw Object.assign(new Error(`Cannot find package '${name}' imported from /x`), {
        code: "ERR_MODULE_NOT_FOUND",
      });
    });
    expect(await loadWhisperBinding()).toBeNull();
    await expect(transcribeInProcess({ wav: "x.wav", modelPath: "m.bin", language: "en" })).rejects.toThrow(
      /the whisper\.cpp engine is not installed: npm install smart-whisper \(it builds whisper\.cpp/,
    );
    // Installed but broken (a failed native build): said so, not taken for absent.
    setWhisperImporter(async () => {
      throw new Error("Could not locate the bindings file smart-whisper.node");
    });
    await expect(loadWhisperBinding()).rejects.toThrow(
      /smart-whisper is installed but did not load \(Could not locate the bindings file/,
    );
  });

  it("refuses a file that is not a ggml whisper model before the native loader sees it", async () => {
    const bogus = join(dir, "bogus.bin");
    writeFileSync(bogus, Buffer.alloc(4096, 1));
    await expect(checkGgmlModel(bogus)).rejects.toThrow(
      /bogus\.bin is not a usable whisper\.cpp ggml model \(wrong header\)/,
    );
    // whisper.cpp's weightless test files, and a download cut short, are refused too.
    const empty = join(dir, "for-tests.bin");
    writeGgmlModel(empty, { noTensors: true });
    await expect(checkGgmlModel(empty)).rejects.toThrow(/\(it holds no weights\)/);
    const whole = readFileSync(await ggmlLike("whole.bin"));
    const cut = join(dir, "cut.bin");
    writeFileSync(cut, whole.subarray(0, whole.length - 1000));
    await expect(checkGgmlModel(cut)).rejects.toThrow(/truncated or incomplete/);
    writeFileSync(cut, whole.subarray(0, 3_000_000));
    await expect(checkGgmlModel(cut)).rejects.toThrow(/truncated or incomplete: \d+ of 50 tensors/);
    await expect(checkGgmlModel(join(dir, "none.bin"))).rejects.toThrow(
      /cannot read the whisper model .*ENOENT/,
    );
    const good = await ggmlLike("ok.bin");
    await expect(checkGgmlModel(good)).resolves.toBeUndefined();
    const d = double(["never"]);
    setWhisperImporter(async () => d.binding);
    const input = join(dir, "in.wav");
    writeFileSync(input, wav([0, 0.1, 0.2], 16000, 1));
    await expect(transcribeInProcess({ wav: input, modelPath: bogus, language: "en" })).rejects.toThrow(
      /not a usable whisper\.cpp ggml model/,
    );
    expect(d.loads).toEqual([]);
  });

  it("runs through transcribe() for stt.provider local: 16 kHz mono samples in, the text out, the model kept loaded", async () => {
    const model = await ggmlLike("ggml-tiny.bin");
    const d = double([" Hello", " there. ", "[BLANK_AUDIO]"]);
    setWhisperImporter(async () => d.binding);
    const input = join(dir, "speech.wav");
    // One second at 22.05 kHz.
    writeFileSync(input, wav(new Array(22050).fill(0.1), 22050, 1));
    const config = {
      stt: { provider: "local", local: { model_path: model, language: "de" }, prompt: "Hermes" },
    };
    const env = { PATH: "", HOME: dir };
    const first = await transcribe(input, { config, env, home: dir });
    expect(first).toMatchObject({ text: "Hello there.", provider: "local" });
    await transcribe(input, { config, env, home: dir });
    expect(d.loads).toEqual([model]);
    expect(d.runs).toHaveLength(2);
    expect(d.runs[0]?.samples).toBe(16000);
    expect(d.runs[0]?.params).toMatchObject({ language: "de", format: "simple", initial_prompt: "Hermes" });
  });

  it("falls back to an installed whisper-cli when the package is absent", async () => {
    setWhisperImporter(async (name) => {
      throw Object.assign(new Error(`Cannot find module '${name}'`), { code: "MODULE_NOT_FOUND" });
    });
    const bin = join(dir, "bin");
    execFileSync("mkdir", ["-p", bin]);
    writeFileSync(
      join(bin, "whisper-cli"),
      '#!/bin/sh\nwhile [ $# -gt 0 ]; do case "$1" in -of) of="$2"; shift;; esac; shift; done\necho "from the cli" > "$of.txt"\n',
      { mode: 0o755 },
    );
    const model = await ggmlLike("cli.bin");
    const input = join(dir, "cli.wav");
    writeFileSync(input, wav([0, 0.1], 16000, 1));
    const result = await transcribe(input, {
      config: { stt: { provider: "local", local: { model_path: model } } },
      env: { PATH: `${bin}:/usr/bin:/bin`, HOME: dir },
      home: dir,
    });
    expect(result).toMatchObject({ text: "from the cli", provider: "local" });
  });
});

describe("before the first download", () => {
  it("voice mode says what the first transcription will download, only when local is chosen and the model is missing", async () => {
    setWhisperImporter(async () => double([]).binding);
    const home = tempFolder("hermes-notice-");
    const env = { PATH: "", HOME: home, HERMES_VOICE_RECORD_COMMAND: "true {output}" };
    const chosen = { stt: { provider: "local", local: { model: "small" } } };
    expect(localModelDownloadNotice(chosen, env, home)).toBe(
      `The first transcription downloads whisper model small (about 466 MB) into ${home}/models/whisper; stt.local.model_path names a model you already have.`,
    );
    expect(localModelDownloadNotice({ stt: { local: { model: "small" } } }, env, home)).toBeNull();
    expect(
      localModelDownloadNotice({ stt: { provider: "local", local: { model_path: "/x.bin" } } }, env, home),
    ).toBeNull();
    expect(
      localModelDownloadNotice(chosen, { ...env, HERMES_LOCAL_STT_COMMAND: "my-stt {input_path}" }, home),
    ).toBeNull();
    const paint = { bold: String, dim: String, red: String, green: String, yellow: String, cyan: String };
    const host = {
      print: () => undefined,
      refresh: () => undefined,
      send: () => undefined,
      busy: () => false,
      paint,
    };
    const lines = await new VoiceMode({ config: chosen, env, home, host }).run("on");
    expect(lines[1]).toMatch(/^The first transcription downloads whisper model small/);
    await ggmlLike("present.bin");
    execFileSync("mkdir", ["-p", join(home, "models", "whisper")]);
    execFileSync("cp", [join(dir, "present.bin"), join(home, "models", "whisper", "ggml-small.bin")]);
    expect(localModelDownloadNotice(chosen, env, home)).toBeNull();
  });
});

describe.skipIf(!hasAudioTools)("a first-use download in voice mode", () => {
  it("reports in lines above the prompt, and its failure is shown; nothing is sent", async () => {
    setWhisperImporter(async () => double(["never"]).binding);
    const home = tempFolder("hermes-voice-dl-");
    // A part left by an earlier try: the download resumes (here from a closed loopback port).
    execFileSync("mkdir", ["-p", join(home, "models", "whisper")]);
    writeFileSync(join(home, "models", "whisper", "ggml-tiny.bin.part"), Buffer.alloc(1024));
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const rig = voiceRig("hello", { leadSeconds: 0.1, tailSilence: 1.2 });
    const printed: string[] = [];
    const sent: string[] = [];
    const paint = { bold: String, dim: String, red: String, green: String, yellow: String, cyan: String };
    const mode = new VoiceMode({
      config: {
        stt: { provider: "local", local: { model: "tiny" } },
        voice: { silence_duration: 0.8, beep_enabled: false },
      },
      env: {
        PATH: process.env.PATH,
        HOME: home,
        HERMES_WHISPER_MODEL_URL: `http://127.0.0.1:${port}/m`,
        HERMES_VOICE_RECORD_COMMAND: rig.recordCommand,
        HERMES_VOICE_PLAY_COMMAND: rig.playCommand,
      },
      home,
      host: {
        print: (...l) => printed.push(...l),
        refresh: () => undefined,
        send: (t) => sent.push(t),
        busy: () => false,
        paint,
      },
    });
    expect((await mode.run("on"))[1]).toMatch(
      /first transcription downloads whisper model tiny \(about 75 MB\)/,
    );
    mode.onKey({ name: "b", ctrl: true });
    await until(() => printed.some((l) => l.startsWith("error:")));
    expect(printed[0]).toBe("Resuming the download of whisper model tiny at 0.0 MB.");
    expect(printed[1]).toMatch(
      /^error: .*could not download the whisper model "tiny" from 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    );
    expect(sent).toEqual([]);
    expect(mode.state).toBe("idle");
  });
});

const realPackage = (() => {
  const named = process.env.HERMES_TEST_SMART_WHISPER;
  if (named && existsSync(named)) return named;
  try {
    return createRequire(import.meta.url).resolve("smart-whisper");
  } catch {
    return undefined;
  }
})();

describe.skipIf(!realPackage)("the real smart-whisper package", () => {
  it("loads a model and runs whisper.cpp on speech through transcribe(); a bad file is refused, the process lives", async () => {
    setWhisperImporter(async () => import(realPackage as string));
    const binding = await loadWhisperBinding();
    expect(typeof binding?.WhisperModel.load).toBe("function");
    // espeak-ng speech at its own 22.05 kHz: decoded, resampled and run by the native engine.
    // The made-up weights recognise nothing, so the text is whatever they produce (often empty).
    const input = join(dir, "real.wav");
    execFileSync("espeak-ng", ["-w", input, "What is the capital of France"]);
    const model = await ggmlLike("real-model.bin");
    const started = Date.now();
    const result = await transcribe(input, {
      config: { stt: { provider: "local", local: { model_path: model } } },
      env: { PATH: "", HOME: dir },
      home: dir,
    });
    expect(result.provider).toBe("local");
    expect(typeof result.text).toBe("string");
    expect(Date.now() - started).toBeLessThan(20_000);
    // A file the native loader would crash on is refused first.
    const bogus = join(dir, "real-bogus.bin");
    writeFileSync(bogus, readFileSync(model).subarray(0, 2_000_000));
    await expect(transcribeInProcess({ wav: input, modelPath: bogus, language: "en" })).rejects.toThrow(
      /not a usable whisper\.cpp ggml model/,
    );
  });
});
