/**
 * The official ACP SDK's client, connected to a spawned `hermes acp` (the built CLI) over its
 * stdio, for end-to-end tests. It records every `session/update`, answers permission requests
 * from a queue the test fills (or a function), and lets a test wait for an update it expects.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import {
  type ClientContext,
  client,
  ndJsonStream,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { HERMES_BIN } from "./cli.js";
import { type FakeLlm, reply } from "./fake-llm.js";

/**
 * Answers the auxiliary model's title requests (an editor session is named after its first
 * exchange, in the background) apart from the scripted queue, so they never take a scripted reply.
 */
export function answerTitles(llm: FakeLlm, title = "Editor session"): void {
  llm.respondWith((request) => (isTitleRequest(request.body) ? reply().text(title) : undefined));
}

/** The session's title request, which runs beside the first turn and may reach the fake after it. */
export function isTitleRequest(body: unknown): boolean {
  const first = (body as { messages?: Array<{ content?: unknown }> }).messages?.[0]?.content;
  return typeof first === "string" && first.startsWith("Write a title for the conversation");
}

export type PermissionAnswer = (
  request: RequestPermissionRequest,
) => RequestPermissionResponse | Promise<RequestPermissionResponse>;

export interface AcpHarness {
  child: ChildProcessWithoutNullStreams;
  agent: ClientContext;
  updates: SessionNotification[];
  permissions: RequestPermissionRequest[];
  /** Answers the next permission request (first in, first out). */
  answerNext(answer: PermissionAnswer): void;
  /** Resolves with the first update (already received or still to come) that `match` accepts. */
  waitForUpdate(match: (n: SessionNotification) => boolean): Promise<SessionNotification>;
  stderr(): string;
  /** Closes stdin and waits for the process to exit. */
  close(): Promise<number | null>;
}

/** Selects the option with this id. */
export const pick =
  (optionId: string): PermissionAnswer =>
  () => ({ outcome: { outcome: "selected", optionId } });

export async function startAcp(options: {
  home: string;
  cwd: string;
  args?: string[];
  env?: Record<string, string>;
}): Promise<AcpHarness> {
  const child = spawn(process.execPath, [HERMES_BIN, "acp", ...(options.args ?? [])], {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: options.home,
      HERMES_HOME: options.home,
      NO_COLOR: "1",
      ...(options.env ?? {}),
    },
    stdio: "pipe",
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const updates: SessionNotification[] = [];
  const permissions: RequestPermissionRequest[] = [];
  const answers: PermissionAnswer[] = [];
  const waiters: Array<{
    match: (n: SessionNotification) => boolean;
    resolve: (n: SessionNotification) => void;
  }> = [];
  const app = client({ name: "test-editor" })
    .onNotification("session/update", ({ params }) => {
      updates.push(params);
      for (const w of [...waiters]) {
        if (w.match(params)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(params);
        }
      }
    })
    .onRequest("session/request_permission", async ({ params }) => {
      permissions.push(params);
      const answer = answers.shift();
      if (!answer) return { outcome: { outcome: "cancelled" } };
      return answer(params);
    });
  const stream = ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  );
  const connection = app.connect(stream);
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return {
    child,
    agent: connection.agent,
    updates,
    permissions,
    answerNext: (answer) => answers.push(answer),
    waitForUpdate: (match) => {
      const seen = updates.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
    stderr: () => stderr,
    close: async () => {
      child.stdin.end();
      return exited;
    },
  };
}
