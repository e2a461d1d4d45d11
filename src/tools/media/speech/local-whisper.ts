/**
 * The in-process whisper.cpp engine for `stt.provider: local`: the `smart-whisper` package (it
 * compiles whisper.cpp with node-gyp when installed and downloads nothing), loaded on first use
 * so Hermes runs without it. Audio is read as WAV (anything else is converted by ffmpeg first),
 * mixed to mono and resampled to 16 kHz. A model file is checked to be a whisper ggml file before
 * it reaches the native code (which crashes the process on a bad one). A loaded model stays
 * ready for five idle minutes, so voice mode does not reload it for every utterance.
 */
import { open, readFile } from "node:fs/promises";
import { createRequire } from "node:module";

/** The npm package the engine loads. */
export const WHISPER_PACKAGE = "smart-whisper";
export const WHISPER_PACKAGE_HINT = `npm install ${WHISPER_PACKAGE} (it builds whisper.cpp from source with node-gyp: needs make and a C++ compiler)`;
const IDLE_FREE_MS = 5 * 60_000;
const GGML_MAGIC = 0x67676d6c;

/** What Hermes uses of smart-whisper. */
export interface WhisperModelHandle {
  free(): Promise<void>;
  readonly freed: boolean;
}
export interface WhisperBinding {
  WhisperModel: { load(file: string, gpu?: boolean): Promise<WhisperModelHandle> };
  TranscribeTask: {
    run(
      model: WhisperModelHandle,
      pcm: Float32Array,
      params: Record<string, unknown>,
    ): Promise<{ result: Promise<Array<{ text: string }>> }>;
  };
}

export class EngineMissingError extends Error {
  override name = "EngineMissingError";
}

type Importer = (specifier: string) => Promise<unknown>;
// smart-whisper is CommonJS; require (not import()) also works inside the CLI bundle, which runs
// in a vm script without a dynamic-import callback.
const nativeImport: Importer = async (specifier) => createRequire(import.meta.url)(specifier);
let importer: Importer = nativeImport;
let binding: Promise<WhisperBinding | null> | null = null;

/** An importer that finds no package: tests of the chain without the in-process engine use it. */
export const absentWhisper: Importer = async () => {
  throw Object.assign(new Error(`Cannot find module '${WHISPER_PACKAGE}'`), { code: "MODULE_NOT_FOUND" });
};

/** Replaces how the package is imported (tests); `null` restores the real import. */
export function setWhisperImporter(next: Importer | null): void {
  importer = next ?? nativeImport;
  binding = null;
  for (const entry of loaded.values()) clearTimeout(entry.timer);
  loaded.clear();
}

/** The package, or null when it is not installed (any other failure to load says why). */
export function loadWhisperBinding(): Promise<WhisperBinding | null> {
  binding ??= importer(WHISPER_PACKAGE).then(
    (mod) => {
      const m = ((mod as { default?: unknown }).default ?? mod) as Partial<WhisperBinding>;
      const named = mod as Partial<WhisperBinding>;
      const chosen = named.WhisperModel ? named : m;
      if (!chosen.WhisperModel || !chosen.TranscribeTask)
        throw new Error(
          `${WHISPER_PACKAGE} loaded but lacks WhisperModel/TranscribeTask (an unexpected version)`,
        );
      return chosen as WhisperBinding;
    },
    (error: NodeJS.ErrnoException) => {
      const text = String(error?.message ?? error);
      if (error?.code === "ERR_MODULE_NOT_FOUND" || error?.code === "MODULE_NOT_FOUND") {
        if (text.includes(`'${WHISPER_PACKAGE}'`) || text.includes(`"${WHISPER_PACKAGE}"`)) return null;
      }
      binding = null;
      throw new Error(
        `${WHISPER_PACKAGE} is installed but did not load (${text.split("\n")[0]}): reinstall it`,
      );
    },
  );
  return binding;
}

/** True when the package resolves from here (nothing is loaded), or a test importer is set. */
export function whisperPackagePresent(): boolean {
  if (importer === absentWhisper) return false;
  if (importer !== nativeImport) return true;
  try {
    createRequire(import.meta.url).resolve(WHISPER_PACKAGE);
    return true;
  } catch {
    return false;
  }
}

/** True when the package can be imported (without loading a model). */
export async function whisperEngineInstalled(): Promise<boolean> {
  try {
    return (await loadWhisperBinding()) !== null;
  } catch {
    return false;
  }
}

