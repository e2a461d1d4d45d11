/**
 * The agent's side of `execute_code`'s tool RPC: a Unix-socket server for one script run.
 *
 * Protocol: newline-delimited JSON. Request `{"id": n, "tool": name, "args": {...}}`; answer
 * `{"id": n, "ok": bool, "result": <the tool's result string>}` when the tool ran, or
 * `{"id": n, "error": message}` when the call was refused (not allowed, limit reached, bad request).
 * Requests on one connection are handled concurrently and answered as they finish (match by id);
 * several connections (one per Python thread) are served at once.
 */
import { chmod } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import type { ToolOutcome } from "../types.js";

/** Longest request line accepted (a write_file of a large file fits; a runaway loop does not). */
const MAX_LINE_CHARS = 32 * 1024 * 1024;
/** Connections served at once: far above one per thread of a sane script, below fd exhaustion. */
const MAX_CONNECTIONS = 256;

export interface RpcServerOptions {
  /** Where to listen; its folder must be private to this user (mode 0700). */
  socketPath: string;
  /** Tools the script may call: the sandbox allow-list intersected with the session's tools. */
  allowed: readonly string[];
  /** Calls beyond this many are refused with an error answer; the script keeps running. */
  maxToolCalls: number;
  /** Runs one allowed call the way the agent runs a model's call. */
  dispatch(tool: string, args: Record<string, unknown>): Promise<ToolOutcome>;
  /** Told about each call that is dispatched, with its 1-based number. */
  onCall?(tool: string, n: number): void;
}

export interface RpcServer {
  /** Calls dispatched to tools so far (refused calls are not counted). */
  readonly callsMade: number;
  /** Stops accepting, drops every connection and waits for the listener to close. */
  close(): Promise<void>;
}

export interface RpcRequest {
  id: unknown;
  tool: string;
  args: Record<string, unknown>;
}

/**
 * Why a well-formed request may not run, or undefined when it may. Pure: checks the tool name
 * against `allowed` (naming the callable tools in the message) and refuses background terminals.
 */
export function refusal(request: RpcRequest, allowed: readonly string[]): string | undefined {
  if (!allowed.includes(request.tool)) {
    const callable =
      allowed.length > 0
        ? `Tools callable from execute_code in this session: ${allowed.join(", ")}.`
        : "No tools are callable from execute_code in this session.";
    return `Tool "${request.tool}" cannot be called from execute_code. ${callable} Call other tools directly instead.`;
  }
  if (request.tool === "terminal" && wantsBackground(request.args.background)) {
    return (
      "terminal runs in the foreground only inside execute_code: background processes are not available here. " +
      "Drop background, or start the process with a normal terminal call (background: true)."
    );
  }
  return undefined;
}

/** Whether a terminal `background` value asks for a background process (ajv would coerce "true", 1). */
function wantsBackground(value: unknown): boolean {
  return value !== undefined && value !== null && value !== false && value !== "false" && value !== 0;
}

/** Parses one request line; returns an error message when it is not a valid request. */
export function parseRequest(line: string): RpcRequest | { id: unknown; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { id: null, error: "Bad request: not valid JSON. Send one JSON object per line." };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { id: null, error: 'Bad request: expected a JSON object {"id", "tool", "args"}.' };
  }
  const record = value as Record<string, unknown>;
  const id = record.id ?? null;
  if (typeof record.tool !== "string" || record.tool === "") {
    return { id, error: 'Bad request: "tool" must be the name of a tool.' };
  }
  const args = record.args ?? {};
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    return { id, error: `Bad request: "args" of ${record.tool} must be an object of named arguments.` };
  }
  return { id, tool: record.tool, args: args as Record<string, unknown> };
}

/** Starts listening on `options.socketPath` (made mode 0600) and serves until `close()`. */
export async function startRpcServer(options: RpcServerOptions): Promise<RpcServer> {
  const sockets = new Set<Socket>();
  let callsMade = 0;
  let closed = false;

  const answer = (socket: Socket, reply: Record<string, unknown>): void => {
    if (!socket.destroyed && socket.writable) socket.write(`${JSON.stringify(reply)}\n`);
  };

  const handle = async (socket: Socket, line: string): Promise<void> => {
    const parsed = parseRequest(line);
    if ("error" in parsed) return answer(socket, parsed);
    const refused = refusal(parsed, options.allowed);
    if (refused) return answer(socket, { id: parsed.id, error: refused });
    if (callsMade >= options.maxToolCalls) {
      return answer(socket, {
        id: parsed.id,
        error:
          `Tool-call limit reached: this script already made ${options.maxToolCalls} tool calls ` +
          "(code_execution.max_tool_calls). Finish with what you have, or split the work over several execute_code runs.",
      });
    }
    callsMade++;
    options.onCall?.(parsed.tool, callsMade);
    let outcome: ToolOutcome;
    try {
      outcome = await options.dispatch(parsed.tool, parsed.args);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return answer(socket, { id: parsed.id, error: `${parsed.tool} failed: ${message}` });
    }
    answer(socket, { id: parsed.id, ok: outcome.ok, result: outcome.content });
  };

  const server: Server = createServer((socket) => {
    if (closed || sockets.size >= MAX_CONNECTIONS) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.setEncoding("utf8");
    let buffered = "";
    socket.on("data", (chunk: string) => {
      buffered += chunk;
      if (buffered.length > MAX_LINE_CHARS) {
        answer(socket, {
          id: null,
          error: `Bad request: a request line is over ${MAX_LINE_CHARS} characters.`,
        });
        socket.end();
        buffered = "";
        return;
      }
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (line.trim() !== "") void handle(socket, line);
      }
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  await chmod(options.socketPath, 0o600);

  return {
    get callsMade() {
      return callsMade;
    },
    close() {
      closed = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
