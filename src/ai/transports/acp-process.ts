/**
 * The long-lived agent process behind the `copilot-acp` provider: started on first use, spoken to
 * over ACP (newline-delimited JSON-RPC on stdio, through the official SDK as `hermes acp` and
 * `delegate_task`'s ACP children are), reused by every later model call, started again when it
 * has died, and killed with its whole process group when Hermes exits.
 *
 * What the agent may do on its own: nothing that needs Hermes. It is offered no file-system or
 * terminal methods (a request for one is answered "method not found"), and every permission it asks
 * for (`session/request_permission`) is refused: a reject option when it offers one, else the
 * request is cancelled. Actions go through Hermes's own tools, which the model calls in its text
 * (acp-prompt.ts) and Hermes runs under its approval, redaction and interrupt rules.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import type {
  InitializeResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
} from "@agentclientprotocol/sdk";
import { onProcessExit } from "../../util/exit-reaper.js";
import { trySignal } from "../../util/process-tree.js";
import { type AcpSdk, loadAcpSdk } from "../acp-sdk.js";
import { type AcpLaunch, acpChildEnv } from "./acp-launch.js";

type Connection = ReturnType<ReturnType<AcpSdk["client"]>["connect"]>;
export type SessionUpdate = SessionNotification["update"];

export interface AcpProcessOptions {
  launch: AcpLaunch;
  cwd: string;
  /** Hermes's environment; the agent gets it without Hermes's secrets (acp-launch.ts `acpChildEnv`). */
  env: Readonly<Record<string, string | undefined>>;
  /** How long the agent may take to answer `initialize` before it is killed. */
  startTimeoutMs: number;
  /** Told about each permission the agent asked for and was refused (a notice, a log line). */
  onRefused?: ((what: string) => void) | undefined;
}

/** One started agent: its process, its connection and what it said about itself. */
export interface RunningAgent {
  readonly connection: Connection;
  readonly init: InitializeResponse;
  readonly pid: number | undefined;
  /** Resolves, with what is known about why, once the process has ended. */
  readonly exited: Promise<string>;
  /** Routes `session/update` notifications of one session; returns the function that stops it. */
  listen(sessionId: string, sink: (update: SessionUpdate) => void): () => void;
  /** Keeps Hermes alive while a call waits on the agent; `release` lets it exit when idle. */
  hold(): () => void;
}

/** The program's stderr, last 2000 characters, for the error a user reads. */
const STDERR_TAIL = 2000;

/**
 * The answer to an agent's permission request: always a refusal. A reject option when the agent
 * offers one (so it knows the user said no), else a cancelled outcome.
 */
export function refusePermission(request: RequestPermissionRequest): RequestPermissionResponse {
  const reject =
    request.options.find((o) => o.kind === "reject_once") ??
    request.options.find((o) => o.kind === "reject_always");
  return reject
    ? { outcome: { outcome: "selected", optionId: reject.optionId } }
    : { outcome: { outcome: "cancelled" } };
}

export class AcpAgentProcess {
  private current: Promise<RunningAgent> | undefined;
  private child: ChildProcessWithoutNullStreams | undefined;

  constructor(private readonly options: AcpProcessOptions) {}

  /** The running agent, started (and initialised) first when there is none or it died. */
  agent(): Promise<RunningAgent> {
    if (!this.current) {
      const started = this.start();
      this.current = started;
      // A start that failed is forgotten, so the next call tries again.
      started.catch(() => {
        if (this.current === started) this.current = undefined;
      });
    }
    return this.current;
  }

  /** Ends the process and its group now (SIGKILL); the next call starts a new one. */
  kill(): void {
    const child = this.child;
    this.current = undefined;
    this.child = undefined;
    if (child?.pid !== undefined) killGroup(child.pid);
  }

