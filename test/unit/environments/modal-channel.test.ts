/**
 * The Modal channel over the real `modal` 0.11 SDK, against the loopback gRPC fake built from the
 * SDK's own service definitions (test/support/fake-modal.ts; the "sandbox" is a temp dir here).
 */

import type { ModalClient, Sandbox } from "modal";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createModalChannel } from "../../../src/environments/modal/channel.js";
import { type FakeModal, startFakeModal } from "../../support/fake-modal.js";

let fake: FakeModal;
let client: ModalClient;
let sandbox: Sandbox;
const saved = process.env["MODAL_SERVER_URL"];

beforeAll(async () => {
  fake = await startFakeModal();
  // The SDK reads its server URL from the process environment only.
  process.env["MODAL_SERVER_URL"] = fake.serverUrl;
  const { ModalClient } = await import("modal");
  client = new ModalClient({
    tokenId: fake.tokenId,
    tokenSecret: fake.tokenSecret,
    logLevel: "error" as never,
  });
  const app = await client.apps.fromName("hermes-agent", { createIfMissing: true });
  sandbox = await client.sandboxes.create(app, client.images.fromRegistry("debian:12"), {
    command: ["sleep", "infinity"],
    cpu: 2,
    memoryMiB: 1024,
  });
});

afterAll(async () => {
  await sandbox?.terminate().catch(() => undefined);
  client?.close();
  await fake?.close();
  if (saved === undefined) delete process.env["MODAL_SERVER_URL"];
  else process.env["MODAL_SERVER_URL"] = saved;
});

describe("modal SDK against the fake", () => {
  it("looked the app up, built the registry image and created the sandbox with its resources", () => {
    const created = [...fake.sandboxes.values()][0];
    expect(created?.image).toBe("debian:12");
    expect(fake.calls).toEqual(
      expect.arrayContaining(["appGetOrCreate", "imageGetOrCreate", "sandboxCreateV2"]),
    );
    expect(JSON.stringify(created?.definition)).toContain("1024");
  });

  it("wrong credentials are refused", async () => {
    const { ModalClient } = await import("modal");
    const bad = new ModalClient({ tokenId: "ak-wrong", tokenSecret: "nope", logLevel: "error" as never });
    await expect(bad.apps.fromName("hermes-agent", { createIfMissing: true })).rejects.toThrow(/token/i);
    bad.close();
  });
});

describe("exec", () => {
  it("stdout, stderr and exit code apart; cwd; stdin with EOF", async () => {
    const channel = createModalChannel(sandbox);
    const result = await channel.exec("pwd; cat; echo err >&2; exit 4", { cwd: "/tmp", stdin: "piped\n" });
    expect(result.stdout.toString()).toBe("/tmp\npiped\n");
    expect(result.stderr).toBe("err\n");
    expect(result.exitCode).toBe(4);
  });

  it("binary output survives", async () => {
    const channel = createModalChannel(sandbox);
    const result = await channel.exec("printf '\\000\\001\\377'");
    expect([...result.stdout]).toEqual([0, 1, 255]);
  });

  it("a timeout kills the command's process group", async () => {
    const channel = createModalChannel(sandbox, 500);
    const started = Date.now();
    // The fake runs commands on this host: a duration no other test uses names this command.
    const seconds = `30.${Math.floor(Math.random() * 1e6)}`;
    const result = await channel.exec(`sleep ${seconds} & sleep ${seconds}`, { timeoutMs: 500 });
    expect(result.exitCode).toBeNull();
    expect(Date.now() - started).toBeLessThan(8000);
    const left = await channel.exec(`pgrep -f '^slee[p] ${seconds}' || true`);
    expect(left.stdout.toString().trim()).toBe("");
  });

  it("an interrupt does the same", async () => {
    const channel = createModalChannel(sandbox, 500);
    const controller = new AbortController();
    const pending = channel.exec("sleep 31; echo never", { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    const result = await pending;
    expect(result.exitCode).toBeNull();
    expect(result.stdout.toString()).toBe("");
  });
});

describe("open: a streaming process as a ShellChannel process", () => {
  it("a persistent bash reading its stdin", async () => {
    const channel = createModalChannel(sandbox);
    const proc = channel.open(["bash", "--noprofile", "--norc"], { env: { GREETING: "hello modal" } });
    let out = "";
    const seen = (text: string): Promise<void> =>
      new Promise((resolve) => {
        const check = (): void => {
          if (out.includes(text)) resolve();
          else
            proc.stdout.once("data", (c: Buffer) => {
              out += c.toString();
              check();
            });
        };
        check();
      });
    proc.stdin.write('echo "$GREETING"\n');
    await seen("hello modal\n");
    proc.stdin.write("cd /tmp; X=5\n");
    proc.stdin.write('echo "$PWD/$X"\n');
    await seen("/tmp/5\n");
    proc.stdin.end(); // EOF: bash exits
    expect(await proc.exited).toBe(0);
  });
});
