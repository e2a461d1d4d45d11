/**
 * The whisper model manager against a loopback server speaking HTTP the way Hugging Face's file
 * host does (a redirect to the file, Range requests answered with 206 and Content-Range). The
 * model is a 1 MiB file of random bytes with its own SHA-1 in a test catalog: no real whisper
 * model is reachable here.
 */
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  localModelName,
  resolveWhisperModel,
  WHISPER_MODELS,
} from "../../../../src/tools/media/speech/local-models.js";
import { tempFolder } from "../../../support/voice-rig.js";

const MODEL = randomBytes(1024 * 1024);
const catalog = { tiny: { sha1: createHash("sha1").update(MODEL).digest("hex"), mib: 1 } };

type Mode = "normal" | "cut" | "no-range" | "small" | "corrupt" | "redirect-loop";
let server: Server;
let base: string;
let mode: Mode;
const seen: Array<{ url: string; range: string | undefined }> = [];

function serve(req: IncomingMessage, res: ServerResponse) {
  seen.push({ url: req.url ?? "", range: req.headers.range });
  if (mode === "redirect-loop") {
    res.writeHead(302, { location: req.url ?? "/" }).end();
    return;
  }
  if (req.url === "/resolve/main/ggml-tiny.bin") {
    // Hugging Face sends the file from elsewhere; a relative location must work.
    res.writeHead(302, { location: "/cdn/ggml-tiny.bin?sig=1" }).end();
    return;
  }
  if (!req.url?.startsWith("/cdn/ggml-tiny.bin")) {
    res.writeHead(404).end("Entry not found");
    return;
  }
  if (mode === "small") {
    res.writeHead(200, { "content-type": "text/html", "content-length": "19" }).end("<html>login</html>\n");
    return;
  }
  const body = mode === "corrupt" ? Buffer.from(MODEL).fill(7, 1000, 2000) : MODEL;
  const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
  if (range && mode !== "no-range") {
    const from = Number(range[1]);
    if (from >= body.length) {
      res.writeHead(416, { "content-range": `bytes */${body.length}` }).end();
      return;
    }
    res.writeHead(206, {
      "content-length": String(body.length - from),
      "content-range": `bytes ${from}-${body.length - 1}/${body.length}`,
    });
    res.end(body.subarray(from));
    return;
  }
  res.writeHead(200, { "content-length": String(body.length) });
  if (mode === "cut") {
    // The connection drops after 300 KiB.
    res.write(body.subarray(0, 300 * 1024), () => setTimeout(() => res.destroy(), 50));
    return;
  }
  res.end(body);
}

