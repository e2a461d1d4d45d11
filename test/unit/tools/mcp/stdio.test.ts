import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type McpManager, type StartMcpOptions, startMcpServers } from "../../../../src/tools/mcp/manager.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import { EVERYTHING_BIN, FILESYSTEM_BIN, testServerEntry } from "../../../support/mcp-servers.js";
import { makeToolContext } from "../../../support/tool-context.js";

const managers: McpManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.close()));
});

interface Started {
  manager: McpManager;
  registry: ToolRegistry;
  warnings: string[];
  /** Resolves when `onToolsChanged` reports a tool list for `server` that satisfies `test`. */
  toolsWhere(server: string, test: (tools: readonly string[]) => boolean): Promise<readonly string[]>;
}

function start(config: unknown, extra: Partial<StartMcpOptions> = {}): Started {
  const registry = new ToolRegistry();
  const warnings: string[] = [];
  const waiters: Array<{
    server: string;
    test: (t: readonly string[]) => boolean;
    done: (t: readonly string[]) => void;
  }> = [];
  const manager = startMcpServers({
    config,
    registry,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    onWarning: (message) => warnings.push(message),
    onToolsChanged: (server, tools) => {
      for (const waiter of [...waiters]) {
        if (waiter.server === server && waiter.test(tools)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.done(tools);
        }
      }
    },
    ...extra,
  });
  managers.push(manager);
  return {
    manager,
    registry,
    warnings,
    toolsWhere: (server, test) => new Promise((done) => waiters.push({ server, test, done })),
  };
}

describe("MCP over stdio with mcp-server-everything", () => {
  it("discovers its tools, calls them, and wraps its resources and prompts", async () => {
    const { manager, registry, warnings } = start({
      everything: { command: EVERYTHING_BIN, args: ["stdio"] },
    });
    await manager.ready;
    expect(warnings).toEqual([]);
    const [status] = manager.status();
    expect(status).toMatchObject({ name: "everything", state: "connected", transport: "stdio" });
    expect(status?.tools).toEqual(
      expect.arrayContaining([
        "mcp_everything_echo",
        "mcp_everything_get_sum",
        "mcp_everything_list_resources",
        "mcp_everything_read_resource",
        "mcp_everything_list_prompts",
        "mcp_everything_get_prompt",
      ]),
    );
    const echo = registry.get("mcp_everything_echo");
    expect(echo?.toolset).toBe("mcp-everything");
    expect(echo?.description).toBe("Echoes back the input string");
    const [schema] = registry.schemas(["mcp_everything_get_sum"]);
    expect(schema?.function.parameters).toMatchObject({ type: "object", required: ["a", "b"] });

    const ctx = makeToolContext();
    expect(await registry.execute("mcp_everything_echo", { message: "hello" }, ctx)).toEqual({
      content: "Echo: hello",
      ok: true,
    });
    expect((await registry.execute("mcp_everything_get_sum", { a: 2, b: "3" }, ctx)).content).toBe(
      "The sum of 2 and 3 is 5.",
    );
    // The server's JSON Schema is enforced before anything is sent.
    const invalid = await registry.execute("mcp_everything_get_sum", { a: 2 }, ctx);
    expect(invalid.error).toContain("`b` is required");

    const listed = JSON.parse((await registry.execute("mcp_everything_list_resources", {}, ctx)).content) as {
      resources: Array<{ uri: string; mimeType?: string }>;
    };
    const text = listed.resources.find((r) => r.mimeType?.startsWith("text/"));
    expect(text).toBeDefined();
    const read = await registry.execute("mcp_everything_read_resource", { uri: text?.uri ?? "" }, ctx);
    expect(read.ok).toBe(true);
    expect(read.content.length).toBeGreaterThan(0);

    const prompts = (await registry.execute("mcp_everything_list_prompts", {}, ctx)).content;
    expect(prompts).toContain("simple-prompt");
    const prompt = await registry.execute("mcp_everything_get_prompt", { name: "simple-prompt" }, ctx);
    expect(prompt.content).toMatch(/^user: /);

    // Progress notifications reach the tool's progress line.
    const long = await registry.execute(
      "mcp_everything_trigger_long_running_operation",
      { duration: 0.2, steps: 2 },
      ctx,
    );
    expect(long.content).toContain("Long running operation completed");
    // (The last one may lose the race with the result: the SDK drops progress after the answer.)
    expect(ctx.progressNotes).toContain("1/2");
  });
});

describe("MCP over stdio with mcp-server-filesystem", () => {
  it("reads a file in the allowed directory and refuses one outside it", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "hermes-mcp-fs-")));
    mkdirSync(join(dir, "notes"));
    writeFileSync(join(dir, "notes", "todo.txt"), "buy milk\n");
    const { manager, registry } = start({ filesystem: { command: FILESYSTEM_BIN, args: [dir] } });
    await manager.ready;
    expect(registry.has("mcp_filesystem_read_text_file")).toBe(true);
    const ctx = makeToolContext();
    const read = await registry.execute(
      "mcp_filesystem_read_text_file",
      { path: join(dir, "notes", "todo.txt") },
      ctx,
    );
    expect(read).toEqual({ content: "buy milk\n", ok: true });
    const outside = await registry.execute("mcp_filesystem_read_text_file", { path: "/etc/hostname" }, ctx);
    expect(outside.ok).toBe(false);
    expect(outside.error).toMatch(/outside allowed directories|Access denied/i);
  });
});

