import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, HERMES_BIN, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { EVERYTHING_BIN, FILESYSTEM_BIN, TEST_SERVER } from "../support/mcp-servers.js";

const llm = useFakeLlm();

type ChatBody = {
  messages: Array<{ role: string; content: string | null }>;
  tools?: Array<{ function: { name: string } }>;
};
const body = (request: number): ChatBody => llm.chatRequests[request]!.body as ChatBody;

describe("MCP servers in a chat", () => {
  it("offers an MCP server's tools to the model and returns their results to it", async () => {
    const { home, cwd } = tempHome();
    const dir = realpathSync(cwd);
    writeFileSync(join(dir, "fruit.txt"), "The secret fruit is a pineapple.\n");
    writeFileSync(
      join(home, "config.yaml"),
      fakeProviderConfig(
        llm.url,
        `mcp_servers:\n  filesystem:\n    command: ${JSON.stringify(FILESYSTEM_BIN)}\n    args: [${JSON.stringify(dir)}]\n` +
          `  everything:\n    command: ${JSON.stringify(EVERYTHING_BIN)}\n    args: [stdio]\n`,
      ),
    );
    llm.enqueue(
      reply().toolCall("mcp_filesystem_read_text_file", { path: join(dir, "fruit.txt") }),
      reply().toolCall("mcp_everything_echo", { message: "pineapple confirmed" }),
      reply().text("The file says the secret fruit is a pineapple."),
    );
    const result = await runHermes(["-z", "what is the secret fruit in fruit.txt?"], { home, cwd });
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("The file says the secret fruit is a pineapple.\n");
    expect(result.code).toBe(0);
    const offered = body(0).tools?.map((t) => t.function.name) ?? [];
    expect(offered).toContain("mcp_filesystem_read_text_file");
    expect(offered).toContain("read_file");
    expect(offered).toContain("mcp_everything_echo");
    const toolMessage = body(1).messages.find((m) => m.role === "tool");
    expect(toolMessage?.content).toBe("The secret fruit is a pineapple.\n");
    const echoed = body(2)
      .messages.filter((m) => m.role === "tool")
      .at(-1);
    expect(echoed?.content).toContain("pineapple confirmed");
  });

  it("--list-tools lists the MCP tools with their toolset", async () => {
    const { home, cwd } = tempHome(
      `mcp_servers:\n  probe:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(TEST_SERVER)}]\n`,
    );
    const result = await runHermes(["--list-tools"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^mcp_probe_echo +mcp-probe +Echo the text back\.$/m);
    expect(result.stdout).toMatch(/^read_file +file /m);
  });

  it("prints one clear warning for a server that cannot start, and still answers", async () => {
    const { home, cwd } = tempHome();
    writeFileSync(
      join(home, "config.yaml"),
      fakeProviderConfig(
        llm.url,
        "mcp_servers:\n  broken:\n    command: hermes-no-such-mcp-server\n    args: [--flag]\n",
      ),
    );
    llm.enqueue(reply().text("Hello anyway."));
    const result = await runHermes(["-z", "hi"], { home, cwd });
    expect(result.stdout).toBe("Hello anyway.\n");
    expect(result.code).toBe(0);
    expect(result.stderr.trimEnd().split("\n")).toEqual([
      'hermes: warning: MCP server "broken" failed to start: command "hermes-no-such-mcp-server" was not found; ' +
        "check mcp_servers.broken.command (is it installed and on PATH?); continuing without it",
    ]);
    expect(body(0).tools?.some((t) => t.function.name.startsWith("mcp_"))).toBe(false);
  });
});

describe("hermes mcp", () => {
  it("adds, lists, tests and removes a server", async () => {
    const { home, cwd } = tempHome("# keep this comment\ntoolsets:\n- hermes-cli\n");
    const add = await runHermes(
      ["mcp", "add", "probe", "--command", process.execPath, "--include", "echo,pid", "--", TEST_SERVER],
      { home, cwd },
    );
    expect(add.code).toBe(0);
    expect(add.stdout).toContain('Added MCP server "probe" (stdio)');
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toContain("# keep this comment");

    const list = await runHermes(["mcp", "list"], { home, cwd });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("probe");
    expect(list.stdout).toContain("only echo, pid");

    const test = await runHermes(["mcp", "test", "probe"], { home, cwd });
    expect(test.code).toBe(0);
    expect(test.stdout).toMatch(
      /^✓ Connected to "probe" \(hermes-test-server 1\.0\.0\) over stdio in \d+ ms\n/,
    );
    expect(test.stdout).toContain(
      "2 tools:\n  mcp_probe_pid   Report this server's process id.\n  mcp_probe_echo  Echo the text back.\n",
    );
    expect(test.stderr).toContain('Connecting to "probe"');

    const remove = await runHermes(["mcp", "remove", "probe"], { home, cwd });
    expect(remove).toMatchObject({ code: 0, stdout: 'Removed MCP server "probe".\n' });
    const empty = await runHermes(["mcp", "list"], { home, cwd });
    expect(empty.stdout).toMatch(/^No MCP servers configured/);
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(
      "# keep this comment\ntoolsets:\n- hermes-cli\n",
    );
  });

  it("exits 1 with the reason when a server fails its test, and 2 on a usage error", async () => {
    const { home, cwd } = tempHome("mcp_servers:\n  ghost:\n    command: hermes-no-such-mcp-server\n");
    const test = await runHermes(["mcp", "test", "ghost"], { home, cwd });
    expect(test.code).toBe(1);
    expect(test.stdout).toBe("");
    expect(test.stderr).toContain('✗ "ghost" failed: command "hermes-no-such-mcp-server" was not found');
    const usage = await runHermes(["mcp", "add", "x"], { home, cwd });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/give either --command .* or --url/);
  });
});

