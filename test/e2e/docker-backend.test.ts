/**
 * `terminal.backend: docker` through the built CLI against the scripted model: the file tools and
 * the terminal act inside the container (the test image's distro, its hostname, its root user),
 * nothing lands in the host's cwd, and a run killed with kill -9 leaves a container that the next
 * start removes. Skipped only where docker.io is not installed.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LABEL } from "../../src/environments/docker/environment.js";
import { fakeProviderConfig, runHermes, spawnHermes, tempHome } from "../support/cli.js";
import { dockerReady, TEST_DISTRO, TEST_IMAGE } from "../support/docker.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { waitFor } from "../unit/tools/terminal/helpers.js";

const skip = await dockerReady();
const llm = useFakeLlm();
const config = (url: string) =>
  fakeProviderConfig(
    url,
    `terminal:\n  backend: docker\n  docker_image: ${TEST_IMAGE}\n  container_persistent: false\n  docker_persist_across_processes: false\n`,
  );

type ChatBody = { messages: Array<{ role: string; content: string | null }> };
const toolResults = (request: number): string[] =>
  (llm.chatRequests[request]!.body as ChatBody).messages
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));

const containersOf = (home: string): string[] =>
  spawnSync("docker", ["ps", "-aq", "--filter", `label=${LABEL}.home=${home}`])
    .stdout.toString()
    .split("\n")
    .filter(Boolean);

describe.skipIf(skip !== undefined)("terminal.backend: docker end to end", () => {
  it("writes, reads, patches and runs inside the container", { timeout: 180_000 }, async () => {
    const { home, cwd } = tempHome(config(llm.url));
    llm.enqueue(
      reply().toolCall("write_file", { path: "notes/hello.txt", content: "hello from the container\n" }),
      reply().toolCall("read_file", { path: "notes/hello.txt" }),
      reply().toolCall("patch", { path: "notes/hello.txt", old_string: "hello", new_string: "patched" }),
      reply().toolCall("terminal", {
        command: "whoami; hostname; cat /etc/os-release; cat notes/hello.txt; pwd",
      }),
      reply().text("done"),
    );
    const first = llm.chatRequests.length;
    const result = await runHermes(["-z", "work in the container"], { home, cwd });
    expect(result.stdout).toBe("done\n");
    // The system prompt names the container, not the host.
    const system = String(
      (llm.chatRequests[first]?.body as ChatBody | undefined)?.messages[0]?.content ?? "",
    );
    expect(system).toMatch(/terminal backend docker: .*docker container/);
    expect(result.code).toBe(0);
    expect(toolResults(2)[1]).toContain("hello from the container");
    const shell = toolResults(4)[3] ?? "";
    expect(shell).toContain("root\n");
    expect(shell).toContain(TEST_DISTRO);
    expect(shell).toContain("patched from the container");
    expect(shell).toContain("/root");
    expect(shell).not.toContain(hostname());
    // The container's hostname is its short id; nothing was written on the host.
    expect(shell).toMatch(/\n[0-9a-f]{12}\n/);
    expect(existsSync(join(cwd, "notes"))).toBe(false);
    // A normal exit removes the container.
    expect(containersOf(home)).toEqual([]);
  });

  it("a run killed with kill -9 leaves its container; the next start removes it", {
    timeout: 180_000,
  }, async () => {
    const { home, cwd } = tempHome(config(llm.url));
    llm.enqueue(reply().toolCall("terminal", { command: "sleep 300", timeout: 600 }));
    const run = spawnHermes(["-z", "sleep in the container"], { home, cwd });
    const pid = await waitFor(() => run.hermesPid(), 20_000, "the hermes pid");
    try {
      await waitFor(
        () => containersOf(home).length > 0 && llm.chatRequests.length > 0,
        60_000,
        "the container to start",
      );
    } finally {
      process.kill(pid, "SIGKILL");
      run.child.stdin.end();
    }
    await run.exited;
    const orphan = containersOf(home);
    expect(orphan.length).toBe(1);
    llm.enqueue(reply().toolCall("terminal", { command: "echo up" }), reply().text("fresh start"));
    const next = await runHermes(["-z", "start again"], { home, cwd });
    expect(next.code).toBe(0);
    expect(spawnSync("docker", ["inspect", orphan[0] as string]).status).not.toBe(0);
  });
});
