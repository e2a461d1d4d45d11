/**
 * `hermes tools`' model of config.yaml: which configurable toolsets a platform has on, the list a
 * change stores, and MCP tool exclusions; and the one-edit writer that keeps the file's comments.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  applyMcpChange,
  applyToolsetChange,
  CONFIGURABLE_TOOLSETS,
  enabledToolsets,
  platformToolsets,
} from "../../../src/tools/platform-tools.js";
import { changeTools, UnknownPlatformError } from "../../../src/tools/tool-config.js";
import { resolveToolsets } from "../../../src/tools/toolsets.js";

const ALL = CONFIGURABLE_TOOLSETS.map((t) => t.key);

describe("enabled toolsets of a platform", () => {
  it("without platform_toolsets: the default bundle, minus default-off homeassistant", () => {
    const enabled = enabledToolsets({}, "telegram");
    expect([...enabled].sort()).toEqual(ALL.filter((k) => k !== "homeassistant").sort());
    expect(platformToolsets({}, "telegram")).toEqual(["hermes-telegram"]);
    expect(platformToolsets({}, "api_server")).toEqual(["hermes-api-server"]);
  });

  it("the CLI falls back to toolsets: when platform_toolsets.cli is unset", () => {
    expect([...enabledToolsets({}, "cli", ["web", "file"])].sort()).toEqual(["file", "web"]);
    expect(platformToolsets({ platform_toolsets: { cli: ["todo"] } }, "cli", ["web"])).toEqual(["todo"]);
    // Not a list of names: ignored, as the gateway ignores it.
    expect(platformToolsets({ platform_toolsets: { cli: "web" } }, "cli", ["file"])).toEqual(["file"]);
    expect(platformToolsets({ platform_toolsets: { cli: [1, 2] } }, "cli", ["file"])).toEqual(["file"]);
  });

  it("an explicit list may turn on a default-off toolset", () => {
    const config = { platform_toolsets: { cli: ["homeassistant", "web"] } };
    expect([...enabledToolsets(config, "cli")].sort()).toEqual(["homeassistant", "web"]);
  });

  it("a toolset counts as on only when all its tools are covered (browser needs every browser tool)", () => {
    const config = { platform_toolsets: { cli: ["browser_navigate", "web"] }, custom_toolsets: {} };
    expect(enabledToolsets(config, "cli").has("browser")).toBe(false);
    expect(enabledToolsets(config, "cli").has("web")).toBe(true);
  });
});

describe("a change to a platform's toolsets", () => {
  it("disabling web from the default bundle stores every other toolset, not hermes-cli", () => {
    const change = applyToolsetChange({}, "cli", ["web"], "disable", ["hermes-cli"]);
    expect(change.unknown).toEqual([]);
    expect(change.list).not.toContain("web");
    expect(change.list).not.toContain("hermes-cli");
    expect(change.list).toContain("terminal");
    // What the stored list resolves to really lacks web_extract (browser keeps web_search, as upstream).
    const tools = resolveToolsets(change.list).tools;
    expect(tools).not.toContain("web_extract");
    expect(tools).toContain("read_file");
  });

  it("keeps custom and MCP entries, drops bundles, and reports unknown names without applying them", () => {
    const config = { platform_toolsets: { telegram: ["hermes-telegram", "mcp-github", "my-set", "web"] } };
    const change = applyToolsetChange(config, "telegram", ["terminal", "nonsense", "hermes-cli"], "enable");
    expect(change.unknown).toEqual(["nonsense", "hermes-cli"]);
    // The explicit list held the whole bundle, so homeassistant was on too and stays on.
    expect(change.list).toEqual([...ALL].sort().concat(["mcp-github", "my-set"]));
  });

  it("enable then disable round-trips; the result is sorted and without duplicates", () => {
    const on = applyToolsetChange({ platform_toolsets: { cli: ["web"] } }, "cli", ["todo", "todo"], "enable");
    expect(on.list).toEqual(["todo", "web"]);
    const off = applyToolsetChange({ platform_toolsets: { cli: on.list } }, "cli", ["todo"], "disable");
    expect(off.list).toEqual(["web"]);
  });
});

describe("MCP tools (server:tool)", () => {
  const config = {
    mcp_servers: { github: { command: "x", tools: { exclude: ["a"] } }, fs: { command: "y" } },
  };

  it("disable adds to tools.exclude once; enable removes it", () => {
    expect(applyMcpChange(config, ["github:b", "github:a", "github:b"], "disable").excludes).toEqual({
      github: ["a", "b"],
    });
    expect(applyMcpChange(config, ["github:a", "fs:z"], "enable").excludes).toEqual({ github: [], fs: [] });
  });

  it("reports servers that are not configured, prototype names included", () => {
    const change = applyMcpChange(
      config,
      ["nope:x", "constructor:x", "__proto__:x", ":x", "github:"],
      "disable",
    );
    expect(change.excludes).toEqual({});
    expect(change.missing).toEqual(["nope", "constructor", "__proto__", ":x", "github"]);
  });
});

// A `${VAR}` reference as config.yaml holds it (not substituted when the file is edited).
const REF = ["$", "{GH_TOKEN}"].join("");

describe("changeTools writes config.yaml", () => {
  const home = () => mkdtempSync(join(tmpdir(), "hermes-tools-"));

  it("edits in place, keeping comments, and reads the file as written (no variable substitution)", () => {
    const h = home();
    const original = `# my settings\nmodel:\n  default: x  # keep\nmcp_servers:\n  gh:\n    command: run\n    env:\n      TOKEN: ${REF}\n`;
    writeFileSync(join(h, "config.yaml"), original);
    const result = changeTools({
      home: h,
      platform: "cli",
      names: ["web", "gh:delete_repo", "bogus"],
      action: "disable",
    });
    expect(result.changed).toEqual(["web", "gh:delete_repo"]);
    expect(result.unknownToolsets).toEqual(["bogus"]);
    const text = readFileSync(join(h, "config.yaml"), "utf8");
    expect(text).toContain("# my settings");
    expect(text).toContain("default: x  # keep");
    expect(text).toContain(REF);
    expect(text).toMatch(/platform_toolsets:\n\s+cli:/);
    expect(text).toMatch(/exclude:[\s\S]*delete_repo/);
    expect(text).not.toMatch(/cli:[^\n]*\bweb\b/);
  });

  it("writes nothing when no name is valid, and refuses an unknown platform", () => {
    const h = home();
    writeFileSync(join(h, "config.yaml"), "model: x\n");
    const result = changeTools({ home: h, platform: "cli", names: ["bogus", "nope:x"], action: "enable" });
    expect(result.changed).toEqual([]);
    expect(readFileSync(join(h, "config.yaml"), "utf8")).toBe("model: x\n");
    expect(() => changeTools({ home: h, platform: "myspace", names: ["web"], action: "enable" })).toThrow(
      UnknownPlatformError,
    );
  });

  it("leaves a broken config.yaml as it is", () => {
    const h = home();
    writeFileSync(join(h, "config.yaml"), "model: [unclosed\n");
    expect(() => changeTools({ home: h, platform: "cli", names: ["web"], action: "disable" })).toThrow(
      /config/i,
    );
    expect(readFileSync(join(h, "config.yaml"), "utf8")).toBe("model: [unclosed\n");
  });
});
