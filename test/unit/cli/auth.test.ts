import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { formatWait, runAuthCommand } from "../../../src/cli/commands/auth.js";
import { sink } from "../../support/text-sink.js";

const T0 = 1_700_000_000;
const KEY_A = "sk-or-v1-aaaaaaaaaaaaaaaaaaaaaaaaaaaa1111";
const KEY_B = "sk-or-v1-bbbbbbbbbbbbbbbbbbbbbbbbbbbb2222";
const KEY_ENV = "sk-or-v1-eeeeeeeeeeeeeeeeeeeeeeeeeeee9999";

const homes: string[] = [];
afterEach(() => {
  for (const dir of homes.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempHome(): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-auth-cli-"));
  homes.push(dir);
  return dir;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `hermes auth …` in-process against `home`. `tty` makes stdin a terminal that types its
 * text; `piped` ends a non-terminal stdin after its text; neither leaves stdin an empty pipe.
 */
async function auth(
  home: string,
  args: string[],
  opts: { tty?: string; piped?: string; env?: Record<string, string>; now?: number } = {},
): Promise<Run> {
  const stdout = sink();
  const stderr = sink();
  const stdin = new PassThrough();
  if (opts.tty !== undefined) {
    Object.assign(stdin, { isTTY: true });
    stdin.write(opts.tty);
  } else {
    stdin.end(opts.piped ?? "");
  }
  const code = await runAuthCommand(args, {
    env: { HERMES_HOME: home, NO_COLOR: "1", ...opts.env },
    stdin: stdin as unknown as NodeJS.ReadStream,
    stdout,
    stderr,
    now: () => opts.now ?? T0,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

function authJson(home: string): {
  credential_pool: Record<string, Record<string, unknown>[]>;
  suppressed_sources?: Record<string, string[]>;
} {
  return JSON.parse(readFileSync(join(home, "auth.json"), "utf8"));
}

describe("hermes auth add", () => {
  it("--help says a provider can be logged into with --type oauth, with examples", async () => {
    const run = await auth(tempHome(), ["add", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/or\s+log in with --type\s+oauth/);
    expect(run.stdout).toContain("hermes auth add nous --type oauth");
    expect(run.stdout).toContain("hermes auth add anthropic --type oauth");
    const parent = await auth(tempHome(), ["--help"]);
    expect(parent.stdout).toMatch(/add \[options\] <provider>[\s\S]*--type\s+oauth/);
  });

  it("adds a key from --key, stores it 0600, and prints it masked", async () => {
    const home = tempHome();
    const run = await auth(home, ["add", "openrouter", "--key", KEY_A, "--label", "work"]);
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout).toBe('Added openrouter credential #1 "work" (sk-or-…1111).\n');
    expect(statSync(join(home, "auth.json")).mode & 0o777).toBe(0o600);
    expect(authJson(home).credential_pool["openrouter"]).toEqual([
      expect.objectContaining({
        label: "work",
        auth_type: "api_key",
        priority: 0,
        source: "manual",
        access_token: KEY_A,
        last_status: null,
        request_count: 0,
        base_url: "https://openrouter.ai/api/v1",
      }),
    ]);
  });

  it("reads the key from piped stdin, or from a hidden prompt on a terminal", async () => {
    const home = tempHome();
    expect((await auth(home, ["add", "deepseek"], { piped: "\n  ds-key-0000000000000001 \n" })).code).toBe(0);
    const typed = await auth(home, ["add", "deepseek", "--label", "typed"], {
      tty: "ds-key-00000000x\u007f00000002\r",
    });
    expect(typed.code).toBe(0);
    expect(typed.stderr).toBe("Paste your API key (input hidden): \n");
    expect(typed.stdout).not.toContain("ds-key-0000000000000002");
    const keys = authJson(home).credential_pool["deepseek"]?.map((e) => [e["label"], e["access_token"]]);
    expect(keys).toEqual([
      ["api-key-1", "ds-key-0000000000000001"],
      ["typed", "ds-key-0000000000000002"],
    ]);
  });

  it.each([
    [["add", "nosuch", "--key", "k-123456789"], 2, 'unknown provider "nosuch"'],
    [["add", "deepseek"], 2, "no API key given"],
    [["add", "deepseek", "--key", "two words"], 2, "whitespace"],
    [["add", "deepseek", "--type", "oauth", "--key", "k-123456789"], 2, '"deepseek" has no OAuth login'],
    [["add", "nous", "--type", "oauth", "--key", "k-123456789"], 2, "drop --key"],
    [["add", "openai-codex", "--key", "k-123456789"], 2, "openai-codex takes no API key"],
    [
      ["add", "openai-codex", "--type", "api-key", "--key", "k-123456789"],
      2,
      "openai-codex takes no API key",
    ],
    [["add", "nous", "--type", "password"], 2, "expected api-key or oauth"],
    [["logout", "deepseek"], 2, '"deepseek" has no OAuth login'],
    [
      ["add", "deepseek", "--priority", "first", "--key", "k-123456789"],
      2,
      "--priority expects a whole number",
    ],
    [["add"], 2, "missing required argument"],
  ])("refuses %j with exit %i", async (args, code, message) => {
    const run = await auth(tempHome(), args);
    expect(run.code).toBe(code);
    expect(run.stderr).toContain(message);
  });

  it("refuses a key already in the pool (exit 1), and warns about a key that does not look like OpenRouter's", async () => {
    const home = tempHome();
    await auth(home, ["add", "openrouter", "--key", KEY_A]);
    const again = await auth(home, ["add", "openrouter", "--key", KEY_A]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already in the openrouter pool as #1 "api-key-1"');
    expect(again.stderr).not.toContain(KEY_A);
    const odd = await auth(home, ["add", "openrouter", "--key", "abc-0123456789"]);
    expect(odd.code).toBe(0);
    expect(odd.stderr).toContain('start with "sk-or-"');
  });

  it("--priority places the key, and the env key keeps its place ahead of a plain add", async () => {
    const home = tempHome();
    const env = { OPENROUTER_API_KEY: KEY_ENV };
    await auth(home, ["add", "openrouter", "--key", KEY_A, "--label", "second"], { env });
    await auth(home, ["add", "openrouter", "--key", KEY_B, "--label", "first", "--priority", "0"], { env });
    const list = await auth(home, ["list", "openrouter", "--json"], { env });
    const entries = JSON.parse(list.stdout).providers[0].entries;
    expect(entries.map((e: Record<string, unknown>) => [e["label"], e["priority"], e["source"]])).toEqual([
      ["first", 0, "manual"],
      ["OPENROUTER_API_KEY", 1, "env:OPENROUTER_API_KEY"],
      ["second", 2, "manual"],
    ]);
    expect(readFileSync(join(home, "auth.json"), "utf8")).not.toContain(KEY_ENV);
  });
});

describe("hermes auth list", () => {
  it("shows masked keys, sources, status with cooldown left, and the next key; no raw key anywhere", async () => {
    const home = tempHome();
    await auth(home, ["add", "openrouter", "--key", KEY_A, "--label", "work"]);
    const data = authJson(home);
    Object.assign(data.credential_pool["openrouter"]?.[0] ?? {}, {
      last_status: "exhausted",
      last_status_at: T0 - 100,
      last_error_code: 429,
      last_error_reset_at: T0 + 2500,
    });
    writeFileSync(join(home, "auth.json"), JSON.stringify(data));
    const run = await auth(home, ["list"], { env: { OPENROUTER_API_KEY: KEY_ENV } });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain(KEY_A);
    expect(run.stdout).not.toContain(KEY_ENV);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("openrouter (2 credentials, fill_first):");
    expect(lines[1]).toMatch(/^ {2}#\s+label\s+key\s+source\s+requests\s+status$/);
    expect(lines[2]).toMatch(
      /^ {2}1\s+work\s+sk-or-…1111\s+manual\s+0\s+rate-limited \(429\), 41m 40s left$/,
    );
    expect(lines[3]).toMatch(
      /^ {2}2\s+OPENROUTER_API_KEY\s+sk-or-…9999\s+env:OPENROUTER_API_KEY\s+0\s+ok\s+← next$/,
    );
  });

  it("--json gives masked keys and cooldown fields", async () => {
    const home = tempHome();
    await auth(home, ["add", "openrouter", "--key", KEY_A]);
    const data = authJson(home);
    Object.assign(data.credential_pool["openrouter"]?.[0] ?? {}, {
      last_status: "exhausted",
      last_status_at: T0,
      last_error_code: 401,
    });
    writeFileSync(join(home, "auth.json"), JSON.stringify(data));
    const run = await auth(home, ["list", "--json"], { now: T0 + 60 });
    expect(run.stdout).not.toContain(KEY_A);
    expect(JSON.parse(run.stdout)).toEqual({
      providers: [
        {
          provider: "openrouter",
          strategy: "fill_first",
          // The only key is still handed out while it cools down.
          next: expect.any(String),
          entries: [
            expect.objectContaining({
              index: 1,
              key: "sk-or-…1111",
              status: "exhausted",
              last_error_code: 401,
              cooldown_until: T0 + 300,
              cooldown_remaining_s: 240,
              available: false,
              stored: true,
            }),
          ],
        },
      ],
    });
  });

  it("with nothing stored says how to add a key; hermes auth alone lists", async () => {
    const home = tempHome();
    const run = await auth(home, []);
    expect(run).toMatchObject({
      code: 0,
      stdout: "No credentials. Add one with: hermes auth add <provider>\n",
    });
    expect((await auth(home, ["list", "--json"])).stdout).toBe('{\n  "providers": []\n}\n');
  });

  it("refuses a corrupt auth.json with exit 2, naming the file, and leaves it alone", async () => {
    const home = tempHome();
    const path = join(home, "auth.json");
    writeFileSync(path, "{ nope");
    for (const args of [["list"], ["add", "deepseek", "--key", "k-0123456789"], ["reset", "deepseek"]]) {
      const run = await auth(home, args);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(`${path}: not valid JSON`);
    }
    expect(readFileSync(path, "utf8")).toBe("{ nope");
  });
});

describe("hermes auth remove", () => {
  async function twoKeys(home: string): Promise<void> {
    await auth(home, ["add", "openrouter", "--key", KEY_A, "--label", "work"]);
    await auth(home, ["add", "openrouter", "--key", KEY_B, "--label", "Home"]);
  }

  it("without -y and without a terminal exits 2 and removes nothing", async () => {
    const home = tempHome();
    await twoKeys(home);
    const run = await auth(home, ["remove", "openrouter", "1"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("pass -y");
    expect(authJson(home).credential_pool["openrouter"]).toHaveLength(2);
  });

  it("removes by #, label or id, renumbering priorities", async () => {
    const home = tempHome();
    await twoKeys(home);
    const byLabel = await auth(home, ["remove", "openrouter", "home", "-y"]);
    expect(byLabel).toMatchObject({
      code: 0,
      stdout: 'Removed openrouter credential #2 "Home" (sk-or-…2222).\n',
    });
    await auth(home, ["add", "openrouter", "--key", KEY_B, "--label", "again", "--priority", "0"]);
    const byIndex = await auth(home, ["remove", "openrouter", "1", "-y"]);
    expect(byIndex.stdout).toContain('#1 "again"');
    const id = authJson(home).credential_pool["openrouter"]?.[0]?.["id"] as string;
    expect((await auth(home, ["remove", "openrouter", id, "-y"])).stdout).toContain('"work"');
    expect(authJson(home).credential_pool["openrouter"]).toEqual([]);
  });

  it("asks on a terminal; no means nothing is removed", async () => {
    const home = tempHome();
    await twoKeys(home);
    const no = await auth(home, ["remove", "openrouter", "work"], { tty: "n\n" });
    expect(no.code).toBe(0);
    expect(no.stderr).toContain('Remove openrouter credential #1 "work" (sk-or-…1111)? [y/N]');
    expect(authJson(home).credential_pool["openrouter"]).toHaveLength(2);
    const yes = await auth(home, ["remove", "openrouter", "work"], { tty: "y\n" });
    expect(yes.stdout).toContain("Removed");
    expect(authJson(home).credential_pool["openrouter"]).toHaveLength(1);
  });

  it("an unknown target exits 1; an ambiguous label asks for the # or id", async () => {
    const home = tempHome();
    await twoKeys(home);
    const missing = await auth(home, ["remove", "openrouter", "7", "-y"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no openrouter credential matching "7" (#1-#2');
    await auth(home, ["add", "openrouter", "--key", `${KEY_A}x`, "--label", "WORK"]);
    const ambiguous = await auth(home, ["remove", "openrouter", "work", "-y"]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('2 openrouter credentials are labelled "work"; use the # or the id.');
    expect(authJson(home).credential_pool["openrouter"]).toHaveLength(3);
  });

  it("removing an env key suppresses its source so it stays out of the pool", async () => {
    const home = tempHome();
    const env = { OPENROUTER_API_KEY: KEY_ENV };
    await auth(home, ["add", "openrouter", "--key", KEY_A], { env });
    const run = await auth(home, ["remove", "openrouter", "OPENROUTER_API_KEY", "-y"], { env });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("OPENROUTER_API_KEY is still set");
    expect(authJson(home).suppressed_sources).toEqual({ openrouter: ["env:OPENROUTER_API_KEY"] });
    const list = await auth(home, ["list", "openrouter", "--json"], { env });
    expect(JSON.parse(list.stdout).providers[0].entries.map((e: { source: string }) => e.source)).toEqual([
      "manual",
    ]);
  });
});

describe("hermes auth reset and status", () => {
  it("reset clears cooldowns so every key is available again", async () => {
    const home = tempHome();
    await auth(home, ["add", "deepseek", "--key", "ds-key-0000000000000001"]);
    await auth(home, ["add", "deepseek", "--key", "ds-key-0000000000000002"]);
    const data = authJson(home);
    for (const e of data.credential_pool["deepseek"] ?? []) {
      Object.assign(e, { last_status: "exhausted", last_status_at: T0, last_error_code: 402 });
    }
    writeFileSync(join(home, "auth.json"), JSON.stringify(data));
    const before = await auth(home, ["status", "deepseek"]);
    expect(before.stdout).toMatch(/deepseek\s+2\s+0\s+fill_first\s+none now; first back in 1h$/m);
    const run = await auth(home, ["reset", "deepseek"]);
    expect(run).toMatchObject({ code: 0, stdout: "Reset status on 2 deepseek credentials.\n" });
    const after = await auth(home, ["status", "--json"]);
    expect(JSON.parse(after.stdout).providers).toEqual([
      {
        provider: "deepseek",
        strategy: "fill_first",
        keys: 2,
        usable: 2,
        available: 2,
        next: { id: expect.any(String), label: "api-key-1" },
        next_available_at: null,
      },
    ]);
  });

  it("status shows each provider with keys, the configured strategy, and env keys", async () => {
    const home = tempHome();
    writeFileSync(join(home, "config.yaml"), "credential_pool_strategies:\n  openrouter: round_robin\n");
    await auth(home, ["add", "openrouter", "--key", KEY_A]);
    const run = await auth(home, ["status"], { env: { DEEPSEEK_API_KEY: "ds-key-0000000000000009" } });
    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^provider\s+keys\s+available\s+strategy\s+next$/);
    expect(lines.slice(1)).toEqual([
      expect.stringMatching(/^deepseek\s+1\s+1\s+fill_first\s+DEEPSEEK_API_KEY$/),
      expect.stringMatching(/^openrouter\s+1\s+1\s+round_robin\s+api-key-1$/),
    ]);
  });
});

describe("formatWait", () => {
  it.each([
    [0, "0s"],
    [59.2, "1m"],
    [2500, "41m 40s"],
    [3600, "1h"],
    [7500, "2h 5m"],
    [90061, "1d 1h"],
  ])("%s s is %j", (seconds, text) => {
    expect(formatWait(seconds)).toBe(text);
  });
});
