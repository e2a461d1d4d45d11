/**
 * What every fake LLM wire (chat completions, Anthropic Messages, Responses, Bedrock) writes and
 * reads the same way: the request body, JSON answers, a streamed answer's headers and writes that
 * resolve once handed to the socket, and deltas split so clients must assemble them.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";

/** The headers of a server-sent event stream. */
export const SSE_HEADERS = { "content-type": "text/event-stream", "cache-control": "no-cache" } as const;

/** Splits into up to `parts` non-empty pieces without breaking surrogate pairs. */
export function split(text: string, parts: number): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [];
  const size = Math.max(1, Math.ceil(chars.length / parts));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(""));
  return pieces;
}

/** Resolves once the chunk is handed to the socket, so a following destroy cannot swallow it. */
export function write(res: ServerResponse, chunk: string | Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    res.write(chunk, (err) => (err ? reject(err) : resolve()));
  });
}

/** Sends the 200 and `headers` of a streamed answer at once, unless they went already. */
export function openStream(res: ServerResponse, headers: OutgoingHttpHeaders): void {
  if (res.headersSent) return;
  res.writeHead(200, headers);
  res.flushHeaders();
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: OutgoingHttpHeaders = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** The body as JSON, or the raw text when it is not JSON (recorded as the client sent it). */
export function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
