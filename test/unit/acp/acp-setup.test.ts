/**
 * `hermes acp --setup` / `--registry` and the sign-in an editor is offered: with no provider, an
 * editor that can run a terminal sign-in gets `hermes acp --setup` to run (upstream's terminal
 * auth); `--setup` off a terminal asks nothing, checks the provider, prints Zed's entry, and exits
 * 0 only when a provider is ready.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { initializeResponse } from "../../../src/acp/server.js";
import { acpCommand } from "../../../src/cli/commands/acp.js";
import { hermesCommandPath, registryEntry, zedEntry } from "../../../src/cli/commands/acp-setup.js";
import { sink } from "../../support/text-sink.js";

const homes: string[] = [];
afterEach(() => {
  for (const dir of homes.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function acp(args: string[], config?: string) {
  const home = mkdtempSync(join(tmpdir(), "hermes-acp-setup-"));
  homes.push(home);
  if (config) writeFileSync(join(home, "config.yaml"), config);
  const stdout = sink();
  const stderr = sink();
  const code = await acpCommand.run(args, {
    env: { HERMES_HOME: home, HOME: home, PATH: process.env["PATH"] ?? "/usr/bin", NO_COLOR: "1" },
    stdout,
    stderr,
  });
  return { code, out: stdout.text, err: stderr.text };
}

describe("the sign-in hermes acp offers", () => {
  it("is nothing when a provider is ready", () => {
    expect(initializeResponse(1, true, true).authMethods).toEqual([]);
  });

  it("is a terminal method running `acp --setup` when the editor can run one", () => {
    expect(initializeResponse(1, false, true).authMethods).toEqual([
      expect.objectContaining({ id: "hermes-setup", type: "terminal", args: ["acp", "--setup"] }),
    ]);
  });

  it("is a method that says what to run when the editor cannot run a terminal sign-in", () => {
    const [method] = initializeResponse(1, false, false).authMethods ?? [];
    expect(method).not.toHaveProperty("type");
    expect(method?.description).toContain("hermes acp --setup");
  });
});

describe("hermes acp --setup (no terminal: nothing is asked)", () => {
  it("with a provider configured: says so, prints Zed's entry for this hermes, exits 0", async () => {
    const run = await acp(
      ["--setup"],
      "model:\n  provider: custom\n  base_url: http://127.0.0.1:9/v1\n  default: fake-model\n",
    );
    expect(run.code).toBe(0);
    expect(run.out).toContain("✓ provider custom, model fake-model");
    const json = run.out.slice(run.out.indexOf("{"), run.out.lastIndexOf("}") + 1);
    const entry = JSON.parse(json) as { agent_servers: { Hermes: { args: string[]; command: string } } };
    expect(entry.agent_servers.Hermes.args).toEqual(["acp"]);
    expect(entry.agent_servers.Hermes.command).toBe("hermes");
  });

  it("without a provider: says how to choose one and exits 1 (the editor's sign-in failed)", async () => {
    const run = await acp(["--setup"]);
    expect(run.code).toBe(1);
    expect(run.out).toContain("✗ no provider yet");
    expect(run.out).toContain("Run `hermes acp --setup` on a terminal");
  });

  it("--registry prints an agent-registry-v1 entry whose sign-in runs --setup", async () => {
    const run = await acp(["--registry"]);
    expect(run.code).toBe(0);
    const entry = JSON.parse(run.out) as Record<string, unknown>;
    expect(entry["$schema"]).toContain("agent-registry-v1");
    expect(entry["id"]).toBe("hermes-agent");
    expect(entry["distribution"]).toEqual({
      npx: { package: expect.stringMatching(/^hermes-agent@\d/), args: ["acp"] },
    });
  });
});

describe("the editor entry", () => {
  it("names the profile when one is active, and the bin script rather than the bundle", () => {
    expect(zedEntry("/opt/hermes/bin/hermes", "work")).toEqual({
      agent_servers: {
        Hermes: { type: "custom", command: "/opt/hermes/bin/hermes", args: ["-p", "work", "acp"], env: {} },
      },
    });
    expect(hermesCommandPath("")).toBe("hermes");
    expect(hermesCommandPath("/nonexistent/x")).toBe("hermes");
    // The built CLI: its bin script, by absolute path.
    const bin = join(import.meta.dirname, "../../../bin/hermes");
    expect(hermesCommandPath(bin)).toMatch(/[/]bin[/]hermes$/);
    expect(registryEntry("1.2.3", "hermes-agent")["version"]).toBe("1.2.3");
  });
});
