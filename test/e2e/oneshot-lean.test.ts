/**
 * What a one-shot loads lazily still happens when it is needed: the scheduled curator run a
 * one-shot starts after its answer (the curator command's module is loaded only for a due run),
 * and tool lines in normal mode (the tool-line formatter is loaded only there). And what it must
 * not load: undici (Node's fetch), which the model SDKs' Headers/Response would pull in. The
 * browser tools' shared availability check (asked once per listing) still finds playwright-core
 * from the bundle and a Chromium on PATH.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { httpError, reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

/** Resolves once `check` holds, polling the file system (the detached run has no other signal). */
async function eventually(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the condition");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("one-shot start path", () => {
  it("starts the due scheduled curator run after the answer, which records its run", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(reply().text("the answer"));
    const result = await runHermes(["-z", "say it"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("the answer\n");
    const state = join(home, "skills", ".curator_state");
    await eventually(() => existsSync(state) && JSON.parse(readFileSync(state, "utf8")).last_run_at !== null);
  });

  it("shows tool lines on stderr in normal mode and none with -z", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(reply().toolCall("terminal", { command: "echo lean" }), reply().text("ran it"));
    const normal = await runHermes(["run the echo please"], { home, cwd });
    expect(normal.code).toBe(0);
    expect(normal.stderr).toMatch(/terminal.*echo lean/);
    llm.enqueue(reply().toolCall("terminal", { command: "echo lean" }), reply().text("ran it"));
    const oneshot = await runHermes(["-z", "run the echo please"], { home, cwd });
    expect(oneshot.code).toBe(0);
    expect(oneshot.stdout).toBe("ran it\n");
    expect(oneshot.stderr).not.toMatch(/echo lean/);
  });

  it("never loads undici for model calls, an error answer with Retry-After included", async () => {
    const { home, cwd } = tempHome(
      `model:\n  provider: custom\n  base_url: ${llm.url}\n  default: fake-model\nagent:\n  api_max_retries: 1\n`,
    );
    const probe = join(home, "probe.cjs");
    const loaded = join(home, "loaded.json");
    writeFileSync(
      probe,
      `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(loaded)}, JSON.stringify(process.moduleLoadList)));\n`,
    );
    llm.enqueue(
      httpError(429, undefined, { "retry-after": "0" }),
      reply().toolCall("terminal", { command: "echo lean" }),
      reply().text("ran it"),
    );
    const result = await runHermes(["-z", "run the echo please"], {
      home,
      cwd,
      env: { NODE_OPTIONS: `--require ${probe}` },
    });
    expect(result.stdout).toBe("ran it\n");
    expect(llm.chatRequests).toHaveLength(3);
    const modules = JSON.parse(readFileSync(loaded, "utf8")) as string[];
    expect(modules.some((m) => m.includes("http_client"))).toBe(true);
    expect(modules.filter((m) => m.includes("undici"))).toEqual([]);
  });

  it("offers the eleven browser tools only with a browser: a CDP endpoint or an executable Chromium on PATH", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const bin = join(home, "bin");
    mkdirSync(bin);
    const browserTools = async (env: Record<string, string>) => {
      const result = await runHermes(["--list-tools"], { home, cwd, env });
      expect(result.code).toBe(0);
      return result.stdout.split("\n").filter((line) => line.startsWith("browser_")).length;
    };
    const path = `${bin}:/usr/bin:/bin`;
    // Whatever this machine has installed, a PATH of our own decides.
    const base = { PATH: path, CHROME_PATH: "" };
    expect(await browserTools({ ...base, BROWSER_CDP_URL: "http://127.0.0.1:9" })).toBe(11);
    const chromium = join(bin, "chromium-browser");
    writeFileSync(chromium, "#!/bin/sh\nexit 0\n");
    chmodSync(chromium, 0o644);
    const usrBinChromium = existsSync("/usr/bin/chromium");
    // Not executable: not a browser.
    expect(await browserTools(base)).toBe(usrBinChromium ? 11 : 0);
    chmodSync(chromium, 0o755);
    expect(await browserTools(base)).toBe(11);
  });
});
