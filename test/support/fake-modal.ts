/**
 * A loopback Modal: a gRPC server built from the SDK's OWN generated service definitions
 * (`ModalClientDefinition`, `TaskCommandRouterDefinition`, compiled in memory from
 * node_modules/modal/dist/index.cjs, where they are not exported), serving the calls `modal` 0.11
 * makes for the modal backend, with the request and response shapes its code reads:
 *
 * - control plane: AuthTokenGet (a JWT with `exp`), EnvironmentGetOrCreate (the image builder
 *   version), AppGetOrCreate, ImageGetOrCreate (built at once: status SUCCESS), SandboxCreateV2
 *   (the SDK's default: task id and command-router access in the answer) and V1 SandboxCreate,
 *   SandboxGetTaskId(V2), Task/SandboxGetCommandRouterAccess (an https:// URL; the SDK dials it
 *   without TLS because the server URL is loopback), SandboxTerminate(V2). Token id/secret are
 *   checked (UNAUTHENTICATED otherwise).
 * - task command router (same port): TaskExecStart (argv, workdir, env from inline secret
 *   sources, timeoutSecs), TaskExecStdioRead (server stream from an offset, per fd), TaskExecStdinWrite
 *   (offset-deduplicated writes, EOF), TaskExecWait / TaskExecPoll ({code} or {signal}).
 *
 * The "sandbox" is a temporary directory on this machine: execs run here as the test user, in
 * their own process group, with that directory as HOME. Not covered (UNIMPLEMENTED here):
 * ImageJoinStreaming (builds finish at once), file-system and snapshot calls, tunnels,
 * volumes, secrets by name, PTY, TaskExecStdinWriteStream (the SDK's streaming stdin, used only for
 * `_stdinWriteStream`), and image pulls (the registry tag is only recorded).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import Module, { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type CallContext, createServer, type Metadata, ServerError, Status } from "nice-grpc";
import { trySignal } from "../../src/util/process-tree.js";

type Definition = {
  name: string;
  fullName: string;
  methods: Record<string, { requestStream: boolean; responseStream: boolean }>;
};

/** The SDK's generated service definitions (module-private in its bundle). */
function sdkDefinitions(): { cp: Definition; router: Definition } {
  const require = createRequire(import.meta.url);
  const file = require.resolve("modal").replace(/index\.js$/, "index.cjs");
  const source = readFileSync(file, "utf8");
  type Internal = Module & { _compile(code: string, filename: string): void; paths: string[] };
  const ModuleCtor = Module as unknown as {
    new (id: string): Internal;
    _nodeModulePaths(dir: string): string[];
  };
  const mod = new ModuleCtor(file);
  mod.filename = file;
  mod.paths = ModuleCtor._nodeModulePaths(dirname(file));
  mod._compile(
    `${source}\n;module.exports.__hermesDefinitions = { cp: ModalClientDefinition, router: TaskCommandRouterDefinition };`,
    file,
  );
  return (mod.exports as { __hermesDefinitions: { cp: Definition; router: Definition } }).__hermesDefinitions;
}

interface Exec {
  child: ChildProcess;
  out: Buffer[];
  err: Buffer[];
  outDone: boolean;
  errDone: boolean;
  stdinOffset: number;
  exit?: { code?: number; signal?: number };
  exited: Promise<void>;
  wake: Set<() => void>;
}

export interface FakeModalSandbox {
  sandboxId: string;
  taskId: string;
  home: string;
  /** Registry tag and resources from the create call. */
  image: string;
  definition: Record<string, unknown>;
  terminated: boolean;
}

export interface FakeModal {
  /** For MODAL_SERVER_URL. */
  serverUrl: string;
  tokenId: string;
  tokenSecret: string;
  /** Method names in call order (e.g. "sandboxCreate", "taskExecStart"). */
  calls: string[];
  sandboxes: Map<string, FakeModalSandbox>;
  close(): Promise<void>;
}

