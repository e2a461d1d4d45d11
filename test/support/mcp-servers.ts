/**
 * Real MCP servers for the MCP client tests: the npm reference servers (`mcp-server-everything`,
 * `mcp-server-filesystem`) and our own scriptable one (mcp-test-server.mjs), over stdio or HTTP on
 * a free loopback port.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { freePort } from "./free-port.js";

const root = resolve(import.meta.dirname, "../..");
export const EVERYTHING_BIN = resolve(root, "node_modules/.bin/mcp-server-everything");
export const FILESYSTEM_BIN = resolve(root, "node_modules/.bin/mcp-server-filesystem");
export const TEST_SERVER = resolve(import.meta.dirname, "mcp-test-server.mjs");

/** An `mcp_servers` entry running mcp-test-server.mjs with `env` and any other settings. */
export function testServerEntry(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [TEST_SERVER], ...extra };
}

export interface HttpEverything {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  close(): Promise<void>;
}

/**
 * Starts `mcp-server-everything` in `streamableHttp` (endpoint `/mcp`) or `sse` (endpoint `/sse`)
 * mode and resolves once it says it is listening.
 */
export async function startEverythingHttp(mode: "streamableHttp" | "sse"): Promise<HttpEverything> {
  const port = await freePort();
  const child = spawn(EVERYTHING_BIN, [mode], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  await new Promise<void>((resolveReady, reject) => {
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening on port|running on port/i.test(output)) resolveReady();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`mcp-server-everything ${mode} exited (${code}): ${output}`)),
    );
  });
  return { origin: `http://127.0.0.1:${port}`, close: () => stop(child) };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolveStop) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolveStop();
    child.once("exit", () => resolveStop());
    child.kill("SIGTERM");
  });
}
