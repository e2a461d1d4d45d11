/**
 * A loopback Daytona: the control-plane API (`/api/sandbox...`) and the sandbox toolbox daemon
 * (`/toolbox/<id>/...`) that `@daytonaio/sdk` 0.218 talks to, answering only the calls the
 * daytona backend makes, in the shapes the SDK parses. Behaviour follows the daemon's source
 * (apps/daemon/pkg/session and toolbox/fs, toolbox/process/execute in daytonaio/daytona):
 *
 * - `/process/execute`: the daemon's own quote-aware word splitter (no shell), its own process
 *   group, stdout+stderr merged, on timeout the process tree is stopped and the answer is 408.
 * - sessions: one `bash` per session in its own process group, each command written to it in the
 *   daemon's wrapper (FIFOs, a labeler prefixing every stdout line with 01 01 01 and every stderr
 *   line with 02 02 02, stdin held open for async commands, the exit code written after the
 *   labelers drain); input goes to the command's FIFO with a newline appended when missing;
 *   follow-logs is a WebSocket that closes once the exit code exists; delete stops the tree.
 * - files: info (os.Stat: follows links, Go FileMode string, "%04o" permissions), list (lstat),
 *   bulk upload (parents created, atomic rename, mode 0644), bulk download (multipart `file`
 *   parts named by path, `error` parts as JSON), folder, delete, permissions.
 *
 * The "sandbox" is a temporary directory on this machine standing for the remote one: commands
 * run here, as the test user, with that directory as HOME. Paths are host paths.
 * Not covered: the socket.io event stream (the fake refuses it, so the SDK polls, as it does when
 * WebSockets are unavailable), snapshots and image builds, volumes, PTY, preview links, git, LSP.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { Stats } from "node:fs";
import {
  constants,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { chmod, mkdir, open, readFile, rename, stat as statAsync } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type WebSocket, WebSocketServer } from "ws";
import { descendants, trySignal } from "../../src/util/process-tree.js";

export interface FakeSandbox {
  id: string;
  name: string;
  state: string;
  labels: Record<string, string>;
  /** What the create request asked for (image from the build info's Dockerfile, resources). */
  created: Record<string, unknown>;
  home: string;
  sessions: Map<string, FakeSession>;
  /** GETs until a fresh sandbox reports `started` (makes the SDK wait, as a real start does). */
  pendingPolls: number;
}

interface FakeSession {
  dir: string;
  shell: ChildProcess;
  commands: Map<string, { command: string; suppressInputEcho: boolean; exitCode?: number }>;
  deleted: boolean;
}

export interface FakeDaytona {
  /** The API URL to give the SDK (DAYTONA_API_URL). */
  apiUrl: string;
  apiKey: string;
  sandboxes: Map<string, FakeSandbox>;
  /** "METHOD /path" of every request, in order (toolbox paths without the sandbox id). */
  requests: string[];
  close(): Promise<void>;
}

const STDOUT_PREFIX = "\\001\\001\\001";
const STDERR_PREFIX = "\\002\\002\\002";

/** The daemon's wrapper around one session command (session/wrapper_linux.go). */
function wrapper(
  log: string,
  dir: string,
  input: string,
  cmdFile: string,
  exitFile: string,
  async: boolean,
): string {
  const holder = async ? `while :; do sleep 3600; done > "$ip" &` : `cat /dev/null > "$ip" &`;
  return `
{
  log=${JSON.stringify(log)}
  dir=${JSON.stringify(dir)}
  sp="$dir/stdout.pipe"
  ep="$dir/stderr.pipe"
  ip=${JSON.stringify(input)}
  rm -f "$sp" "$ep" "$ip" && mkfifo "$sp" "$ep" "$ip" || exit 1
  cleanup() { rm -f "$sp" "$ep" "$ip"; }
  trap 'cleanup' EXIT HUP INT TERM
  ( while IFS= read -r line || [ -n "$line" ]; do printf '${STDOUT_PREFIX}%s\\n' "$line"; done < "$sp" ) >> "$log" & r1=$!
  ( while IFS= read -r line || [ -n "$line" ]; do printf '${STDERR_PREFIX}%s\\n' "$line"; done < "$ep" ) >> "$log" & r2=$!
  ${holder}
  ip_pid=$!
  { . ${JSON.stringify(cmdFile)}; } < "$ip" > "$sp" 2> "$ep"
  _ec=$?
  kill "$ip_pid" 2>/dev/null; wait "$ip_pid" 2>/dev/null
  wait "$r1" "$r2"
  echo "$_ec" >> ${JSON.stringify(exitFile)}
  cleanup
}
`;
}

