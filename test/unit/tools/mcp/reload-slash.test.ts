import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PendingInputs } from "../../../../src/cli/tui/busy.js";
import { createStyle } from "../../../../src/cli/tui/style.js";
import {
  type CommandContext,
  type CommandSession,
  createCommandRegistry,
} from "../../../../src/commands/index.js";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { type McpManager, startMcpServers } from "../../../../src/tools/mcp/manager.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import { TEST_SERVER } from "../../../support/mcp-servers.js";

const registry = createCommandRegistry();
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0)) await fn();
});

function setup(configYaml: string) {
  const home = mkdtempSync(join(tmpdir(), "hermes-reload-mcp-"));
  cleanup.push(() => rmSync(home, { recursive: true, force: true }));
  writeFileSync(join(home, "config.yaml"), configYaml);
  const calls: string[] = [];
  const session = {
    model: "fake-model",
    agent: { home, config: defaultConfig() },
    setModel: async (model: string) => {
      calls.push(`setModel:${model}`);
    },
  } as unknown as CommandSession;
  const tools = new ToolRegistry();
  let manager: McpManager | undefined;
  const printed: string[] = [];
  const ctx = {
    surface: { kind: "repl", platform: "cli", isAdmin: true },
    session,
    paint: createStyle(false),
    reply: (...lines: string[]) => printed.push(...lines),
    running: false,
    settings: { toolProgress: "all", busyMode: "interrupt", yolo: false },
    queue: new PendingInputs(),
    sessionChanged: () => calls.push("sessionChanged"),
    registry,
    toolsets: ["hermes-cli"],
    now: () => 0,
    mcp: async () => {
      manager ??= startMcpServers({ config: {}, registry: tools, env: { PATH: process.env.PATH } });
      cleanup.push(() => manager?.close());
      return manager;
    },
  } as unknown as CommandContext;
  const write = (yaml: string) => writeFileSync(join(home, "config.yaml"), yaml);
  return { ctx, printed, calls, tools, write };
}

async function reload(ctx: CommandContext): Promise<void> {
  const parsed = registry.parse("/reload-mcp");
  if (parsed.kind !== "command") throw new Error("/reload-mcp is not a command");
  await parsed.command.run(parsed.args, ctx);
}

const serverYaml = (name: string, include: string) =>
  `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(TEST_SERVER)}]\n    tools: {include: [${include}]}\n`;

describe("/reload-mcp", () => {
  it("connects the servers in config.yaml, says what changed, and rebuilds the agent only then", async () => {
    const { ctx, printed, calls, tools, write } = setup("model:\n  default: fake-model\n");
    await reload(ctx);
    expect(printed).toContain("No MCP servers are configured (mcp_servers in config.yaml).");
    expect(printed).toContain("The tool list did not change.");
    expect(calls).toEqual([]);

    write(`mcp_servers:\n${serverYaml("probe", "echo")}  idle:\n    command: nothing\n    enabled: false\n`);
    printed.length = 0;
    await reload(ctx);
    expect(printed[0]).toBe("Reloading MCP servers…");
    expect(printed[1]).toMatch(/^✓ probe stdio · 1 tool · \d+ ms$/);
    expect(printed[2]).toBe("○ idle disabled (enabled: false)");
    expect(printed).toContain("+ mcp_probe_echo");
    expect(printed.at(-1)).toMatch(/new tool list from your next message/);
    expect(calls).toEqual(["setModel:fake-model", "sessionChanged"]);
    expect(tools.has("mcp_probe_echo")).toBe(true);

    write(`mcp_servers:\n${serverYaml("probe", "sleep")}  gone:\n    command: hermes-no-such-server\n`);
    printed.length = 0;
    await reload(ctx);
    expect(printed).toContain("+ mcp_probe_sleep");
    expect(printed).toContain("- mcp_probe_echo");
    expect(printed.find((l) => l.startsWith("✗ gone"))).toMatch(
      /failed: command "hermes-no-such-server" was not found/,
    );
    expect(tools.has("mcp_probe_echo")).toBe(false);
  });

  it("reports a config.yaml that does not parse and changes nothing", async () => {
    const { ctx, printed, calls } = setup("mcp_servers: [unclosed\n");
    await reload(ctx);
    expect(printed[0]).toMatch(/^✗ config\.yaml was not reloaded: .*config\.yaml line \d+/);
    expect(calls).toEqual([]);
  });
});
