import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { TEST_SERVER } from "../support/mcp-servers.js";

const llm = useFakeLlm({ models: ["fake-model", "other-model"] });
const KEY = "sk-or-v1-0123456789abcdef0123456789abcdef";

/** A provider that is up but refuses every key, as one with a revoked key does. */
let refusing: Server;
let refusingUrl = "";
beforeAll(async () => {
  refusing = createServer((_req, res) => {
    res.writeHead(401, { "content-type": "application/json" });
    res.end('{"error":{"message":"invalid api key"}}');
  });
  await new Promise<void>((resolve) => refusing.listen(0, "127.0.0.1", resolve));
  refusingUrl = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => refusing.close(() => resolve())));

/** The ✓/⚠/✗ line naming `name`, so assertions read like what the user sees. */
function lineOf(stdout: string, name: string): string {
  return stdout.split("\n").find((l) => l.includes(` ${name}:`)) ?? `(no line for ${name})`;
}

describe("hermes doctor", () => {
  it("passes on a healthy home: config valid, provider reachable with its model, MCP server starts", async () => {
    const { home, cwd } = tempHome(
      fakeProviderConfig(
        llm.url,
        `mcp_servers:\n  probe:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(TEST_SERVER)}]\n`,
      ),
    );
    for (const dir of ["logs", "memories", "skills", "sessions", "cron"]) mkdirSync(join(home, dir));
    const result = await runHermes(["doctor"], { home, cwd, timeoutMs: 60_000 });
    expect(result.stdout).toMatch(/✓ config\.yaml: valid/);
    expect(lineOf(result.stdout, "primary: custom")).toMatch(
      /✓ .*reachable, no key needed, model fake-model/,
    );
    expect(lineOf(result.stdout, "probe")).toMatch(/✓ probe: started, \d+ tools? \(stdio\)/);
    expect(lineOf(result.stdout, "Node.js")).toContain("✓");
    expect(lineOf(result.stdout, "FTS5")).toContain("✓ FTS5: available");
    expect(lineOf(result.stdout, "terminal backend")).toContain("✓ terminal backend: local");
    expect(result.stdout).not.toContain("✗");
    expect(result.code).toBe(0);
    // A probe is a listing, never a chat request.
    expect(llm.chatRequests).toHaveLength(0);
  });

  it("reports each problem with its fix, and --fix repairs the safe ones but never the config", async () => {
    const config = `${fakeProviderConfig(llm.url)}  max_turn: 5\nplatforms:\n  telegram:\n    enabled: true\nmcp_servers:\n  broken:\n    command: hermes-no-such-mcp-server\n`;
    const { home, cwd } = tempHome(config);
    writeFileSync(join(home, ".env"), `OPENROUTER_API_KEY=${KEY}\nSLACK_BOT_TOKEN=xoxb-1234567890-abcdef\n`);
    chmodSync(join(home, ".env"), 0o644);
    writeFileSync(join(home, "auth.json"), '{"version": 1, "providers": {}}');
    chmodSync(join(home, "auth.json"), 0o640);
    // A session store from a chat, then damaged the way an old or interrupted version leaves it.
    llm.enqueue(reply().text("hello"));
    expect((await runHermes(["-z", "hi"], { home, cwd })).code).toBe(0);
    const db = new Database(join(home, "state.db"));
    db.exec("DROP INDEX idx_sessions_source");
    db.close();

    const before = await runHermes(["doctor"], { home, cwd, timeoutMs: 60_000 });
    expect(before.code).toBe(1);
    expect(before.stdout).toContain(
      '✗ config.yaml line 7: unknown key "agent.max_turn" (did you mean "agent.max_turns"?)',
    );
    expect(before.stdout).toContain("→ Rename agent.max_turn to agent.max_turns");
    expect(lineOf(before.stdout, ".env permissions")).toContain("is mode 644: other users can read");
    expect(lineOf(before.stdout, "auth.json permissions")).toContain("is mode 640");
    expect(lineOf(before.stdout, "state.db")).toMatch(
      /✗ state\.db: 1 schema problem: missing index idx_sessions_source/,
    );
    expect(lineOf(before.stdout, "broken")).toContain("✗ broken:");
    expect(before.stdout).toContain("→ Run it by hand to see why: hermes mcp test broken");
    expect(lineOf(before.stdout, "telegram")).toContain(
      "platforms.telegram.enabled is true but TELEGRAM_BOT_TOKEN is not set",
    );
    expect(lineOf(before.stdout, "slack")).toContain("SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET");
    expect(before.stdout).toMatch(/can be repaired with: hermes doctor --fix/);
    // The report carries no secret: neither the key nor the token appears.
    expect(before.stdout + before.stderr).not.toContain(KEY);
    expect(before.stdout + before.stderr).not.toContain("xoxb-1234567890-abcdef");

    const fixed = await runHermes(["doctor", "--fix"], { home, cwd, timeoutMs: 60_000 });
    expect(fixed.stderr).toContain("repaired .env permissions");
    expect(fixed.stderr).toContain("repaired auth.json permissions");
    expect(fixed.stderr).toContain("repaired state.db");
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, "auth.json")).mode & 0o777).toBe(0o600);
    expect(lineOf(fixed.stdout, "state.db")).toBe("  ✓ state.db: integrity ok, schema complete");
    for (const dir of ["logs", "memories", "skills", "sessions", "cron"]) {
      expect(statSync(join(home, dir)).isDirectory()).toBe(true);
    }
    // What is not safe to change stays as the user wrote it, still reported.
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(config);
    expect(fixed.stdout).toContain('unknown key "agent.max_turn"');
    expect(fixed.code).toBe(1);
  });

  it("says which provider refused its key, and which key to fix", async () => {
    const { home, cwd } = tempHome(
      `model:\n  provider: openrouter\n  base_url: ${refusingUrl}\n  default: some/model\nfallback_providers:\n  - provider: custom\n    model: fake-model\n    base_url: ${llm.url}\n`,
    );
    writeFileSync(join(home, ".env"), `OPENROUTER_API_KEY=${KEY}\n`, { mode: 0o600 });
    const result = await runHermes(["doctor"], { home, cwd, timeoutMs: 60_000 });
    expect(lineOf(result.stdout, "primary: openrouter")).toContain("refused the key (HTTP 401)");
    expect(result.stdout).toContain("→ Check the key: set OPENROUTER_API_KEY in .env");
    expect(lineOf(result.stdout, "fallback 1: custom")).toContain("✓");
    expect(result.stdout + result.stderr).not.toContain(KEY);
    expect(result.code).toBe(1);
  });

  it("with no provider at all, points to hermes setup; a config that does not load skips what needs it", async () => {
    const none = tempHome("");
    const result = await runHermes(["doctor"], { ...none, env: { PATH: process.env.PATH ?? "" } });
    expect(lineOf(result.stdout, "primary")).toContain("✗ primary: No model provider is configured.");
    expect(result.stdout).toMatch(/→ Run:? hermes setup/);
    expect(result.stdout.match(/hermes setup/g)).toHaveLength(1);
    const broken = tempHome("agent:\n  max_turns: ninety\n");
    const bad = await runHermes(["doctor"], broken);
    expect(bad.stdout).toContain('expected a number for agent.max_turns, got "ninety"');
    expect(bad.stdout).toContain("were not checked");
    expect(bad.code).toBe(1);
  });
});

