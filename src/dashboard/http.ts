/**
 * The dashboard's HTTP plumbing: the route type, JSON bodies with a size cap, JSON answers that
 * always pass through the secret redactor, and the errors handlers throw for a clean 4xx.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { redactJson, redactText } from "../util/redact.js";

/** Largest request body accepted (bytes); larger ones get 413 before any handler runs. */
export const MAX_BODY_BYTES = 1_048_576;

export class ApiError extends Error {
  readonly status: number;
  readonly extra: Record<string, unknown> | undefined;
  constructor(status: number, message: string, extra?: Record<string, unknown>) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.extra = extra;
  }
}

export interface ApiRequest {
  method: string;
  /** Decoded path segments after `/api/`. */
  params: Record<string, string>;
  query: URLSearchParams;
  /** The parsed JSON body of a state-changing request ({} when empty). */
  body: Record<string, unknown>;
}

/**
 * Where a streaming route writes its server-sent events (`event: <name>` / `data: <json>`), each
 * redacted like any JSON answer. `signal` aborts when the client goes away.
 */
export interface EventSink {
  send(event: string, data: unknown): void;
  readonly signal: AbortSignal;
}

/**
 * What a handler returns: JSON (redacted on the way out), a download, or a stream of events
 * (`text/event-stream`, 200) that `events` writes until it settles.
 */
export type ApiResult =
  | { json: unknown; status?: number }
  | { download: string; filename: string; contentType: string }
  | { events: (sink: EventSink) => Promise<void> };

export interface Route {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** `/api/sessions/:id/export`: `:name` matches one path segment. */
  path: string;
  /** One line for `GET /api/` and API.md. */
  summary: string;
  handler: (req: ApiRequest) => Promise<ApiResult> | ApiResult;
}

/** Reads a JSON object body of at most `limit` bytes; 413 above it, 400 for anything not an object. */
export function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Record<string, unknown>> {
  const declared = Number(req.headers["content-length"] ?? "0");
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.reject(new ApiError(413, `request body over ${limit} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        reject(new ApiError(413, `request body over ${limit} bytes`));
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on("error", (error) => {
      if (!done) reject(error);
      done = true;
    });
    req.on("end", () => {
      if (done) return;
      done = true;
      const text = Buffer.concat(chunks).toString("utf8");
      if (text.trim() === "") return resolve({});
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return reject(new ApiError(400, "the body is not valid JSON"));
      }
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
        return reject(new ApiError(400, "the body must be a JSON object"));
      }
      resolve(parsed as Record<string, unknown>);
    });
  });
}

const SECURITY_HEADERS: Record<string, string> = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
};

/** Sends `value` as JSON after the process redactor has seen every string in it. */
export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  const body = redactText(JSON.stringify(redactJson(value, redactText)));
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** One event frame: the data is redacted JSON on one line (JSON never holds a raw newline). */
export function eventFrame(event: string, data: unknown): string {
  const name = event.replace(/[^\w.-]/g, "_");
  return `event: ${name}\ndata: ${redactText(JSON.stringify(redactJson(data ?? null, redactText)))}\n\n`;
}

/**
 * Answers with a server-sent-event stream: headers at once, then whatever `write` sends, a comment
 * line every 15 s so idle proxies keep the connection, and the end when `write` settles. A throw
 * inside becomes a last `error` event.
 */
export async function sendEvents(
  _req: IncomingMessage,
  res: ServerResponse,
  write: (sink: EventSink) => Promise<void>,
): Promise<void> {
  const controller = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    "content-type": "text/event-stream; charset=utf-8",
    "x-accel-buffering": "no",
    connection: "keep-alive",
  });
  res.flushHeaders();
  const alive = setInterval(() => {
    if (!res.writableEnded) res.write(": keep-alive\n\n");
  }, 15_000);
  alive.unref();
  const sink: EventSink = {
    send: (event, data) => {
      if (!res.writableEnded && !res.destroyed) res.write(eventFrame(event, data));
    },
    signal: controller.signal,
  };
  try {
    await write(sink);
  } catch (error) {
    sink.send("error", { message: error instanceof Error ? error.message : String(error) });
  } finally {
    clearInterval(alive);
    if (!res.writableEnded) res.end();
  }
}

/** Sends a redacted text download with a safe file name. */
export function sendDownload(res: ServerResponse, text: string, filename: string, contentType: string): void {
  const body = redactText(text);
  const safe = filename.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_");
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    "content-type": contentType,
    "content-length": Buffer.byteLength(body),
    "content-disposition": `attachment; filename="${safe}"`,
  });
  res.end(body);
}

/** A required string field of a body; 400 naming it otherwise. */
export function field(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (typeof value !== "string" || value.trim() === "")
    throw new ApiError(400, `"${name}" (a non-empty string) is required`);
  return value;
}

/** An optional string field; 400 when present but not a string. */
export function optionalField(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new ApiError(400, `"${name}" must be a string`);
  return value;
}

/** A non-negative integer query parameter within [0, max], or `fallback` when absent. */
export function intParam(query: URLSearchParams, name: string, fallback: number, max: number): number {
  const raw = query.get(name);
  if (raw === null || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new ApiError(400, `"${name}" must be a non-negative integer`);
  return Math.min(Number(raw), max);
}

/** A date query parameter (`YYYY-MM-DD` or ISO time) as epoch seconds. */
export function dateParam(query: URLSearchParams, name: string): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === "") return undefined;
  const ms = Date.parse(raw);
  if (!Number.isFinite(ms)) throw new ApiError(400, `"${name}" must be a date (YYYY-MM-DD or ISO 8601)`);
  return ms / 1000;
}
