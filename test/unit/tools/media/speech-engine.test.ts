import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { findBinary } from "../../../../src/tools/media/shared.js";
import { planCommand } from "../../../../src/tools/media/speech/command.js";
import { synthesize, transcribe } from "../../../../src/tools/media/speech/index.js";
import { absentWhisper, setWhisperImporter } from "../../../../src/tools/media/speech/local-whisper.js";
import { type FakeSpeechApi, startFakeSpeechApi } from "../../../support/fake-speech-api.js";
import { type HttpFake, sendJson, startHttpFake } from "./http-fake.js";

// These tests pin the chain without the in-process whisper engine (smart-whisper is an optional
// dependency); speech-local-whisper.test.ts covers the engine itself.
beforeEach(() => setWhisperImporter(absentWhisper));
afterEach(() => setWhisperImporter(null));

const hasEspeak = findBinary("espeak-ng", process.env) !== undefined;
const dir = mkdtempSync(join(tmpdir(), "speech-engine-test-"));
const home = join(dir, "home");
const bin = join(dir, "bin");
mkdirSync(bin, { recursive: true });
const PATH = `${bin}:/usr/bin:/bin`;
const WAV = Buffer.concat([Buffer.from("RIFF\x24\x00\x00\x00WAVEfmt ", "latin1"), Buffer.alloc(64, 3)]);
const note = join(dir, "note.wav");
writeFileSync(note, WAV);

let api: FakeSpeechApi;
let other: FakeSpeechApi;
let temp: string;
let savedTmp: string | undefined;

beforeAll(async () => {
  api = await startFakeSpeechApi();
  other = await startFakeSpeechApi();
  api.register(WAV, "remind me at noon");
});
afterAll(async () => {
  await api.close();
  await other.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  api.mode = "normal";
  api.requests.length = 0;
  other.requests.length = 0;
  savedTmp = process.env.TMPDIR;
  temp = mkdtempSync(join(tmpdir(), "speech-engine-tmp-"));
  process.env.TMPDIR = temp;
  return () => {
    // Every provider's temp folder is gone, whatever happened.
    expect(readdirSync(temp)).toEqual([]);
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    rmSync(temp, { recursive: true, force: true });
  };
});

const openaiTts = (extra: Record<string, unknown> = {}) => ({
  tts: { provider: "openai", openai: { base_url: `${api.url}/v1`, api_key: api.keys.openai }, ...extra },
});
const out = (name: string) => join(dir, name);

