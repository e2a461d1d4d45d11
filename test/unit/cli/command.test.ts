/**
 * The command wrapper (src/cli/command.ts): what a user sees when a command fails in each way, and
 * that `-p NAME` finds the same home before and after the command.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CliFailure, defineCommand, type RunOptions } from "../../../src/cli/command.js";
import { runSendCommand } from "../../../src/cli/commands/send.js";
import { runCli } from "../../../src/cli/program.js";

class Capture extends PassThrough {
  text = "";
  constructor() {
    super();
    this.on("data", (chunk: Buffer) => {
      this.text += chunk.toString();
    });
  }
}

let root: string;
let userHome: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "hermes-command-"));
  userHome = join(root, "user");
  mkdirSync(join(userHome, ".hermes"), { recursive: true });
  // Profiles live under the user's home: never the real one.
  vi.stubEnv("HOME", userHome);
  vi.stubEnv("HERMES_HOME", "");
});

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  rmSync(root, { recursive: true, force: true });
});

async function run(
  command: { run(argv: readonly string[], options?: RunOptions): Promise<number> },
  argv: string[],
  options: RunOptions = {},
) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await command.run(argv, { env: { HOME: userHome }, stdout, stderr, ...options });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** A command whose action does what `--do` says, and reports the home it was given. */
const probe = defineCommand({
  name: "probe",
  description: "test command",
  needs: "home",
  expected: (error) => (error instanceof RangeError ? 2 : undefined),
  parse: (cmd) => cmd.option("--do <what>", "ok | fail | fail2 | throw | range | string", "ok"),
  run: (ctx, flags: { do: string }) => {
    switch (flags.do) {
      case "fail":
        throw new CliFailure("the task failed: no such thing");
      case "fail2":
        throw new CliFailure("--size expects a number", 2);
      case "throw":
        throw new TypeError("cannot read properties of undefined (reading 'x')");
      case "range":
        throw new RangeError("out of range, as the command expects");
      case "string":
        throw "a bare string";
      default:
        ctx.io.out(`home ${ctx.home}`);
        return 0;
    }
  },
});

