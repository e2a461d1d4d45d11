/**
 * RL rollouts and the terminal backend: tasks are prepared and scored in a local directory, so a
 * non-local `terminal.backend` is refused, before any server is contacted, rather than scoring an
 * agent on files it never touched or quietly dropping the sandbox the operator chose.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { rlCommand } from "../../../src/cli/commands/rl.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { rlBackendProblem, runRollout } from "../../../src/rl/rollout.js";
import type { RlEnvironment } from "../../../src/rl/types.js";
import { sink } from "../../support/text-sink.js";

describe("RL rollouts and terminal.backend", () => {
  it("local (the default) is fine; docker and ssh are refused with the reason", () => {
    const config = defaultConfig();
    expect(rlBackendProblem(config)).toBeUndefined();
    for (const backend of ["docker", "ssh", "modal"]) {
      config.terminal.backend = backend;
      expect(rlBackendProblem(config)).toContain(`terminal.backend is "${backend}"`);
    }
  });

  it("runRollout refuses before preparing anything", async () => {
    const config = defaultConfig();
    config.terminal.backend = "docker";
    let prepared = false;
    const environment: RlEnvironment = {
      name: "t",
      description: "t",
      nextItem: async () => undefined,
      prepare: async () => {
        prepared = true;
      },
      score: async () => 1,
    };
    await expect(
      runRollout(
        environment,
        { id: "x", prompt: "p" },
        { home: "/nonexistent", config, env: {}, toolsets: [], store: null },
        new AbortController().signal,
      ),
    ).rejects.toThrow(/local terminal backend only/);
    expect(prepared).toBe(false);
  });

  it("hermes rl serve exits 2 with the reason, contacting no server", async () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-rl-backend-"));
    writeFileSync(
      join(home, "config.yaml"),
      "model:\n  provider: custom\n  base_url: http://127.0.0.1:9/v1\n  default: m\nterminal:\n  backend: ssh\n",
    );
    const tasks = join(home, "tasks.jsonl");
    writeFileSync(tasks, `${JSON.stringify({ prompt: "make a.txt", test: "test -f a.txt" })}\n`);
    const stdout = sink();
    const stderr = sink();
    const code = await rlCommand.run(
      ["serve", "terminal-tasks", "--api-url", "http://127.0.0.1:9", "--tasks", tasks],
      { env: { HERMES_HOME: home, HOME: home, NO_COLOR: "1" }, stdout, stderr },
    );
    expect(code).toBe(2);
    expect(stderr.text).toContain('terminal.backend is "ssh"');
    expect(stdout.text).toBe("");
  });
});
