/**
 * Microsoft Edge's read-aloud voices (upstream's free default `tts.provider: edge`) over their
 * WebSocket protocol: the connect URL carries the browser's trusted client token and a Sec-MS-GEC
 * token (SHA-256 of the Windows-epoch time in 5-minute steps plus that token), the client sends a
 * `speech.config` message and one SSML message per text chunk, and the service answers with text
 * frames (`turn.start`, `audio.metadata`, `response`, `turn.end`) and binary frames whose first two
 * bytes give the length of a header block carrying `Path:audio`, followed by MP3 bytes.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import type WsSocket from "ws";

export const EDGE_TRUSTED_CLIENT_TOKEN = "6A5AA1D4EAFF4E9FB37E23D68491D6F4";
export const EDGE_WSS_URL = "wss://speech.platform.bing.com/consumer/speech/synthesize/readaloud/edge/v1";
const CHROMIUM_FULL_VERSION = "130.0.2849.68";
export const EDGE_GEC_VERSION = `1-${CHROMIUM_FULL_VERSION}`;
const CHROMIUM_MAJOR = CHROMIUM_FULL_VERSION.split(".")[0];
const EDGE_ORIGIN = "chrome-extension://jdiccldimpdaibmpdkjnbmckianbfold";
export const EDGE_OUTPUT_FORMAT = "audio-24khz-48kbitrate-mono-mp3";
/** Seconds between 1601-01-01 (Windows file time) and 1970-01-01. */
const WINDOWS_EPOCH_OFFSET = 11_644_473_600;
/** The service refuses SSML messages much over 4 KiB of text. */
const CHUNK_BYTES = 4096;

export interface EdgeOptions {
  /** Short voice name such as `en-US-AriaNeural`. */
  voice: string;
  rate?: string;
  pitch?: string;
  volume?: string;
  /** The WebSocket endpoint (tests and proxies); default Microsoft's. */
  url?: string;
  /** Whole-request limit; a stream that never sends `turn.end` fails after it. */
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal | undefined;
  /** Clock used for the Sec-MS-GEC token (tests). */
  now?: () => number;
}

/** The Sec-MS-GEC token for `nowMs`: upper-case SHA-256 hex of `<ticks><client token>`. */
export function secMsGec(nowMs: number): string {
  let seconds = Math.floor(nowMs / 1000) + WINDOWS_EPOCH_OFFSET;
  seconds -= seconds % 300;
  const ticks = BigInt(seconds) * 10_000_000n;
  return createHash("sha256").update(`${ticks}${EDGE_TRUSTED_CLIENT_TOKEN}`).digest("hex").toUpperCase();
}

/** The text with the XML specials escaped and control characters (which the service rejects) blanked. */
export function escapeSsml(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, " ")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

const VOICE_NAME = /^([a-z]{2,3}-[A-Za-z0-9]{2,8}(?:-[A-Za-z0-9]{2,8})?)-([A-Za-z0-9]+Neural)$/;
const PROSODY = { rate: /^[+-]\d{1,3}%$/, volume: /^[+-]\d{1,3}%$/, pitch: /^[+-]\d{1,4}Hz$/ } as const;

/** `en-US-AriaNeural` as the service names it; throws for anything that is not a voice name. */
export function edgeVoiceName(voice: string): string {
  const match = VOICE_NAME.exec(voice.trim());
  if (!match)
    throw new Error(
      `tts.edge.voice "${voice}" is not an Edge voice name (like en-US-AriaNeural or de-DE-KatjaNeural).`,
    );
  return `Microsoft Server Speech Text to Speech Voice (${match[1]}, ${match[2]})`;
}

function prosody(name: keyof typeof PROSODY, value: string | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  if (!PROSODY[name].test(value))
    throw new Error(`tts.edge.${name} "${value}" must look like ${fallback.replace("0", "10")}.`);
  return value;
}

/** One SSML document for an already escaped chunk. */
export function edgeSsml(escaped: string, options: EdgeOptions): string {
  const rate = prosody("rate", options.rate, "+0%");
  const pitch = prosody("pitch", options.pitch, "+0Hz");
  const volume = prosody("volume", options.volume, "+0%");
  return (
    `<speak version='1.0' xmlns='http://www.w3.org/2001/10/synthesis' xml:lang='en-US'>` +
    `<voice name='${edgeVoiceName(options.voice)}'>` +
    `<prosody pitch='${pitch}' rate='${rate}' volume='${volume}'>${escaped}</prosody></voice></speak>`
  );
}

