/**
 * A tiny HTTP server on 127.0.0.1 for the media and Home Assistant tool tests: each request is
 * recorded (method, path with query, headers, raw body) and answered by the test's handler.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface RecordedHttp {
  method: string;
  /** Path with the query string. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export type Handler = (req: RecordedHttp, res: ServerResponse, base: string) => void | Promise<void>;

export interface HttpFake {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  readonly requests: RecordedHttp[];
  close(): Promise<void>;
}

export async function startHttpFake(handler: Handler): Promise<HttpFake> {
  const requests: RecordedHttp[] = [];
  const sockets = new Set<Socket>();
  let base = "";
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const record: RecordedHttp = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(record);
      Promise.resolve(handler(record, res, base)).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
        res.end(`fake: ${String(error)}`);
      });
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** The parsed JSON body of a recorded request. */
export function jsonBody(req: RecordedHttp | undefined): Record<string, unknown> {
  return JSON.parse(req?.body.toString("utf8") ?? "null") as Record<string, unknown>;
}

/** A 1x1 red PNG. */
export const TINY_PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