const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

/** The built `hermes` in a private tmux server, read by polling the screen (as interactive.test.ts does). */
function terminal(home: string, cwd: string) {
  const socket = `hermes-mcp-e2e-${process.pid}-${randomBytes(4).toString("hex")}`;
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    HERMES_HOME: home,
    TERM: "xterm-256color",
  };
  const command = [
    "env -i",
    ...Object.entries(env).map(([k, v]) => quote(`${k}=${v}`)),
    quote(process.execPath),
    quote(HERMES_BIN),
    '; echo "[exit $?]"; sleep 600',
  ].join(" ");
  const tmux = (...args: string[]) =>
    execFileSync("tmux", ["-u", "-L", socket, ...args], { encoding: "utf8" });
  tmux("-f", "/dev/null", "new-session", "-d", "-x", "160", "-y", "50", "-c", cwd, command);
  const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-300", "-t", "0");
  return {
    send(text: string) {
      tmux("send-keys", "-t", "0", "-l", text);
      tmux("send-keys", "-t", "0", "Enter");
    },
    async waitFor(expected: string, timeoutMs = 20_000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      let seen = "";
      while (Date.now() < deadline) {
        seen = screen();
        if (seen.includes(expected)) return seen;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`Timed out waiting for ${expected}. Screen:\n${seen}`);
    },
    kill: () => spawnSync("tmux", ["-L", socket, "kill-server"]),
  };
}

describe.skipIf(!hasTmux)("/reload-mcp in the interactive chat", () => {
  it("warns about a broken server above the prompt, then adds a server's tools mid-session", async () => {
    const { home, cwd } = tempHome(
      fakeProviderConfig(llm.url, "mcp_servers:\n  broken:\n    command: hermes-no-such-mcp-server\n"),
    );
    const term = terminal(home, cwd);
    try {
      await term.waitFor('warning: MCP server "broken" failed to start: command "hermes-no-such-mcp-server"');
      writeFileSync(
        join(home, "config.yaml"),
        fakeProviderConfig(
          llm.url,
          `mcp_servers:\n  probe:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(TEST_SERVER)}]\n    tools: {include: [echo]}\n`,
        ),
      );
      term.send("/reload-mcp");
      const reloaded = await term.waitFor("new tool list from your next message");
      expect(reloaded).toMatch(/✓ probe stdio · 1 tool/);
      expect(reloaded).toContain("+ mcp_probe_echo");

      llm.enqueue(reply().toolCall("mcp_probe_echo", { text: "ping" }), reply().text("Pong came back."));
      term.send("use the probe");
      await term.waitFor("Pong came back.");
      expect(body(0).tools?.map((t) => t.function.name)).toContain("mcp_probe_echo");
      expect(body(1).messages.find((m) => m.role === "tool")?.content).toBe("echo: ping");

      term.send("/quit");
      await term.waitFor("[exit 0]");
    } finally {
      term.kill();
    }
  });
});
