/**
 * The control socket's guard against the agent's own processes: real Unix sockets, real client
 * processes. The kernel names the connecting pid (perl, python3 or ss, each checked), and a caller
 * that runs under the gateway cannot answer approvals or send, however it connects.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlAuthorizer, READ_ONLY_METHODS } from "../../../../src/gateway/control/peer-guard.js";
import { connectJsonRpc, type JsonRpcServer, serveJsonRpc } from "../../../../src/util/json-rpc-socket.js";
import { descendsFrom, parentPid, unixPeerPid } from "../../../../src/util/peer-process.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hpg-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A python client: connects, sends one request per method named, prints every answer line. */
const CLIENT = `
import socket,sys,json
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
f=s.makefile("rwb")
for m in sys.argv[2:]:
    f.write((json.dumps({"jsonrpc":"2.0","id":1,"method":m,"params":{"id":"a1","decision":"once"}})+"\\n").encode()); f.flush()
    print(f.readline().decode().strip(), flush=True)
`;

function run(command: string, args: string[]): Promise<{ code: number | null; out: string; pid: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, pid: child.pid as number }));
  });
}

async function serve(gatewayPid?: number) {
  const path = join(dir, `g${Math.random().toString(36).slice(2, 8)}.sock`);
  const calls: string[] = [];
  const refused: string[] = [];
  const server: JsonRpcServer = await serveJsonRpc(
    path,
    {
      status: () => ({ ok: true }),
      "approvals.respond": (params) => {
        calls.push(`respond ${String(params["id"])}`);
        return { resolved: true };
      },
      "messages.send": () => {
        calls.push("send");
        return { sent: true };
      },
    },
    {
      authorize: controlAuthorizer({
        ...(gatewayPid ? { gatewayPid } : {}),
        onRefused: (method) => refused.push(method),
      }),
    },
  );
  return { path, calls, refused, server };
}

describe("unixPeerPid", () => {
  it.each(["perl", "python3", "ss"] as const)("names the connecting process through %s", async (way) => {
    const path = join(dir, `p-${way}.sock`);
    const seen: Array<number | undefined> = [];
    const server = createServer((socket: Socket) => {
      void unixPeerPid(socket, [way]).then((pid) => {
        seen.push(pid);
        socket.end("x\n");
      });
    });
    await new Promise<void>((r) => server.listen(path, r));
    const client = await run("python3", [
      "-c",
      "import socket,sys;s=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1]);s.recv(4)",
      path,
    ]);
    server.close();
    expect(seen).toEqual([client.pid]);
  });

  it("reads parents and ancestry from /proc", () => {
    expect(parentPid(process.pid)).toBe(process.ppid);
    expect(descendsFrom(process.pid, process.ppid)).toBe(true);
    expect(descendsFrom(process.ppid, process.pid)).toBe(false);
    expect(descendsFrom(2 ** 22 + 7, process.pid)).toBeUndefined();
  });
});

describe("the control socket's authorize", () => {
  it("lets the gateway's own in-process client answer, and anyone read", async () => {
    const { path, calls, server } = await serve();
    const client = await connectJsonRpc(path);
    await expect(client.call("approvals.respond", { id: "a1", decision: "once" })).resolves.toEqual({
      resolved: true,
    });
    client.close();
    await server.close();
    expect(calls).toEqual(["respond a1"]);
    expect([...READ_ONLY_METHODS]).toEqual([
      "status",
      "channels.list",
      "approvals.list",
      "events.poll",
      "events.wait",
    ]);
  });

  it("refuses a process under the gateway: approvals.respond, messages.send, and methods added later", async () => {
    const { path, calls, refused, server } = await serve();
    // This test process plays the gateway; python3 is its child, as the terminal tool's would be.
    const child = await run("python3", ["-c", CLIENT, path, "status", "approvals.respond", "messages.send"]);
    const answers = child.out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { result?: unknown; error?: { message: string } });
    expect(answers[0]?.result).toEqual({ ok: true });
    expect(answers[1]?.error?.message).toMatch(
      new RegExp(`^approvals.respond refused: the caller \\(pid ${child.pid}\\) runs under this gateway`),
    );
    expect(answers[2]?.error?.message).toMatch(/^messages.send refused/);
    expect(calls).toEqual([]);
    expect(refused).toEqual(["approvals.respond", "messages.send"]);
    await server.close();
  });

  it("refuses a grandchild started through a shell, and lets a process outside the gateway answer", async () => {
    // A shell plays the gateway: the python it starts descends from it; this test's own python does not.
    const shell = spawn("sh", ["-c", 'read p; python3 -c "$0" "$p" approvals.respond', CLIENT], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const { path, calls, server } = await serve(shell.pid);
    // Two calls on one connection: the second is read once the kernel has been asked about the first.
    const outside = await run("python3", ["-c", CLIENT, path, "approvals.respond", "status"]);
    expect(
      outside.out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).result),
    ).toEqual([{ resolved: true }, { ok: true }]);
    expect(calls).toEqual(["respond a1"]);

    let out = "";
    shell.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const closed = new Promise((r) => shell.on("close", r));
    shell.stdin.end(`${path}\n`);
    await closed;
    expect(JSON.parse(out).error.message).toMatch(
      /^approvals.respond refused: the caller \(pid \d+\) runs under/,
    );
    expect(calls).toEqual(["respond a1"]);
    await server.close();
  });

  it("refuses an orphan left behind by a tool shell (nohup … &), by the session it keeps", async () => {
    const { path, calls, server } = await serve();
    const out = join(dir, "orphan.out");
    // Started as the gateway starts its tools (a session of its own); the python is orphaned at once.
    const shell = spawn(
      "sh",
      ["-c", '(python3 -c "$0" "$1" approvals.respond > "$2" &); sleep 5', CLIENT, path, out],
      {
        detached: true,
        stdio: "ignore",
      },
    );
    const answer = await new Promise<string>((resolve, reject) => {
      const started = Date.now();
      const timer = setInterval(() => {
        const text = existsSync(out) ? readFileSync(out, "utf8") : "";
        if (text.includes("\n") || Date.now() - started > 15_000) {
          clearInterval(timer);
          if (text) resolve(text);
          else reject(new Error("the orphan wrote nothing"));
        }
      }, 100);
    });
    shell.kill();
    const message = JSON.parse(answer).error.message as string;
    expect(message).toMatch(
      /^approvals.respond refused: the caller \(pid \d+\) was started by one of this gateway's tool/,
    );
    expect(message).toContain(`leader, pid ${shell.pid}, runs under the gateway`);
    expect(calls).toEqual([]);
    await server.close();
  });

  it("refuses when the peer cannot be identified or has gone", async () => {
    const seen: string[] = [];
    const cases: Array<[() => Promise<number | undefined>, () => boolean | undefined]> = [
      [async () => undefined, () => false],
      [async () => 4242, () => undefined],
    ];
    for (const [peerPid, descends] of cases) {
      const authorize = controlAuthorizer({ peerPid, descends, onRefused: (_m, why) => seen.push(why) });
      await expect(authorize("approvals.respond", {} as Socket)).rejects.toThrow(/approvals.respond refused/);
      await expect(authorize("status", {} as Socket)).resolves.toBeUndefined();
    }
    expect(seen[0]).toMatch(/could not tell which process is calling/);
    expect(seen[1]).toMatch(/pid 4242\) exited or cannot be inspected/);
  });
});
