/**
 * Newline-delimited JSON-RPC 2.0 over a Unix domain socket: one JSON object per line each way,
 * requests answered in any order (a long `events.wait` never holds up a quick `status` on the
 * same connection). The server side is what the gateway's control socket runs on; the client side
 * is what the CLI and MCP serve use to ask it. Nothing here knows what the methods mean.
 *
 * The socket file is created with mode 0600 before it becomes visible under its final name (it is
 * bound under a private temporary name, chmodded, then renamed over the path), so there is no moment
 * in which another user could connect; a stale file left by a crashed process is replaced. The file
 * mode (and the home directory's) keeps other users out; a server that must also tell processes of
 * its own user apart passes `authorize` (see util/peer-process.ts for who the peer is).
 */
import { chmodSync, renameSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";

/** Longest line either side accepts; a longer one closes the connection (bounded memory). */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

/** Linux's sun_path limit less the terminating NUL. */
const MAX_SOCKET_PATH = 107;

export const JSON_RPC_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  /** An application error the caller can act on (its message says how). */
  application: -32000,
} as const;

/** Thrown by a handler (or raised on the client) with a JSON-RPC error code. */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "JsonRpcError";
  }
}

export type JsonRpcHandler = (params: Record<string, unknown>, signal: AbortSignal) => unknown;

/**
 * Asked before each request's handler runs, with the connection it came on: throw (a
 * `JsonRpcError`) to refuse the call; the handler then never runs.
 */
export type JsonRpcAuthorize = (method: string, socket: Socket) => void | Promise<void>;

export interface JsonRpcServer {
  readonly path: string;
  /** Stops accepting, ends open connections (aborting running handlers), removes the socket file. */
  close(): Promise<void>;
}

type Frame = Record<string, unknown>;

/** Splits a byte stream into lines; calls `onLine` per complete line, `onOverflow` once if too long. */
function lineSplitter(onLine: (line: string) => void, onOverflow: () => void): (chunk: Buffer) => void {
  // Chunks are kept as bytes until a newline arrives, so a long line costs one pass, and a
  // multi-byte character split across chunks is decoded whole.
  let parts: Buffer[] = [];
  let size = 0;
  return (chunk) => {
    let start = 0;
    let cut = chunk.indexOf(10);
    while (cut >= 0) {
      parts.push(chunk.subarray(start, cut));
      const line = Buffer.concat(parts).toString("utf8").trim();
      parts = [];
      size = 0;
      if (line) onLine(line);
      start = cut + 1;
      cut = chunk.indexOf(10, start);
    }
    if (start < chunk.length) {
      parts.push(chunk.subarray(start));
      size += chunk.length - start;
    }
    if (size > MAX_LINE_BYTES) {
      parts = [];
      size = 0;
      onOverflow();
    }
  };
}

const send = (socket: Socket, frame: Frame) => {
  if (!socket.destroyed && socket.writable) socket.write(`${JSON.stringify(frame)}\n`);
};

function errorFrame(id: unknown, error: unknown): Frame {
  const rpc =
    error instanceof JsonRpcError
      ? error
      : new JsonRpcError(JSON_RPC_ERRORS.application, error instanceof Error ? error.message : String(error));
  return {
    jsonrpc: "2.0",
    id: id ?? null,
    error: { code: rpc.code, message: rpc.message, ...(rpc.data !== undefined ? { data: rpc.data } : {}) },
  };
}

/** Answers one parsed request (or notification, which gets no answer). */
async function dispatch(
  socket: Socket,
  frame: unknown,
  handlers: Readonly<Record<string, JsonRpcHandler>>,
  signal: AbortSignal,
  authorize?: JsonRpcAuthorize,
): Promise<void> {
  if (!frame || typeof frame !== "object" || Array.isArray(frame)) {
    send(
      socket,
      errorFrame(null, new JsonRpcError(JSON_RPC_ERRORS.invalidRequest, "Expected a JSON object.")),
    );
    return;
  }
  const request = frame as Frame;
  const id = request["id"];
  const notification = !("id" in request);
  const method = request["method"];
  if (request["jsonrpc"] !== "2.0" || typeof method !== "string") {
    if (!notification)
      send(
        socket,
        errorFrame(
          id,
          new JsonRpcError(JSON_RPC_ERRORS.invalidRequest, 'Expected {"jsonrpc":"2.0","method":...}.'),
        ),
      );
    return;
  }
  const handler = Object.hasOwn(handlers, method) ? handlers[method] : undefined;
  if (!handler) {
    if (!notification)
      send(
        socket,
        errorFrame(
          id,
          new JsonRpcError(
            JSON_RPC_ERRORS.methodNotFound,
            `Unknown method "${method}". Methods: ${Object.keys(handlers).join(", ")}.`,
          ),
        ),
      );
    return;
  }
  const raw = request["params"];
  if (raw !== undefined && (raw === null || typeof raw !== "object" || Array.isArray(raw))) {
    if (!notification)
      send(
        socket,
        errorFrame(id, new JsonRpcError(JSON_RPC_ERRORS.invalidParams, "params must be an object (named)")),
      );
    return;
  }
  try {
    if (authorize) await authorize(method, socket);
    const result = await handler((raw ?? {}) as Record<string, unknown>, signal);
    if (!notification) send(socket, { jsonrpc: "2.0", id, result: result ?? null });
  } catch (error) {
    if (!notification) send(socket, errorFrame(id, error));
  }
}

