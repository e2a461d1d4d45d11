/**
 * Start-up of the terminal environment through the built CLI: a wrong backend is a configuration
 * error (exit 2, with the fix), a backend whose runtime is missing is an error before the model is
 * asked (exit 1), never a quiet run on the host; the system prompt says where commands really run.
 */
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

type ChatBody = { messages: Array<{ role: string; content: string | null }> };

describe("terminal environment at start-up", () => {
  it("refuses an unknown backend with exit 2, the valid names and the fix, before any model call", async () => {
    const { home, cwd } = tempHome();
    const { writeFileSync } = await import("node:fs");
    writeFileSync(`${home}/config.yaml`, fakeProviderConfig(llm.url, "terminal:\n  backend: dokcer\n"));
    const before = llm.chatRequests.length;
    const result = await runHermes(["-z", "hello"], { home, cwd });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('Unknown terminal backend "dokcer"');
    expect(result.stderr).toContain("Fix:");
    expect(result.stderr).toMatch(/local, docker, podman, ssh, singularity, daytona, modal/);
    expect(llm.chatRequests.length).toBe(before);
  });

  it("the gateway refuses an unknown backend at start with exit 2 and the fix", async () => {
    const { home, cwd } = tempHome();
    const { writeFileSync } = await import("node:fs");
    writeFileSync(`${home}/config.yaml`, fakeProviderConfig(llm.url, "terminal:\n  backend: dokcer\n"));
    const result = await runHermes(["gateway", "run"], { home, cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Unknown terminal backend "dokcer"');
    expect(result.stderr).toContain("Fix:");
  });

  it("takes the backend from TERMINAL_ENV like upstream", async () => {
    const { home, cwd } = tempHome();
    const { writeFileSync } = await import("node:fs");
    writeFileSync(`${home}/config.yaml`, fakeProviderConfig(llm.url));
    const result = await runHermes(["-z", "hello"], { home, cwd, env: { TERMINAL_ENV: "nonsense" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Unknown terminal backend "nonsense"');
  });

  it("stops with a clear error when docker is configured but not available, never running on the host", async () => {
    const { home, cwd } = tempHome();
    const { existsSync, writeFileSync } = await import("node:fs");
    writeFileSync(`${home}/config.yaml`, fakeProviderConfig(llm.url, "terminal:\n  backend: docker\n"));
    const before = llm.chatRequests.length;
    // A PATH without docker: only the system's basic tools.
    const result = await runHermes(["-z", "touch a file"], { home, cwd, env: { PATH: "/usr/bin:/bin" } });
    expect(result.code).toBe(1);
    expect(result.stderr.toLowerCase()).toContain("docker");
    expect(result.stderr).toContain("Fix:");
    expect(llm.chatRequests.length).toBe(before);
    expect(existsSync(`${cwd}/ran-on-host`)).toBe(false);
  });

  it("states the real environment in the system prompt (local: user and host)", async () => {
    const { home, cwd } = tempHome();
    const { writeFileSync } = await import("node:fs");
    writeFileSync(`${home}/config.yaml`, fakeProviderConfig(llm.url));
    llm.enqueue(reply().text("ok"));
    const before = llm.chatRequests.length;
    const result = await runHermes(["-z", "hi"], { home, cwd });
    expect(result.code).toBe(0);
    const system = (llm.chatRequests[before]?.body as ChatBody | undefined)?.messages[0]?.content ?? "";
    expect(system).toMatch(/terminal backend local: the local machine \(.*host .+\), no isolation/);
  });
});
