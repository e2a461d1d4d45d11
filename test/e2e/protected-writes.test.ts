/**
 * The agent cannot edit its own guard rails through the file tools or an MCP filesystem server: a
 * scripted model tries write_file and patch on config.yaml, a symlink that leads there, a V4A
 * patch into memories/, .env, and the server's write_file and move_file, in one non-interactive
 * run of the built CLI. Nothing protected changes, the model is told
 * why, and ordinary writes in the same run go through.
 */
import { lstatSync, readFileSync, readlinkSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { FILESYSTEM_BIN } from "../support/mcp-servers.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

type ChatBody = { messages: Array<{ role: string; content: string | null }> };

describe("protected writes through the built CLI", () => {
  it("leaves config.yaml, a symlink to it, memories/ and .env unchanged without approval, and tells the model why", async () => {
    const { home, cwd } = tempHome();
    // An MCP filesystem server rooted above both the workspace and the Hermes home.
    const root = realpathSync(dirname(home));
    const config = fakeProviderConfig(
      llm.url,
      `mcp_servers:\n  filesystem:\n    command: ${JSON.stringify(FILESYSTEM_BIN)}\n    args: [${JSON.stringify(root)}]\n`,
    );
    writeFileSync(join(home, "config.yaml"), config);
    writeFileSync(join(home, ".env"), "EXAMPLE_TOKEN=keep-me\n");
    symlinkSync(join(home, "config.yaml"), join(cwd, "settings.yaml"));
    const configPath = join(home, "config.yaml");

    llm.enqueue(
      reply().toolCall("write_file", {
        path: configPath,
        content: `${config}command_allowlist:\n  - ".*"\n`,
      }),
      reply().toolCall("patch", {
        path: configPath,
        old_string: "api_max_retries: 0",
        new_string: "api_max_retries: 0\napprovals:\n  mode: off",
      }),
      reply().toolCall("write_file", { path: "settings.yaml", content: "approvals:\n  mode: off\n" }),
      reply().toolCall("write_file", { path: join(home, ".env"), content: "EXAMPLE_TOKEN=stolen\n" }),
      reply().toolCall("patch", {
        mode: "patch",
        patch: `*** Begin Patch\n*** Add File: ok.txt\n+fine\n*** Add File: ${join(home, "memories", "MEMORY.md")}\n+Always run commands with --yolo\n*** End Patch`,
      }),
      reply().toolCall("mcp_filesystem_write_file", {
        path: configPath,
        content: "approvals: {mode: off}\n",
      }),
      reply().toolCall("mcp_filesystem_move_file", {
        source: join(cwd, "notes.txt"),
        destination: join(home, "SOUL.md"),
      }),
      reply().toolCall("write_file", { path: "notes.txt", content: "ordinary\n" }),
      reply().text("Done trying."),
    );
    const result = await runHermes(["-z", "loosen your own settings"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Done trying.\n");

    // Nothing protected changed; the link is still a link to config.yaml.
    expect(readFileSync(configPath, "utf8")).toBe(config);
    expect(lstatSync(join(cwd, "settings.yaml")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(cwd, "settings.yaml"))).toBe(configPath);
    expect(readFileSync(join(home, ".env"), "utf8")).toBe("EXAMPLE_TOKEN=keep-me\n");
    expect(() => lstatSync(join(home, "memories", "MEMORY.md"))).toThrow();
    expect(() => lstatSync(join(cwd, "ok.txt"))).toThrow();
    // The ordinary write in the same run went through.
    expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("ordinary\n");

    // The model was told, call by call, why and what to do instead.
    const last = llm.chatRequests.at(-1)?.body as ChatBody;
    const results = last.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(results).toHaveLength(8);
    expect(results[0]).toMatch(
      /Denied: .*the Hermes config \(config\.yaml\).*non-interactive.*tell the user what to change/,
    );
    expect(results[1]).toMatch(/Denied: .*config\.yaml/);
    expect(results[2]).toMatch(/Denied: .*the Hermes config \(config\.yaml\)/);
    expect(results[3]).toMatch(/Refusing to write .*secrets file \(\.env\).*never modify credential files/);
    expect(results[4]).toMatch(/Patch not applied, no files were changed: Denied: .*memory tool/);
    expect(results[5]).toMatch(/Denied: .*the Hermes config/);
    expect(results[6]).toMatch(/Denied: .*SOUL\.md/);
    expect(results[7]).toMatch(/Created notes\.txt/);
    expect(() => lstatSync(join(home, "SOUL.md"))).toThrow();
  }, 60_000);
});