  private async start(): Promise<RunningAgent> {
    const { launch, cwd, env, startTimeoutMs } = this.options;
    const line = [launch.command, ...launch.args].join(" ");
    let child: ChildProcessWithoutNullStreams;
    try {
      // Its own process group, so an interrupt or Hermes's exit ends whatever it started too.
      child = spawn(launch.command, [...launch.args], {
        cwd,
        env: acpChildEnv(env),
        stdio: "pipe",
        detached: true,
      });
    } catch (error) {
      throw new Error(`Could not start the Copilot ACP agent "${line}": ${messageOf(error)}`);
    }
    this.child = child;
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr = (stderr + d.toString("utf8")).slice(-STDERR_TAIL);
    });
    // A write to a pipe the agent closed must not crash Hermes: the exit explains it.
    child.stdin.on("error", () => undefined);
    const pid = child.pid;
    const unhook = pid !== undefined ? onProcessExit(() => killGroup(pid)) : () => undefined;
    const exited = new Promise<string>((resolve) => {
      child.once("error", (error) => resolve(`it could not be started: ${messageOf(error)}`));
      child.once("close", (code, signal) => {
        const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
        resolve(
          `it ${how}${stderr.trim() ? `; its last output: ${stderr.trim()}` : ""}${deprecatedHint(stderr)}`,
        );
      });
    }).then((why) => {
      unhook();
      if (this.child === child) {
        this.child = undefined;
        this.current = undefined;
      }
      return why;
    });

    const sinks = new Map<string, (update: SessionUpdate) => void>();
    const sdk = loadAcpSdk();
    const onRefused = this.options.onRefused;
    const connection = sdk
      .client({ name: "hermes-copilot-acp" })
      .onNotification("session/update", ({ params }) => {
        sinks.get(params.sessionId)?.(params.update);
      })
      .onRequest("session/request_permission", ({ params }) => {
        onRefused?.(params.toolCall.title ?? params.toolCall.toolCallId);
        return refusePermission(params);
      })
      .onRequest("*", ({ method }) => {
        throw sdk.RequestError.methodNotFound(method);
      })
      .connect(
        sdk.ndJsonStream(
          Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
          Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
        ),
      );
    exited.then(() => connection.close()).catch(() => undefined);

    let holds = 0;
    const setRef = (on: boolean) => {
      for (const handle of [child, child.stdout, child.stderr, child.stdin] as Array<{
        ref?: () => void;
        unref?: () => void;
      }>) {
        if (on) handle.ref?.();
        else handle.unref?.();
      }
    };
    const hold = () => {
      if (holds++ === 0) setRef(true);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        if (--holds === 0) setRef(false);
      };
    };

    const release = hold();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          timedOut = true;
          reject(
            new Error(
              `The Copilot ACP agent "${line}" did not answer initialize within ${seconds(startTimeoutMs)} s` +
                `${stderr.trim() ? `; its last output: ${stderr.trim()}` : ""}. Check that it is the GitHub Copilot CLI ` +
                "with ACP support (copilot --help lists --acp), or set HERMES_COPILOT_ACP_COMMAND / HERMES_COPILOT_ACP_ARGS.",
            ),
          );
        }, startTimeoutMs);
      });
      const died = exited.then((why) =>
        Promise.reject(new Error(`The Copilot ACP agent "${line}" quit before answering initialize: ${why}`)),
      );
      // It also rejects when the agent ends long after a good start: nobody waits for it then.
      died.catch(() => undefined);
      const init = await Promise.race([
        connection.agent.request("initialize", {
          protocolVersion: sdk.PROTOCOL_VERSION,
          // No file-system or terminal methods: the agent acts only through Hermes's tools.
          clientCapabilities: {},
          clientInfo: { name: "hermes", version: "copilot-acp" },
        }),
        timeout,
        died,
      ]);
      return {
        connection,
        init,
        pid,
        exited,
        listen(sessionId, sink) {
          sinks.set(sessionId, sink);
          return () => {
            if (sinks.get(sessionId) === sink) sinks.delete(sessionId);
          };
        },
        hold,
      };
    } catch (error) {
      if (pid !== undefined) killGroup(pid);
      if (this.child === child) this.child = undefined;
      if (timedOut) throw error;
      // The connection closes as the program's output ends, a moment before its exit is seen:
      // wait that moment, so the error says why it ended and what it printed.
      const why = await Promise.race([
        exited,
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 1000).unref()),
      ]);
      throw why
        ? new Error(`The Copilot ACP agent "${line}" quit before answering initialize: ${why}`)
        : error;
    } finally {
      if (timer) clearTimeout(timer);
      release();
    }
  }
}

/** SIGKILL to the whole process group (the agent and whatever it started). */
function killGroup(pid: number): void {
  if (!trySignal(-pid, "SIGKILL")) trySignal(pid, "SIGKILL");
}

/**
 * The old `gh copilot` extension answers `copilot`-like names but has no ACP mode; its banner says
 * it is deprecated. Both words are required: the new CLI may mention gh-copilot in its own text.
 */
export function deprecatedHint(stderr: string): string {
  const text = stderr.toLowerCase();
  if (!text.includes("gh-copilot") || !/deprecated|no commands will be executed/.test(text)) return "";
  return (
    ". This is the deprecated gh copilot extension, not the GitHub Copilot CLI: install the CLI " +
    "(npm install -g @github/copilot) or point HERMES_COPILOT_ACP_COMMAND at it"
  );
}

/** A duration for a message: one decimal under 10 s. */
export function seconds(ms: number): string {
  return ms < 10_000 ? (ms / 1000).toFixed(1) : String(Math.round(ms / 1000));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