function jwt(): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none", typ: "JWT" })}.${part({ exp: Math.floor(Date.now() / 1000) + 3600 })}.fake`;
}

export async function startFakeModal(
  options: { tokenId?: string; tokenSecret?: string } = {},
): Promise<FakeModal> {
  const defs = sdkDefinitions();
  const tokenId = options.tokenId ?? "ak-fake";
  const tokenSecret = options.tokenSecret ?? "as-fake";
  const root = mkdtempSync(join(tmpdir(), "fake-modal-"));
  const calls: string[] = [];
  const sandboxes = new Map<string, FakeModalSandbox>();
  const byTask = new Map<string, FakeModalSandbox>();
  const execs = new Map<string, Exec>();
  const images = new Map<string, string>();
  let port = 0;

  const authorise = (context: CallContext): void => {
    const md: Metadata = context.metadata;
    if (md.get("x-modal-token-id") !== tokenId || md.get("x-modal-token-secret") !== tokenSecret) {
      throw new ServerError(Status.UNAUTHENTICATED, "Token missing or invalid. Run `modal token new`.");
    }
  };

  function createSandbox(definition: Record<string, unknown>): FakeModalSandbox {
    const sandboxId = `sb-${randomUUID()}`;
    const taskId = `ta-${randomUUID()}`;
    const home = join(root, sandboxId);
    mkdirSync(home);
    const sandbox: FakeModalSandbox = {
      sandboxId,
      taskId,
      home,
      image: images.get(String(definition["imageId"] ?? "")) ?? "",
      definition,
      terminated: false,
    };
    sandboxes.set(sandboxId, sandbox);
    byTask.set(taskId, sandbox);
    return sandbox;
  }

  const cp: Record<string, (request: never, context: CallContext) => unknown> = {
    async authTokenGet() {
      return { token: jwt() };
    },
    async environmentGetOrCreate() {
      return {
        environmentId: "en-fake",
        metadata: { name: "main", settings: { imageBuilderVersion: "2024.10" } },
      };
    },
    async appGetOrCreate(request: { appName: string }) {
      return { appId: `ap-${request.appName}` };
    },
    async imageGetOrCreate(request: { image?: { dockerfileCommands?: string[] } }) {
      const from = request.image?.dockerfileCommands?.[0] ?? "";
      const imageId = `im-${randomUUID()}`;
      images.set(imageId, from.replace(/^FROM\s+/, ""));
      return { imageId, result: { status: 1 } };
    },
    async sandboxCreate(request: { definition?: Record<string, unknown> }) {
      return { sandboxId: createSandbox(request.definition ?? {}).sandboxId };
    },
    // V2 sandboxes (the SDK's default): the create answer carries the task and router access.
    async sandboxCreateV2(request: { definition?: Record<string, unknown> }) {
      const sandbox = createSandbox(request.definition ?? {});
      const sandboxId = sandbox.sandboxId;
      return {
        sandboxId,
        tunnels: [],
        taskId: sandbox.taskId,
        commandRouterAccess: { url: `https://127.0.0.1:${port}`, jwt: jwt() },
      };
    },
    async sandboxGetTaskIdV2(request: { sandboxId: string }, context: CallContext) {
      return cp["sandboxGetTaskId"]?.(request as never, context);
    },
    async sandboxGetCommandRouterAccess(request: { sandboxId: string }) {
      if (!sandboxes.has(request.sandboxId)) throw new ServerError(Status.NOT_FOUND, "sandbox not found");
      return { url: `https://127.0.0.1:${port}`, jwt: jwt(), workerIpv4Address: "127.0.0.1" };
    },
    async sandboxTerminateV2(request: { sandboxId: string }, context: CallContext) {
      return cp["sandboxTerminate"]?.(request as never, context);
    },
    async sandboxGetTaskId(request: { sandboxId: string }) {
      const sandbox = sandboxes.get(request.sandboxId);
      if (!sandbox) throw new ServerError(Status.NOT_FOUND, `Sandbox ${request.sandboxId} not found`);
      if (sandbox.terminated) return { taskResult: { status: 3, exception: "Sandbox terminated" } };
      return { taskId: sandbox.taskId };
    },
    async taskGetCommandRouterAccess(request: { taskId: string }) {
      if (!byTask.has(request.taskId)) throw new ServerError(Status.NOT_FOUND, "task not found");
      return { url: `https://127.0.0.1:${port}`, jwt: jwt() };
    },
    async sandboxTerminate(request: { sandboxId: string }) {
      const sandbox = sandboxes.get(request.sandboxId);
      if (sandbox) {
        sandbox.terminated = true;
        for (const [id, exec] of execs) {
          if (id.startsWith(`${sandbox.taskId}/`)) trySignal(-(exec.child.pid ?? 0), "SIGKILL");
        }
      }
      return {};
    },
  };

  const wakeAll = (exec: Exec): void => {
    for (const wake of [...exec.wake]) wake();
  };

  const router: Record<string, (request: never, context: CallContext) => unknown> = {
    async taskExecStart(request: {
      taskId: string;
      execId: string;
      commandArgs: string[];
      workdir?: string;
      timeoutSecs?: number;
      secretSources?: { env?: { contents?: Record<string, string> } }[];
      ptyInfo?: { enabled?: boolean; winszRows?: number; winszCols?: number; envTerm?: string };
    }) {
      const sandbox = byTask.get(request.taskId);
      if (!sandbox || sandbox.terminated)
        throw new ServerError(Status.NOT_FOUND, "task not found or finished");
      const env: NodeJS.ProcessEnv = {
        PATH: process.env["PATH"] ?? "/usr/bin:/bin",
        HOME: sandbox.home,
        LANG: "C.UTF-8",
      };
      for (const source of request.secretSources ?? []) Object.assign(env, source.env?.contents ?? {});
      let [file, ...args] = request.commandArgs;
      if (!file) throw new ServerError(Status.INVALID_ARGUMENT, "empty command");
      const pty = request.ptyInfo?.enabled ? request.ptyInfo : undefined;
      if (pty) {
        // As Modal does: the command on a terminal of the given size (util-linux `script` makes
        // one here), stdout and stderr merged into stdout, TERM from the request.
        env["TERM"] = pty.envTerm || "xterm-256color";
        const quoted = [file, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
        const size = `stty rows ${pty.winszRows ?? 24} cols ${pty.winszCols ?? 80} 2>/dev/null`;
        [file, ...args] = ["script", "-qfec", `${size}; exec ${quoted}`, "/dev/null"];
      }
      const child = spawn(file, args, {
        cwd: request.workdir || sandbox.home,
        env,
        detached: true,
        stdio: "pipe",
      });
      const exec: Exec = {
        child,
        out: [],
        err: [],
        outDone: false,
        errDone: false,
        stdinOffset: 0,
        wake: new Set(),
        exited: Promise.resolve(),
      };
      child.stdin.on("error", () => undefined);
      child.stdout.on("data", (c: Buffer) => {
        exec.out.push(c);
        wakeAll(exec);
      });
      child.stderr.on("data", (c: Buffer) => {
        exec.err.push(c);
        wakeAll(exec);
      });
      child.stdout.on("end", () => {
        exec.outDone = true;
        wakeAll(exec);
      });
      child.stderr.on("end", () => {
        exec.errDone = true;
        wakeAll(exec);
      });
      exec.exited = new Promise((resolve) => {
        child.on("error", () => {
          exec.exit = { code: 127 };
          exec.outDone = exec.errDone = true;
          wakeAll(exec);
          resolve();
        });
        child.on("close", (code, signal) => {
          exec.exit = code !== null ? { code } : { signal: signal === "SIGKILL" ? 9 : 15 };
          wakeAll(exec);
          resolve();
        });
      });
      if (request.timeoutSecs) {
        const timer = setTimeout(() => trySignal(-(child.pid ?? 0), "SIGKILL"), request.timeoutSecs * 1000);
        void exec.exited.then(() => clearTimeout(timer));
      }
      execs.set(`${request.taskId}/${request.execId}`, exec);
      return {};
    },
    async *taskExecStdioRead(request: {
      taskId: string;
      execId: string;
      offset: number;
      fileDescriptor: number;
    }) {
      const exec = execs.get(`${request.taskId}/${request.execId}`);
      if (!exec) throw new ServerError(Status.NOT_FOUND, "exec not found");
      let offset = Number(request.offset ?? 0);
      const stderr = request.fileDescriptor === 1;
      for (;;) {
        const data = Buffer.concat(stderr ? exec.err : exec.out);
        if (data.length > offset) {
          yield { data: new Uint8Array(data.subarray(offset)) };
          offset = data.length;
          continue;
        }
        if (stderr ? exec.errDone : exec.outDone) return;
        await new Promise<void>((resolve) => {
          const wake = (): void => {
            exec.wake.delete(wake);
            resolve();
          };
          exec.wake.add(wake);
        });
      }
    },
    async taskExecStdinWrite(request: {
      taskId: string;
      execId: string;
      offset: number;
      data: Uint8Array;
      eof: boolean;
    }) {
      const exec = execs.get(`${request.taskId}/${request.execId}`);
      if (!exec) throw new ServerError(Status.NOT_FOUND, "exec not found");
      const offset = Number(request.offset ?? 0);
      const data = Buffer.from(request.data ?? new Uint8Array(0));
      // Offsets make retries idempotent: only bytes past what was written go through.
      const fresh = data.subarray(Math.max(0, exec.stdinOffset - offset));
      if (fresh.length > 0 && !exec.child.stdin?.writableEnded) exec.child.stdin?.write(fresh);
      exec.stdinOffset = Math.max(exec.stdinOffset, offset + data.length);
      if (request.eof) exec.child.stdin?.end();
      return {};
    },
    async taskExecWait(request: { taskId: string; execId: string }) {
      const exec = execs.get(`${request.taskId}/${request.execId}`);
      if (!exec) throw new ServerError(Status.NOT_FOUND, "exec not found");
      await exec.exited;
      return exec.exit ?? { code: 0 };
    },
    async taskExecPoll(request: { taskId: string; execId: string }) {
      const exec = execs.get(`${request.taskId}/${request.execId}`);
      if (!exec) throw new ServerError(Status.NOT_FOUND, "exec not found");
      return exec.exit ?? {};
    },
  };

  /** Every method of a definition: ours (recorded), or UNIMPLEMENTED. */
  const implement = (
    definition: Definition,
    impl: Record<string, (request: never, context: CallContext) => unknown>,
    auth: boolean,
  ): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [name, method] of Object.entries(definition.methods)) {
      const own = impl[name];
      if (own && method.responseStream) {
        out[name] = async function* (request: never, context: CallContext) {
          calls.push(name);
          if (auth) authorise(context);
          yield* own(request, context) as AsyncIterable<unknown>;
        };
      } else if (own) {
        out[name] = async (request: never, context: CallContext) => {
          calls.push(name);
          if (auth) authorise(context);
          return own(request, context);
        };
      } else {
        const unimplemented = (): never => {
          calls.push(`${name} (unimplemented)`);
          throw new ServerError(Status.UNIMPLEMENTED, `the fake Modal does not implement ${name}`);
        };
        out[name] = method.responseStream
          ? async function* () {
              yield unimplemented();
            }
          : async () => unimplemented();
      }
    }
    return out;
  };

  const server = createServer();
  server.add(defs.cp as never, implement(defs.cp, cp, true) as never);
  server.add(defs.router as never, implement(defs.router, router, false) as never);
  port = await server.listen("127.0.0.1:0");

  return {
    serverUrl: `http://127.0.0.1:${port}`,
    tokenId,
    tokenSecret,
    calls,
    sandboxes,
    async close() {
      for (const exec of execs.values()) trySignal(-(exec.child.pid ?? 0), "SIGKILL");
      server.forceShutdown();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
