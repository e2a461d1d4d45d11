/**
 * `/plugins` when this process loads no plugin (none enabled, or safe mode): it still lists the
 * folders found, each marked unloaded, so a user sees what is there; a broken folder says so.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createCommandRegistry } from "../../../src/commands/index.js";
import type { CommandContext } from "../../../src/commands/types.js";
import { chatPaint } from "../../../src/gateway/messaging/commands.js";
import { listUnloadedPlugins } from "../../../src/plugins/discover.js";
import { writePlugin } from "../../support/plugin-fixtures.js";

function runPlugins(): string {
  const lines: string[] = [];
  const ctx = { paint: chatPaint, reply: (...l: string[]) => lines.push(...l) } as unknown as CommandContext;
  void createCommandRegistry().get("plugins")?.run("", ctx);
  return lines.join("\n");
}

describe("/plugins with nothing loaded", () => {
  it("lists the folders found as not enabled, and a broken one with its reason", () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-plugins-list-"));
    writePlugin(join(home, "plugins"), "alpha", "export function register() {}");
    writePlugin(join(home, "plugins"), "beta", "export function register() {}");
    mkdirSync(join(home, "plugins", "broken"), { recursive: true });
    writeFileSync(join(home, "plugins", "broken", "plugin.yaml"), "name: [unclosed\n");
    listUnloadedPlugins(home, { plugins: { enabled: [], disabled: [] } }, false);
    const out = runPlugins();
    expect(out).toMatch(/\*\*alpha\*\* 1\.2\.3\s+not enabled/);
    expect(out).toMatch(/\*\*beta\*\* 1\.2\.3\s+not enabled/);
    expect(out).toMatch(/\*\*broken\*\* \?\s+broken: /);
    // Read when /plugins runs: a folder added later shows up without a restart.
    writePlugin(join(home, "plugins"), "gamma", "export function register() {}");
    expect(runPlugins()).toContain("**gamma**");
  });

  it("in safe mode an enabled plugin is listed as not loaded because of safe mode", () => {
    const home = mkdtempSync(join(tmpdir(), "hermes-plugins-list-"));
    writePlugin(join(home, "plugins"), "alpha", "export function register() { throw new Error('loaded'); }");
    listUnloadedPlugins(home, { plugins: { enabled: ["alpha"], disabled: [] } }, true);
    expect(runPlugins()).toMatch(/alpha\*\* 1\.2\.3\s+not loaded \(safe mode\)/);
  });

  it("with no plugin folder at all it says how to add one", () => {
    listUnloadedPlugins(mkdtempSync(join(tmpdir(), "hermes-plugins-list-")), {}, false);
    expect(runPlugins()).toContain("hermes plugins install");
  });
});
