import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TSchema } from "@sinclair/typebox";
import { afterEach, describe, expect, it } from "vitest";
import { buildSessionPrompt } from "../../../../src/agent/prompt/session-prompt.js";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { createBuiltinRegistry } from "../../../../src/tools/builtin.js";
import { mcpToolsets } from "../../../../src/tools/mcp/toolsets.js";
import type { ToolRegistry } from "../../../../src/tools/registry.js";
import { makeToolContext } from "../../../support/tool-context.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function setup(): { home: string; cwd: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "hermes-mcp-session-")));
  dirs.push(root);
  mkdirSync(join(root, "home"));
  mkdirSync(join(root, "project"));
  return { home: join(root, "home"), cwd: join(root, "project") };
}

/** A registry with built-ins plus two tools of a server "fs" (as the MCP manager registers them). */
function registryWithMcp(): ToolRegistry {
  const registry = createBuiltinRegistry();
  for (const name of ["mcp_fs_read_file", "mcp_fs_list_directory"]) {
    registry.register({
      name,
      toolset: "mcp-fs",
      description: `${name} from the fs server`,
      // A raw JSON Schema from a server, where built-in tools have TypeBox schemas.
      parameters: {
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object",
        properties: { path: { type: "string" } },
        required: ["path"],
      } as unknown as TSchema,
      handler: (args: { path: string }) => `read ${args.path}`,
    });
  }
  return registry;
}

describe("MCP toolsets in a session", () => {
  it("groups the registry's MCP tools by server toolset", () => {
    expect(mcpToolsets(registryWithMcp())).toEqual({
      "mcp-fs": { tools: ["mcp_fs_read_file", "mcp_fs_list_directory"] },
    });
    expect(mcpToolsets(createBuiltinRegistry())).toEqual({});
  });

  it("offers every MCP toolset alongside the configured toolsets", async () => {
    const session = await buildSessionPrompt({
      ...setup(),
      config: defaultConfig(),
      env: {},
      registry: registryWithMcp(),
      toolsets: ["todo"],
    });
    expect(session.toolNames).toEqual(["todo", "mcp_fs_read_file", "mcp_fs_list_directory"]);
    expect(session.tools[1]?.function.parameters).toMatchObject({ type: "object", required: ["path"] });
    expect(session.unknownToolsets).toEqual([]);
  });

  it("leaves out a server named in agent.disabled_toolsets, and any tools for an empty toolset list", async () => {
    const config = defaultConfig();
    config.agent.disabled_toolsets = ["mcp-fs"];
    const disabled = await buildSessionPrompt({
      ...setup(),
      config,
      env: {},
      registry: registryWithMcp(),
      toolsets: ["todo"],
    });
    expect(disabled.toolNames).toEqual(["todo"]);
    const none = await buildSessionPrompt({
      ...setup(),
      config: defaultConfig(),
      env: {},
      registry: registryWithMcp(),
      toolsets: [],
    });
    expect(none.toolNames).toEqual([]);
  });

  it("accepts an MCP toolset named explicitly, and validates calls against the raw schema", async () => {
    const registry = registryWithMcp();
    const session = await buildSessionPrompt({
      ...setup(),
      config: defaultConfig(),
      env: {},
      registry,
      toolsets: ["mcp-fs"],
    });
    expect(session.toolNames).toEqual(["mcp_fs_read_file", "mcp_fs_list_directory"]);
    expect(session.warnings.join("\n")).not.toContain("Unknown toolsets");
    const ctx = makeToolContext();
    expect(await registry.execute("mcp_fs_read_file", { path: "a.txt" }, ctx)).toEqual({
      content: "read a.txt",
      ok: true,
    });
    expect((await registry.execute("mcp_fs_read_file", {}, ctx)).error).toContain("`path` is required");
  });
});