/** Bytes per block and elements per block of the ggml tensor types whisper.cpp files use. */
const TENSOR_TYPES: Readonly<Record<number, [bytes: number, elements: number]>> = {
  0: [4, 1], // f32
  1: [2, 1], // f16
  2: [18, 32], // q4_0
  3: [20, 32], // q4_1
  6: [22, 32], // q5_0
  7: [24, 32], // q5_1
  8: [34, 32], // q8_0
};

/**
 * Walks a ggml whisper model (header, mel filters, vocabulary, every tensor's header and size) so
 * that a wrong, truncated or weightless file is refused with a message: the native loader
 * crashes the process on one.
 */
export async function checkGgmlModel(path: string): Promise<void> {
  const handle = await open(path, "r").catch((error: NodeJS.ErrnoException) => {
    throw new Error(`cannot read the whisper model ${path} (${error.code ?? error.message})`);
  });
  const refuse = (why: string) =>
    new Error(
      `${path} is not a usable whisper.cpp ggml model (${why}): use a ggml-*.bin file from whisper.cpp, or remove it so Hermes downloads stt.local.model`,
    );
  try {
    const size = (await handle.stat()).size;
    const head = Buffer.alloc(Math.min(size, 4 * 1024 * 1024));
    await handle.read(head, 0, head.length, 0);
    let at = 0;
    const int = (buffer: Buffer, offset: number) => {
      if (offset + 4 > buffer.length) throw refuse("it ends early");
      return buffer.readInt32LE(offset);
    };
    if (head.length < 48 || head.readUInt32LE(0) !== GGML_MAGIC) throw refuse("wrong header");
    const hp = Array.from({ length: 11 }, (_v, i) => int(head, 4 + i * 4));
    const [nVocab = 0, , nState = 0, , nAudioLayer = 0, , nTextState = 0, , nTextLayer = 0, nMels = 0] = hp;
    const plausible =
      nVocab > 50_000 &&
      nVocab < 60_000 &&
      (nMels === 80 || nMels === 128) &&
      nState > 0 &&
      nState === nTextState &&
      nAudioLayer > 0 &&
      nAudioLayer <= 64 &&
      nTextLayer > 0 &&
      nTextLayer <= 64;
    if (!plausible) throw refuse("implausible hyperparameters");
    at = 48;
    const filters = int(head, at) * int(head, at + 4);
    at += 8 + filters * 4;
    const tokens = int(head, at);
    at += 4;
    for (let i = 0; i < tokens; i++) at += 4 + int(head, at);
    const expected = 7 + 15 * nAudioLayer + 4 + 24 * nTextLayer;
    let count = 0;
    const header = Buffer.alloc(12 + 16);
    while (at < size) {
      const { bytesRead } = await handle.read(header, 0, header.length, at);
      if (bytesRead < 12) throw refuse("it ends inside a tensor header");
      const dims = header.readInt32LE(0);
      const nameLength = header.readInt32LE(4);
      const type = TENSOR_TYPES[header.readInt32LE(8)];
      if (dims < 1 || dims > 4 || nameLength < 1 || nameLength > 256 || !type)
        throw refuse("a damaged tensor");
      let elements = 1;
      for (let d = 0; d < dims; d++) elements *= header.readInt32LE(12 + d * 4);
      if (elements < 1) throw refuse("a damaged tensor");
      at += 12 + dims * 4 + nameLength + Math.ceil(elements / type[1]) * type[0];
      count++;
    }
    if (count === 0) throw refuse("it holds no weights");
    if (at !== size || count !== expected)
      throw refuse(`it is truncated or incomplete: ${count} of ${expected} tensors`);
  } finally {
    await handle.close();
  }
}

