// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings hold literal config ${VAR} syntax
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { runConfigCommand } from "../../../src/cli/commands/config.js";

const homes: string[] = [];
afterEach(() => {
  for (const dir of homes.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempHome(config?: string): string {
  const home = mkdtempSync(join(tmpdir(), "hermes-config-cli-"));
  homes.push(home);
  if (config !== undefined) writeFileSync(join(home, "config.yaml"), config);
  return home;
}

class Capture extends Writable {
  text = "";
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

async function run(
  home: string,
  action: string,
  args: string[] = [],
  extra: { env?: Record<string, string | undefined>; json?: boolean; force?: boolean } = {},
) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await runConfigCommand(action, args, {
    home,
    env: extra.env ?? { PATH: process.env["PATH"] },
    json: extra.json ?? false,
    ...(extra.force ? { force: true } : {}),
    stdout,
    stderr,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe("hermes config", () => {
  it("path and env-path print the file locations", async () => {
    const home = tempHome();
    expect(await run(home, "path")).toEqual({
      code: 0,
      stdout: `${join(home, "config.yaml")}\n`,
      stderr: "",
    });
    expect((await run(home, "env-path")).stdout).toBe(`${join(home, ".env")}\n`);
  });

  it("show prints the effective config with secrets masked", async () => {
    const home = tempHome("model:\n  default: a/b\n  api_key: ${KEY}\nagent:\n  max_turns: 7\n");
    const result = await run(home, "show", [], { env: { KEY: "sk-verysecret123" } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("max_turns: 7");
    expect(result.stdout).toContain("api_key: sk-v****");
    expect(result.stdout).toContain("max_tokens: null");
    expect(result.stdout).not.toContain("verysecret");
    const json = await run(home, "show", [], { env: { KEY: "sk-verysecret123" }, json: true });
    expect(JSON.parse(json.stdout).model.api_key).toBe("sk-v****");
  });

  it("get prints scalars plainly and sections as YAML", async () => {
    const home = tempHome("tool_loop_guardrails:\n  warn_after:\n    exact_failure: 4\n");
    expect((await run(home, "get", ["tool_loop_guardrails.warn_after.exact_failure"])).stdout).toBe("4\n");
    expect((await run(home, "get", ["toolsets"])).stdout).toBe("- hermes-cli\n");
    expect((await run(home, "get", ["tool_loop_guardrails.warn_after"])).stdout).toBe(
      "exact_failure: 4\nsame_tool_failure: 3\nidempotent_no_progress: 2\n",
    );
    expect((await run(home, "get", ["model.context_length"])).stdout).toBe("null\n");
    expect((await run(home, "get", ["agent"], { json: true })).stdout).toContain('"max_turns": 90');
  });

  it("get of an unknown key exits 2 with a message", async () => {
    const result = await run(tempHome(), "get", ["agent.nope"]);
    expect(result).toEqual({ code: 2, stdout: "", stderr: 'error: unknown config key "agent.nope"\n' });
  });

  it("get reads environment-style names from .env", async () => {
    const home = tempHome();
    writeFileSync(join(home, ".env"), "EXA_API_KEY=exa-1\n");
    expect((await run(home, "get", ["EXA_API_KEY"])).stdout).toBe("exa-1\n");
    expect((await run(home, "get", ["TAVILY_API_KEY"])).code).toBe(2);
  });

  it("set writes config.yaml and reports it; secrets go to .env", async () => {
    const home = tempHome("# mine\nagent:\n  max_turns: 90 # note\n");
    const set = await run(home, "set", ["agent.max_turns", "42"]);
    expect(set).toEqual({
      code: 0,
      stdout: `Set agent.max_turns = 42 in ${join(home, "config.yaml")}\n`,
      stderr: "",
    });
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe("# mine\nagent:\n  max_turns: 42 # note\n");
    const secret = await run(home, "set", ["OPENROUTER_API_KEY", "sk-or-1"]);
    expect(secret.stdout).toBe(`Saved OPENROUTER_API_KEY to ${join(home, ".env")}\n`);
    expect(secret.stdout).not.toContain("sk-or-1");
    expect(readFileSync(join(home, ".env"), "utf8")).toBe("OPENROUTER_API_KEY=sk-or-1\n");
    const multiWord = await run(home, "set", ["display.personality", "dry", "wit"]);
    expect(multiWord.code).toBe(0);
    expect((await run(home, "get", ["display.personality"])).stdout).toBe("dry wit\n");
  });

  it("set masks a secret in its confirmation and hints at .env", async () => {
    const result = await run(tempHome(), "set", ["model.api_key", "sk-1234567890"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("model.api_key = sk-1****");
    expect(result.stderr).toMatch(/^hint: .*\.env/);
  });

  it("set with a wrong type or bad usage exits 2 and changes nothing", async () => {
    const home = tempHome("agent:\n  max_turns: 90\n");
    const wrong = await run(home, "set", ["agent.max_turns", "ninety"]);
    expect(wrong).toEqual({
      code: 2,
      stdout: "",
      stderr: 'error: expected a number for agent.max_turns, got "ninety"\n',
    });
    expect((await run(home, "set", ["agent.max_turns"])).stderr).toBe(
      "error: usage: hermes config set KEY VALUE\n",
    );
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe("agent:\n  max_turns: 90\n");
  });

  it("set on a broken config.yaml leaves it byte-identical and exits 2", async () => {
    const broken = "agent:\n  max_turns: 5\n\tbad: tab\n";
    const home = tempHome(broken);
    const result = await run(home, "set", ["agent.max_turns", "6"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/config\.yaml line 3: invalid YAML/);
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(broken);
  });

  it("check exits 1 on unknown sections, naming each with a did-you-mean", async () => {
    const home = tempHome("agent:\n  max_turns: 5\nagnet:\n  x: 1\nmy_notes: hi\n");
    const result = await run(home, "check");
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(
      `config.yaml has 2 problems (${join(home, "config.yaml")}): fix them with hermes config edit\n`,
    );
    expect(result.stderr).toContain('unknown top-level key "agnet" (did you mean "agent"?)');
    expect(result.stderr).toContain('unknown top-level key "my_notes"; Hermes does not use it');
  });

  it("check exits 1 on a misspelt key inside a section and on a word a key does not take", async () => {
    const home = tempHome("agent:\n  max_turn: 5\napprovals:\n  mode: smrt\n");
    const result = await run(home, "check");
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('line 2: unknown key "agent.max_turn" (did you mean "agent.max_turns"?)');
    expect(result.stderr).toContain(
      'line 4: approvals.mode is "smrt" (did you mean "smart"?); it takes one of: manual, smart, off',
    );
  });

  it("check accepts upstream's keys, open sections and a string model", async () => {
    const home = tempHome(
      [
        "model: openrouter/some-model",
        "agent:\n  gateway_timeout: 1800\n  personalities:\n    mine: be brief",
        "mcp_servers:\n  files:\n    command: npx\n    anything_goes: 1",
        "display:\n  runtime_footer:\n    enabled: true",
        "terminal:\n  backend: Docker",
      ].join("\n"),
    );
    const result = await run(home, "check");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it("check --json reports the problems with their lines", async () => {
    const result = await run(tempHome("limits:\n  tool_output:\n    max_byte: 5\n"), "check", [], {
      json: true,
    });
    expect(result.code).toBe(1);
    const body = JSON.parse(result.stdout) as { ok: boolean; problems: unknown[] };
    expect(body.ok).toBe(false);
    expect(body.problems).toEqual([
      {
        key: "limits.tool_output.max_byte",
        kind: "unknown_key",
        line: 3,
        message: 'unknown key "limits.tool_output.max_byte" (did you mean "limits.tool_output.max_bytes"?)',
      },
    ]);
  });

  it("set refuses an unknown key or a bad word, leaving the file as it was; --force writes it", async () => {
    const home = tempHome("# mine\nagent:\n  max_turns: 5\n");
    const before = readFileSync(join(home, "config.yaml"), "utf8");
    const typo = await run(home, "set", ["agent.max_turn", "7"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe(
      'error: unknown key "agent.max_turn" (did you mean "agent.max_turns"?). config.yaml was not changed; add --force to write it anyway.\n',
    );
    const word = await run(home, "set", ["approvals.mode", "always"]);
    expect(word.code).toBe(2);
    expect(word.stderr).toContain('approvals.mode is "always"; it takes one of: manual, smart, off');
    const nested = await run(home, "set", ["tool_loop_guardrails.warn_after.exact", "3"]);
    expect(nested.code).toBe(2);
    expect(nested.stderr).toContain('unknown key "tool_loop_guardrails.warn_after.exact"');
    // The look-alikes that must stay allowed: open sections, upstream keys, a word in any case.
    expect((await run(home, "set", ["mcp_servers.fs.command", "npx"])).code).toBe(0);
    expect((await run(home, "set", ["agent.gateway_timeout", "900"])).code).toBe(0);
    expect((await run(home, "set", ["approvals.mode", "Smart"])).code).toBe(0);
    expect((await run(home, "set", ["SOME_TOOL_KEY", "x"])).code).toBe(0);
    expect(readFileSync(join(home, "config.yaml"), "utf8")).not.toContain("max_turn:");
    expect(before).toContain("# mine");
    const forced = await run(home, "set", ["agent.max_turn", "7"], { force: true });
    expect(forced.code).toBe(0);
    expect(forced.stderr).toContain("written anyway (--force)");
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toContain("max_turn: 7");
  });

  it("set still refuses a value of the wrong type with --force", async () => {
    const home = tempHome();
    const result = await run(home, "set", ["agent.max_turns", "ninety"], { force: true });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('expected a number for agent.max_turns, got "ninety"');
  });

  it("check exits 0 without a file", async () => {
    const result = await run(tempHome(), "check");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^config\.yaml OK: none at /);
  });

  it("check exits 2 with the error line for a broken or mistyped file", async () => {
    const broken = await run(tempHome("agent:\n  max_turns: [1, 2\n"), "check");
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^error: .*config\.yaml line \d+: invalid YAML: .*\n$/);
    const mistyped = await run(tempHome("\nagent:\n  max_turns: ninety\n"), "check");
    expect(mistyped.code).toBe(2);
    expect(mistyped.stderr).toBe(
      `error: ${join(homes.at(-1) ?? "", "config.yaml")} line 3: expected a number for agent.max_turns, got "ninety"\n`,
    );
  });

  it("unknown actions and stray arguments are usage errors", async () => {
    const home = tempHome();
    expect((await run(home, "frobnicate")).code).toBe(2);
    expect((await run(home, "path", ["extra"])).code).toBe(2);
  });

  it.skipIf(process.platform === "win32")(
    "edit creates the file from a template, runs the editor, then checks",
    async () => {
      const home = tempHome();
      const env = { PATH: process.env["PATH"], EDITOR: "true" };
      const ok = await run(home, "edit", [], { env });
      expect(ok.code).toBe(0);
      expect(readFileSync(join(home, "config.yaml"), "utf8")).toMatch(/^# Hermes configuration/);
      // An "editor" that appends a type error.
      const bad = await run(home, "edit", [], {
        env: { ...env, VISUAL: "printf 'agent:\\n  max_turns: x\\n' >>" },
      });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/line \d+: expected a number for agent\.max_turns, got "x"/);
      const failing = await run(home, "edit", [], { env: { ...env, VISUAL: "false" } });
      expect(failing.code).toBe(1);
      expect(failing.stderr).toMatch(/exited with status 1/);
    },
  );
});