/**
 * Serves `handlers` on a Unix socket at `path` (mode 0600). Throws when the path is too long for a
 * Unix socket or cannot be bound. The caller must own `path` (e.g. hold the gateway lock): an
 * existing file there is treated as stale and replaced.
 */
export async function serveJsonRpc(
  path: string,
  handlers: Readonly<Record<string, JsonRpcHandler>>,
  options: { authorize?: JsonRpcAuthorize } = {},
): Promise<JsonRpcServer> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    throw new Error(
      `the socket path ${path} is ${Buffer.byteLength(path)} bytes; Unix sockets allow ${MAX_SOCKET_PATH}. Use a shorter HERMES_HOME.`,
    );
  }
  const temporary = `${path}.${process.pid}.tmp`;
  if (Buffer.byteLength(temporary) > MAX_SOCKET_PATH) {
    throw new Error(`the socket path ${path} is too long for a Unix socket. Use a shorter HERMES_HOME.`);
  }
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    const abort = new AbortController();
    socket.on("close", () => {
      sockets.delete(socket);
      abort.abort(new Error("connection closed"));
    });
    socket.on("error", () => socket.destroy());
    socket.on(
      "data",
      lineSplitter(
        (line) => {
          let frame: unknown;
          try {
            frame = JSON.parse(line);
          } catch {
            send(socket, errorFrame(null, new JsonRpcError(JSON_RPC_ERRORS.parse, "Not valid JSON.")));
            return;
          }
          void dispatch(socket, frame, handlers, abort.signal, options.authorize);
        },
        () => {
          send(socket, errorFrame(null, new JsonRpcError(JSON_RPC_ERRORS.invalidRequest, "Line too long.")));
          socket.end();
        },
      ),
    );
  });
  rmSync(temporary, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(temporary, () => {
      server.off("error", reject);
      resolve();
    });
  });
  try {
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  } catch (error) {
    server.close();
    rmSync(temporary, { force: true });
    throw error;
  }
  // The server no longer knows its file by the name it was bound to: unlink it ourselves.
  let closing: Promise<void> | undefined;
  return {
    path,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
        rmSync(path, { force: true });
      });
      return closing;
    },
  };
}

export interface JsonRpcClient {
  /** Calls `method`; rejects with `JsonRpcError` for an error answer, `Error` when the connection fails. */
  call<T = unknown>(
    method: string,
    params?: Record<string, unknown>,
    options?: { timeoutMs?: number },
  ): Promise<T>;
  close(): void;
}

/** Connects to a JSON-RPC socket; rejects with the system error (ENOENT, ECONNREFUSED, EACCES). */
export function connectJsonRpc(path: string): Promise<JsonRpcClient> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
    let nextId = 1;
    let failure: Error | undefined;
    const failAll = (error: Error) => {
      failure ??= error;
      for (const entry of waiting.values()) entry.reject(error);
      waiting.clear();
    };
    socket.once("connect", () => {
      socket.off("error", reject);
      socket.on("error", (error) => failAll(error));
      socket.on("close", () => failAll(new Error("the connection closed")));
      socket.on(
        "data",
        lineSplitter(
          (line) => {
            let frame: Frame;
            try {
              frame = JSON.parse(line) as Frame;
            } catch {
              return;
            }
            const entry = typeof frame["id"] === "number" ? waiting.get(frame["id"]) : undefined;
            if (!entry) return;
            waiting.delete(frame["id"] as number);
            const error = frame["error"] as { code?: unknown; message?: unknown; data?: unknown } | undefined;
            if (error && typeof error === "object")
              entry.reject(
                new JsonRpcError(
                  typeof error.code === "number" ? error.code : JSON_RPC_ERRORS.internal,
                  typeof error.message === "string" ? error.message : "error",
                  error.data,
                ),
              );
            else entry.resolve(frame["result"]);
          },
          () => socket.destroy(new Error("answer line too long")),
        ),
      );
      resolve({
        call<T>(method: string, params: Record<string, unknown> = {}, options: { timeoutMs?: number } = {}) {
          if (failure) return Promise.reject(failure);
          const id = nextId++;
          return new Promise<T>((res, rej) => {
            const timer =
              options.timeoutMs === undefined
                ? undefined
                : setTimeout(() => {
                    waiting.delete(id);
                    rej(new Error(`${method} did not answer within ${options.timeoutMs} ms`));
                  }, options.timeoutMs);
            waiting.set(id, {
              resolve: (v) => {
                clearTimeout(timer);
                res(v as T);
              },
              reject: (e) => {
                clearTimeout(timer);
                rej(e);
              },
            });
            socket.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
          });
        },
        close() {
          socket.end();
          socket.destroy();
        },
      });
    });
    socket.once("error", reject);
  });
}
