/**
 * A loopback stand-in for the hosted speech APIs, speaking their real HTTP shapes:
 * - OpenAI `POST /v1/audio/speech` (JSON body, Bearer key) and `POST /v1/audio/transcriptions`;
 * - Groq `POST /openai/v1/audio/transcriptions` (OpenAI's multipart form: file, model,
 *   response_format, language, prompt);
 * - ElevenLabs `POST /v1/text-to-speech/{voice_id}?output_format=...` (`xi-api-key`).
 * Keys are checked; a transcription answers the text registered for the uploaded bytes (the test
 * says what its espeak-ng WAV says), so the client's whole path is real except the recogniser.
 * `mode` makes it misbehave for attack tests.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface SpeechApiRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type SpeechApiMode =
  | "normal"
  /** 307 to `redirectTo` for every request. */
  | "redirect"
  /** 200 with an endless chunked body (stops at 64 MB or when the client hangs up). */
  | "huge"
  /** Accepts the request and never answers. */
  | "silent"
  /** 500 with an OpenAI-style error. */
  | "error";

export interface FakeSpeechApi {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly requests: SpeechApiRequest[];
  mode: SpeechApiMode;
  redirectTo: string;
  /** Keys accepted: OpenAI/Groq Bearer, ElevenLabs xi-api-key. */
  keys: { openai: string; groq: string; elevenlabs: string };
  /** Says what an uploaded audio file contains. */
  register(audio: Buffer, text: string): void;
  /**
   * The text for audio nobody registered (a live recording, whose exact bytes a test cannot know);
   * undefined: such audio is refused as unprocessable.
   */
  unregisteredText: string | undefined;
  /** The audio returned for speech requests (by format asked). */
  speech: (format: string) => Buffer;
  close(): Promise<void>;
}

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

function json(res: ServerResponse, status: number, value: unknown) {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
}

export async function startFakeSpeechApi(): Promise<FakeSpeechApi> {
  const known = new Map<string, string>();
  const sockets = new Set<Socket>();
  const fake: FakeSpeechApi = {
    url: "",
    requests: [],
    mode: "normal",
    redirectTo: "",
    keys: {
      openai: "sk-openai-fake-key-0001",
      groq: "gsk-groq-fake-key-0001",
      elevenlabs: "el-fake-key-0001",
    },
    register: (audio, text) => known.set(sha(audio), text),
    unregisteredText: undefined,
    speech: () => Buffer.from("ID3\u0004\u0000fake", "latin1"),
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const record = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      fake.requests.push(record);
      handle(record, res).catch((error: unknown) => json(res, 500, { error: { message: String(error) } }));
    });
  });

  async function handle(req: SpeechApiRequest, res: ServerResponse) {
    if (fake.mode === "silent") return;
    if (fake.mode === "redirect") {
      res.writeHead(307, { location: `${fake.redirectTo}${req.path}` }).end();
      return;
    }
    if (fake.mode === "error") return json(res, 500, { error: { message: "The server had an error" } });
    if (fake.mode === "huge") {
      res.writeHead(200, {
        "content-type": req.path.includes("transcriptions") ? "application/json" : "audio/mpeg",
      });
      let sent = 0;
      const block = Buffer.alloc(256 * 1024, 0x41);
      const pump = () => {
        while (sent < 64 * 1024 * 1024 && !res.destroyed) {
          sent += block.length;
          if (!res.write(block)) return res.once("drain", pump);
        }
        res.end();
      };
      res.on("close", () => {
        sent = Number.POSITIVE_INFINITY;
      });
      pump();
      return;
    }
    const path = req.path.split("?")[0] ?? "";
    const bearer = String(req.headers.authorization ?? "").replace(/^Bearer /, "");
    if (path === "/v1/audio/speech") {
      if (bearer !== fake.keys.openai)
        return json(res, 401, { error: { message: "Incorrect API key provided" } });
      const body = JSON.parse(req.body.toString("utf8")) as Record<string, unknown>;
      if (
        typeof body["input"] !== "string" ||
        typeof body["model"] !== "string" ||
        typeof body["voice"] !== "string"
      )
        return json(res, 400, { error: { message: "input, model and voice are required" } });
      const format = String(body["response_format"] ?? "mp3");
      res.writeHead(200, { "content-type": format === "opus" ? "audio/ogg" : `audio/${format}` });
      res.end(fake.speech(format));
      return;
    }
    const eleven = /^\/v1\/text-to-speech\/([^/]+)$/.exec(path);
    if (eleven) {
      if (req.headers["xi-api-key"] !== fake.keys.elevenlabs)
        return json(res, 401, { detail: { status: "invalid_api_key", message: "Invalid API key" } });
      const format = new URL(req.path, "http://x").searchParams.get("output_format") ?? "mp3_44100_128";
      res.writeHead(200, { "content-type": format.startsWith("opus") ? "audio/ogg" : "audio/mpeg" });
      res.end(fake.speech(format.startsWith("opus") ? "opus" : "mp3"));
      return;
    }
    if (path === "/v1/audio/transcriptions" || path === "/openai/v1/audio/transcriptions") {
      const groq = path.startsWith("/openai");
      if (bearer !== (groq ? fake.keys.groq : fake.keys.openai))
        return json(res, 401, { error: { message: "Invalid API Key" } });
      const form = await new Request("http://fake/", {
        method: "POST",
        headers: { "content-type": String(req.headers["content-type"]) },
        body: req.body,
      }).formData();
      const file = form.get("file");
      const model = String(form.get("model") ?? "");
      if (!(file instanceof File)) return json(res, 400, { error: { message: "file is required" } });
      const okModels = groq
        ? ["whisper-large-v3-turbo", "whisper-large-v3", "distil-whisper-large-v3-en"]
        : ["whisper-1", "gpt-4o-transcribe", "gpt-4o-mini-transcribe"];
      if (!okModels.includes(model))
        return json(res, 400, { error: { message: `model ${model} does not exist` } });
      const text = known.get(sha(Buffer.from(await file.arrayBuffer()))) ?? fake.unregisteredText;
      if (text === undefined) return json(res, 400, { error: { message: "could not process audio" } });
      return json(res, 200, { text });
    }
    json(res, 404, { error: { message: `no route ${path}` } });
  }

  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(fake, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  });
}
