/**
 * The CLI run from source, as a developer runs it (`npx tsx src/cli/main.ts ...`). Tool
 * descriptions are .md files imported as text: the bundle inlines them, and from source
 * src/cli/dev-markdown.ts adds the module hook Node needs for them. Without it every command that
 * builds the tool list failed with `Unknown file extension ".md"`.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { reply, startFakeLlm } from "../../support/fake-llm.js";

const ROOT = resolve(import.meta.dirname, "../../..");
const TSX = join(ROOT, "node_modules", "tsx", "dist", "cli.mjs");
const scratch = mkdtempSync(join(tmpdir(), "hermes-dev-entry-"));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `tsx src/cli/main.ts ARGS` in a fresh home. */
function fromSource(args: string[], home = mkdtempSync(join(scratch, "home-"))): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [TSX, join(ROOT, "src", "cli", "main.ts"), ...args],
      {
        cwd: scratch,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, HERMES_HOME: home, NO_COLOR: "1" },
        timeout: 90_000,
      },
      (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the CLI from source (tsx src/cli/main.ts)", () => {
  it("`dashboard --status` runs (its command module imports the cronjob tool and its .md)", async () => {
    const run = await fromSource(["dashboard", "--status"]);
    expect(run.stderr).not.toContain("Unknown file extension");
    expect(run.stdout).toContain("Dashboard: not running");
    expect(run.code).toBe(1);
  }, 90_000);

  it("a one-shot sends the model each tool's description read from its .md file", async () => {
    const llm = await startFakeLlm();
    try {
      const home = mkdtempSync(join(scratch, "home-z-"));
      writeFileSync(
        join(home, "config.yaml"),
        `model:\n  provider: custom\n  base_url: ${llm.url}\n  default: fake-model\nagent:\n  api_max_retries: 0\n`,
      );
      llm.enqueue(reply().text("done"));
      const run = await fromSource(["-z", "say done"], home);
      expect(run.stderr).not.toContain("Unknown file extension");
      expect(run.stdout.trim()).toBe("done");
      expect(run.code).toBe(0);
      const body = llm.chatRequests[0]?.body as {
        tools?: { function: { name: string; description: string } }[];
      };
      const described = new Map((body.tools ?? []).map((t) => [t.function.name, t.function.description]));
      const terminal = readFileSync(join(ROOT, "src", "tools", "terminal", "terminal.md"), "utf8");
      expect(described.get("terminal")).toContain(terminal.trim().split("\n")[0]);
      const readFile = readFileSync(join(ROOT, "src", "tools", "file", "read-file.md"), "utf8");
      expect(described.get("read_file")).toContain(readFile.trim().split("\n")[0]);
    } finally {
      await llm.close();
    }
  }, 90_000);
});
