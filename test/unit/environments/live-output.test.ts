/**
 * `RunOptions.onOutput`: a shell shows a command's output while it runs, in order, never the
 * protocol's sentinel, and the result is the same as without a listener. Local shell and the
 * generic remote shell (over a local bash channel).
 */
import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLocalEnvironment } from "../../../src/environments/local/index.js";
import { createRemoteShell } from "../../../src/environments/remote-shell.js";
import type { EnvShell } from "../../../src/environments/types.js";
import { bashChannel } from "../../support/bash-channel.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

function scratch(): string {
  return realpathSync(mkdtempSync(join(tmpdir(), "hermes-live-output-")));
}

const shells: Array<[string, () => EnvShell]> = [
  [
    "local",
    () => {
      const cwd = scratch();
      const env = createLocalEnvironment({
        home: join(cwd, ".hermes"),
        cwd,
        processEnv: process.env,
        childEnv: { PATH: process.env.PATH, HOME: process.env.HOME },
        config: { terminal: { daemon_term_grace_seconds: 1 } },
      });
      cleanups.push(() => env.stop());
      return env.shell("live");
    },
  ],
  [
    "remote",
    () => {
      const s = createRemoteShell(bashChannel({ PATH: process.env.PATH, HOME: process.env.HOME }), {
        cwd: scratch(),
        killGraceMs: 300,
      });
      cleanups.push(() => s.dispose());
      return s;
    },
  ],
];

describe.each(shells)("%s shell: live output", (_name, make) => {
  it("arrives while the command still runs, stdout and stderr, without the sentinel", async () => {
    const shell = make();
    const controller = new AbortController();
    let live = "";
    let seen: () => void = () => undefined;
    const both = new Promise<void>((resolve) => {
      seen = resolve;
    });
    const running = shell.run("echo one; echo two >&2; sleep 30; echo never", {
      timeoutMs: 60_000,
      signal: controller.signal,
      onOutput: (chunk) => {
        live += chunk;
        if (live.includes("one\n") && live.includes("two\n")) seen();
      },
    });
    await both; // the command is still sleeping: this came live
    controller.abort();
    const result = await running;
    expect(result.interrupted).toBe(true);
    expect(live).not.toContain("never");
    expect(live).not.toMatch(/__HERMES/);
  });

  it("adds up to the result's output, for a long output and a last line with no newline", async () => {
    const shell = make();
    let live = "";
    const result = await shell.run("seq 1 30000; printf 'tail without newline'", {
      timeoutMs: 30_000,
      onOutput: (chunk) => {
        live += chunk;
      },
    });
    expect(result.output.endsWith("30000\ntail without newline")).toBe(true);
    expect(live.replace(/\n$/, "")).toBe(result.output);
    expect(live).not.toMatch(/__HERMES/);
  });

  it("a listener that throws changes nothing about the command", async () => {
    const shell = make();
    const result = await shell.run("echo a; echo b >&2; echo c", {
      timeoutMs: 10_000,
      onOutput: () => {
        throw new Error("display broke");
      },
    });
    expect(result.exitCode).toBe(0);
    expect(result.output).toBe("a\nb\nc\n");
    expect((await shell.run("echo next", { timeoutMs: 10_000 })).output).toBe("next\n");
  });
});
