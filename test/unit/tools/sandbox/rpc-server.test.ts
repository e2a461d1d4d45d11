import { mkdtempSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  parseRequest,
  type RpcServer,
  type RpcServerOptions,
  refusal,
  startRpcServer,
} from "../../../../src/tools/sandbox/rpc-server.js";
import type { ToolOutcome } from "../../../../src/tools/types.js";
import { waitFor } from "../terminal/helpers.js";

describe("refusal", () => {
  const allowed = ["read_file", "terminal"];
  it.each([
    [{ tool: "read_file", args: {} }, undefined],
    [{ tool: "terminal", args: { command: "ls" } }, undefined],
    [{ tool: "terminal", args: { command: "ls", background: false } }, undefined],
    [{ tool: "terminal", args: { command: "ls", background: true } }, /foreground only/],
    [{ tool: "terminal", args: { command: "ls", background: "true" } }, /foreground only/],
    [{ tool: "memory", args: {} }, /"memory" cannot be called.*: read_file, terminal\./],
  ])("%j → %s", (request, expected) => {
    const result = refusal({ id: 1, ...request }, allowed);
    if (expected === undefined) expect(result).toBeUndefined();
    else expect(result).toMatch(expected);
  });

  it("says when nothing is callable", () => {
    expect(refusal({ id: 1, tool: "read_file", args: {} }, [])).toContain("No tools are callable");
  });
});

describe("parseRequest", () => {
  it.each([
    [
      '{"id": 1, "tool": "read_file", "args": {"path": "a"}}',
      { id: 1, tool: "read_file", args: { path: "a" } },
    ],
    ['{"id": 2, "tool": "read_file"}', { id: 2, tool: "read_file", args: {} }],
    ["not json", { id: null, error: expect.stringContaining("not valid JSON") }],
    ["[1]", { id: null, error: expect.stringContaining("expected a JSON object") }],
    ['{"id": 3}', { id: 3, error: expect.stringContaining('"tool"') }],
    ['{"id": 4, "tool": "x", "args": [1]}', { id: 4, error: expect.stringContaining('"args" of x') }],
  ])("%s", (line, expected) => {
    expect(parseRequest(line)).toEqual(expected);
  });
});

/** A line-oriented client: send requests, collect answers by id. */
class Client {
  private buffered = "";
  readonly replies: Array<Record<string, unknown>> = [];
  private waiters: Array<() => void> = [];
  constructor(private readonly socket: Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      this.buffered += chunk;
      for (let nl = this.buffered.indexOf("\n"); nl >= 0; nl = this.buffered.indexOf("\n")) {
        this.replies.push(JSON.parse(this.buffered.slice(0, nl)) as Record<string, unknown>);
        this.buffered = this.buffered.slice(nl + 1);
      }
      for (const wake of this.waiters.splice(0)) wake();
    });
  }
  static async connect(path: string): Promise<Client> {
    const socket = createConnection(path);
    await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
    return new Client(socket);
  }
  send(request: unknown): void {
    this.socket.write(`${typeof request === "string" ? request : JSON.stringify(request)}\n`);
  }
  async reply(id: unknown): Promise<Record<string, unknown>> {
    for (;;) {
      const found = this.replies.find((r) => r.id === id);
      if (found) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
  close(): void {
    this.socket.destroy();
  }
}

const servers: RpcServer[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(options: Partial<RpcServerOptions>): Promise<{ path: string; server: RpcServer }> {
  const path = join(mkdtempSync(join(tmpdir(), "hermes-rpc-")), "rpc.sock");
  const server = await startRpcServer({
    socketPath: path,
    allowed: ["read_file"],
    maxToolCalls: 50,
    dispatch: async () => ({ ok: true, content: "ok" }),
    ...options,
  });
  servers.push(server);
  return { path, server };
}

async function connect(path: string): Promise<Client> {
  const client = await Client.connect(path);
  clients.push(client);
  return client;
}

describe("startRpcServer", () => {
  it("answers requests on one connection as they finish, matched by id", async () => {
    const gates = new Map<string, (o: ToolOutcome) => void>();
    const { path } = await serve({
      dispatch: (_tool, args) => new Promise((resolve) => gates.set(String(args.path), resolve)),
    });
    const client = await connect(path);
    client.send({ id: 1, tool: "read_file", args: { path: "slow" } });
    client.send({ id: 2, tool: "read_file", args: { path: "fast" } });
    await waitFor(() => gates.size === 2, 10_000, "both requests dispatched");
    gates.get("fast")?.({ ok: true, content: "fast result" });
    expect(await client.reply(2)).toEqual({ id: 2, ok: true, result: "fast result" });
    expect(client.replies).toHaveLength(1);
    gates.get("slow")?.({ ok: false, content: '{"error":"nope"}', error: "nope" });
    expect(await client.reply(1)).toEqual({ id: 1, ok: false, result: '{"error":"nope"}' });
  });

  it("serves several connections, counts dispatched calls and refuses past the limit", async () => {
    const seen: string[] = [];
    const { path, server } = await serve({
      maxToolCalls: 3,
      dispatch: async (_tool, args) => ({ ok: true, content: `read ${String(args.path)}` }),
      onCall: (tool, n) => seen.push(`${tool}#${n}`),
    });
    const [a, b] = [await connect(path), await connect(path)];
    a.send({ id: 1, tool: "read_file", args: { path: "a1" } });
    b.send({ id: 1, tool: "read_file", args: { path: "b1" } });
    expect(await a.reply(1)).toMatchObject({ ok: true, result: "read a1" });
    expect(await b.reply(1)).toMatchObject({ ok: true, result: "read b1" });
    a.send({ id: 2, tool: "memory", args: {} });
    expect((await a.reply(2)).error).toContain('"memory" cannot be called');
    a.send({ id: 3, tool: "read_file", args: { path: "a3" } });
    expect(await a.reply(3)).toMatchObject({ ok: true });
    b.send({ id: 2, tool: "read_file", args: { path: "b2" } });
    expect((await b.reply(2)).error).toContain("Tool-call limit reached");
    expect(server.callsMade).toBe(3);
    expect(seen).toEqual(["read_file#1", "read_file#2", "read_file#3"]);
  });

  it("answers bad lines with an error and keeps the connection", async () => {
    const { path } = await serve({});
    const client = await connect(path);
    client.send("{oops");
    expect((await client.reply(null)).error).toContain("not valid JSON");
    client.send({ id: 7, tool: "read_file", args: {} });
    expect(await client.reply(7)).toMatchObject({ ok: true });
  });

  it("turns a throwing dispatch into an error answer", async () => {
    const { path } = await serve({
      dispatch: async () => {
        throw new Error("registry exploded");
      },
    });
    const client = await connect(path);
    client.send({ id: 1, tool: "read_file", args: {} });
    expect(await client.reply(1)).toEqual({ id: 1, error: "read_file failed: registry exploded" });
  });
});