describe("hermes config set and check through the CLI", () => {
  it("set refuses a misspelt key with a did-you-mean; --force writes it; check then exits 1", async () => {
    const { home, cwd } = tempHome("agent:\n  max_turns: 5\n");
    const refused = await runHermes(["config", "set", "display.show_reasoningg", "true"], { home, cwd });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('(did you mean "display.show_reasoning"?)');
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe("agent:\n  max_turns: 5\n");
    expect((await runHermes(["config", "check"], { home, cwd })).code).toBe(0);
    const forced = await runHermes(["config", "set", "display.show_reasoningg", "true", "--force"], {
      home,
      cwd,
    });
    expect(forced.code).toBe(0);
    const check = await runHermes(["config", "check"], { home, cwd });
    expect(check.code).toBe(1);
    expect(check.stderr).toContain('unknown key "display.show_reasoningg"');
  });
});

describe("hermes status and dump", () => {
  it("status shows the model and masked keys; --all lists unset ones; --deep probes the provider", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    writeFileSync(
      join(home, ".env"),
      `OPENROUTER_API_KEY=${KEY}\nTELEGRAM_BOT_TOKEN=123456:telegram-secret-token\n`,
      {
        mode: 0o600,
      },
    );
    const plain = await runHermes(["status"], { home, cwd });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/Model\s+fake-model/);
    expect(plain.stdout).toMatch(/Provider\s+custom/);
    expect(plain.stdout).toMatch(/OPENROUTER_API_KEY\s+✓ sk-o…cdef/);
    expect(plain.stdout).not.toContain("ANTHROPIC_API_KEY");
    expect(plain.stdout).toMatch(/telegram\s+✓ TELEGRAM_BOT_TOKEN set/);
    expect(plain.stdout).toMatch(/Gateway\s+stopped/);
    expect(plain.stdout).not.toContain(KEY);
    expect(plain.stdout).not.toContain("telegram-secret-token");

    const all = await runHermes(["status", "--all"], { home, cwd });
    expect(all.stdout).toMatch(/ANTHROPIC_API_KEY\s+✗ \(not set\)/);
    expect(all.stdout).toMatch(/discord\s+✗ DISCORD_BOT_TOKEN not set/);
    // Every key's mark stands in one column, the longest names included.
    const keyRows = all.stdout.split("\n").filter((l) => /^ {2}[A-Z][A-Z0-9_]+ +[✓✗] /.test(l));
    expect(keyRows.length).toBeGreaterThan(20);
    expect(new Set(keyRows.map((l) => l.search(/[✓✗]/))).size).toBe(1);

    const deep = await runHermes(["status", "--deep"], { home, cwd, timeoutMs: 30_000 });
    expect(deep.stdout).toMatch(/✓ primary: custom: .*reachable/);
    expect(deep.code).toBe(0);
  });

  it("dump says set/not set, --show-keys only the ends of a key, and fallbacks without their keys", async () => {
    const { home, cwd } = tempHome(
      `${fakeProviderConfig(llm.url)}terminal:\n  backend: docker\nfallback_providers:\n  - provider: openrouter\n    model: x/y\n    api_key: ${KEY}\n`,
    );
    writeFileSync(join(home, ".env"), `OPENROUTER_API_KEY=${KEY}\n`, { mode: 0o600 });
    const dump = await runHermes(["dump"], {
      home,
      cwd,
      env: { PATH: process.env.PATH ?? "", GITHUB_TOKEN: "ghp_shellonlytoken1234567890" },
    });
    expect(dump.code).toBe(0);
    expect(dump.stdout).toMatch(/^--- hermes dump ---\n/);
    expect(dump.stdout).toMatch(/OPENROUTER_API_KEY\s+set\n/);
    expect(dump.stdout).toMatch(/GITHUB_TOKEN\s+set \(shell only, not in \.env\)/);
    expect(dump.stdout).toContain("terminal:         docker");
    expect(dump.stdout).toContain("terminal.backend: docker");
    expect(dump.stdout).toContain("fallback_providers: openrouter:x/y");
    expect(dump.stdout).toMatch(/--- end dump ---\n$/);
    const shown = await runHermes(["dump", "--show-keys"], { home, cwd });
    expect(shown.stdout).toMatch(/OPENROUTER_API_KEY\s+sk-o…cdef\n/);
    // A broken config is when a support summary is needed most: it still comes, saying why.
    writeFileSync(join(home, "config.yaml"), `agent:\n  max_turns: ninety\n`);
    const broken = await runHermes(["dump"], { home, cwd });
    expect(broken.code).toBe(0);
    expect(broken.stdout).toMatch(/config_error: .*expected a number for agent\.max_turns, got "ninety"/);
    const status = await runHermes(["status"], { home, cwd });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/config\.yaml\s+✗ does not load, defaults shown: /);
    for (const out of [dump.stdout, shown.stdout, broken.stdout, status.stdout]) {
      expect(out).not.toContain(KEY);
      expect(out).not.toContain("0123456789abcdef0123");
      expect(out).not.toContain("ghp_shellonlytoken");
    }
  });
});
