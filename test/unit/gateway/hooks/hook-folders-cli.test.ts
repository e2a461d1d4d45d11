/**
 * `hermes hooks folders|enable|disable`: gateway hook folders turned on and off in config.yaml,
 * and the guards a confused or prompt-injected caller would try to get around: a path instead of
 * a name, `..`, a symbolic link to a folder outside the home, a handler or HOOK.yaml linking out
 * of its folder. Each is refused with the reason and nothing is written; the loader agrees.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hooksCommand } from "../../../../src/cli/commands/hooks.js";
import { loadGatewayHooks } from "../../../../src/gateway/hooks/registry.js";
import { sink } from "../../../support/text-sink.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-hook-folders-"));
  dirs.push(dir);
  return dir;
}

async function hooks(home: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = sink();
  const stderr = sink();
  const code = await hooksCommand.run(args, { env: { HERMES_HOME: home, NO_COLOR: "1" }, stdout, stderr });
  return { code, out: stdout.text, err: stderr.text };
}

function folder(parent: string, name: string, handler = "export function handle() {}\n"): string {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "HOOK.yaml"), `name: ${name}\ndescription: logs turns\nevents:\n  - agent:end\n`);
  writeFileSync(join(dir, "handler.mjs"), handler);
  return dir;
}

const config = (home: string) =>
  existsSync(join(home, "config.yaml")) ? readFileSync(join(home, "config.yaml"), "utf8") : "";

describe("hermes hooks folders / enable / disable", () => {
  it("lists folders, enables one into gateway_hooks.enabled (comments kept), disables it again", async () => {
    const home = temp();
    writeFileSync(join(home, "config.yaml"), "# my settings\nmodel:\n  default: m\n");
    folder(join(home, "hooks"), "audit");
    folder(join(home, "hooks"), "notify");
    let run = await hooks(home, ["folders"]);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/audit\s+not enabled\s+agent:end/);
    expect(run.out).toContain("logs turns");

    run = await hooks(home, ["enable", "audit"]);
    expect(run.code).toBe(0);
    expect(run.out).toContain("every secret the gateway holds");
    expect(config(home)).toContain("# my settings");
    expect(config(home)).toMatch(/gateway_hooks:\s*\n\s*enabled:\s*\n?\s*-?\s*\[?"?audit/);
    expect((await hooks(home, ["enable", "audit"])).out).toContain("already enabled");
    expect((await hooks(home, ["folders"])).out).toMatch(/audit\s+enabled/);

    // The loader runs exactly what is enabled.
    const warnings: string[] = [];
    const { parse } = await import("yaml");
    const loaded = loadGatewayHooks({ home, config: parse(config(home)), warn: (m) => warnings.push(m) });
    expect(loaded.hooks.size).toBe(1);
    expect(warnings).toEqual([]);

    run = await hooks(home, ["disable", "audit"]);
    expect(run.code).toBe(0);
    expect((await hooks(home, ["folders"])).out).toMatch(/audit\s+not enabled/);
  });

  it("refuses names that are paths, and folders that do not exist, writing nothing", async () => {
    const home = temp();
    folder(join(home, "hooks"), "audit");
    for (const name of ["../audit", "hooks/audit", "/etc", "..", ".hidden", "a/../../x"]) {
      const run = await hooks(home, ["enable", name]);
      expect(run.code, name).toBe(1);
      expect(run.err, name).toContain("not a hook folder name");
    }
    const missing = await hooks(home, ["enable", "nothere"]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("there is no hook folder");
    expect(config(home)).toBe("");
  });

  it("refuses a folder that is a symbolic link to a folder outside the home, saying where it points", async () => {
    const home = temp();
    const outside = folder(temp(), "evil");
    mkdirSync(join(home, "hooks"), { recursive: true });
    symlinkSync(outside, join(home, "hooks", "evil"));
    const run = await hooks(home, ["enable", "evil"]);
    expect(run.code).toBe(1);
    expect(run.err).toContain("symbolic link");
    expect(run.err).toContain(outside);
    expect(config(home)).toBe("");
  });

  it("refuses a real folder whose handler or HOOK.yaml links out of it, and the loader will not load it either", async () => {
    const home = temp();
    const elsewhere = temp();
    writeFileSync(join(elsewhere, "payload.mjs"), "export function handle() {}\n");
    const dir = folder(join(home, "hooks"), "sneaky");
    rmSync(join(dir, "handler.mjs"));
    symlinkSync(join(elsewhere, "payload.mjs"), join(dir, "handler.mjs"));
    let run = await hooks(home, ["enable", "sneaky"]);
    expect(run.code).toBe(1);
    expect(run.err).toContain("outside the folder");
    expect(config(home)).toBe("");

    const yamlDir = folder(join(home, "hooks"), "yamlink");
    writeFileSync(join(elsewhere, "HOOK.yaml"), "events:\n  - agent:end\n");
    rmSync(join(yamlDir, "HOOK.yaml"));
    symlinkSync(join(elsewhere, "HOOK.yaml"), join(yamlDir, "HOOK.yaml"));
    run = await hooks(home, ["enable", "yamlink"]);
    expect(run.code).toBe(1);
    expect(run.err).toContain("outside the folder");

    // Written into config.yaml by hand: listed as broken, never loaded.
    writeFileSync(join(home, "config.yaml"), "gateway_hooks:\n  enabled: [sneaky, yamlink]\n");
    const warnings: string[] = [];
    const loaded = loadGatewayHooks({
      home,
      config: { gateway_hooks: { enabled: ["sneaky", "yamlink"] } },
      warn: (m) => warnings.push(m),
    });
    expect(loaded.hooks.size).toBe(0);
    expect(warnings.join("\n")).toContain('hook "sneaky" is not loaded');
    expect((await hooks(home, ["folders"])).out).toMatch(/sneaky\s+broken/);
  });

  it("disables a name whose folder is gone, and says when an enabled name has no folder", async () => {
    const home = temp();
    writeFileSync(join(home, "config.yaml"), "gateway_hooks:\n  enabled: [gone]\n");
    expect((await hooks(home, ["folders"])).out).toContain("gone  enabled, but there is no such folder");
    const run = await hooks(home, ["disable", "gone"]);
    expect(run.code).toBe(0);
    expect(config(home)).not.toMatch(/gone/);
  });
});
