/**
 * MCP filesystem servers against the protected-path list, with the real
 * `@modelcontextprotocol/server-filesystem` rooted at a temp dir that holds a fake user home and
 * Hermes home. The server itself would happily write anywhere under its root; the guard is ours.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type McpManager, startMcpServers } from "../../../../src/tools/mcp/manager.js";
import { candidatePaths, isWritingTool, pathArguments } from "../../../../src/tools/mcp/write-guard.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import type { ApprovalDecision, ApprovalRequest } from "../../../../src/tools/types.js";
import { FILESYSTEM_BIN } from "../../../support/mcp-servers.js";
import { makeToolContext } from "../../../support/tool-context.js";

const CONFIG = "model: test/model\n";

describe("MCP filesystem server writes to protected paths", () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "hermes-mcp-guard-")));
  const user = join(root, "user");
  const home = join(user, ".hermes");
  const work = join(root, "work");
  const registry = new ToolRegistry();
  let manager: McpManager;
  let answer: ApprovalDecision = "deny";
  const asked: ApprovalRequest[] = [];
  const ctx = makeToolContext({
    cwd: work,
    home,
    env: { PATH: process.env.PATH, HOME: user },
    requestApproval: async (request) => {
      asked.push(request);
      return answer;
    },
  });
  const exec = (tool: string, args: Record<string, unknown>) =>
    registry.execute(`mcp_filesystem_${tool}`, args, ctx);
  const config = () => readFileSync(join(home, "config.yaml"), "utf8");

  beforeAll(async () => {
    mkdirSync(join(home, "memories"), { recursive: true });
    mkdirSync(work);
    writeFileSync(join(home, "config.yaml"), CONFIG);
    writeFileSync(join(home, ".env"), "OPENAI_API_KEY=sk-test\n");
    writeFileSync(join(home, "memories", "MEMORY.md"), "remember\n");
    manager = startMcpServers({
      config: { filesystem: { command: FILESYSTEM_BIN, args: [root] } },
      registry,
      env: { PATH: process.env.PATH, HOME: user },
      onWarning: () => {},
    });
    await manager.ready;
  });
  afterAll(async () => {
    await manager.close();
  });
  beforeEach(() => {
    answer = "deny";
    asked.length = 0;
    writeFileSync(join(home, "config.yaml"), CONFIG);
  });

  it("denies write_file to config.yaml without approval, and says why", async () => {
    const out = await exec("write_file", {
      path: join(home, "config.yaml"),
      content: "command_allowlist: ['.*']\n",
    });
    expect(out.ok).toBe(false);
    expect(out.error).toMatch(/Not written: .*the Hermes config \(config\.yaml\).*not approved/);
    expect(config()).toBe(CONFIG);
    expect(asked).toEqual([
      {
        command: `mcp_filesystem_write_file ${join(home, "config.yaml")}`,
        reason: "the Hermes config (config.yaml)",
        patternKey: "protected_write",
        protectedPath: true,
      },
    ]);
  });

  it("writes config.yaml once the user approves", async () => {
    answer = "once";
    const out = await exec("write_file", { path: join(home, "config.yaml"), content: "model: other\n" });
    expect(out.ok, out.content).toBe(true);
    expect(config()).toBe("model: other\n");
  });

  it("denies move_file onto config.yaml and out of memories/, and create_directory under skills/", async () => {
    writeFileSync(join(work, "evil.yaml"), "approvals: {mode: off}\n");
    const onto = await exec("move_file", {
      source: join(work, "evil.yaml"),
      destination: join(home, "config.yaml"),
    });
    expect(onto.error).toMatch(/Not written/);
    const away = await exec("move_file", {
      source: join(home, "memories", "MEMORY.md"),
      destination: join(work, "MEMORY.md"),
    });
    expect(away.error).toMatch(/Not written: .*memory tool/);
    const mkdir = await exec("create_directory", { path: join(home, "skills", "evil") });
    expect(mkdir.error).toMatch(/skill_manage/);
    expect(asked).toHaveLength(3);
    expect(config()).toBe(CONFIG);
    expect(existsSync(join(work, "evil.yaml"))).toBe(true);
    expect(existsSync(join(home, "memories", "MEMORY.md"))).toBe(true);
    expect(existsSync(join(home, "skills"))).toBe(false);
  });

  it("denies edit_file on config.yaml", async () => {
    const out = await exec("edit_file", {
      path: join(home, "config.yaml"),
      edits: [{ oldText: "test/model", newText: "evil/model" }],
    });
    expect(out.error).toMatch(/Not written/);
    expect(config()).toBe(CONFIG);
  });

  it("refuses .env without asking, even when approval would be given", async () => {
    answer = "always";
    const out = await exec("write_file", { path: join(home, ".env"), content: "X=1\n" });
    expect(out.error).toMatch(/Refusing to write .*secrets file/);
    expect(asked).toEqual([]);
    expect(readFileSync(join(home, ".env"), "utf8")).toBe("OPENAI_API_KEY=sk-test\n");
  });

  it("catches the spellings a model might try: relative to the server's root, ~, file://, a symlink", async () => {
    symlinkSync(join(home, "config.yaml"), join(work, "settings.yaml"));
    for (const path of [
      "user/.hermes/config.yaml",
      "~/.hermes/config.yaml",
      pathToFileURL(join(home, "config.yaml")).href,
      join(work, "settings.yaml"),
      `${work}/../user/.hermes/./config.yaml`,
    ]) {
      const out = await exec("write_file", { path, content: "pwned\n" });
      expect(out.error, path).toMatch(/Not written/);
    }
    expect(config()).toBe(CONFIG);
    expect(lstatSync(join(work, "settings.yaml")).isSymbolicLink()).toBe(true);
  });

  it("leaves ordinary writes and every read alone", async () => {
    const write = await exec("write_file", { path: join(work, "notes.txt"), content: "hello\n" });
    expect(write.ok, write.content).toBe(true);
    expect(readFileSync(join(work, "notes.txt"), "utf8")).toBe("hello\n");
    const session = await exec("write_file", { path: join(home, "sessions-export.json"), content: "{}" });
    expect(session.ok, session.content).toBe(true);
    const read = await exec("read_text_file", { path: join(home, "config.yaml") });
    expect(read).toEqual({ ok: true, content: CONFIG });
    const list = await exec("list_directory", { path: home });
    expect(list.ok).toBe(true);
    const info = await exec("get_file_info", { path: join(home, ".env") });
    expect(info.ok).toBe(true);
    expect(asked).toEqual([]);
  });
});

describe("which MCP calls are judged", () => {
  it.each([
    ["write_file", true],
    ["edit_file", true],
    ["move_file", true],
    ["create_directory", true],
    ["createDirectory", true],
    ["fs.delete", true],
    ["rename-path", true],
    ["append_to_file", true],
    ["upload", true],
    ["save_note", true],
    ["copyFile", true],
    ["apply_patch", true],
    ["read_file", false],
    ["read_text_file", false],
    ["list_directory", false],
    ["search_files", false],
    ["directory_tree", false],
    ["get_file_info", false],
    ["list_allowed_directories", false],
    ["rewrite_query", false],
  ])("%s writes: %s", (name, writes) => {
    expect(isWritingTool({ name })).toBe(writes);
  });

  it("trusts a server that declares a tool writes", () => {
    expect(isWritingTool({ name: "apply", annotations: { readOnlyHint: false } })).toBe(true);
    expect(isWritingTool({ name: "apply", annotations: { destructiveHint: true } })).toBe(true);
    expect(isWritingTool({ name: "apply", annotations: { readOnlyHint: true } })).toBe(false);
  });

  it("takes paths from path-like keys at any depth, never from contents", () => {
    expect(
      pathArguments({
        path: "/a",
        content: "/etc/passwd",
        paths: ["/b", "/c", 3],
        source: "/d",
        destination: "/e",
        file_path: "/f",
        targetPath: "/g",
        files: [{ path: "/h", content: "/not" }],
        edits: [{ oldText: "/x", newText: "/y" }],
        dryRun: false,
      }),
    ).toEqual(["/a", "/b", "/c", "/d", "/e", "/f", "/g", "/h"]);
  });

  it("resolves relative paths against every base, ~ against every home, and skips URLs", () => {
    expect(candidatePaths("x/y", ["/srv", "/work"], ["/home/u"])).toEqual(["/srv/x/y", "/work/x/y"]);
    expect(candidatePaths("~/.bashrc", ["/srv"], ["/home/u", "/root"])).toEqual([
      "/home/u/.bashrc",
      "/root/.bashrc",
    ]);
    expect(candidatePaths("file:///etc/hosts", ["/srv"], [])).toEqual(["/etc/hosts"]);
    expect(candidatePaths("https://example.com/a", ["/srv"], [])).toEqual([]);
  });
});
