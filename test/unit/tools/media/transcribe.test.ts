import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { findBinary } from "../../../../src/tools/media/shared.js";
import { absentWhisper, setWhisperImporter } from "../../../../src/tools/media/speech/local-whisper.js";
import { splitWords, transcribeAudio } from "../../../../src/tools/media/transcribe.js";
import { type HttpFake, type RecordedHttp, sendJson, startHttpFake } from "./http-fake.js";

// These tests pin the chain without the in-process whisper engine (smart-whisper is an optional
// dependency); speech-local-whisper.test.ts covers the engine itself.
beforeEach(() => setWhisperImporter(absentWhisper));
afterEach(() => setWhisperImporter(null));

const BLANK = {
  GROQ_API_KEY: "",
  GROQ_BASE_URL: "",
  VOICE_TOOLS_OPENAI_KEY: "",
  OPENAI_API_KEY: "",
  STT_OPENAI_BASE_URL: "",
  STT_OPENAI_MODEL: "",
  STT_GROQ_MODEL: "",
  HERMES_LOCAL_STT_COMMAND: "",
  HERMES_LOCAL_STT_LANGUAGE: "",
};

const dir = mkdtempSync(join(tmpdir(), "hermes-stt-test-"));
const home = join(dir, "home");
const wav = join(dir, "note.wav");
const AUDIO = Buffer.concat([Buffer.from("RIFF\x24\x00\x00\x00WAVEfmt ", "latin1"), Buffer.alloc(64, 7)]);
writeFileSync(wav, AUDIO);

let server: HttpFake;
let status = 200;

beforeAll(async () => {
  server = await startHttpFake((req, res) => {
    if (req.method === "POST" && req.path.endsWith("/audio/transcriptions")) {
      if (status !== 200) return sendJson(res, status, { error: { message: "Incorrect API key provided" } });
      return sendJson(res, 200, { text: " hello from the fake endpoint " });
    }
    sendJson(res, 404, { error: { message: "no route" } });
  });
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  server.requests.length = 0;
  status = 200;
});

/** The multipart form of a recorded request, parsed the way a server framework would. */
async function formOf(req: RecordedHttp | undefined): Promise<FormData> {
  const request = new Request("http://fake/", {
    method: "POST",
    headers: { "content-type": String(req?.headers["content-type"]) },
    body: req?.body ?? Buffer.alloc(0),
  });
  return request.formData();
}

describe("transcribeAudio over HTTP", () => {
  it("posts the file and model to an OpenAI-compatible /audio/transcriptions as multipart", async () => {
    const config = {
      stt: { provider: "openai", openai: { base_url: `${server.url}/v1`, api_key: "sk-stt" } },
    };
    const result = await transcribeAudio(wav, { config, env: { PATH: "", ...BLANK }, home });

    expect(result).toEqual({ text: "hello from the fake endpoint", provider: "openai" });
    const req = server.requests[0];
    expect(req?.path).toBe("/v1/audio/transcriptions");
    expect(req?.headers.authorization).toBe("Bearer sk-stt");
    expect(String(req?.headers["content-type"])).toMatch(/^multipart\/form-data; boundary=/);
    const form = await formOf(req);
    expect(form.get("model")).toBe("whisper-1");
    expect(form.get("response_format")).toBe("json");
    const file = form.get("file") as File;
    expect(file.name).toBe("note.wav");
    expect(Buffer.from(await file.arrayBuffer())).toEqual(AUDIO);
  });

  it("uses Groq's Whisper with its own model and the configured language", async () => {
    const config = { stt: { language: "de" } };
    const env = { PATH: "", ...BLANK, GROQ_API_KEY: "gsk", GROQ_BASE_URL: `${server.url}/openai/v1` };
    const result = await transcribeAudio(wav, { config, env, home });

    expect(result.provider).toBe("groq");
    const req = server.requests[0];
    expect(req?.path).toBe("/openai/v1/audio/transcriptions");
    expect(req?.headers.authorization).toBe("Bearer gsk");
    const form = await formOf(req);
    expect(form.get("model")).toBe("whisper-large-v3-turbo");
    expect(form.get("language")).toBe("de");
  });

  it("reports a refused request with the provider's message", async () => {
    status = 401;
    const config = { stt: { provider: "openai", openai: { base_url: `${server.url}/v1`, api_key: "bad" } } };
    await expect(transcribeAudio(wav, { config, env: { PATH: "", ...BLANK }, home })).rejects.toThrow(
      /refused note\.wav \(HTTP 401\): Incorrect API key provided/,
    );
  });
});

