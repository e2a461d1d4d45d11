// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings hold literal config ${VAR} syntax
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runMcpCommand } from "../../../../src/cli/commands/mcp.js";
import { TEST_SERVER } from "../../../support/mcp-servers.js";
import { sink } from "../../../support/text-sink.js";

const homes: string[] = [];
afterEach(() => {
  for (const dir of homes.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempHome(config?: string): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-mcp-cli-"));
  homes.push(dir);
  if (config !== undefined) writeFileSync(join(dir, "config.yaml"), config);
  return dir;
}

async function mcp(home: string, args: string[], env: Record<string, string> = {}) {
  const stdout = sink();
  const stderr = sink();
  const stdin = new PassThrough();
  stdin.end();
  const code = await runMcpCommand(args, {
    env: { HERMES_HOME: home, NO_COLOR: "1", PATH: process.env.PATH ?? "", ...env },
    stdout,
    stderr,
    stdin: stdin as unknown as NodeJS.ReadStream,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const configOf = (home: string) =>
  parse(readFileSync(join(home, "config.yaml"), "utf8")) as Record<string, unknown>;

describe("hermes mcp add / list / remove", () => {
  it("adds stdio and HTTP servers, keeping comments and other keys, and lists them", async () => {
    const home = tempHome("# my settings\nmodel:\n  default: some/model  # chosen by hand\n");
    const stdio = await mcp(home, [
      "add",
      "fs",
      "--command",
      "npx",
      "--args",
      "-y",
      "@modelcontextprotocol/server-filesystem",
      "/tmp",
      "--env",
      "DEBUG=1",
      "--exclude",
      "write_file,move_file",
    ]);
    expect(stdio).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('Added MCP server "fs" (stdio)'),
    });
    const http = await mcp(home, [
      "add",
      "docs",
      "--url",
      "https://mcp.example.com/mcp",
      "--header",
      "Authorization: Bearer ${DOCS_TOKEN}",
      "--timeout",
      "30",
    ]);
    expect(http.code).toBe(0);
    expect(http.stderr).not.toContain("plain text");
    const text = readFileSync(join(home, "config.yaml"), "utf8");
    expect(text).toContain("# my settings");
    expect(text).toContain("default: some/model  # chosen by hand");
    expect(configOf(home)["mcp_servers"]).toEqual({
      fs: {
        command: "npx",
        args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
        env: { DEBUG: "1" },
        tools: { exclude: ["write_file", "move_file"] },
      },
      docs: {
        url: "https://mcp.example.com/mcp",
        headers: { Authorization: "Bearer ${DOCS_TOKEN}" },
        timeout: 30,
      },
    });
    expect(stdio.stderr).toContain("plain text");

    const list = await mcp(home, ["list"]);
    expect(list.code).toBe(0);
    const lines = list.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^name\s+transport\s+command \/ url\s+enabled\s+tools$/);
    expect(lines[1]).toMatch(
      /^fs\s+stdio\s+npx -y @modelcontextprotocol\/server-filesystem \/tmp\s+yes\s+all but write_file, move_file$/,
    );
    expect(lines[2]).toMatch(/^docs\s+http\s+https:\/\/mcp\.example\.com\/mcp\s+yes\s+all$/);

    const json = JSON.parse((await mcp(home, ["list", "--json"])).stdout) as {
      servers: Array<Record<string, unknown>>;
    };
    expect(json.servers[1]).toMatchObject({ name: "docs", headers: ["Authorization"], timeout: 30 });
    expect(JSON.stringify(json)).not.toContain("DOCS_TOKEN");

    expect((await mcp(home, ["remove", "fs"])).stdout).toBe('Removed MCP server "fs".\n');
    expect(Object.keys(configOf(home)["mcp_servers"] as object)).toEqual(["docs"]);
    expect((await mcp(home, ["rm", "docs"])).code).toBe(0);
    expect(configOf(home)["mcp_servers"]).toBeUndefined();
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toContain("# chosen by hand");
    expect((await mcp(home, ["list"])).stdout).toMatch(/^No MCP servers configured/);
  });

  it.each<[string, string[], number, RegExp]>([
    ["neither --command nor --url", ["add", "x"], 2, /give either --command .* or --url/],
    ["both --command and --url", ["add", "x", "--command", "a", "--url", "http://h/"], 2, /give either/],
    ["a bad name", ["add", "no spaces", "--command", "a"], 2, /invalid server name "no spaces"/],
    ["a bad --env", ["add", "x", "--command", "a", "--env", "NOEQUALS"], 2, /--env expects KEY=VALUE/],
    ["a bad url", ["add", "x", "--url", "not a url"], 2, /mcp_servers\.x\.url: "not a url" is not a URL/],
    ["removing a server that is not there", ["remove", "ghost"], 1, /no MCP server named "ghost"/],
    ["testing a server that is not there", ["test", "ghost"], 1, /no MCP server named "ghost"/],
  ])("refuses %s", async (_what, args, code, message) => {
    const home = tempHome();
    const result = await mcp(home, args);
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe("");
  });

  it("will not replace a configured server without --force", async () => {
    const home = tempHome("mcp_servers:\n  fs:\n    command: old\n");
    const again = await mcp(home, ["add", "fs", "--command", "new"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already configured; use --force/);
    expect((await mcp(home, ["add", "fs", "--command", "new", "--force"])).code).toBe(0);
    expect(configOf(home)["mcp_servers"]).toEqual({ fs: { command: "new" } });
  });

  it("lists a broken entry's problem and exits 2", async () => {
    const home = tempHome("mcp_servers:\n  ok:\n    command: a\n  bad:\n    timeout: soon\n");
    const result = await mcp(home, ["list"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^name/);
    expect(result.stdout).toContain("ok");
    expect(result.stderr).toMatch(/mcp_servers\.bad\.timeout: expected a positive number of seconds/);
  });
});

describe("hermes mcp test", () => {
  it("connects, lists the tools with their descriptions and reports the time", async () => {
    const home = tempHome(
      `mcp_servers:\n  probe:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(TEST_SERVER)}]\n    tools:\n      include: [echo, sleep]\n`,
    );
    const result = await mcp(home, ["test", "probe"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Connecting to "probe"');
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^✓ Connected to "probe" \(hermes-test-server 1\.0\.0\) over stdio in \d+ ms$/);
    expect(lines.slice(1)).toEqual([
      "2 tools:",
      "  mcp_probe_echo   Echo the text back.",
      "  mcp_probe_sleep  Answer after ms milliseconds.",
    ]);
  });

  it("exits 1 with the reason and the server's output when it cannot start", async () => {
    const home = tempHome(
      `mcp_servers:\n  sick:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(TEST_SERVER)}]\n    env:\n      MCP_TEST_CRASH_ON_START: out of cheese\n`,
    );
    const result = await mcp(home, ["test", "sick"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('✗ "sick" failed: the server exited before it finished starting');
    expect(result.stderr).toContain("fatal: out of cheese");
  });
});
