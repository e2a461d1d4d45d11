/**
 * `/tools list|enable|disable`: the change lands in config.yaml and in the running session from
 * its next message, and a chat user who is not an admin cannot change anything.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SurfaceFacts } from "../../../src/commands/types.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import { fakeContext, fakeSession, registry } from "../../support/command-context.js";

function setup(surface: Partial<SurfaceFacts> = {}) {
  const home = mkdtempSync(join(tmpdir(), "hermes-slash-tools-"));
  const base = fakeSession();
  const session = fakeSession({ agent: { ...base.agent, home, config: defaultConfig() } });
  return { home, ...fakeContext({ session, surface }) };
}

async function run(text: string, c: ReturnType<typeof setup>) {
  const parsed = registry.parse(text);
  if (parsed.kind !== "command") throw new Error(`not a command: ${text}`);
  await parsed.command.run(parsed.args, c.ctx);
}

describe("/tools", () => {
  it("plain /tools still lists the session's tools", async () => {
    const c = setup();
    await run("/tools", c);
    expect(c.printed.join("\n")).toContain("2 tools");
  });

  it("/tools disable writes platform_toolsets.cli and applies it to this session from the next message", async () => {
    const c = setup();
    writeFileSync(join(c.home, "config.yaml"), "# mine\ntoolsets: [hermes-cli]\n");
    await run("/tools disable web terminal", c);
    const text = c.printed.join("\n");
    expect(text).toContain("Disabled for cli: web, terminal");
    expect(text).toContain("from your next message");
    expect(text).toContain("prompt cache starts over once");
    const applied = c.session.calls.find((call) => call.startsWith("toolsets:"))?.slice("toolsets:".length);
    expect(applied?.split(",")).toContain("file");
    expect(applied?.split(",")).not.toContain("web");
    expect(applied?.split(",")).not.toContain("terminal");
    // `/tools list` reads the session's config, which follows the change.
    await run("/tools list", c);
    expect(c.printed.join("\n")).toMatch(/✗ disabled\s+web/);
    const yaml = readFileSync(join(c.home, "config.yaml"), "utf8");
    expect(yaml).toContain("# mine");
    expect(yaml).toMatch(/platform_toolsets:/);
    expect(yaml).not.toMatch(/\bterminal\b/);
  });

  it("/tools list marks each toolset; unknown names and a bare enable are explained", async () => {
    const c = setup();
    await run("/tools list", c);
    expect(c.printed.join("\n")).toMatch(/✓ enabled\s+web/);
    expect(c.printed.join("\n")).toMatch(/✗ disabled\s+homeassistant/);
    await run("/tools enable", c);
    expect(c.printed.at(-1)).toContain("Usage: /tools enable");
    await run("/tools enable teleport", c);
    expect(c.printed.join("\n")).toContain('Unknown toolset "teleport"');
    expect(existsSync(join(c.home, "config.yaml"))).toBe(false);
  });

  it("refuses while a turn runs, before config.yaml is touched; an unknown name applies nothing", async () => {
    const c = setup();
    const busy = fakeContext({ session: c.session, running: true });
    await run("/tools disable web", { ...c, ...busy });
    expect(busy.printed.join("\n")).toContain("A turn is running");
    expect(existsSync(join(c.home, "config.yaml"))).toBe(false);
    await run("/tools disable teleport", c);
    expect(c.session.calls.some((call) => call.startsWith("toolsets:"))).toBe(false);
  });

  it("in a chat, only an admin may enable or disable; anyone may list", async () => {
    const c = setup({ kind: "chat", platform: "telegram", isAdmin: false });
    await run("/tools disable web", c);
    expect(c.printed.join("\n")).toContain("Only an admin");
    expect(existsSync(join(c.home, "config.yaml"))).toBe(false);
    await run("/tools list", c);
    expect(c.printed.join("\n")).toContain("Toolsets (telegram):");

    const admin = setup({ kind: "chat", platform: "telegram", isAdmin: true });
    await run("/tools disable web", admin);
    expect(readFileSync(join(admin.home, "config.yaml"), "utf8")).toMatch(/telegram:/);
  });
});
