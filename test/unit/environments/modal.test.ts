/**
 * The modal backend end to end over the `modal` 0.11 SDK, against the loopback gRPC fake built
 * from the SDK's own service definitions (test/support/fake-modal.ts: execs run here, in a temp
 * dir, so these tests prove the backend's calls, not Modal's isolation).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, doctor } from "../../../src/environments/modal/index.js";
import { type BackendContext, EnvironmentError } from "../../../src/environments/types.js";
import { describeEnvironmentContract } from "../../environments/contract.js";
import { ptyProbe } from "../../environments/pty-probe.js";
import { type FakeModal, startFakeModal } from "../../support/fake-modal.js";

let fake: FakeModal;
const saved = process.env["MODAL_SERVER_URL"];
const noConfig = mkdtempSync(join(tmpdir(), "hermes-modal-cfg-"));

beforeAll(async () => {
  fake = await startFakeModal();
  // The SDK reads MODAL_SERVER_URL from the process environment (hermes's own, as in real use).
  process.env["MODAL_SERVER_URL"] = fake.serverUrl;
});
afterAll(async () => {
  await fake?.close();
  if (saved === undefined) delete process.env["MODAL_SERVER_URL"];
  else process.env["MODAL_SERVER_URL"] = saved;
  rmSync(noConfig, { recursive: true, force: true });
});

function context(terminal: Record<string, unknown> = {}, env: Record<string, string> = {}): BackendContext {
  return {
    home: "/nonexistent-home",
    cwd: "/tmp",
    processEnv: {
      MODAL_TOKEN_ID: fake.tokenId,
      MODAL_TOKEN_SECRET: fake.tokenSecret,
      MODAL_SERVER_URL: fake.serverUrl,
      MODAL_CONFIG_PATH: join(noConfig, "absent.toml"),
      ...env,
    },
    childEnv: { PATH: process.env["PATH"] },
    config: { terminal: { backend: "modal", ...terminal } },
  };
}

describeEnvironmentContract(
  "modal (loopback gRPC fake)",
  async () => {
    const env = create(context());
    await env.start();
    return { env };
  },
  { timeoutMs: 60_000 },
);

describe("modal backend", () => {
  it("creates the sandbox from modal_image with the resources asked, terminates it at stop", async () => {
    const env = create(
      context({ modal_image: "python:3.12-slim", container_cpu: 2, container_memory: 2048 }),
    );
    expect(env.isolation).toBe("isolated");
    await env.start();
    const sandbox = [...fake.sandboxes.values()].find((s) => env.describe().includes(s.sandboxId));
    expect(sandbox?.image).toBe("python:3.12-slim");
    expect(JSON.stringify(sandbox?.definition)).toContain("2048");
    expect(env.describe()).toBe(`a Modal sandbox ${sandbox?.sandboxId} (image python:3.12-slim)`);
    expect(env.workdir).toBe(sandbox?.home);
    await env.stop();
    expect(sandbox?.terminated).toBe(true);
    expect(fake.calls).toContain("sandboxTerminateV2");
  });

  it("gives a process Modal's pty (the SDK's pty_info), sized as asked", async () => {
    const env = create(context());
    await env.start();
    const run = (pty: boolean): Promise<string> =>
      ptyProbe(env, env.workdir, pty ? { cols: 100, rows: 30 } : undefined);
    const withPty = await run(true);
    expect(withPty).toContain("has-tty");
    expect(withPty).toContain("30 100");
    expect(await run(false)).toContain("no-tty");
    await env.stop();
  });

  it("no credentials anywhere: a config error naming what is missing", async () => {
    const env = create(context({}, { MODAL_TOKEN_ID: "", MODAL_TOKEN_SECRET: "" }));
    const failure = await env.start().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EnvironmentError);
    expect(failure).toMatchObject({ reason: "config" });
    expect((failure as EnvironmentError).fix).toContain("MODAL_TOKEN_ID");
    const half = await create(context({}, { MODAL_TOKEN_SECRET: "" }))
      .start()
      .catch((error: unknown) => error);
    expect((half as Error).message).toContain("MODAL_TOKEN_SECRET is not set");
  });

  it("a profile file counts as credentials (the SDK reads it)", async () => {
    const file = join(noConfig, "modal.toml");
    writeFileSync(file, "[default]\ntoken_id = 'x'\ntoken_secret = 'y'\nactive = true\n");
    const checks = await doctor(
      context({}, { MODAL_TOKEN_ID: "", MODAL_TOKEN_SECRET: "", MODAL_CONFIG_PATH: file }),
    );
    expect(checks[0]).toMatchObject({ name: "modal: credentials", ok: true, detail: file });
  });

  it("rejected credentials: a config error with the fix", async () => {
    const failure = await create(context({}, { MODAL_TOKEN_SECRET: "wrong" }))
      .start()
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ reason: "config" });
    expect((failure as EnvironmentError).fix).toMatch(/modal token new/);
  });

  it("doctor: credentials, SDK, API", async () => {
    const checks = await doctor(context());
    expect(checks.map((c) => [c.name, c.ok])).toEqual([
      ["modal: credentials", true],
      ["modal: SDK", true],
      ["modal: API", true],
    ]);
  });
});