describe("synthesize: the provider chain", () => {
  it("falls back to the next configured provider and logs the reason with the key redacted", async () => {
    // A service that echoes the key in its error, as some do with a partly masked one.
    const echo: HttpFake = await startHttpFake((req, res) =>
      sendJson(res, 401, { error: { message: `bad key ${String(req.headers.authorization)}` } }),
    );
    const lines: string[] = [];
    try {
      const result = await synthesize("Hello there.", {
        config: {
          tts: {
            provider: "openai",
            fallback: ["elevenlabs"],
            openai: { base_url: `${echo.url}/v1`, api_key: "sk-live-secret-value-123456" },
            elevenlabs: { base_url: api.url, api_key: api.keys.elevenlabs, voice_id: "v1" },
          },
        },
        env: { PATH },
        home,
        outputPath: out("chain.mp3"),
        log: (line) => lines.push(line),
      });
      expect(result.provider).toBe("elevenlabs");
      expect(result.attempts).toHaveLength(1);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^text-to-speech: openai failed \(OpenAI text-to-speech refused the request \(HTTP 401\)/,
      );
      expect(lines[0]).toMatch(/trying elevenlabs$/);
      expect(lines.join("\n")).not.toContain("sk-live-secret-value-123456");
      expect(api.requests[0]?.headers["xi-api-key"]).toBe(api.keys.elevenlabs);
    } finally {
      await echo.close();
    }
  });

  it("treats a missing key as a failure and moves on", async () => {
    const lines: string[] = [];
    const result = await synthesize("Hi.", {
      config: {
        tts: { provider: "elevenlabs", fallback: ["openai"], openai: { base_url: `${api.url}/v1` } },
      },
      env: { PATH, OPENAI_API_KEY: api.keys.openai },
      home,
      outputPath: out("nokey.mp3"),
      log: (line) => lines.push(line),
    });
    expect(result).toMatchObject({
      provider: "openai",
      attempts: [{ provider: "elevenlabs", error: /ELEVENLABS_API_KEY/ }],
    });
  });

  it("names every failure when the whole chain fails", async () => {
    api.mode = "error";
    await expect(
      synthesize("Hi.", {
        config: openaiTts({ fallback: ["espeak-ng"] }),
        env: { PATH: "" },
        home,
        outputPath: out("fail.mp3"),
        log: () => {},
      }),
    ).rejects.toThrow(
      /Every text-to-speech provider failed: openai: .*HTTP 500.*; espeak-ng: espeak-ng is not installed/,
    );
  });

  it("never follows a redirect, so a key reaches only its own host", async () => {
    api.mode = "redirect";
    api.redirectTo = other.url;
    const attempts = [
      openaiTts({ fallback: false }),
      {
        tts: {
          provider: "elevenlabs",
          fallback: false,
          elevenlabs: { base_url: api.url, api_key: api.keys.elevenlabs },
        },
      },
    ];
    for (const config of attempts) {
      await expect(
        synthesize("Hi.", { config, env: { PATH }, home, outputPath: out("r.mp3"), log: () => {} }),
      ).rejects.toThrow(
        /redirect \(HTTP 307 to http:\/\/127\.0\.0\.1:\d+\); not followed, so the key stays with/,
      );
    }
    await expect(
      transcribe(note, {
        config: { stt: { provider: "groq", fallback: false } },
        env: { PATH, GROQ_API_KEY: api.keys.groq, GROQ_BASE_URL: `${api.url}/openai/v1` },
        home,
        log: () => {},
      }),
    ).rejects.toThrow(/not followed/);
    expect(api.requests).toHaveLength(3);
    expect(other.requests).toHaveLength(0);
  });

  it("stops reading a huge audio answer at 16 MB", async () => {
    api.mode = "huge";
    await expect(
      synthesize("Hi.", {
        config: openaiTts({ fallback: false }),
        env: { PATH },
        home,
        outputPath: out("h.mp3"),
      }),
    ).rejects.toThrow(/OpenAI text-to-speech sent more than 16 MB/);
  });

  it("gives up on a provider that never answers after its timeout", async () => {
    api.mode = "silent";
    const started = Date.now();
    await expect(
      synthesize("Hi.", {
        config: {
          tts: {
            provider: "openai",
            fallback: false,
            openai: { base_url: `${api.url}/v1`, api_key: "k", timeout: 1 },
          },
        },
        env: { PATH },
        home,
        outputPath: out("t.mp3"),
      }),
    ).rejects.toThrow(/OpenAI text-to-speech did not answer within 1 s/);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it("refuses unknown providers up front, naming the command-provider way", async () => {
    await expect(
      synthesize("Hi.", {
        config: { tts: { provider: "voicebox" } },
        env: { PATH },
        home,
        outputPath: out("u.mp3"),
      }),
    ).rejects.toThrow(/"voicebox" is unknown: .*tts\.providers\.voicebox/);
  });
});

describe("command providers run without a shell", () => {
  const engine = join(bin, "fake-piper");
  // Reads the text on stdin, records its argv and text, writes a WAV to --output_file.
  writeFileSync(
    engine,
    `#!/usr/bin/env node
const fs = require("node:fs");
const args = process.argv.slice(2);
const text = fs.readFileSync(0, "utf8");
const outFile = args[args.indexOf("--output_file") + 1];
fs.writeFileSync(${JSON.stringify(join(dir, "piper-seen.json"))}, JSON.stringify({ args, text }));
const header = Buffer.from("RIFF\\x24\\x00\\x00\\x00WAVEfmt ", "latin1");
fs.writeFileSync(outFile, Buffer.concat([header, Buffer.alloc(64)]));
`,
  );
  chmodSync(engine, 0o755);
  const piper = (command: string, voice = "en_US-lessac") => ({
    tts: {
      provider: "piper",
      fallback: false,
      providers: { piper: { type: "command", command, output_format: "wav", voice } },
    },
  });

  it("runs upstream's piper example (< {input_path}) and keeps shell syntax in the text inert", async () => {
    const attack = `Hi $(touch ${dir}/pwned1); touch ${dir}/pwned2 \`touch ${dir}/pwned3\` && echo $HOME | cat`;
    const voice = "x; touch pwned4";
    const result = await synthesize(attack, {
      config: piper(
        "fake-piper --model '~/voices/{voice}.onnx' --output_file {output_path} < {input_path}",
        voice,
      ),
      env: { PATH, HOME: dir },
      home,
      outputPath: out("piper.wav"),
    });
    expect(result).toMatchObject({ provider: "piper", format: "wav" });
    const seen = JSON.parse(readFileSync(join(dir, "piper-seen.json"), "utf8")) as {
      args: string[];
      text: string;
    };
    expect(seen.text).toBe(attack);
    // Quoted '~' stays literal, the voice stays one word, and no injected command ran.
    expect(seen.args.slice(0, 2)).toEqual(["--model", "~/voices/x; touch pwned4.onnx"]);
    for (const n of [1, 2, 3, 4]) expect(existsSync(join(dir, `pwned${n}`))).toBe(false);
    expect(readFileSync(out("piper.wav")).subarray(0, 4).toString("latin1")).toBe("RIFF");
  });

  it("refuses pipelines and command substitution in the template with a clear message", async () => {
    await expect(
      synthesize("Hi.", {
        config: piper("cat {input_path} | fake-piper"),
        env: { PATH },
        home,
        outputPath: out("p.wav"),
      }),
    ).rejects.toThrow(/uses "\|", which needs a shell.*script/);
  });

  it("splits templates like a shell without running one", () => {
    const env = { HOME: "/home/u", VOICES: "/opt/v" };
    expect(
      planCommand(
        `piper -m ~/m.onnx --x "$VOICES/a b" 'lit $HOME' {{json}} -f {output_path} < {input_path}`,
        {
          output_path: "/tmp/o w.wav",
          input_path: "/tmp/in.txt",
        },
        env,
      ),
    ).toEqual({
      argv: [
        "piper",
        "-m",
        "/home/u/m.onnx",
        "--x",
        "/opt/v/a b",
        "lit $HOME",
        "{json}",
        "-f",
        "/tmp/o w.wav",
      ],
      stdinFile: "/tmp/in.txt",
    });
    expect(() => planCommand("a $(b)", {}, env)).toThrow(/command substitution/);
    expect(() => planCommand("a 'b", {}, env)).toThrow(/unclosed ' quote/);
  });
});

describe("transcribe: the provider chain", () => {
  it("transcribes over Groq's multipart protocol", async () => {
    const result = await transcribe(note, {
      config: {},
      env: { PATH: "", GROQ_API_KEY: api.keys.groq, GROQ_BASE_URL: `${api.url}/openai/v1` },
      home,
    });
    expect(result).toEqual({ text: "remind me at noon", provider: "groq", attempts: [] });
  });

  it("falls back from a refused Groq key to OpenAI and logs it redacted", async () => {
    const lines: string[] = [];
    const result = await transcribe(note, {
      config: {
        stt: {
          provider: "groq",
          fallback: ["openai"],
          openai: { base_url: `${api.url}/v1`, api_key: api.keys.openai },
        },
      },
      env: { PATH: "", GROQ_API_KEY: "gsk-wrong-key-but-long", GROQ_BASE_URL: `${api.url}/openai/v1` },
      home,
      log: (line) => lines.push(line),
    });
    expect(result).toMatchObject({ text: "remind me at noon", provider: "openai" });
    expect(lines[0]).toMatch(
      /^speech-to-text: groq failed \(Groq speech-to-text refused note\.wav \(HTTP 401\): Invalid API Key\); trying openai$/,
    );
  });

  it("stops reading a huge transcription answer at 1 MB", async () => {
    api.mode = "huge";
    await expect(
      transcribe(note, {
        config: { stt: { provider: "openai", openai: { base_url: `${api.url}/v1`, api_key: "k" } } },
        env: { PATH: "" },
        home,
      }),
    ).rejects.toThrow(/OpenAI speech-to-text sent more than 1 MB/);
  });

  it("says what to install when stt.provider is local and no engine exists", async () => {
    await expect(
      transcribe(note, { config: { stt: { provider: "local" } }, env: { PATH: "" }, home }),
    ).rejects.toThrow(
      /no local speech-to-text engine is installed: install a local whisper: npm install smart-whisper .*whisper-cli on PATH.*pip install whisper-ctranslate2.*HERMES_LOCAL_STT_COMMAND/,
    );
  });

  it("runs whisper.cpp's whisper-cli with stt.local.model_path, and names the missing model otherwise", async () => {
    const cli = join(dir, "cppbin");
    mkdirSync(cli, { recursive: true });
    writeFileSync(
      join(cli, "whisper-cli"),
      `#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -m) m="$2"; shift;; -l) l="$2"; shift;; -of) of="$2"; shift;; esac; shift; done
printf 'cpp heard (model=%s lang=%s)\\n' "\${m##*/}" "$l" > "$of.txt"
`,
    );
    chmodSync(join(cli, "whisper-cli"), 0o755);
    const model = join(dir, "ggml-tiny.en.bin");
    writeFileSync(model, "ggml");
    const env = { PATH: `${cli}:/usr/bin:/bin` };
    // whisper.cpp reads 16 kHz WAV, so the engine converts whatever comes (here a real 44.1 kHz WAV).
    const real = join(dir, "real.wav");
    if (findBinary("ffmpeg", process.env))
      execFileSync("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=0.5", real]);
    else writeFileSync(real, WAV);
    const ok = await transcribe(real, {
      config: { stt: { local: { model_path: model, language: "en" } } },
      env,
      home,
    });
    expect(ok).toMatchObject({ text: "cpp heard (model=ggml-tiny.en.bin lang=en)", provider: "local" });
    // Not chosen (local is only a fallback): nothing is downloaded.
    await expect(
      transcribe(note, { config: { stt: { local: { model: "small" } } }, env, home }),
    ).rejects.toThrow(/the whisper model "small" is not downloaded .*stt\.local\.model_path/);
    // Chosen: the download is tried (here from a closed loopback port) and its failure is plain.
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(
      transcribe(note, {
        config: { stt: { provider: "local", local: { model: "small" } } },
        env: { ...env, HERMES_WHISPER_MODEL_URL: `http://127.0.0.1:${port}/models` },
        home,
      }),
    ).rejects.toThrow(
      /could not download the whisper model "small" from 127\.0\.0\.1:\d+ \(ECONNREFUSED\).*stt\.local\.model_path/,
    );
  });

  it("runs a stt.providers command provider and reads its output file", async () => {
    const result = await transcribe(note, {
      config: {
        stt: {
          provider: "mine",
          providers: {
            mine: {
              type: "command",
              command: `sh -c 'printf "from %s in %s" "$1" "$2" > "$3"' x {model} {language} {output_path}`,
              model: "tiny",
            },
          },
          language: "de",
        },
      },
      env: { PATH },
      home,
    });
    expect(result).toMatchObject({ text: "from tiny in de", provider: "mine" });
  });
});

describe("interrupts and stalls", () => {
  it("stops a command provider that prints nothing past its timeout, killing its process group", async () => {
    const pidFile = join(dir, "stall.pid");
    const started = Date.now();
    await expect(
      synthesize("Hi.", {
        config: {
          tts: {
            provider: "slow",
            fallback: false,
            providers: {
              slow: {
                type: "command",
                command: `sh -c 'sleep 30 & echo $! > "$0"; wait' ${pidFile}`,
                timeout: 0.5,
              },
            },
          },
        },
        env: { PATH },
        home,
        outputPath: out("slow.mp3"),
      }),
    ).rejects.toThrow(/sh printed nothing for 0\.5 s/);
    expect(Date.now() - started).toBeLessThan(5000);
    const pid = Number(readFileSync(pidFile, "utf8"));
    // The grandchild (sleep) went with the group: gone, or a zombie waiting for a reaper.
    await new Promise((r) => setTimeout(r, 200));
    const stat = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, "utf8") : "";
    expect(stat === "" || / Z /.test(stat)).toBe(true);
  });

  it("stops at once when the caller interrupts, trying no further provider", async () => {
    api.mode = "silent";
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    await expect(
      synthesize("Hi.", {
        config: openaiTts({ fallback: ["elevenlabs"] }),
        env: { PATH, ELEVENLABS_API_KEY: "el-key-never-used" },
        home,
        outputPath: out("abort.mp3"),
        signal: controller.signal,
        log: () => {},
      }),
    ).rejects.toThrow(/interrupted/);
    expect(api.requests.map((r) => r.path)).toEqual(["/v1/audio/speech"]);
  });

  it("falls back from a failing chosen cloud STT to the private local engine", async () => {
    api.mode = "error";
    const whisperBin = join(dir, "whisperbin");
    mkdirSync(whisperBin, { recursive: true });
    writeFileSync(
      join(whisperBin, "whisper"),
      `#!/bin/sh\nwhile [ $# -gt 0 ]; do case "$1" in --output_dir) o="$2"; shift;; esac; shift; done\necho "local words" > "$o/note.txt"\n`,
    );
    chmodSync(join(whisperBin, "whisper"), 0o755);
    const lines: string[] = [];
    const result = await transcribe(note, {
      config: { stt: { provider: "openai", openai: { base_url: `${api.url}/v1`, api_key: "k" } } },
      env: { PATH: `${whisperBin}:/usr/bin:/bin` },
      home,
      log: (line) => lines.push(line),
    });
    expect(result).toMatchObject({ text: "local words", provider: "local_command" });
    expect(lines[0]).toMatch(/^speech-to-text: openai failed \(.*HTTP 500.*\); trying local$/);
  });
});

describe.skipIf(!hasEspeak)("the offline fallback", () => {
  it("speaks with espeak-ng when the chosen cloud provider is down", async () => {
    api.mode = "error";
    const result = await synthesize("Offline words.", {
      config: openaiTts(),
      env: { PATH: process.env.PATH },
      home,
      outputPath: out("offline.wav"),
      log: () => {},
    });
    expect(result).toMatchObject({
      provider: "espeak-ng",
      format: "wav",
      attempts: [{ provider: "openai" }],
    });
  });
});