/** Escaped text cut into chunks of at most `limit` UTF-8 bytes, never inside an entity, preferring spaces. */
export function edgeChunks(escaped: string, limit = CHUNK_BYTES): string[] {
  const chunks: string[] = [];
  let rest = escaped;
  while (Buffer.byteLength(rest) > limit) {
    let cut = limit;
    while (Buffer.byteLength(rest.slice(0, cut)) > limit) cut--;
    const amp = rest.lastIndexOf("&", cut - 1);
    if (amp >= 0 && rest.indexOf(";", amp) >= cut) cut = amp;
    const space = Math.max(rest.lastIndexOf(" ", cut - 1), rest.lastIndexOf("\n", cut - 1));
    if (space > cut / 2) cut = space + 1;
    if (cut <= 0) cut = limit;
    const piece = rest.slice(0, cut).trim();
    if (piece) chunks.push(piece);
    rest = rest.slice(cut);
  }
  if (rest.trim()) chunks.push(rest.trim());
  return chunks;
}

/** JavaScript's `Date.toString()` shape in UTC, as the browser sends it. */
function timestamp(now: number): string {
  const d = new Date(now);
  const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const p = (n: number) => String(n).padStart(2, "0");
  return (
    `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${p(d.getUTCDate())} ${d.getUTCFullYear()} ` +
    `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} GMT+0000 (Coordinated Universal Time)`
  );
}

/** `Name:value` lines up to the blank line (text frames) or the end (binary header blocks). */
export function parseEdgeHeaders(block: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of block.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon)] = line.slice(colon + 1).trim();
  }
  return headers;
}

export function edgeConnectUrl(base: string, now: number): string {
  const sep = base.includes("?") ? "&" : "?";
  return (
    `${base}${sep}TrustedClientToken=${EDGE_TRUSTED_CLIENT_TOKEN}` +
    `&ConnectionId=${randomUUID().replace(/-/g, "")}` +
    `&Sec-MS-GEC=${secMsGec(now)}&Sec-MS-GEC-Version=${EDGE_GEC_VERSION}`
  );
}

function edgeHeaders(): Record<string, string> {
  return {
    Pragma: "no-cache",
    "Cache-Control": "no-cache",
    Origin: EDGE_ORIGIN,
    "User-Agent": `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${CHROMIUM_MAJOR}.0.0.0 Safari/537.36 Edg/${CHROMIUM_MAJOR}.0.0.0`,
    "Accept-Encoding": "gzip, deflate, br",
    "Accept-Language": "en-US,en;q=0.9",
    // The browser's anonymous machine id, random per connection.
    Cookie: `muid=${randomBytes(16).toString("hex").toUpperCase()};`,
  };
}

/** Speaks `text` with an Edge voice; resolves with the MP3 bytes. */
export async function edgeSynthesize(text: string, options: EdgeOptions): Promise<Buffer> {
  const escaped = escapeSsml(text);
  // Checked before any connection, so a bad voice or prosody value is a clear config error.
  const documents = edgeChunks(escaped).map((chunk) => edgeSsml(chunk, options));
  if (documents.length === 0) throw new Error("Edge TTS was given no speakable text.");
  const deadline = Date.now() + options.timeoutMs;
  const parts: Buffer[] = [];
  let total = 0;
  let skewMs = 0;
  for (const ssml of documents) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw new Error(`Edge TTS did not finish within ${options.timeoutMs / 1000} s.`);
    let audio: Buffer;
    try {
      audio = await edgeTurn(ssml, { ...options, timeoutMs: remaining }, skewMs, options.maxBytes - total);
    } catch (error) {
      // A 403 at the handshake usually means this clock is off: the token is time-based, so
      // retry once with the server's clock taken from its Date header.
      const serverDate = (error as { serverDate?: number }).serverDate;
      if (serverDate === undefined || skewMs !== 0) throw error;
      skewMs = serverDate - (options.now ?? Date.now)();
      audio = await edgeTurn(
        ssml,
        { ...options, timeoutMs: deadline - Date.now() },
        skewMs,
        options.maxBytes - total,
      );
    }
    parts.push(audio);
    total += audio.length;
  }
  return Buffer.concat(parts);
}

