/**
 * What the Mattermost adapter needs around `@mattermost/client`: loading it on first use (with the
 * WebSocket globals Node 20 lacks), keeping its console chatter out of the gateway's output,
 * turning its errors into `PlatformError`s, and the post text rules (length, images).
 */
import { createRequire } from "node:module";
import type * as MattermostClient from "@mattermost/client";
import { errorText } from "./media-files.js";
import { PlatformError } from "./types.js";

const describe = errorText;

export interface Loaded {
  Client4: typeof MattermostClient.Client4;
  WebSocketClient: typeof MattermostClient.WebSocketClient;
  /** The `ws` socket class the WebSocketClient is given (Node 20 has no global WebSocket). */
  Socket: new (
    url: string,
  ) => WebSocketLike;
}

export interface WebSocketLike {
  readyState: number;
  onclose: ((event: unknown) => void) | null;
  close(): void;
  terminate?: () => void;
}

/**
 * Loads the client library. Its WebSocketClient reads `WebSocket.OPEN` and builds `CloseEvent`s
 * from the globals, which Node 20 lacks (Node 22 has both): they are filled in from `ws` only when
 * missing, with the same constants and fields.
 */
export function loadMattermost(): Loaded {
  const require = createRequire(import.meta.url);
  const lib = require("@mattermost/client") as typeof MattermostClient;
  const ws = require("ws") as { WebSocket: new (url: string) => WebSocketLike };
  const g = globalThis as Record<string, unknown>;
  if (g["WebSocket"] === undefined) g["WebSocket"] = ws.WebSocket;
  if (g["CloseEvent"] === undefined) {
    g["CloseEvent"] = class CloseEvent extends Event {
      readonly code: number;
      readonly reason: string;
      readonly wasClean: boolean;
      constructor(type: string, init: { code?: number; reason?: string; wasClean?: boolean } = {}) {
        super(type);
        this.code = init.code ?? 0;
        this.reason = init.reason ?? "";
        this.wasClean = init.wasClean ?? false;
      }
    };
  }
  return { Client4: lib.Client4, WebSocketClient: lib.WebSocketClient, Socket: ws.WebSocket };
}

/**
 * Runs `fn` with `console.log` muted. The WebSocketClient logs every connect, hello and socket
 * error to stdout (a browser's console); in the gateway that would mix with its own output, and
 * the adapter reports what matters itself.
 */
export function quietly<T>(fn: () => T): T {
  const log = console.log;
  console.log = () => undefined;
  try {
    return fn();
  } finally {
    console.log = log;
  }
}

/** Makes the socket's handlers (which the WebSocketClient assigns) run with `console.log` muted. */
export function muteHandlers(socket: WebSocketLike): WebSocketLike {
  const proto = Object.getPrototypeOf(socket) as object;
  for (const name of ["onopen", "onclose", "onerror", "onmessage"]) {
    const desc = Object.getOwnPropertyDescriptor(proto, name);
    if (!desc?.get || !desc.set) continue;
    const { get, set } = desc;
    Object.defineProperty(socket, name, {
      configurable: true,
      get: () => get.call(socket),
      set: (fn: unknown) =>
        set.call(socket, typeof fn === "function" ? (event: unknown) => quietly(() => fn(event)) : fn),
    });
  }
  return socket;
}

/** A Client4 failure as a PlatformError that says what failed and what to do. */
export function platformError(what: string, err: unknown, baseUrl: string): PlatformError {
  const status = Number((err as { status_code?: unknown }).status_code);
  const message = describe(err);
  if (status === 401) {
    return new PlatformError(
      `Mattermost refused MATTERMOST_TOKEN (401) while trying to ${what}: create a new bot or personal access token (System Console → Integrations → Bot Accounts) and put it in .env`,
    );
  }
  if (status === 403) {
    return new PlatformError(
      `Mattermost refused to ${what} (403 Forbidden: ${message}): add the bot to the channel or give it the permission`,
    );
  }
  if (status === 429) return new PlatformError(`Mattermost is rate limiting (${what})`, 5000);
  if (!Number.isFinite(status) || status === 0) {
    return new PlatformError(`could not ${what}: Mattermost at ${baseUrl} did not answer (${message})`);
  }
  return new PlatformError(`Mattermost could not ${what} (HTTP ${status}: ${message})`);
}

/** Splits a post longer than Mattermost takes at line ends where it can. */
export function splitPost(text: string, max: number): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const cut = rest.lastIndexOf("\n", max);
    const at = cut > max / 2 ? cut : max;
    parts.push(rest.slice(0, at));
    rest = rest.slice(at).replace(/^\n/, "");
  }
  if (rest.trim() !== "" || parts.length === 0) parts.push(rest);
  return parts;
}

/** Markdown as Mattermost renders it: standard Markdown, images as bare links (it previews them). */
export function formatForMattermost(markdown: string): string {
  return markdown.replace(/!\[([^\]]*)\]\(([^)\s]+)\)/g, "$2");
}