describe("transcribeAudio with a local whisper command", () => {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  // A stand-in for the whisper CLI: writes <output_dir>/<stem>.txt naming what it was given.
  writeFileSync(
    join(bin, "whisper"),
    `#!/bin/sh
input="$1"; shift
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model="$2"; shift ;;
    --output_dir) out="$2"; shift ;;
    --language) lang="$2"; shift ;;
  esac
  shift
done
name=\${input##*/}
printf 'local words (model=%s lang=%s input=%s)\\n' "$model" "$lang" "$name" > "$out/\${name%.*}.txt"
`,
  );
  chmodSync(join(bin, "whisper"), 0o755);

  it("prefers a whisper CLI on PATH over cloud keys when no provider is set", async () => {
    const env = { PATH: `${bin}:/usr/bin:/bin`, ...BLANK, GROQ_API_KEY: "gsk" };
    const result = await transcribeAudio(wav, { config: {}, env, home });
    expect(result).toEqual({
      text: "local words (model=base lang=en input=note.wav)",
      provider: "local_command",
    });
    expect(server.requests).toHaveLength(0);
  });

  it.skipIf(findBinary("ffmpeg", process.env) === undefined)(
    "converts other formats to WAV first",
    async () => {
      const ogg = join(dir, "voice.ogg");
      execFileSync("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=1", "-c:a", "libopus", ogg]);
      const env = { PATH: `${bin}:${process.env.PATH}`, ...BLANK };
      const config = { stt: { provider: "local", local: { model: "small", language: "fr" } } };
      const result = await transcribeAudio(ogg, { config, env, home });
      expect(result.text).toBe("local words (model=small lang=fr input=input.wav)");
    },
  );

  it("runs HERMES_LOCAL_STT_COMMAND with the placeholders filled in", async () => {
    const template = `sh -c 'printf "%s/%s" "$0" "$1" > "$2/t.txt"' {model} {language} {output_dir}`;
    const env = { PATH: "/usr/bin:/bin", ...BLANK, HERMES_LOCAL_STT_COMMAND: template };
    const result = await transcribeAudio(wav, {
      config: { stt: { local: { model: "whisper-1" } } },
      env,
      home,
    });
    // A cloud model name means nothing to a local whisper: the default model is used.
    expect(result).toEqual({ text: "base/en", provider: "local_command" });
  });
});

describe("transcribeAudio without a backend or with bad input", () => {
  it("says what to configure when nothing can transcribe", async () => {
    await expect(transcribeAudio(wav, { config: {}, env: { PATH: "", ...BLANK }, home })).rejects.toThrow(
      /No speech-to-text configured: .*GROQ_API_KEY/,
    );
  });

  it("honours stt.enabled: false and refuses unknown providers", async () => {
    const env = { PATH: "", ...BLANK, GROQ_API_KEY: "gsk" };
    await expect(transcribeAudio(wav, { config: { stt: { enabled: false } }, env, home })).rejects.toThrow(
      /disabled.*stt\.enabled/,
    );
    await expect(transcribeAudio(wav, { config: { stt: { provider: "xai" } }, env, home })).rejects.toThrow(
      /"xai" is not supported by Hermes-TS yet/,
    );
  });

  it("refuses missing files and non-audio formats", async () => {
    const env = { PATH: "", ...BLANK, GROQ_API_KEY: "gsk" };
    await expect(transcribeAudio(join(dir, "gone.wav"), { config: {}, env, home })).rejects.toThrow(
      /not found/,
    );
    const txt = join(dir, "notes.txt");
    writeFileSync(txt, "hello");
    await expect(transcribeAudio(txt, { config: {}, env, home })).rejects.toThrow(
      /Unsupported audio format "\.txt"/,
    );
  });

  it("splits command templates like a shell", () => {
    expect(splitWords(`whisper "{input_path}" --x 'a b' c\\ d`)).toEqual([
      "whisper",
      "{input_path}",
      "--x",
      "a b",
      "c d",
    ]);
  });
});
