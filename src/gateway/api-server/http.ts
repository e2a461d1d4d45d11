/**
 * Small HTTP helpers for the API server: OpenAI-shaped errors, JSON and SSE responses, a bounded
 * body reader and a constant-time bearer-key check. No framework: `node:http` only. Every response
 * body leaves through `sendJson`/`writeSse`/`writeSseComment`, which pass it through the secret
 * redactor (the marker has no quote or backslash, so the JSON stays valid).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { redactText } from "../../util/redact.js";

/** OpenAI's error `type` values that clients (the official SDKs among them) understand. */
export type ApiErrorType = "invalid_request_error" | "server_error" | "rate_limit_error" | "not_found_error";

/** An expected failure of a request: answered with `status` and OpenAI's error shape. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string,
    readonly type: ApiErrorType = "invalid_request_error",
    readonly headers: Record<string, string> = {},
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** Headers every response carries: the API serves JSON and SSE only, never a page to frame. */
export const SECURITY_HEADERS: Record<string, string> = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = redactText(JSON.stringify(body));
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: ApiError): void {
  sendJson(
    res,
    error.status,
    { error: { message: error.message, type: error.type, param: error.param, code: error.code } },
    error.headers,
  );
}

/** Starts an SSE response. */
export function startSse(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    ...headers,
  });
  res.flushHeaders();
}

/** Writes one SSE frame: `data:` JSON, with an `event:` line when named. */
export function writeSse(res: ServerResponse, data: unknown, event?: string): void {
  if (res.writableEnded || res.destroyed) return;
  res.write(redactText(`${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`));
}

/** An SSE comment line: ignored by every SSE parser, the official OpenAI clients included. */
export function writeSseComment(res: ServerResponse, text: string): void {
  if (res.writableEnded || res.destroyed) return;
  res.write(redactText(`: ${text.replace(/\n/g, " ")}\n\n`));
}

/**
 * Reads the request body up to `limit` bytes. Past the limit the rest is drained (so the client
 * can read the answer) and a 413 `ApiError` is thrown; a body far past it cuts the connection.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        tooLarge = true;
        chunks.length = 0;
        if (size > limit * 16) req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (tooLarge) {
        reject(
          new ApiError(
            413,
            `The request body is ${size} bytes; the API server accepts at most ${limit} bytes. ` +
              "Send a shorter conversation (or fewer inline images).",
            "request_too_large",
          ),
        );
      } else {
        resolve(Buffer.concat(chunks));
      }
    });
    req.on("error", reject);
  });
}

/** Parses a JSON object body; anything else is a 400 that says what was wrong. */
export function parseJsonObject(raw: Buffer): Record<string, unknown> {
  const text = raw.toString("utf8");
  if (!text.trim()) {
    throw new ApiError(400, "The request body is empty; send a JSON object.", "invalid_json");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new ApiError(400, `The request body is not valid JSON (${detail}).`, "invalid_json");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ApiError(400, "The request body must be a JSON object.", "invalid_json");
  }
  return value as Record<string, unknown>;
}

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/** The configured key's digest, made once: every request is checked against the same key. */
let keyDigest: { key: string; digest: Buffer } | undefined;
function digestOfKey(key: string): Buffer {
  if (keyDigest?.key !== key) keyDigest = { key, digest: digest(key) };
  return keyDigest.digest;
}

/**
 * Whether the `Authorization: Bearer <key>` header carries `key`. Compares digests in constant
 * time, so neither the key's content nor its length leaks through timing.
 */
export function bearerMatches(header: string | undefined, key: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header?.trim() ?? "");
  const given = match?.[1]?.trim() ?? "";
  // Always compare, even when the header is missing, so that case takes the same time.
  const same = timingSafeEqual(digest(given), digestOfKey(key));
  return same && given.length > 0;
}

/** Random hex for ids (`chatcmpl-…`, `resp_…`). */
export function randomHex(bytes = 12): string {
  return randomBytes(bytes).toString("hex");
}
