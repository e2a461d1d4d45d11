/**
 * Plugins through the built CLI and the fake LLM: installed from a folder and from an npm
 * tarball, ignored until enabled, each adding a tool the model calls and a `pre_tool_call` hook
 * that blocks a terminal command; a throwing plugin is disabled with one message and the turn
 * still completes; `--safe-mode` loads none.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { guardPluginSource, writePlugin } from "../support/plugin-fixtures.js";

const llm = useFakeLlm();

type ChatBody = {
  messages: Array<{ role: string; content: string | null }>;
  tools?: Array<{ function: { name: string } }>;
};
const body = (i: number) => llm.chatRequests[i]!.body as ChatBody;
const offered = (i: number) => (body(i).tools ?? []).map((t) => t.function.name);
const toolResults = (i: number) =>
  body(i)
    .messages.filter((m) => m.role === "tool")
    .map((m) => String(m.content));

function fixtures(): string {
  return mkdtempSync(join(tmpdir(), "hermes-plugin-src-"));
}

describe("plugins", () => {
  it("a folder plugin is ignored until enabled, then adds a tool and blocks a terminal command", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const src = writePlugin(fixtures(), "guard", guardPluginSource("guard_echo", "forbidden-word", "GUARD"));
    const installed = await runHermes(["plugins", "install", src], { home, cwd });
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain("Installed guard 1.2.3");
    expect(installed.stderr).toContain("hermes plugins enable guard");

    // Installed, not enabled: nothing of it loads.
    const start = llm.chatRequests.length;
    llm.enqueue(reply().text("plain answer"));
    const before = await runHermes(["-z", "hello"], { home, cwd });
    expect(before.code).toBe(0);
    expect(offered(start)).not.toContain("guard_echo");
    const listed = await runHermes(["plugins", "list"], { home, cwd });
    expect(listed.stdout).toMatch(/guard\s+1\.2\.3\s+not enabled/);

    expect((await runHermes(["plugins", "enable", "guard"], { home, cwd })).code).toBe(0);
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toMatch(/enabled:\s*\[?\s*-?\s*"?guard/);

    const at = llm.chatRequests.length;
    llm.enqueue(
      reply().toolCall("guard_echo", { text: "hi" }),
      reply().toolCall("terminal", { command: "echo forbidden-word > ran.txt" }),
      reply().text("done"),
    );
    const result = await runHermes(["-z", "use the plugin"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("done\n");
    expect(offered(at)).toContain("guard_echo");
    expect(toolResults(at + 1)[0]).toContain("GUARD:hi");
    const blocked = toolResults(at + 2)[1];
    expect(blocked).toContain("Blocked by plugin:guard");
    expect(blocked).toContain("no forbidden-word here");
    // The command never ran.
    expect(existsSync(join(cwd, "ran.txt"))).toBe(false);

    // --safe-mode: no plugin this run.
    const safeAt = llm.chatRequests.length;
    llm.enqueue(reply().text("safe"));
    expect((await runHermes(["--safe-mode", "-z", "hello"], { home, cwd })).code).toBe(0);
    expect(offered(safeAt)).not.toContain("guard_echo");
    const envAt = llm.chatRequests.length;
    llm.enqueue(reply().text("safe"));
    expect((await runHermes(["-z", "hello"], { home, cwd, env: { HERMES_SAFE_MODE: "1" } })).code).toBe(0);
    expect(offered(envAt)).not.toContain("guard_echo");

    // disable, then remove.
    expect((await runHermes(["plugins", "disable", "guard"], { home, cwd })).code).toBe(0);
    const offAt = llm.chatRequests.length;
    llm.enqueue(reply().text("off"));
    expect((await runHermes(["-z", "hello"], { home, cwd })).code).toBe(0);
    expect(offered(offAt)).not.toContain("guard_echo");
    expect((await runHermes(["plugins", "remove", "guard"], { home, cwd })).code).toBe(0);
    expect(existsSync(join(home, "plugins", "guard"))).toBe(false);
  });

  it("an npm tarball (hermes-plugin-*) installs, adds its tool and blocks a command", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const pkg = join(fixtures(), "pkg");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(
      join(pkg, "package.json"),
      JSON.stringify({ name: "hermes-plugin-tarred", version: "2.0.0", type: "module", main: "index.js" }),
    );
    writeFileSync(join(pkg, "index.js"), guardPluginSource("tar_echo", "tar-blocked", "TAR"));
    const packed = execFileSync("npm", ["pack", "--silent", "--pack-destination", pkg], {
      cwd: pkg,
      encoding: "utf8",
      env: { ...process.env, npm_config_cache: join(pkg, ".npm-cache") },
    }).trim();
    const tgz = join(pkg, packed.split("\n").pop()!);
    const installed = await runHermes(["plugins", "install", tgz, "--enable"], { home, cwd });
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toContain("Installed tarred 2.0.0");

    const at = llm.chatRequests.length;
    llm.enqueue(
      reply().toolCall("tar_echo", { text: "x" }),
      reply().toolCall("terminal", { command: "touch tar-blocked" }),
      reply().text("ok"),
    );
    const result = await runHermes(["-z", "go"], { home, cwd });
    expect(result.code).toBe(0);
    expect(toolResults(at + 1)[0]).toContain("TAR:x");
    expect(toolResults(at + 2)[1]).toContain("Blocked by plugin:tarred");
    expect(existsSync(join(cwd, "tar-blocked"))).toBe(false);
  });

  it("a plugin that throws is disabled with one message and the turn completes", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url, "plugins:\n  enabled: [broken, flaky]\n"));
    const plugins = join(home, "plugins");
    writePlugin(plugins, "broken", `export function register() { throw new Error("boom at load"); }`);
    writePlugin(
      plugins,
      "flaky",
      `let calls = 0;
export function register(ctx) {
  ctx.registerHook("pre_tool_call", () => { calls++; throw new Error("hook exploded " + calls); });
}`,
    );
    // Present and valid but not enabled: never loaded (its load would throw loudly).
    writePlugin(plugins, "sleeper", `export function register() { throw new Error("should not load"); }`);
    llm.enqueue(
      reply().toolCall("terminal", { command: "echo one" }),
      reply().toolCall("terminal", { command: "echo two" }),
      reply().text("finished"),
    );
    const result = await runHermes(["-z", "run two commands"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("finished\n");
    expect(result.stderr).toContain(
      'plugin "broken" was disabled for this run: loading it failed: boom at load',
    );
    expect(result.stderr).toContain(
      'plugin "flaky" was disabled for this run: its pre_tool_call hook failed: hook exploded 1',
    );
    // One message per plugin: the second call no longer reaches the disabled hook.
    expect(result.stderr).not.toContain("hook exploded 2");
    expect(result.stderr).not.toContain("should not load");
    expect(result.stderr).toContain("hermes plugins disable flaky");
  });
});