/** 16 kHz mono float samples from a PCM (8/16/24/32-bit) or float (32/64-bit) WAV file. */
export function decodeWav(data: Buffer, name = "audio"): Float32Array {
  if (data.length < 12 || data.toString("ascii", 0, 4) !== "RIFF" || data.toString("ascii", 8, 12) !== "WAVE")
    throw new Error(`${name} is not a WAV file`);
  let format = 0;
  let channels = 0;
  let rate = 0;
  let bits = 0;
  let samples: Buffer | null = null;
  for (let at = 12; at + 8 <= data.length; ) {
    const id = data.toString("ascii", at, at + 4);
    const size = data.readUInt32LE(at + 4);
    const body = data.subarray(at + 8, Math.min(data.length, at + 8 + size));
    if (id === "fmt " && body.length >= 16) {
      format = body.readUInt16LE(0);
      channels = body.readUInt16LE(2);
      rate = body.readUInt32LE(4);
      bits = body.readUInt16LE(14);
      if (format === 0xfffe && body.length >= 26) format = body.readUInt16LE(24);
    } else if (id === "data") samples = body;
    at += 8 + size + (size % 2);
  }
  const width = bits / 8;
  const supported =
    (format === 1 && [1, 2, 3, 4].includes(width)) || (format === 3 && [4, 8].includes(width));
  if (!samples || !supported || channels < 1 || rate < 1000)
    throw new Error(
      `${name}: unsupported WAV (format ${format}, ${bits}-bit, ${channels} channels, ${rate} Hz)`,
    );
  const frames = Math.floor(samples.length / (width * channels));
  const read = (offset: number): number => {
    const s = samples as Buffer;
    if (format === 3) return width === 4 ? s.readFloatLE(offset) : s.readDoubleLE(offset);
    if (width === 1) return (s.readUInt8(offset) - 128) / 128;
    if (width === 2) return s.readInt16LE(offset) / 32768;
    if (width === 3) return s.readIntLE(offset, 3) / 8388608;
    return s.readInt32LE(offset) / 2147483648;
  };
  const mono = new Float32Array(frames);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += read((f * channels + c) * width);
    mono[f] = sum / channels;
  }
  if (rate === 16_000) return mono;
  const out = new Float32Array(Math.floor((frames * 16_000) / rate));
  const step = rate / 16_000;
  for (let i = 0; i < out.length; i++) {
    const pos = i * step;
    const left = Math.floor(pos);
    const right = Math.min(left + 1, frames - 1);
    const t = pos - left;
    out[i] = (mono[left] ?? 0) * (1 - t) + (mono[right] ?? 0) * t;
  }
  return out;
}

interface Loaded {
  model: Promise<WhisperModelHandle>;
  timer?: NodeJS.Timeout;
}
const loaded = new Map<string, Loaded>();

function keepWarm(path: string, entry: Loaded): void {
  clearTimeout(entry.timer);
  entry.timer = setTimeout(() => {
    loaded.delete(path);
    void entry.model.then((m) => m.free()).catch(() => undefined);
  }, IDLE_FREE_MS);
  entry.timer.unref();
}

export interface LocalWhisperJob {
  /** A WAV file. */
  wav: string;
  modelPath: string;
  language: string;
  prompt?: string | undefined;
  signal?: AbortSignal | undefined;
}

/** The text in `job.wav`; throws EngineMissingError when smart-whisper is not installed. */
export async function transcribeInProcess(job: LocalWhisperJob): Promise<string> {
  const whisper = await loadWhisperBinding();
  if (!whisper)
    throw new EngineMissingError(`the whisper.cpp engine is not installed: ${WHISPER_PACKAGE_HINT}`);
  const pcm = decodeWav(await readFile(job.wav), job.wav);
  let entry = loaded.get(job.modelPath);
  if (!entry) {
    await checkGgmlModel(job.modelPath);
    entry = { model: whisper.WhisperModel.load(job.modelPath, false) };
    loaded.set(job.modelPath, entry);
    entry.model.catch(() => loaded.delete(job.modelPath));
  }
  keepWarm(job.modelPath, entry);
  const model = await entry.model;
  if (job.signal?.aborted) throw Object.assign(new Error("cancelled"), { name: "AbortError" });
  const params: Record<string, unknown> = { language: job.language, format: "simple" };
  if (job.prompt) params["initial_prompt"] = job.prompt;
  const task = await whisper.TranscribeTask.run(model, pcm, params);
  // The native work cannot be stopped; a cancelled caller stops waiting for it.
  const aborted = new Promise<never>((_resolve, reject) => {
    job.signal?.addEventListener(
      "abort",
      () => reject(Object.assign(new Error("cancelled"), { name: "AbortError" })),
      { once: true },
    );
  });
  aborted.catch(() => undefined);
  const segments: unknown = await Promise.race([task.result, aborted]);
  keepWarm(job.modelPath, entry);
  // smart-whisper hands a failure to the same callback as the segments.
  if (!Array.isArray(segments))
    throw new Error(
      `whisper.cpp could not transcribe ${job.wav}: ${segments instanceof Error ? segments.message : "no segments came back"}`,
    );
  return (segments as Array<{ text?: unknown }>)
    .map((s) => (typeof s.text === "string" ? s.text : ""))
    .join("")
    .replace(/\[(BLANK_AUDIO|MUSIC|NOISE)\]/gi, "")
    .replace(/\s+/g, " ")
    .trim();
}