/** The daemon's command splitter for /process/execute (toolbox/process/execute.go parseCommand). */
export function parseDaemonCommand(command: string): string[] {
  const args: string[] = [];
  let current = "";
  let quote: string | undefined;
  for (const ch of command) {
    if (ch === '"' || ch === "'") {
      if (!quote) quote = ch;
      else if (quote === ch) quote = undefined;
      else current += ch;
    } else if (ch === " " && !quote) {
      if (current) args.push(current);
      current = "";
    } else current += ch;
  }
  if (current) args.push(current);
  return args;
}

/** SIGTERM to a process tree (group and descendants), SIGKILL after `graceMs`. */
async function stopTree(pid: number | undefined, graceMs: number): Promise<void> {
  if (!pid) return;
  const targets = (): number[] => [pid, ...descendants(pid).map((p) => p.pid)];
  trySignal(-pid, "SIGTERM");
  for (const p of targets()) trySignal(p, "SIGTERM");
  await new Promise((resolve) => setTimeout(resolve, graceMs));
  trySignal(-pid, "SIGKILL");
  for (const p of targets()) trySignal(p, "SIGKILL");
}

function fileMode(st: {
  mode: number;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
  isFile(): boolean;
}): string {
  const letter = st.isDirectory() ? "d" : st.isSymbolicLink() ? "L" : st.isFile() ? "-" : "p";
  const bits = "rwxrwxrwx";
  let text = "";
  for (let i = 0; i < 9; i++) text += st.mode & (1 << (8 - i)) ? bits[i] : "-";
  return letter + text;
}

function fileInfo(path: string, st: Stats): Record<string, unknown> {
  return {
    name: path.split("/").pop() ?? path,
    size: Number(st.size),
    mode: fileMode(st),
    modTime: new Date(Number(st.mtimeMs)).toISOString(),
    modifiedAt: new Date(Number(st.mtimeMs)).toISOString(),
    isDir: st.isDirectory(),
    owner: String(st.uid),
    group: String(st.gid),
    permissions: (Number(st.mode) & 0o777).toString(8).padStart(4, "0"),
  };
}

function parseMultipart(body: Buffer, contentType: string): { name: string; data: Buffer }[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  const mark = Buffer.from(`--${boundary?.[1] ?? boundary?.[2] ?? ""}`);
  const parts: { name: string; data: Buffer }[] = [];
  let at = body.indexOf(mark);
  while (at >= 0) {
    const start = at + mark.length + 2;
    const next = body.indexOf(mark, start);
    if (next < 0) break;
    const part = body.subarray(start, next - 2);
    const split = part.indexOf("\r\n\r\n");
    const head = part.subarray(0, split).toString("utf8");
    const name = /name="([^"]*)"/.exec(head)?.[1] ?? "";
    parts.push({ name, data: part.subarray(split + 4) });
    at = next;
  }
  return parts;
}