describe("MCP stdio servers with the test server", () => {
  it("gives a stdio server a filtered environment: a parent secret never reaches it", async () => {
    const saved = process.env["LOGNAME"];
    process.env["LOGNAME"] = "from-process-env";
    try {
      const { manager, registry } = start(
        { probe: testServerEntry({ env: { SERVER_SETTING: "given-by-config" } }) },
        {
          env: {
            PATH: process.env.PATH,
            HOME: "/home/tester",
            LANG: "C.UTF-8",
            XDG_DATA_HOME: "/xdg/data",
            OPENROUTER_API_KEY: "sk-or-must-not-leak",
            HERMES_TEST_SECRET: "must-not-leak",
          },
        },
      );
      await manager.ready;
      const result = await registry.execute("mcp_probe_report_env", {}, makeToolContext());
      const childEnv = JSON.parse(result.content) as Record<string, string>;
      expect(childEnv["SERVER_SETTING"]).toBe("given-by-config");
      expect(childEnv["HOME"]).toBe("/home/tester");
      expect(childEnv["LANG"]).toBe("C.UTF-8");
      expect(childEnv["XDG_DATA_HOME"]).toBe("/xdg/data");
      expect(childEnv["PATH"]).toBe(process.env.PATH);
      expect(result.content).not.toContain("must-not-leak");
      expect(childEnv["LOGNAME"]).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env["LOGNAME"];
      else process.env["LOGNAME"] = saved;
    }
  });

  it("reports each server that cannot start once, with its cause and output, and the rest work", async () => {
    const { manager, registry, warnings } = start({
      missing: { command: "hermes-no-such-mcp-server" },
      crashing: testServerEntry({ env: { MCP_TEST_CRASH_ON_START: "database is locked" } }),
      // 3 s: the test server prints its "hanging" line after its imports, which can take a second
      // on a loaded machine; the warning must carry that output.
      hanging: testServerEntry({ env: { MCP_TEST_HANG_ON_START: "1" }, connect_timeout: 3 }),
      good: testServerEntry(),
      broken: { command: "x", timeout: "never" },
    });
    await manager.ready;
    expect(warnings).toHaveLength(4);
    expect(warnings.find((w) => w.includes('"missing"'))).toMatch(
      /MCP server "missing" failed to start: command "hermes-no-such-mcp-server" was not found; check mcp_servers\.missing\.command/,
    );
    expect(warnings.find((w) => w.includes('"crashing"'))).toMatch(
      /"crashing" failed to start: the server exited before it finished starting \(server output: .*fatal: database is locked\)/,
    );
    expect(warnings.find((w) => w.includes('"hanging"'))).toMatch(
      /"hanging" failed to start: no answer within 3 s \(mcp_servers\.hanging\.connect_timeout\).*hanging before the handshake/,
    );
    expect(warnings.find((w) => w.includes("broken"))).toMatch(
      /mcp_servers\.broken\.timeout: expected a positive number/,
    );
    const states = Object.fromEntries(manager.status().map((s) => [s.name, s.state]));
    expect(states).toEqual({ missing: "failed", crashing: "failed", hanging: "failed", good: "connected" });
    expect((await registry.execute("mcp_good_echo", { text: "still here" }, makeToolContext())).content).toBe(
      "echo: still here",
    );
    expect(registry.names().filter((n) => n.startsWith("mcp_") && !n.startsWith("mcp_good_"))).toEqual([]);
  });

  it("offers only included tools, or all but excluded ones, and says when include names a missing tool", async () => {
    const { manager, registry, warnings } = start({
      inc: testServerEntry({ tools: { include: ["echo", "nope"] } }),
      exc: testServerEntry({ tools: { exclude: ["crash", "report_env"] } }),
    });
    await manager.ready;
    expect(registry.names().filter((n) => n.startsWith("mcp_inc_"))).toEqual(["mcp_inc_echo"]);
    const exc = registry.names().filter((n) => n.startsWith("mcp_exc_"));
    expect(exc).toContain("mcp_exc_echo");
    expect(exc).not.toContain("mcp_exc_crash");
    expect(exc).not.toContain("mcp_exc_report_env");
    expect(warnings).toEqual([
      expect.stringMatching(/mcp_servers\.inc\.tools\.include names nope, which the server/),
    ]);
  });

  it("a tool the server annotates readOnlyHint changes nothing outside the session; others may act", async () => {
    const { manager, registry } = start({ ro: testServerEntry() });
    await manager.ready;
    expect(registry.get("mcp_ro_slow_read")?.sideEffectFree).toBe(true);
    // No annotation, or not read-only: stored before it runs.
    expect(registry.get("mcp_ro_slow_write")?.sideEffectFree).toBeUndefined();
    expect(registry.get("mcp_ro_echo")?.sideEffectFree).toBeUndefined();
  });

  it("re-registers tools when the server says its list changed, and unregisters removed ones", async () => {
    const started = start({ dyn: testServerEntry() });
    const { manager, registry } = started;
    await manager.ready;
    const ctx = makeToolContext();
    const added = started.toolsWhere("dyn", (tools) => tools.includes("mcp_dyn_fresh_tool"));
    expect((await registry.execute("mcp_dyn_add_tool", { name: "fresh-tool" }, ctx)).content).toBe(
      "added fresh-tool",
    );
    await added;
    expect(registry.get("mcp_dyn_fresh_tool")?.toolset).toBe("mcp-dyn");
    expect((await registry.execute("mcp_dyn_fresh_tool", {}, ctx)).content).toBe("fresh-tool ran");

    const removed = started.toolsWhere("dyn", (tools) => !tools.includes("mcp_dyn_fresh_tool"));
    await registry.execute("mcp_dyn_remove_tool", { name: "fresh-tool" }, ctx);
    await removed;
    expect(registry.has("mcp_dyn_fresh_tool")).toBe(false);
    expect(registry.has("mcp_dyn_echo")).toBe(true);
  });

  it("cancels a call that outlives the server's timeout and keeps the server usable", async () => {
    const { manager, registry } = start({ slow: testServerEntry({ timeout: 0.3 }) });
    await manager.ready;
    const ctx = makeToolContext();
    const late = await registry.execute("mcp_slow_sleep", { ms: 10_000 }, ctx);
    expect(late.ok).toBe(false);
    expect(late.error).toBe(
      'The MCP server "slow" did not answer within 0.3 s (mcp_servers.slow.timeout); the call was cancelled.',
    );
    expect((await registry.execute("mcp_slow_echo", { text: "after" }, ctx)).content).toBe("echo: after");
  });

  it("says so when a server dies mid-call, then restarts it on the next call", async () => {
    const { manager, registry } = start({ fragile: testServerEntry() });
    await manager.ready;
    const ctx = makeToolContext();
    const firstPid = (await registry.execute("mcp_fragile_pid", {}, ctx)).content;
    const crashed = await registry.execute("mcp_fragile_crash", {}, ctx);
    expect(crashed.ok).toBe(false);
    expect(crashed.error).toMatch(
      /^The MCP server "fragile" stopped while handling the call .*about to crash on purpose.*The next call will try to restart it\.$/,
    );
    // Calls that arrive together share the one restart.
    const [first, second] = await Promise.all([
      registry.execute("mcp_fragile_echo", { text: "back" }, ctx),
      registry.execute("mcp_fragile_echo", { text: "again" }, ctx),
    ]);
    expect([first.content, second.content]).toEqual(["echo: back", "echo: again"]);
    expect((await registry.execute("mcp_fragile_pid", {}, ctx)).content).not.toBe(firstPid);
    expect(manager.status()[0]?.state).toBe("connected");
  });

  it("returns isError results as errors and saves image results to a file", async () => {
    const { manager, registry } = start({ misc: testServerEntry() });
    await manager.ready;
    const ctx = makeToolContext();
    expect(await registry.execute("mcp_misc_fail", {}, ctx)).toEqual({
      content: '{"error":"the widget is jammed"}',
      ok: false,
      error: "the widget is jammed",
    });
    expect((await registry.execute("mcp_misc_image", {}, ctx)).content).toMatch(
      /^here is a pixel\n\[image image\/png, 70 B, saved to \S+\.png\]$/,
    );
  });

  it("close() stops the servers and unregisters their tools; reload says what changed", async () => {
    const { manager, registry } = start({ one: testServerEntry(), two: testServerEntry({ enabled: false }) });
    await manager.ready;
    expect(manager.status().map((s) => [s.name, s.state])).toEqual([
      ["one", "connected"],
      ["two", "disabled"],
    ]);
    const pid = Number((await registry.execute("mcp_one_pid", {}, makeToolContext())).content);

    const report = await manager.reload({ two: testServerEntry({ tools: { include: ["echo"] } }) });
    expect(report.added).toEqual(["mcp_two_echo"]);
    expect(report.removed).toContain("mcp_one_echo");
    expect(report.servers.map((s) => [s.name, s.state])).toEqual([["two", "connected"]]);
    expect(() => process.kill(pid, 0)).toThrow();

    await manager.close();
    expect(registry.names().filter((n) => n.startsWith("mcp_"))).toEqual([]);
  });

  it("settles ready with nothing to do when no server is configured", async () => {
    const { manager, warnings } = start(undefined);
    await manager.ready;
    expect(manager.status()).toEqual([]);
    expect(warnings).toEqual([]);
  });
});