/** One connection, one SSML document, its audio. */
function edgeTurn(ssml: string, options: EdgeOptions, skewMs: number, maxBytes: number): Promise<Buffer> {
  const require = createRequire(import.meta.url);
  const WebSocket = require("ws") as typeof WsSocket;
  const now = (options.now ?? Date.now)() + skewMs;
  const url = edgeConnectUrl(options.url ?? EDGE_WSS_URL, now);
  return new Promise<Buffer>((resolve, reject) => {
    const ws = new WebSocket(url, {
      headers: edgeHeaders(),
      // A dropped connection (a firewall) fails in 10 s so the offline fallback speaks soon.
      handshakeTimeout: Math.min(options.timeoutMs, 10_000),
      maxPayload: 1 << 20,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      ws.removeAllListeners("message");
      ws.on("error", () => {});
      if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.terminate();
      if (error) reject(error);
      else if (size === 0) reject(new Error("Edge TTS ended the turn without sending any audio."));
      else resolve(Buffer.concat(chunks));
    };
    const onAbort = () => finish(new Error("Edge TTS was interrupted."));
    const timer = setTimeout(
      () =>
        finish(
          new Error(`Edge TTS sent no end of turn within ${Math.round(options.timeoutMs / 100) / 10} s.`),
        ),
      options.timeoutMs,
    );
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    ws.on("unexpected-response", (_req, res) => {
      const date = Date.parse(String(res.headers.date ?? ""));
      const error = new Error(`Edge TTS refused the connection (HTTP ${res.statusCode}).`);
      if (res.statusCode === 403 && Number.isFinite(date)) Object.assign(error, { serverDate: date });
      res.resume();
      finish(error);
    });
    ws.on("error", (error) => finish(new Error(`cannot reach Edge TTS: ${error.message}`)));
    ws.on("close", () => finish(new Error("Edge TTS closed the connection before the end of the turn.")));
    ws.on("open", () => {
      const stamp = timestamp(now);
      ws.send(
        `X-Timestamp:${stamp}\r\nContent-Type:application/json; charset=utf-8\r\nPath:speech.config\r\n\r\n` +
          `{"context":{"synthesis":{"audio":{"metadataoptions":{"sentenceBoundaryEnabled":"false","wordBoundaryEnabled":"true"},"outputFormat":"${EDGE_OUTPUT_FORMAT}"}}}}\r\n`,
      );
      ws.send(
        `X-RequestId:${randomUUID().replace(/-/g, "")}\r\nContent-Type:application/ssml+xml\r\n` +
          `X-Timestamp:${stamp}Z\r\nPath:ssml\r\n\r\n${ssml}`,
      );
    });
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      const buf = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
      if (!isBinary) {
        const text = buf.toString("utf8");
        const end = text.indexOf("\r\n\r\n");
        const path = parseEdgeHeaders(end >= 0 ? text.slice(0, end) : text)["Path"];
        if (path === "turn.end") finish(undefined);
        else if (path !== "turn.start" && path !== "response" && path !== "audio.metadata")
          finish(new Error(`Edge TTS sent an unexpected message (${String(path)}).`));
        return;
      }
      if (buf.length < 2) return finish(new Error("Edge TTS sent a binary frame with no header."));
      const headerLength = buf.readUInt16BE(0);
      if (headerLength > buf.length - 2) return finish(new Error("Edge TTS sent a truncated audio frame."));
      const headers = parseEdgeHeaders(buf.subarray(2, 2 + headerLength).toString("utf8"));
      if (headers["Path"] !== "audio")
        return finish(new Error("Edge TTS sent a binary frame that is not audio."));
      const payload = buf.subarray(2 + headerLength);
      const type = headers["Content-Type"];
      if (!type) {
        if (payload.length === 0) return;
        return finish(new Error("Edge TTS sent audio without a content type."));
      }
      if (type !== "audio/mpeg") return finish(new Error(`Edge TTS sent ${type} instead of MP3 audio.`));
      size += payload.length;
      if (size > maxBytes)
        return finish(
          new Error(`Edge TTS sent more than ${Math.round(maxBytes / 1024 / 1024)} MB of audio.`),
        );
      chunks.push(payload);
    });
  });
}
