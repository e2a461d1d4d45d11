/**
 * whisper.cpp ggml models for the local speech-to-text engine: found where the user put one
 * (`stt.local.model_path`, `<home>/models/whisper/`, whisper.cpp's cache), else downloaded once
 * from whisper.cpp's Hugging Face repository into `<home>/models/whisper/` when the user chose
 * `stt.provider: local`. A download resumes from its `.part` file, is checked (announced size
 * near the model's known size, exact length, SHA-1 from whisper.cpp's model list) and renamed into
 * place only when whole. Progress is a bar on a terminal and a few plain lines elsewhere.
 */
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync } from "node:fs";
import { mkdir, readFile, rename, stat, truncate, unlink, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { type Env, envValue, section, str } from "../shared.js";

export const WHISPER_MODEL_BASE_URL = "https://huggingface.co/ggerganov/whisper.cpp/resolve/main";

export interface WhisperModelInfo {
  /** whisper.cpp's SHA-1 of the file. */
  sha1: string;
  /** The size whisper.cpp lists, in MiB (the announced size must be within 5 % of it). */
  mib: number;
}

/** whisper.cpp's published models (its models/README.md), by the names `download-ggml-model.sh` takes. */
export const WHISPER_MODELS: Readonly<Record<string, WhisperModelInfo>> = {
  tiny: { sha1: "bd577a113a864445d4c299885e0cb97d4ba92b5f", mib: 75 },
  "tiny.en": { sha1: "c78c86eb1a8faa21b369bcd33207cc90d64ae9df", mib: 75 },
  base: { sha1: "465707469ff3a37a2b9b8d8f89f2f99de7299dac", mib: 142 },
  "base.en": { sha1: "137c40403d78fd54d454da0f9bd998f78703390c", mib: 142 },
  small: { sha1: "55356645c2b361a969dfd0ef2c5a50d530afd8d5", mib: 466 },
  "small.en": { sha1: "db8a495a91d927739e50b3fc1cc4c6b8f6c2d022", mib: 466 },
  "small.en-tdrz": { sha1: "b6c6e7e89af1a35c08e6de56b66ca6a02a2fdfa1", mib: 465 },
  medium: { sha1: "fd9727b6e1217c2f614f9b698455c4ffd82463b4", mib: 1536 },
  "medium.en": { sha1: "8c30f0e44ce9560643ebd10bbe50cd20eafd3723", mib: 1536 },
  "large-v1": { sha1: "b1caaf735c4cc1429223d5a74f0f4d0b9b59a299", mib: 2950 },
  "large-v2": { sha1: "0f4c8e34f21cf1a914c59d8b3ce882345ad349d6", mib: 2950 },
  "large-v2-q5_0": { sha1: "00e39f2196344e901b3a2bd5814807a769bd1630", mib: 1080 },
  "large-v3": { sha1: "ad82bf6a9043ceed055076d0fd39f5f186ff8062", mib: 2950 },
  "large-v3-q5_0": { sha1: "e6e2ed78495d403bef4b7cff42ef4aaadcfea8de", mib: 1080 },
  "large-v3-turbo": { sha1: "4af2b29d7ec73d781377bfd1758ca957a807e941", mib: 1536 },
  "large-v3-turbo-q5_0": { sha1: "e050f7970618a659205450ad97eb95a18d69c9ee", mib: 547 },
};

export const DEFAULT_WHISPER_MODEL = "base";
const MAX_REDIRECTS = 5;
const IDLE_TIMEOUT_MS = 60_000;

/** Where progress goes: a terminal gets a bar redrawn in place, anything else a few lines. */
export interface ProgressSink {
  write(text: string): unknown;
  isTTY?: boolean | undefined;
  columns?: number | undefined;
}

export interface ModelRequest {
  config: unknown;
  env: Env;
  home: string;
  /** Download when the model is missing (the user chose local speech-to-text). */
  download: boolean;
  progress?: ProgressSink | undefined;
  signal?: AbortSignal | undefined;
  /** Where models come from (tests use a loopback server). */
  baseUrl?: string | undefined;
  /** The known models (tests use their own). */
  catalog?: Readonly<Record<string, WhisperModelInfo>> | undefined;
  idleTimeoutMs?: number | undefined;
}

/** `stt.local.model`, or `base` (a cloud model name there means nothing locally). */
export function localModelName(config: unknown): string {
  const configured = str(section(config, "stt", "local")["model"]);
  if (!configured || /^(whisper-|gpt-|distil-whisper)/.test(configured)) return DEFAULT_WHISPER_MODEL;
  return configured.replace(/^ggml-/, "").replace(/\.bin$/, "");
}

export function whisperModelDir(home: string): string {
  return join(home, "models", "whisper");
}

/** Where a ggml model is looked for when stt.local.model_path is not set, the home's first. */
export function ggmlModelCandidates(home: string, model: string, env: Env): string[] {
  const cache = envValue(env, "XDG_CACHE_HOME") ?? join(env["HOME"] ?? homedir(), ".cache");
  return [join(whisperModelDir(home), `ggml-${model}.bin`), join(cache, "whisper.cpp", `ggml-${model}.bin`)];
}

export class ModelUnavailableError extends Error {
  override name = "ModelUnavailableError";
}

/**
 * The model file to load: `stt.local.model_path` when set (never downloaded), else a found
 * `ggml-<model>.bin`, else (with `download`) one fetched now.
 */
export async function resolveWhisperModel(req: ModelRequest): Promise<string> {
  const configured = str(section(req.config, "stt", "local")["model_path"]);
  if (configured) {
    const path = configured.replace(/^~(?=\/|$)/, req.env["HOME"] ?? homedir());
    if (!existsSync(path))
      throw new ModelUnavailableError(
        `stt.local.model_path names ${path}, which does not exist: put a whisper.cpp ggml model there or change the setting`,
      );
    return path;
  }
  const name = localModelName(req.config);
  const candidates = ggmlModelCandidates(req.home, name, req.env);
  const found = candidates.find((c) => existsSync(c));
  if (found) return found;
  const catalog = req.catalog ?? WHISPER_MODELS;
  const info = catalog[name];
  if (!info)
    throw new ModelUnavailableError(
      `stt.local.model "${name}" is not one of whisper.cpp's models (${Object.keys(catalog).join(", ")}); ` +
        `put your own ggml file at ${candidates[0]} or name it in stt.local.model_path`,
    );
  if (!req.download)
    throw new ModelUnavailableError(
      `the whisper model "${name}" is not downloaded (${candidates[0]}): choose stt.provider: local to download it on first use, or name a ggml file in stt.local.model_path`,
    );
  return downloadWhisperModel(name, info, candidates[0] as string, req);
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** A bar on a terminal (redrawn at most 10 times a second), else a line at each quarter. */
function progressReporter(sink: ProgressSink | undefined, label: string) {
  let lastDraw = 0;
  let lastQuarter = -1;
  return {
    update(done: number, total: number, final = false) {
      if (!sink) return;
      const fraction = total > 0 ? Math.min(1, done / total) : 0;
      if (sink.isTTY) {
        const now = Date.now();
        if (!final && now - lastDraw < 100) return;
        lastDraw = now;
        const width = Math.max(10, Math.min(30, (sink.columns ?? 80) - label.length - 40));
        const filled = Math.round(fraction * width);
        sink.write(
          `\r\x1b[2K${label} [${"█".repeat(filled)}${"░".repeat(width - filled)}] ${Math.floor(fraction * 100)}% ${mb(done)} / ${mb(total)}${final ? "\n" : ""}`,
        );
        return;
      }
      const quarter = Math.floor(fraction * 4);
      if (quarter > lastQuarter && quarter < 4) {
        lastQuarter = quarter;
        sink.write(`${label}: ${quarter * 25}% (${mb(done)} of ${mb(total)})\n`);
      } else if (final) sink.write(`${label}: 100% (${mb(total)})\n`);
    },
    abandon() {
      if (sink?.isTTY && lastDraw > 0) sink.write("\n");
    },
  };
}

function fileError(error: unknown, dir: string, need: number): Error {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ENOSPC")
    return new ModelUnavailableError(
      `the disk holding ${dir} is full: the whisper model needs ${mb(need)} free; the part already downloaded is kept and the download resumes next time`,
    );
  if (code === "EACCES" || code === "EPERM" || code === "EROFS")
    return new ModelUnavailableError(
      `cannot write the whisper model into ${dir} (${code}: permission denied): make it writable, or download the model yourself and name it in stt.local.model_path`,
    );
  return error instanceof Error ? error : new Error(String(error));
}

async function sha1Of(path: string): Promise<string> {
  const hash = createHash("sha1");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** Follows up to 5 redirects by hand: never from https down to http. */
async function openDownload(
  url: string,
  from: number,
  signal: AbortSignal,
): Promise<{ response: Response; url: string }> {
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const response = await fetch(current, {
      redirect: "manual",
      signal,
      headers: from > 0 ? { range: `bytes=${from}-` } : {},
    });
    if (response.status < 300 || response.status >= 400) return { response, url: current };
    await response.body?.cancel();
    const location = response.headers.get("location");
    if (!location) throw new Error(`${new URL(current).host} answered ${response.status} without a location`);
    const next = new URL(location, current);
    if (new URL(current).protocol === "https:" && next.protocol !== "https:")
      throw new Error(`refusing a redirect from https to ${next.protocol} (${next.host})`);
    current = next.toString();
  }
  throw new Error(`more than ${MAX_REDIRECTS} redirects`);
}

/** The total size from a 206's `Content-Range: bytes a-b/total`, or a 200's content-length. */
function announcedTotal(response: Response, from: number): number | undefined {
  if (response.status === 206) {
    const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.headers.get("content-range") ?? "");
    if (!match || Number(match[1]) !== from) return undefined;
    return Number(match[3]);
  }
  const length = Number(response.headers.get("content-length"));
  return Number.isFinite(length) && length > 0 ? length : undefined;
}

async function partSize(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}

type DownloadRequest = Pick<ModelRequest, "progress" | "signal" | "baseUrl" | "idleTimeoutMs">;

/** Downloads running in this process, by target: a second caller waits for the first. */
const inFlight = new Map<string, Promise<string>>();

/**
 * Downloads `name` to `target` through `target.part`; returns `target`. One download per model:
 * callers in this process share it, and `target.lock` (the downloading process's pid) keeps
 * another Hermes process from writing the same part.
 */
export function downloadWhisperModel(
  name: string,
  info: WhisperModelInfo,
  target: string,
  req: DownloadRequest,
): Promise<string> {
  const running = inFlight.get(target);
  if (running) return running;
  const job = (async () => {
    const dir = dirname(target);
    try {
      await mkdir(dir, { recursive: true });
    } catch (error) {
      throw fileError(error, dir, info.mib * 1024 * 1024);
    }
    const lock = `${target}.lock`;
    await takeLock(lock, name, dir);
    try {
      return await fetchModel(name, info, target, req);
    } finally {
      await unlink(lock).catch(() => undefined);
    }
  })();
  inFlight.set(target, job);
  const forget = () => {
    if (inFlight.get(target) === job) inFlight.delete(target);
  };
  job.then(forget, forget);
  return job;
}

/** Creates `lock` holding this pid; a lock left by a process that is gone is taken over. */
async function takeLock(lock: string, name: string, dir: string): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(lock, String(process.pid), { flag: "wx" });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw fileError(error, dir, 0);
    }
    const pid = Number((await readFile(lock, "utf8").catch(() => "")).trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid))
      throw new ModelUnavailableError(
        `another Hermes process (pid ${pid}) is downloading whisper model "${name}" into ${dir}: try again when it has finished`,
      );
    await unlink(lock).catch(() => undefined);
  }
  throw new ModelUnavailableError(
    `could not take ${lock} for the whisper model download: remove it and try again`,
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function fetchModel(
  name: string,
  info: WhisperModelInfo,
  target: string,
  req: DownloadRequest,
): Promise<string> {
  const dir = dirname(target);
  const part = `${target}.part`;
  const expected = info.mib * 1024 * 1024;
  const url = `${(req.baseUrl ?? WHISPER_MODEL_BASE_URL).replace(/\/+$/, "")}/ggml-${name}.bin`;
  const host = new URL(url).host;
  const label = `Downloading whisper model ${name}`;
  const progress = progressReporter(req.progress, label);
  let from = await partSize(part);
  if (from > 0) req.progress?.write(`Resuming the download of whisper model ${name} at ${mb(from)}.\n`);
  const idle = new AbortController();
  const signal = req.signal ? AbortSignal.any([req.signal, idle.signal]) : idle.signal;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => idle.abort(new Error("idle")), req.idleTimeoutMs ?? IDLE_TIMEOUT_MS);
  };
  try {
    arm();
    let opened: { response: Response; url: string };
    try {
      opened = await openDownload(url, from, signal);
    } catch (error) {
      if (req.signal?.aborted) throw error;
      throw new ModelUnavailableError(
        `could not download the whisper model "${name}" from ${host} (${reason(error)}): without a connection, ` +
          `download ggml-${name}.bin yourself (${url}) and put it at ${target}, or name a model file in stt.local.model_path`,
      );
    }
    let { response } = opened;
    if (response.status === 416 && from > 0) {
      // The part is not a prefix the server recognises: start again.
      await response.body?.cancel();
      await truncate(part, 0);
      from = 0;
      response = (await openDownload(url, 0, signal)).response;
    }
    if (response.status !== 200 && response.status !== 206) {
      await response.body?.cancel();
      throw new ModelUnavailableError(
        `${host} refused the whisper model "${name}" (HTTP ${response.status}); download ggml-${name}.bin yourself and name it in stt.local.model_path`,
      );
    }
    if (response.status === 200) from = 0;
    const total = announcedTotal(response, from);
    if (total === undefined || Math.abs(total - expected) > expected * 0.05) {
      await response.body?.cancel();
      throw new ModelUnavailableError(
        `${host} offered ${total === undefined ? "a file of unknown size" : mb(total)} for the whisper model "${name}", ` +
          `which is about ${mb(expected)}: refused (nothing was kept)`,
      );
    }
    if (!response.body) throw new Error("the answer had no body");
    const out = createWriteStream(part, { flags: from > 0 ? "a" : "w" });
    const failed = new Promise<never>((_resolve, reject) => out.once("error", reject));
    failed.catch(() => undefined);
    let done = from;
    progress.update(done, total);
    try {
      for await (const chunk of Readable.fromWeb(response.body as import("node:stream/web").ReadableStream)) {
        arm();
        const buffer = chunk as Buffer;
        done += buffer.length;
        if (done > total)
          throw new ModelUnavailableError(`${host} sent more than the ${mb(total)} it announced`);
        if (!out.write(buffer))
          await Promise.race([new Promise<void>((r) => out.once("drain", () => r())), failed]);
        progress.update(done, total);
      }
      await Promise.race([new Promise<void>((r) => out.end(() => r())), failed]);
    } catch (error) {
      out.destroy();
      progress.abandon();
      if (error instanceof ModelUnavailableError) {
        await unlink(part).catch(() => undefined);
        throw error;
      }
      const code = (error as NodeJS.ErrnoException).code;
      if (code) throw fileError(error, dir, total);
      if (req.signal?.aborted) throw error;
      throw new ModelUnavailableError(
        `the download of whisper model "${name}" from ${host} stopped at ${mb(done)} of ${mb(total)} (${reason(error, idle.signal)}): ` +
          `it resumes from there next time; or download ggml-${name}.bin yourself and name it in stt.local.model_path`,
      );
    }
    if (done !== total) {
      progress.abandon();
      throw new ModelUnavailableError(
        `the download of whisper model "${name}" ended at ${mb(done)} of ${mb(total)}: it resumes from there next time`,
      );
    }
    progress.update(done, total, true);
    const sum = await sha1Of(part);
    if (sum !== info.sha1) {
      await unlink(part).catch(() => undefined);
      throw new ModelUnavailableError(
        `the downloaded whisper model "${name}" is damaged (SHA-1 ${sum}, expected ${info.sha1}): it was removed; try again`,
      );
    }
    try {
      await rename(part, target);
    } catch (error) {
      throw fileError(error, dir, total);
    }
    req.progress?.write(`Saved whisper model ${name} to ${target}\n`);
    return target;
  } catch (error) {
    throw error instanceof ModelUnavailableError || req.signal?.aborted
      ? error
      : fileError(error, dir, expected);
  } finally {
    clearTimeout(timer);
  }
}

function reason(error: unknown, idle?: AbortSignal): string {
  if (idle?.aborted) return "no data for a minute";
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  if (cause?.code) return cause.code;
  if (cause?.message) return cause.message;
  return error instanceof Error ? error.message : String(error);
}