export async function startFakeDaytona(options: { apiKey?: string } = {}): Promise<FakeDaytona> {
  const apiKey = options.apiKey ?? "fake-daytona-key";
  const sandboxes = new Map<string, FakeSandbox>();
  const requests: string[] = [];
  const root = mkdtempSync(join(tmpdir(), "fake-daytona-"));
  const wss = new WebSocketServer({ noServer: true });
  const running = new Set<ChildProcess>();
  let base = "";

  const env = (home: string): NodeJS.ProcessEnv => ({
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: home,
    LANG: "C.UTF-8",
    USER: process.env["USER"] ?? "daytona",
  });

  const dto = (s: FakeSandbox): Record<string, unknown> => ({
    id: s.id,
    name: s.name,
    organizationId: "org-fake",
    user: "daytona",
    env: {},
    labels: s.labels,
    public: false,
    target: "us",
    cpu: s.created["cpu"] ?? 1,
    gpu: 0,
    memory: s.created["memory"] ?? 1,
    disk: s.created["disk"] ?? 3,
    state: s.state,
    toolboxProxyUrl: `${base}/toolbox`,
    autoStopInterval: s.created["autoStopInterval"] ?? 15,
    createdAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
  });

  const find = (idOrName: string): FakeSandbox | undefined =>
    sandboxes.get(idOrName) ?? [...sandboxes.values()].find((s) => s.name === idOrName);

  const send = (res: ServerResponse, status: number, body?: unknown): void => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(body === undefined ? "" : JSON.stringify(body));
  };
  const fail = (res: ServerResponse, status: number, message: string): void =>
    send(res, status, { statusCode: status, message, code: status === 404 ? "NOT_FOUND" : "ERROR" });

  async function endSessions(s: FakeSandbox): Promise<void> {
    await Promise.all([...s.sessions.values()].map((session) => deleteSession(session)));
    s.sessions.clear();
  }
  async function deleteSession(session: FakeSession): Promise<void> {
    session.deleted = true;
    await stopTree(session.shell.pid, 500);
    rmSync(session.dir, { recursive: true, force: true });
  }

  async function body(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async function control(req: IncomingMessage, res: ServerResponse, path: string[]): Promise<void> {
    const method = req.method ?? "GET";
    const [, idOrName, action] = path; // ["sandbox", id?, action?]
    if (path[0] === "config") return send(res, 200, {});
    if (path[0] !== "sandbox") return fail(res, 404, "not found");
    if (method === "POST" && !idOrName) {
      const params = JSON.parse((await body(req)).toString("utf8") || "{}") as Record<string, unknown>;
      const dockerfile =
        (params["buildInfo"] as { dockerfileContent?: string } | undefined)?.dockerfileContent ?? "";
      const name = typeof params["name"] === "string" ? params["name"] : randomUUID();
      if (find(name)) return fail(res, 409, `Sandbox with name ${name} already exists`);
      const id = randomUUID();
      const home = join(root, id);
      mkdirSync(home, { recursive: true });
      const s: FakeSandbox = {
        id,
        name,
        state: "starting",
        labels: (params["labels"] as Record<string, string>) ?? {},
        created: { ...params, image: /^FROM\s+(\S+)/m.exec(dockerfile)?.[1] },
        home,
        sessions: new Map(),
        pendingPolls: 1,
      };
      sandboxes.set(id, s);
      return send(res, 200, dto(s));
    }
    if (method === "GET" && !idOrName) {
      const url = new URL(req.url ?? "/", base);
      const labels = JSON.parse(url.searchParams.get("labels") ?? "{}") as Record<string, string>;
      const name = url.searchParams.get("name");
      const items = [...sandboxes.values()].filter(
        (s) => (!name || s.name === name) && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
      );
      return send(res, 200, { items: items.map(dto), nextCursor: null });
    }
    const s = idOrName ? find(decodeURIComponent(idOrName)) : undefined;
    if (!s) return fail(res, 404, `Sandbox with ID or name ${idOrName} not found`);
    if (method === "GET" && !action) {
      if (s.state === "starting" && s.pendingPolls-- <= 0) s.state = "started";
      return send(res, 200, dto(s));
    }
    if (method === "GET" && action === "toolbox-proxy-url") return send(res, 200, { url: `${base}/toolbox` });
    if (method === "POST" && action === "start") {
      s.state = "started";
      return send(res, 200, dto(s));
    }
    if (method === "POST" && action === "stop") {
      await endSessions(s);
      s.state = "stopped";
      return send(res, 200, dto(s));
    }
    if (method === "DELETE" && !action) {
      await endSessions(s);
      s.state = "destroyed";
      sandboxes.delete(s.id);
      rmSync(s.home, { recursive: true, force: true });
      return send(res, 200, dto(s));
    }
    return fail(res, 404, "not found");
  }

  async function toolbox(
    req: IncomingMessage,
    res: ServerResponse,
    s: FakeSandbox,
    path: string,
  ): Promise<void> {
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", base);
    const q = (name: string): string => url.searchParams.get(name) ?? "";
    if (s.state !== "started") return fail(res, 502, `sandbox ${s.id} is ${s.state}`);
    if (path === "/user-home-dir" || path === "/work-dir") return send(res, 200, { dir: s.home });
    if (method === "POST" && path === "/process/execute") return execute(res, s, await body(req));
    if (path.startsWith("/process/session")) return session(req, res, s, path, method);
    if (path.startsWith("/files")) return files(req, res, path, method, q);
    return fail(res, 404, `no route ${method} ${path}`);
  }

  async function execute(res: ServerResponse, s: FakeSandbox, raw: Buffer): Promise<void> {
    const request = JSON.parse(raw.toString("utf8")) as { command: string; cwd?: string; timeout?: number };
    const argv = parseDaemonCommand(request.command);
    if (argv.length === 0) return fail(res, 400, "empty command");
    const child = spawn(argv[0] as string, argv.slice(1), {
      cwd: request.cwd || s.home,
      env: env(s.home),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    const chunks: Buffer[] = [];
    child.stdout?.on("data", (c: Buffer) => chunks.push(c));
    child.stderr?.on("data", (c: Buffer) => chunks.push(c));
    let timedOut = false;
    const timer =
      request.timeout && request.timeout > 0
        ? setTimeout(() => {
            timedOut = true;
            void stopTree(child.pid, 1000);
          }, request.timeout * 1000)
        : undefined;
    const code = await new Promise<number>((resolve) => {
      child.on("error", () => resolve(-1));
      child.on("close", (c) => resolve(c ?? -1));
    });
    running.delete(child);
    if (timer) clearTimeout(timer);
    if (timedOut) {
      return fail(res, 408, `Command execution timed out after ${request.timeout} seconds.`);
    }
    send(res, 200, { exitCode: code, result: Buffer.concat(chunks).toString("utf8") });
  }

  function commandPaths(session: FakeSession, cmdId: string) {
    const dir = join(session.dir, cmdId);
    return {
      dir,
      log: join(dir, "output.log"),
      exit: join(dir, "exit_code"),
      input: join(dir, "input.pipe"),
    };
  }

  async function session(
    req: IncomingMessage,
    res: ServerResponse,
    s: FakeSandbox,
    path: string,
    method: string,
  ): Promise<void> {
    const parts = path.split("/").filter(Boolean).slice(2); // after process/session
    if (method === "POST" && parts.length === 0) {
      const { sessionId } = JSON.parse((await body(req)).toString("utf8")) as { sessionId: string };
      if (s.sessions.has(sessionId)) return fail(res, 409, "session already exists");
      const dir = join(s.home, "..", `${s.id}.sessions`, sessionId);
      mkdirSync(dir, { recursive: true });
      const shell = spawn("bash", [], {
        cwd: s.home,
        env: env(s.home),
        detached: true,
        stdio: ["pipe", "ignore", "ignore"],
      });
      shell.stdin?.on("error", () => undefined);
      s.sessions.set(sessionId, { dir, shell, commands: new Map(), deleted: false });
      res.writeHead(201).end();
      return;
    }
    const sess = s.sessions.get(decodeURIComponent(parts[0] ?? ""));
    if (!sess || sess.deleted) return fail(res, 404, "session not found");
    if (method === "DELETE" && parts.length === 1) {
      s.sessions.delete(decodeURIComponent(parts[0] ?? ""));
      await deleteSession(sess);
      res.writeHead(204).end();
      return;
    }
    if (method === "POST" && parts[1] === "exec") {
      const request = JSON.parse((await body(req)).toString("utf8")) as {
        command: string;
        runAsync?: boolean;
        async?: boolean;
        suppressInputEcho?: boolean;
      };
      if (!request.command?.trim()) return fail(res, 400, "command cannot be empty");
      const cmdId = randomUUID();
      const p = commandPaths(sess, cmdId);
      mkdirSync(p.dir, { recursive: true });
      writeFileSync(p.log, "");
      const cmdFile = join(p.dir, "cmd.sh");
      writeFileSync(cmdFile, request.command, { mode: 0o600 });
      const async = Boolean(request.runAsync || request.async);
      sess.commands.set(cmdId, {
        command: request.command,
        suppressInputEcho: Boolean(request.suppressInputEcho),
      });
      sess.shell.stdin?.write(wrapper(p.log, p.dir, p.input, cmdFile, p.exit, async));
      if (async) return send(res, 202, { cmdId });
      for (;;) {
        if (sess.deleted) return fail(res, 400, "session cancelled");
        const code = await readExit(p.exit);
        if (code !== undefined) {
          const output = (await readFile(p.log, "utf8")).replace(/\x01\x01\x01|\x02\x02\x02/g, "");
          return send(res, 200, { cmdId, output, exitCode: code });
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const cmdId = decodeURIComponent(parts[2] ?? "");
    const command = sess.commands.get(cmdId);
    if (parts[1] !== "command" || !command) return fail(res, 404, "command not found");
    const p = commandPaths(sess, cmdId);
    if (command.exitCode === undefined) {
      const code = await readExit(p.exit);
      if (code !== undefined) command.exitCode = code;
    }
    if (method === "GET" && parts.length === 3) {
      return send(res, 200, { id: cmdId, command: command.command, exitCode: command.exitCode });
    }
    if (method === "GET" && parts[3] === "logs") {
      return send(res, 200, (await readFile(p.log, "utf8")).replace(/\x01\x01\x01|\x02\x02\x02/g, ""));
    }
    if (method === "POST" && parts[3] === "input") {
      let { data } = JSON.parse((await body(req)).toString("utf8")) as { data: string };
      if (command.exitCode !== undefined) {
        return fail(res, 410, `command has already completed with exit code ${command.exitCode}`);
      }
      if (!data.endsWith("\n")) data += "\n";
      try {
        // O_WRONLY without O_CREAT, as the daemon opens it: before the wrapper made the FIFO, ENOENT.
        const fifo = await open(p.input, constants.O_WRONLY);
        await fifo.write(data);
        await fifo.close();
      } catch (error) {
        return fail(res, 500, `failed to open input pipe: ${(error as Error).message}`);
      }
      if (!command.suppressInputEcho) writeFileSync(p.log, `\x01\x01\x01${data}`, { flag: "a" });
      res.writeHead(204).end();
      return;
    }
    return fail(res, 404, "not found");
  }

  async function readExit(file: string): Promise<number | undefined> {
    try {
      const text = (await readFile(file, "utf8")).trim();
      return text === "" ? undefined : Number(text);
    } catch {
      return undefined;
    }
  }

  /** Follow-logs: the log's bytes as binary frames; closes once the exit code exists and all is sent. */
  function followLogs(
    ws: WebSocket,
    s: FakeSandbox,
    sessionId: string,
    cmdId: string,
    follow: boolean,
  ): void {
    ws.on("error", () => undefined);
    const sess = s.sessions.get(sessionId);
    if (!sess) {
      ws.close(1011);
      return;
    }
    const p = commandPaths(sess, cmdId);
    let offset = 0;
    let stopped = false;
    ws.on("close", () => {
      stopped = true;
    });
    const pump = async (): Promise<void> => {
      while (!stopped) {
        const exited = (await readExit(p.exit)) !== undefined;
        let data: Buffer;
        try {
          data = await readFile(p.log);
        } catch {
          data = Buffer.alloc(0);
        }
        if (data.length > offset) {
          ws.send(data.subarray(offset));
          offset = data.length;
          continue;
        }
        if (exited || !follow || sess.deleted) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      if (!stopped) ws.close(1000);
    };
    void pump();
  }

  async function files(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    method: string,
    q: (name: string) => string,
  ): Promise<void> {
    const target = q("path");
    try {
      if (method === "GET" && path === "/files/info") {
        return send(res, 200, fileInfo(target, statSync(target)));
      }
      if (method === "GET" && path === "/files") {
        const entries = readdirSync(target).map((name) =>
          fileInfo(join(target, name), lstatSync(join(target, name))),
        );
        return send(res, 200, entries);
      }
      if (method === "POST" && path === "/files/folder") {
        await mkdir(target, { recursive: true, mode: Number.parseInt(q("mode") || "755", 8) });
        res.writeHead(201).end();
        return;
      }
      if (method === "DELETE" && path === "/files") {
        const st = lstatSync(target);
        if (st.isDirectory() && q("recursive") !== "true") return fail(res, 400, "directory not empty");
        rmSync(target, { recursive: true, force: true });
        res.writeHead(204).end();
        return;
      }
      if (method === "POST" && path === "/files/permissions") {
        if (q("mode")) await chmod(target, Number.parseInt(q("mode"), 8));
        res.writeHead(200).end();
        return;
      }
      if (method === "POST" && path === "/files/bulk-upload") {
        const parts = parseMultipart(await body(req), req.headers["content-type"] ?? "");
        const dests = new Map<string, string>();
        for (const part of parts) {
          const idx = part.name.replace(/^files\[/, "").replace(/\]\.(path|file)$/, "");
          if (part.name.endsWith(".path")) dests.set(idx, part.data.toString("utf8").trim());
          else if (part.name.endsWith(".file")) {
            const dest = dests.get(idx);
            if (!dest) return fail(res, 400, `file[${idx}]: missing .path metadata`);
            await mkdir(dirname(dest), { recursive: true });
            const tmp = join(dirname(dest), `.daytona-upload-${randomUUID()}`);
            writeFileSync(tmp, part.data, { mode: 0o644 });
            await chmod(tmp, 0o644);
            let resolved = dest;
            try {
              if (lstatSync(dest).isSymbolicLink())
                resolved = await import("node:fs").then((m) => m.realpathSync(dest));
            } catch {
              // a new file
            }
            await rename(tmp, resolved);
          }
        }
        return send(res, 200, { files: [] });
      }
      if (method === "POST" && path === "/files/bulk-download") {
        const { paths } = JSON.parse((await body(req)).toString("utf8")) as { paths: string[] };
        const boundary = "DAYTONA-FILE-BOUNDARY";
        const out: Buffer[] = [];
        for (const file of paths) {
          let data: Buffer | undefined;
          try {
            if ((await statAsync(file)).isFile()) data = await readFile(file);
          } catch {
            data = undefined;
          }
          const head = (name: string, type: string): string =>
            `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${file}"\r\nContent-Type: ${type}\r\n\r\n`;
          if (data)
            out.push(Buffer.from(head("file", "application/octet-stream")), data, Buffer.from("\r\n"));
          else {
            const error = { message: `file not found: ${file}`, statusCode: 404, code: "FILE_NOT_FOUND" };
            out.push(
              Buffer.from(head("error", "application/json")),
              Buffer.from(JSON.stringify(error)),
              Buffer.from("\r\n"),
            );
          }
        }
        out.push(Buffer.from(`--${boundary}--\r\n`));
        res.writeHead(200, { "content-type": `multipart/form-data; boundary=${boundary}` });
        res.end(Buffer.concat(out));
        return;
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return fail(res, 404, (error as Error).message);
      if (code === "EACCES") return fail(res, 403, (error as Error).message);
      return fail(res, 400, (error as Error).message);
    }
    return fail(res, 404, `no route ${method} ${path}`);
  }

  const authorised = (req: IncomingMessage): boolean => req.headers.authorization === `Bearer ${apiKey}`;

  /** "/toolbox/<id>/rest" → [sandbox, "/rest"]. */
  const toolboxTarget = (pathname: string): [FakeSandbox | undefined, string] => {
    const rest = pathname.slice("/toolbox/".length);
    const slash = rest.indexOf("/");
    const id = slash < 0 ? rest : rest.slice(0, slash);
    return [sandboxes.get(id), slash < 0 ? "/" : rest.slice(slash)];
  };

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", base);
    const isToolbox = url.pathname.startsWith("/toolbox/");
    const [sandbox, toolPath] = isToolbox ? toolboxTarget(url.pathname) : [undefined, ""];
    requests.push(`${req.method} ${isToolbox ? toolPath : url.pathname}`);
    if (!authorised(req)) return fail(res, 401, "Unauthorized: invalid API key");
    if (isToolbox) {
      if (!sandbox) return fail(res, 404, "sandbox not found");
      void toolbox(req, res, sandbox, toolPath).catch((error: Error) => fail(res, 500, error.message));
      return;
    }
    if (!url.pathname.startsWith("/api/")) return fail(res, 404, "not found");
    void control(req, res, url.pathname.slice(5).split("/").filter(Boolean)).catch((error: Error) =>
      fail(res, 500, error.message),
    );
  });

  server.on("upgrade", (req, socket, head) => {
    // An upgraded socket is ours alone: a client that resets it (hermes exiting) must not crash the test process.
    socket.on("error", () => undefined);
    const url = new URL(req.url ?? "/", base);
    const [sandbox, toolPath] = url.pathname.startsWith("/toolbox/")
      ? toolboxTarget(url.pathname)
      : [undefined, ""];
    requests.push(`WS ${toolPath || url.pathname}`);
    const match = /^\/process\/session\/([^/]+)\/command\/([^/]+)\/logs$/.exec(toolPath);
    if (!sandbox || !match || !authorised(req)) {
      // socket.io (the event stream) included: refused, so the SDK falls back to polling.
      socket.end("HTTP/1.1 404 Not Found\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) =>
      followLogs(
        ws,
        sandbox,
        decodeURIComponent(match[1] as string),
        decodeURIComponent(match[2] as string),
        url.searchParams.get("follow") === "true",
      ),
    );
  });

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;

  return {
    apiUrl: `${base}/api`,
    apiKey,
    sandboxes,
    requests,
    async close() {
      for (const s of sandboxes.values()) await endSessions(s);
      for (const child of running) await stopTree(child.pid, 100);
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (existsSync(root)) rmSync(root, { recursive: true, force: true });
    },
  };
}
