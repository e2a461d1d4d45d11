import { mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  connectJsonRpc,
  JSON_RPC_ERRORS,
  JsonRpcError,
  type JsonRpcServer,
  MAX_LINE_BYTES,
  serveJsonRpc,
} from "../../../src/util/json-rpc-socket.js";

const servers: JsonRpcServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const dir = () => mkdtempSync(join(tmpdir(), "hermes-rpc-"));

async function serve(path: string, handlers: Parameters<typeof serveJsonRpc>[1]) {
  const server = await serveJsonRpc(path, handlers);
  servers.push(server);
  return server;
}

/** Sends raw lines and collects the answer lines until `count` arrived. */
function raw(path: string, payload: string, count: number): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let buffer = "";
    const lines: unknown[] = [];
    socket.on("data", (d) => {
      buffer += d.toString();
      let cut = buffer.indexOf("\n");
      while (cut >= 0) {
        lines.push(JSON.parse(buffer.slice(0, cut)));
        buffer = buffer.slice(cut + 1);
        cut = buffer.indexOf("\n");
      }
      if (lines.length >= count) {
        socket.destroy();
        resolve(lines);
      }
    });
    socket.on("close", () => resolve(lines));
    socket.on("error", reject);
    socket.write(payload);
  });
}

describe("JSON-RPC over a Unix socket", () => {
  it("creates the socket 0600 and removes it on close", async () => {
    const d = dir();
    const path = join(d, "gateway.sock");
    const server = await serve(path, { ping: () => "pong" });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(path).isSocket()).toBe(true);
    expect(readdirSync(d)).toEqual(["gateway.sock"]);
    await server.close();
    expect(readdirSync(d)).toEqual([]);
  });

  it("replaces a stale socket file left by a crashed process", async () => {
    const path = join(dir(), "gateway.sock");
    writeFileSync(path, "stale");
    await serve(path, { ping: () => "pong" });
    const client = await connectJsonRpc(path);
    expect(await client.call("ping")).toBe("pong");
    client.close();
  });

  it("answers concurrent calls out of order: a slow call never holds up a quick one", async () => {
    const path = join(dir(), "s.sock");
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    await serve(path, {
      slow: async () => {
        await gate;
        return "slow";
      },
      quick: (p) => ({ echo: p["x"] }),
    });
    const client = await connectJsonRpc(path);
    const slow = client.call("slow");
    expect(await client.call("quick", { x: 7 })).toEqual({ echo: 7 });
    release();
    expect(await slow).toBe("slow");
    client.close();
  });

  it("turns thrown errors into JSON-RPC errors the client raises", async () => {
    const path = join(dir(), "s.sock");
    await serve(path, {
      fail: () => {
        throw new Error("the telegram platform is not connected");
      },
      bad: () => {
        throw new JsonRpcError(JSON_RPC_ERRORS.invalidParams, "id is required");
      },
    });
    const client = await connectJsonRpc(path);
    await expect(client.call("fail")).rejects.toMatchObject({
      code: JSON_RPC_ERRORS.application,
      message: "the telegram platform is not connected",
    });
    await expect(client.call("bad")).rejects.toMatchObject({ code: JSON_RPC_ERRORS.invalidParams });
    await expect(client.call("nope")).rejects.toMatchObject({ code: JSON_RPC_ERRORS.methodNotFound });
    client.close();
  });

  it("rejects malformed frames without dying, and ignores notifications", async () => {
    const path = join(dir(), "s.sock");
    let notified = 0;
    await serve(path, {
      ping: () => "pong",
      note: () => {
        notified++;
      },
    });
    const answers = (await raw(
      path,
      [
        "not json",
        "[1,2]",
        JSON.stringify({ jsonrpc: "1.0", id: 1, method: "ping" }),
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping", params: [1] }),
        JSON.stringify({ jsonrpc: "2.0", method: "note" }),
        JSON.stringify({ jsonrpc: "2.0", id: 3, method: "toString" }),
        JSON.stringify({ jsonrpc: "2.0", id: 4, method: "ping" }),
        "",
      ].join("\n"),
      6,
    )) as Array<{ id: unknown; result?: unknown; error?: { code: number } }>;
    expect(answers.map((a) => a.error?.code ?? a.result)).toEqual([
      JSON_RPC_ERRORS.parse,
      JSON_RPC_ERRORS.invalidRequest,
      JSON_RPC_ERRORS.invalidRequest,
      JSON_RPC_ERRORS.invalidParams,
      // Inherited object properties are not methods.
      JSON_RPC_ERRORS.methodNotFound,
      "pong",
    ]);
    expect(notified).toBe(1);
  });

  it("closes a connection that sends a line longer than the limit", async () => {
    const path = join(dir(), "s.sock");
    await serve(path, { ping: () => "pong" });
    const answers = (await raw(path, "x".repeat(MAX_LINE_BYTES + 10), 1)) as Array<{
      error?: { message: string };
    }>;
    expect(answers[0]?.error?.message).toBe("Line too long.");
    // The server still serves others.
    const client = await connectJsonRpc(path);
    expect(await client.call("ping")).toBe("pong");
    client.close();
  });

  it("aborts a running handler's signal when its caller disconnects", async () => {
    const path = join(dir(), "s.sock");
    let aborted: () => void = () => undefined;
    const wasAborted = new Promise<void>((r) => (aborted = r));
    let started: () => void = () => undefined;
    const hasStarted = new Promise<void>((r) => (started = r));
    await serve(path, {
      wait: (_p, signal) =>
        new Promise((resolve) => {
          started();
          signal.addEventListener("abort", () => {
            aborted();
            resolve(null);
          });
        }),
    });
    const client = await connectJsonRpc(path);
    const call = client.call("wait").catch((e: Error) => e);
    await hasStarted;
    client.close();
    await wasAborted;
    expect(await call).toBeInstanceOf(Error);
  });

  it("refuses a path too long for a Unix socket with the reason", async () => {
    const path = join(dir(), "a".repeat(120), "gateway.sock");
    await expect(serveJsonRpc(path, {})).rejects.toThrow(/Unix sockets allow 107/);
  });

  it("fails to connect with ENOENT where nothing listens, and times out a silent call", async () => {
    await expect(connectJsonRpc(join(dir(), "none.sock"))).rejects.toMatchObject({ code: "ENOENT" });
    const path = join(dir(), "s.sock");
    await serve(path, { never: () => new Promise(() => undefined) });
    const client = await connectJsonRpc(path);
    await expect(client.call("never", {}, { timeoutMs: 50 })).rejects.toThrow(/did not answer within 50 ms/);
    client.close();
  });
});

describe("who can connect", () => {
  const root = process.getuid?.() === 0;
  it.runIf(root)(
    "another user is refused by the socket's mode even in a world-readable directory",
    async () => {
      const { chmodSync } = await import("node:fs");
      const { spawnSync } = await import("node:child_process");
      const d = dir();
      chmodSync(d, 0o755);
      const path = join(d, "gateway.sock");
      await serve(path, { ping: () => "pong" });
      const probe = `require("node:net").createConnection(${JSON.stringify(path)})
      .on("connect", () => { console.log("CONNECTED"); process.exit(0); })
      .on("error", (e) => { console.log(e.code); process.exit(0); });`;
      const other = spawnSync(process.execPath, ["-e", probe], { uid: 65534, gid: 65534, encoding: "utf8" });
      expect(other.stdout.trim()).toBe("EACCES");
      const owner = spawnSync(process.execPath, ["-e", probe], { encoding: "utf8" });
      expect(owner.stdout.trim()).toBe("CONNECTED");
    },
  );
});