describe("the command wrapper", () => {
  it("an unexpected throw is exit 1 with its message, named by the command, and no stack", async () => {
    const result = await run(probe, ["--do", "throw"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe("hermes probe: cannot read properties of undefined (reading 'x')\n");
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stdout).toBe("");
  });

  it("with -v or --verbose (after the command, or before it as `hermes -v probe`) the stack follows", async () => {
    for (const [argv, options] of [
      [["--do", "throw", "-v"], {}],
      [["--verbose", "--do", "throw"], {}],
      [["--do", "throw"], { verbose: true }],
    ] as const) {
      const result = await run(probe, [...argv], options);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("hermes probe: cannot read properties of undefined");
      expect(result.stderr).toMatch(/TypeError: cannot read properties[^\n]*\n\s+at /);
    }
  });

  it("-v is not in the help of a command that has no -v of its own", async () => {
    const help = await run(probe, ["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--do <what>");
    expect(help.stdout).toContain("-p, --profile <name>");
    expect(help.stdout).not.toContain("--verbose");
  });

  it("a thrown value that is not an Error is still one line and exit 1", async () => {
    const result = await run(probe, ["--do", "string", "-v"]);
    expect(result).toMatchObject({ code: 1, stderr: "hermes probe: a bare string\n" });
  });

  it("a CliFailure is its message and its exit code, without a stack even with -v", async () => {
    const failed = await run(probe, ["--do", "fail", "-v"]);
    expect(failed).toMatchObject({ code: 1, stderr: "hermes probe: the task failed: no such thing\n" });
    const usage = await run(probe, ["--do", "fail2"]);
    expect(usage).toMatchObject({ code: 2, stderr: "hermes probe: --size expects a number\n" });
  });

  it("the command's own expected errors take the code it gives them, without a stack", async () => {
    const result = await run(probe, ["--do", "range", "-v"]);
    expect(result).toMatchObject({ code: 2, stderr: "hermes probe: out of range, as the command expects\n" });
  });

  it("a usage error is exit 2 with commander's message, and the action never runs", async () => {
    for (const argv of [["--bogus"], ["--do"], ["extra-argument"]]) {
      const result = await run(probe, argv);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toMatch(/^hermes probe: (unknown option|option|too many arguments)/);
    }
  });

  it("finds the profile's home from -p before the command (options.profile) or after it", async () => {
    const work = join(userHome, ".hermes", "profiles", "work");
    for (const [argv, options] of [
      [[], { profile: "work" }],
      [["-p", "work"], {}],
      [["--profile", "work"], {}],
      [["--profile=work"], {}],
      // After the command wins over before it, as the nearest one does for subcommands.
      [["-p", "work"], { profile: "other" }],
    ] as const) {
      const result = await run(probe, [...argv], options);
      expect(result).toMatchObject({ code: 0, stdout: `home ${work}\n` });
    }
    expect((await run(probe, [])).stdout).toBe(`home ${join(userHome, ".hermes")}\n`);
  });

  it("refuses a profile name that is a path (exit 2), wherever it is given", async () => {
    for (const [argv, options] of [
      [["-p", "../etc"], {}],
      [[], { profile: "../../tmp" }],
      [["-p", "/abs"], {}],
      [["-p", "Work"], {}],
    ] as const) {
      const result = await run(probe, [...argv], options);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^hermes probe: invalid profile name/);
      expect(result.stdout).toBe("");
    }
  });

  it("needs: config loads config.yaml first: a broken one is exit 2 with the fix, and run never starts", async () => {
    writeFileSync(join(userHome, ".hermes", "config.yaml"), "agent:\n  max_turns: ninety\n");
    let ran = false;
    const configured = defineCommand({
      name: "configured",
      description: "test command",
      needs: "config",
      run: () => {
        ran = true;
        return 0;
      },
    });
    const result = await run(configured, []);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("agent.max_turns");
    expect(result.stderr).toContain("hermes config check");
    expect(ran).toBe(false);
  });

  it("a command with subcommands: -p on the subcommand, the default subcommand, and none at all", async () => {
    const seen: string[] = [];
    const nested = defineCommand({
      name: "nested",
      description: "test command",
      needs: "home",
      defaultSubcommand: "list",
      parse: (cmd, action) => {
        cmd.command("list").action(
          action((ctx) => {
            seen.push(`list ${ctx.home}`);
            return 0;
          }),
        );
        cmd.command("boom").action(
          action(() => {
            throw new Error("exploded");
          }),
        );
      },
    });
    expect((await run(nested, ["-p", "a"])).code).toBe(0);
    expect((await run(nested, ["list", "-p", "b"])).code).toBe(0);
    expect(seen).toEqual([
      `list ${join(userHome, ".hermes", "profiles", "a")}`,
      `list ${join(userHome, ".hermes", "profiles", "b")}`,
    ]);
    const boom = await run(nested, ["boom", "-v"]);
    expect(boom.code).toBe(1);
    expect(boom.stderr).toMatch(/^hermes nested: exploded\nError: exploded\n\s+at /);
    const unknown = await run(nested, ["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
  });
});

describe("profile lookup of a ported command (hermes send)", () => {
  const work = () => join(userHome, ".hermes", "profiles", "work");

  it("`hermes send … -p work` and RunOptions.profile both read the work profile's .env", async () => {
    for (const [argv, options] of [
      [["-t", "telegram", "hi", "-p", "work"], {}],
      [["-t", "telegram", "hi"], { profile: "work" }],
    ] as const) {
      const stderr = new Capture();
      const code = await runSendCommand([...argv], { env: { HOME: userHome }, stderr, ...options });
      expect(code).toBe(2);
      expect(stderr.text).toBe(
        `hermes send: telegram is not set up: put TELEGRAM_BOT_TOKEN in ${work()}/.env.\n`,
      );
    }
  });

  it("`hermes -p work send …` through the program passes the profile on", async () => {
    const writes: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    });
    expect(await runCli(["-p", "work", "send", "-t", "telegram", "hi"])).toBe(2);
    expect(await runCli(["send", "-t", "telegram", "hi", "-p", "work"])).toBe(2);
    expect(await runCli(["-p", "../x", "send", "-t", "telegram", "hi"])).toBe(2);
    const text = writes.join("");
    expect(
      text.split(`TELEGRAM_BOT_TOKEN in ${join(userHome, ".hermes", "profiles", "work")}/.env.`),
    ).toHaveLength(3);
    expect(text).toContain('hermes send: invalid profile name "../x"');
  });
});