beforeEach(async () => {
  mode = "normal";
  seen.length = 0;
  server = createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/resolve/main`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function sink(isTTY = false) {
  const out: string[] = [];
  return { out, write: (t: string) => out.push(t), isTTY, columns: 100 };
}

function request(home: string, extra: Record<string, unknown> = {}, progress = sink()) {
  return {
    config: { stt: { provider: "local", local: { model: "tiny", ...extra } } },
    env: { HOME: home },
    home,
    download: true,
    baseUrl: base,
    catalog,
    progress,
  };
}

const home = () => tempFolder("hermes-models-");
const target = (h: string) => join(h, "models", "whisper", "ggml-tiny.bin");

describe("whisper model manager", () => {
  it("downloads on first use through the redirect, with progress lines off a terminal, and reuses the file", async () => {
    const h = home();
    const progress = sink(false);
    const path = await resolveWhisperModel(request(h, {}, progress));
    expect(path).toBe(target(h));
    expect(readFileSync(path).equals(MODEL)).toBe(true);
    expect(existsSync(`${path}.part`)).toBe(false);
    expect(seen.map((s) => s.url)).toEqual(["/resolve/main/ggml-tiny.bin", "/cdn/ggml-tiny.bin?sig=1"]);
    expect(progress.out.join("")).toContain("Downloading whisper model tiny: 0% (0.0 MB of 1.0 MB)");
    expect(progress.out.join("")).toContain("Downloading whisper model tiny: 100% (1.0 MB)");
    expect(progress.out.at(-1)).toBe(`Saved whisper model tiny to ${path}\n`);
    expect(progress.out.join("")).not.toContain("\r");
    // Found next time: no request.
    await resolveWhisperModel(request(h));
    expect(seen).toHaveLength(2);
  });

  it("draws a bar in place on a terminal", async () => {
    const progress = sink(true);
    await resolveWhisperModel(request(home(), {}, progress));
    const bars = progress.out.filter((t) => t.startsWith("\r\x1b[2K"));
    expect(bars.length).toBeGreaterThan(0);
    expect(bars.at(-1)).toMatch(/Downloading whisper model tiny \[█+\] 100% 1\.0 MB \/ 1\.0 MB\n$/);
  });

  it("an interrupted download says so, keeps its part, and resumes with a Range request", async () => {
    const h = home();
    mode = "cut";
    const error = await resolveWhisperModel(request(h)).catch((e: Error) => e);
    expect(String(error)).toMatch(/stopped at 0\.3 MB of 1\.0 MB .*it resumes from there next time/);
    expect(existsSync(target(h))).toBe(false);
    const kept = statSync(`${target(h)}.part`).size;
    expect(kept).toBe(300 * 1024);
    mode = "normal";
    seen.length = 0;
    const progress = sink();
    const path = await resolveWhisperModel(request(h, {}, progress));
    expect(seen.map((s) => s.range)).toEqual([`bytes=${kept}-`, `bytes=${kept}-`]);
    expect(progress.out[0]).toBe("Resuming the download of whisper model tiny at 0.3 MB.\n");
    expect(readFileSync(path).equals(MODEL)).toBe(true);
    expect(existsSync(`${path}.part`)).toBe(false);
  });

  it("starts again when the server ignores the Range, or says the part is not a prefix (416)", async () => {
    const h = home();
    mkdirSync(join(h, "models", "whisper"), { recursive: true });
    writeFileSync(`${target(h)}.part`, MODEL.subarray(0, 1000));
    mode = "no-range";
    expect(readFileSync(await resolveWhisperModel(request(h))).equals(MODEL)).toBe(true);

    const h2 = home();
    mkdirSync(join(h2, "models", "whisper"), { recursive: true });
    writeFileSync(`${target(h2)}.part`, Buffer.alloc(2 * 1024 * 1024));
    mode = "normal";
    expect(readFileSync(await resolveWhisperModel(request(h2))).equals(MODEL)).toBe(true);
  });

  it("refuses a file of the wrong size (a login page) and keeps nothing", async () => {
    const h = home();
    mode = "small";
    await expect(resolveWhisperModel(request(h))).rejects.toThrow(
      /offered 0\.0 MB for the whisper model "tiny", which is about 1\.0 MB: refused/,
    );
    expect(existsSync(target(h))).toBe(false);
    expect(existsSync(`${target(h)}.part`)).toBe(false);
  });

  it("removes a download whose SHA-1 is wrong", async () => {
    const h = home();
    mode = "corrupt";
    await expect(resolveWhisperModel(request(h))).rejects.toThrow(
      new RegExp(`damaged \\(SHA-1 [0-9a-f]{40}, expected ${catalog.tiny.sha1}\\): it was removed`),
    );
    expect(existsSync(target(h))).toBe(false);
    expect(existsSync(`${target(h)}.part`)).toBe(false);
  });

  it("offline: names the file to fetch and stt.local.model_path", async () => {
    const h = home();
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const error = await resolveWhisperModel({ ...request(h), baseUrl: `http://127.0.0.1:${port}/x` }).catch(
      (e: Error) => e,
    );
    expect(String(error)).toMatch(
      /could not download the whisper model "tiny" from 127\.0\.0\.1:\d+ \(ECONNREFUSED\): without a connection, download ggml-tiny\.bin yourself .* or name a model file in stt\.local\.model_path/,
    );
    mode = "redirect-loop";
    await expect(resolveWhisperModel(request(h))).rejects.toThrow(/more than 5 redirects/);
  });

  it("a full disk and an unwritable folder get plain messages", async () => {
    const h = home();
    mkdirSync(join(h, "models", "whisper"), { recursive: true });
    // The part file leads to /dev/full: every write fails with ENOSPC.
    symlinkSync("/dev/full", `${target(h)}.part`);
    mode = "no-range";
    await expect(resolveWhisperModel(request(h))).rejects.toThrow(
      /the disk holding .*models\/whisper is full: the whisper model needs 1\.0 MB free/,
    );
    expect(existsSync(target(h))).toBe(false);
    // /sys refuses new folders even to root.
    await expect(resolveWhisperModel(request("/sys/hermes-no-such-home"))).rejects.toThrow(
      /cannot write the whisper model into \/sys\/hermes-no-such-home\/models\/whisper \((EACCES|EPERM|EROFS): permission denied\).*stt\.local\.model_path/,
    );
  });

  it("one download per model: callers in this process share it, another process's lock is respected", async () => {
    const h = home();
    const [a, b] = await Promise.all([resolveWhisperModel(request(h)), resolveWhisperModel(request(h))]);
    expect(a).toBe(b);
    expect(seen).toHaveLength(2);
    expect(existsSync(`${a}.lock`)).toBe(false);

    const h2 = home();
    const lock = `${target(h2)}.lock`;
    mkdirSync(join(h2, "models", "whisper"), { recursive: true });
    const other = spawn("sleep", ["30"]);
    try {
      writeFileSync(lock, String(other.pid));
      seen.length = 0;
      await expect(resolveWhisperModel(request(h2))).rejects.toThrow(
        new RegExp(
          `another Hermes process \\(pid ${other.pid}\\) is downloading whisper model "tiny" into .*: try again when it has finished`,
        ),
      );
      expect(seen).toEqual([]);
    } finally {
      other.kill();
    }
    await new Promise((r) => other.once("exit", r));
    // Its process is gone: the lock is stale and taken over.
    expect(readFileSync(await resolveWhisperModel(request(h2))).equals(MODEL)).toBe(true);
    expect(existsSync(lock)).toBe(false);
  });

  it("downloads nothing unless asked, and never for stt.local.model_path", async () => {
    const h = home();
    await expect(resolveWhisperModel({ ...request(h), download: false })).rejects.toThrow(
      /the whisper model "tiny" is not downloaded .*choose stt.provider: local to download it on first use/,
    );
    const own = join(h, "mine.bin");
    writeFileSync(own, "x");
    expect(await resolveWhisperModel(request(h, { model_path: own }))).toBe(own);
    await expect(resolveWhisperModel(request(h, { model_path: join(h, "gone.bin") }))).rejects.toThrow(
      /stt\.local\.model_path names .*gone\.bin, which does not exist/,
    );
    await expect(resolveWhisperModel(request(h, { model: "huge-v9" }))).rejects.toThrow(
      /stt\.local\.model "huge-v9" is not one of whisper\.cpp's models \(tiny\)/,
    );
    expect(seen).toEqual([]);
  });

  it("knows upstream's model names and reads stt.local.model", () => {
    expect(Object.keys(WHISPER_MODELS)).toEqual(
      expect.arrayContaining([
        "tiny",
        "tiny.en",
        "base",
        "base.en",
        "small",
        "medium",
        "large-v3",
        "large-v3-turbo",
      ]),
    );
    expect(localModelName({})).toBe("base");
    expect(localModelName({ stt: { local: { model: "small.en" } } })).toBe("small.en");
    expect(localModelName({ stt: { local: { model: "ggml-tiny.bin" } } })).toBe("tiny");
    expect(localModelName({ stt: { local: { model: "whisper-1" } } })).toBe("base");
  });
});
