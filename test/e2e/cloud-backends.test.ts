/**
 * The daytona, modal and singularity backends through the built CLI, each against its stand-in:
 * the loopback fake of the Daytona API (test/support/fake-daytona.ts), the loopback gRPC fake of
 * Modal (test/support/fake-modal.ts) and a recording STUB `apptainer` on PATH
 * (test/support/apptainer-stub.sh; Apptainer is not packaged for Debian 12). Every stand-in runs
 * the commands on this machine in a directory of its own, so `whoami`/`hostname` name this host:
 * what proves where a command ran is the stand-in's directory (pwd, the file the model wrote) and
 * the calls the stand-in recorded, never a guess from the output.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeDaytona, startFakeDaytona } from "../support/fake-daytona.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { type FakeModal, startFakeModal } from "../support/fake-modal.js";

const llm = useFakeLlm();
let daytona: FakeDaytona;
let modal: FakeModal;
const roots: string[] = [];

beforeAll(async () => {
  [daytona, modal] = await Promise.all([startFakeDaytona(), startFakeModal()]);
});
afterAll(async () => {
  await Promise.all([daytona?.close(), modal?.close()]);
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

type ChatBody = { messages: Array<{ role: string; content: string | null }> };

/** The model proves where it is, writes a file there and reads it back. */
function scriptTheModel(): void {
  llm.enqueue(
    reply().toolCall("terminal", { command: "whoami; hostname; head -1 /etc/os-release; pwd" }),
    reply().toolCall("write_file", { path: "proof.txt", content: "written in the sandbox\n" }),
    reply().toolCall("read_file", { path: "proof.txt" }),
    reply().text("done"),
  );
}

function toolResults(): string[] {
  const last = llm.chatRequests.at(-1)?.body as ChatBody;
  return last.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
}

describe("cloud and HPC backends through the built CLI", () => {
  it("daytona: the terminal and file tools act in the sandbox (fake Daytona API)", async () => {
    const { home, cwd } = tempHome(
      fakeProviderConfig(
        llm.url,
        "terminal:\n  backend: daytona\n  container_persistent: false\n  daytona_image: debian:12\n",
      ),
    );
    scriptTheModel();
    const result = await runHermes(["-z", "where are you?"], {
      home,
      cwd,
      env: { DAYTONA_API_KEY: daytona.apiKey, DAYTONA_API_URL: daytona.apiUrl, DAYTONA_TARGET: "us" },
      timeoutMs: 60_000,
    });
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.stdout).toBe("done\n");
    const [terminal, , read] = toolResults();
    const created = daytona.requests.filter((r) => r === "POST /api/sandbox");
    expect(created).toHaveLength(1);
    // The sandbox was deleted at exit (not persistent); its directory was where the command ran.
    expect(daytona.sandboxes.size).toBe(0);
    expect(terminal).toMatch(/fake-daytona-[^/]+\/[0-9a-f-]{36}/);
    expect(read).toContain("written in the sandbox");
    expect(existsSync(join(cwd, "proof.txt"))).toBe(false);
    expect(daytona.requests).toEqual(
      expect.arrayContaining(["POST /process/session", "POST /files/bulk-upload"]),
    );
  }, 90_000);

  it("modal: the same through Modal's SDK (fake gRPC API)", async () => {
    const { home, cwd } = tempHome(
      fakeProviderConfig(llm.url, "terminal:\n  backend: modal\n  modal_image: debian:12\n"),
    );
    scriptTheModel();
    const result = await runHermes(["-z", "where are you?"], {
      home,
      cwd,
      env: {
        MODAL_TOKEN_ID: modal.tokenId,
        MODAL_TOKEN_SECRET: modal.tokenSecret,
        MODAL_SERVER_URL: modal.serverUrl,
        MODAL_CONFIG_PATH: join(home, "no-modal.toml"),
      },
      timeoutMs: 60_000,
    });
    expect(result.stdout).toBe("done\n");
    const sandbox = [...modal.sandboxes.values()][0];
    expect(sandbox?.image).toBe("debian:12");
    expect(sandbox?.terminated).toBe(true);
    const [terminal, , read] = toolResults();
    expect(terminal).toContain(sandbox?.home);
    expect(read).toContain("written in the sandbox");
    expect(existsSync(join(cwd, "proof.txt"))).toBe(false);
    expect(modal.calls).toEqual(
      expect.arrayContaining(["sandboxCreateV2", "taskExecStart", "sandboxTerminateV2"]),
    );
  }, 90_000);

  it("singularity: the same through a STUB apptainer that records its calls", async () => {
    const root = mkdtempSync(join(tmpdir(), "hermes-e2e-apptainer-"));
    roots.push(root);
    const bin = join(root, "bin");
    mkdirSync(bin);
    symlinkSync(resolve(import.meta.dirname, "../support/apptainer-stub.sh"), join(bin, "apptainer"));
    const sandboxDir = join(root, "sandbox");
    mkdirSync(sandboxDir);
    const log = join(root, "calls.log");
    writeFileSync(log, "");
    const { home, cwd } = tempHome(
      fakeProviderConfig(
        llm.url,
        `terminal:\n  backend: singularity\n  container_persistent: false\n  cwd: ${sandboxDir}\n  singularity_image: docker://debian:12\n`,
      ),
    );
    scriptTheModel();
    const result = await runHermes(["-z", "where are you?"], {
      home,
      cwd,
      env: {
        PATH: `${bin}:${process.env["PATH"] ?? "/usr/bin:/bin"}`,
        APPTAINER_STUB_LOG: log,
        APPTAINER_STUB_STATE: join(root, "instances"),
      },
      timeoutMs: 60_000,
    });
    expect(result.stdout).toBe("done\n");
    const calls = readFileSync(log, "utf8").split("\n").filter(Boolean);
    const name = /(hermes_[0-9a-f]{12})/.exec(calls.find((c) => c.startsWith("instance start")) ?? "")?.[1];
    expect(name).toBeDefined();
    expect(calls.some((c) => c.startsWith(`exec instance://${name} bash`))).toBe(true);
    expect(calls.at(-1)).toBe(`instance stop ${name} `);
    const [terminal, , read] = toolResults();
    expect(terminal).toContain(sandboxDir);
    expect(read).toContain("written in the sandbox");
    expect(readFileSync(join(sandboxDir, "proof.txt"), "utf8")).toBe("written in the sandbox\n");
    expect(existsSync(join(cwd, "proof.txt"))).toBe(false);
  }, 90_000);
});
