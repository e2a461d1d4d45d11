import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HookBus } from "../../../src/agent/hooks.js";
import {
  consentState,
  loadApprovals,
  recordApproval,
  revokeCommand,
  scriptFingerprint,
} from "../../../src/agent/shell-hooks/allowlist.js";
import {
  acceptsHooks,
  hookEnvironment,
  loadShellHooks,
  profileName,
} from "../../../src/agent/shell-hooks/register.js";
import { splitCommand } from "../../../src/agent/shell-hooks/run.js";
import { matchesTool, parseShellHooks } from "../../../src/agent/shell-hooks/spec.js";
import { evaluateRun, hookStdin } from "../../../src/agent/shell-hooks/wire.js";

const info = { session_id: "s1", task_id: "t1", platform: "cli", cwd: "/", model: "m" };
const call = { ...info, tool_name: "terminal", tool_call_id: "c1", args: { command: "ls" } };
const never = new AbortController().signal;
const run = (over: Partial<Parameters<typeof evaluateRun>[1]>) => ({
  code: 0,
  stdout: "",
  stderr: "",
  timedOut: false,
  elapsedMs: 1,
  ...over,
});

function tempHome(): string {
  return mkdtempSync(join(tmpdir(), "hermes-shell-hooks-"));
}

function script(home: string, name: string, body: string): string {
  const path = join(home, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

describe("parseShellHooks", () => {
  it("reads entries with defaults and clamps, and says what it skipped", () => {
    const { specs, warnings } = parseShellHooks({
      pre_tool_call: [
        { matcher: " terminal ", command: " ~/guard.sh ", timeout: 10, fail_closed: true },
        { command: "" },
        "not a mapping",
      ],
      post_llm_call: [{ command: "log.sh", matcher: "x", timeout: 9999, fail_closed: true }],
      pre_tool_cal: [{ command: "typo.sh" }],
      pre_api_request: [{ command: "later.sh" }],
      transform_tool_result: [{ command: "t.sh" }],
      outbound: { url: "https://example.invalid" },
    });
    expect(specs).toEqual([
      {
        event: "pre_tool_call",
        command: "~/guard.sh",
        matcher: "terminal",
        timeoutSeconds: 10,
        failClosed: true,
        index: 0,
      },
      { event: "post_llm_call", command: "log.sh", timeoutSeconds: 300, failClosed: false, index: 0 },
    ]);
    const text = warnings.join("\n");
    expect(text).toContain("hooks.pre_tool_call[1] has no command");
    expect(text).toContain("hooks.pre_tool_call[2] must be a mapping");
    expect(text).toContain("did you mean pre_tool_call?");
    expect(text).toContain("does not fire pre_api_request");
    expect(text).toContain("hooks.transform_tool_result");
    expect(text).toContain("hooks.post_llm_call[0].matcher applies only to");
    expect(text).toContain("hooks.post_llm_call[0].fail_closed applies only to pre_tool_call");
    expect(text).toContain("over the 300 s limit");
    expect(text).not.toContain("outbound");
  });

  it("never throws on a broken section", () => {
    for (const section of ["text", 3, ["a"], { pre_tool_call: "x" }, { pre_tool_call: null }]) {
      expect(() => parseShellHooks(section)).not.toThrow();
      expect(parseShellHooks(section).specs).toEqual([]);
    }
    expect(parseShellHooks(undefined)).toEqual({ specs: [], warnings: [] });
  });
});

describe("matchesTool", () => {
  it.each([
    [undefined, "terminal", true],
    ["terminal", "terminal", true],
    // The whole name must match: a prefix or a longer name does not.
    ["term", "terminal", false],
    ["terminal", "terminal_x", false],
    ["terminal", "xterminal", false],
    ["terminal|write_file", "write_file", true],
    ["write_.*", "write_file", true],
    // A regex that does not compile is compared literally.
    ["terminal(", "terminal(", true],
    ["terminal(", "terminal", false],
    ["terminal", undefined, false],
  ])("matcher %s on %s → %s", (matcher, tool, expected) => {
    expect(matchesTool(matcher, tool)).toBe(expected);
  });
});

describe("splitCommand", () => {
  it.each([
    ["a b  c", ["a", "b", "c"]],
    ["python3 '/my dir/h.py' --x", ["python3", "/my dir/h.py", "--x"]],
    ['say "a \\"b\\" $HOME"', ["say", 'a "b" $HOME']],
    ["a\\ b", ["a b"]],
    ["~/h.sh ~ x~", ["/home/u/h.sh", "/home/u", "x~"]],
    ["'~/h.sh'", ["~/h.sh"]],
    // Nothing is expanded or run: these are plain words.
    ["echo $(touch pwned) `id` ;rm", ["echo", "$(touch", "pwned)", "`id`", ";rm"]],
  ])("%s", (command, words) => {
    expect(splitCommand(command, "/home/u")).toEqual(words);
  });

  it("refuses an unterminated quote", () => {
    expect(() => splitCommand("say 'oops")).toThrow("single quote");
    expect(() => splitCommand('say "oops')).toThrow("double quote");
  });
});

describe("the wire format", () => {
  const spec = {
    event: "pre_tool_call" as const,
    command: "g.sh",
    timeoutSeconds: 5,
    failClosed: false,
    index: 0,
  };

  it("sends upstream's stdin shape", () => {
    const stdin = JSON.parse(hookStdin("pre_tool_call", call, "work"));
    expect(stdin).toEqual({
      hook_event_name: "pre_tool_call",
      tool_name: "terminal",
      tool_input: { command: "ls" },
      session_id: "s1",
      cwd: "/",
      profile: "work",
      extra: { task_id: "t1", platform: "cli", model: "m", tool_call_id: "c1" },
    });
    expect(JSON.parse(hookStdin("pre_llm_call", { ...info, user_message: "hi" }, "default"))).toMatchObject({
      tool_name: null,
      tool_input: null,
      extra: { user_message: "hi" },
    });
  });

  it.each([
    ['{"action":"block","message":"no"}', 0, { kind: "block", message: "no" }],
    ['{"decision":"block","reason":"nope"}', 0, { kind: "block", message: "nope" }],
    ['{"action":"block"}', 0, { kind: "block", message: "Blocked by shell hook." }],
    ['{"action":"modify","args":{"command":"ls -la"}}', 0, { kind: "modify", args: { command: "ls -la" } }],
    ['{"decision":"modify","tool_input":{"command":"pwd"}}', 0, { kind: "modify", args: { command: "pwd" } }],
    ['{"action":"modify","args":"rm -rf /"}', 0, undefined],
    ['{"decision":"approve"}', 0, undefined],
    ["not json", 0, undefined],
    ["", 0, undefined],
    // A non-zero exit other than 2 is logged, and a block it prints still counts.
    ['{"action":"block","message":"late"}', 1, { kind: "block", message: "late" }],
  ])("pre_tool_call stdout %s exit %d", (stdout, code, answer) => {
    expect(evaluateRun(spec, run({ stdout, code })).answer).toEqual(answer);
  });

  it("blocks on exit 2 with stderr as the reason, only for pre_tool_call", () => {
    expect(evaluateRun(spec, run({ code: 2, stderr: "rm is off limits\n" })).answer).toEqual({
      kind: "block",
      message: "rm is off limits",
    });
    expect(evaluateRun(spec, run({ code: 2 })).answer).toEqual({
      kind: "block",
      message: "Blocked by shell hook.",
    });
    const observer = { ...spec, event: "post_tool_call" as const };
    expect(evaluateRun(observer, run({ code: 2, stderr: "x" })).answer).toBeUndefined();
  });

  it("fails open, except a fail_closed hook, which blocks on a failure, a timeout or garbage", () => {
    expect(evaluateRun(spec, run({ code: null, timedOut: true })).answer).toBeUndefined();
    expect(evaluateRun(spec, run({ code: null, error: "command not found: g.sh" })).answer).toBeUndefined();
    const closed = { ...spec, failClosed: true };
    expect(evaluateRun(closed, run({ code: null, timedOut: true })).answer?.kind).toBe("block");
    expect(evaluateRun(closed, run({ code: null, error: "command not found: g.sh" })).answer?.kind).toBe(
      "block",
    );
    expect(evaluateRun(closed, run({ stdout: "Traceback (most recent call last)" })).answer?.kind).toBe(
      "block",
    );
    expect(evaluateRun(closed, run({ stdout: "" })).answer).toBeUndefined();
  });

  it("reads context for the other events", () => {
    const llm = { ...spec, event: "pre_llm_call" as const };
    expect(evaluateRun(llm, run({ stdout: '{"context":"freeze on Friday"}' })).answer).toEqual({
      kind: "context",
      context: "freeze on Friday",
    });
    expect(evaluateRun(llm, run({ stdout: '{"context":"  "}' })).answer).toBeUndefined();
    expect(evaluateRun(llm, run({ stdout: '{"action":"block"}' })).answer).toBeUndefined();
  });
});

describe("the allowlist", () => {
  it("keys an approval by event and exact command, and by the script's content", async () => {
    const home = tempHome();
    const path = script(home, "h.sh", "echo one");
    const command = `${path} --flag`;
    const before = scriptFingerprint(command, home);
    expect(before.path).toBe(path);
    expect(consentState(loadApprovals(home), "pre_tool_call", command, before).state).toBe("new");
    await recordApproval(home, "pre_tool_call", command, before);
    const approvals = loadApprovals(home);
    expect(consentState(approvals, "pre_tool_call", command, before).state).toBe("approved");
    expect(consentState(approvals, "post_tool_call", command, before).state).toBe("new");
    expect(consentState(approvals, "pre_tool_call", `${command} `, before).state).toBe("new");
    script(home, "h.sh", "echo two");
    expect(consentState(approvals, "pre_tool_call", command, scriptFingerprint(command, home)).state).toBe(
      "changed",
    );
    // An entry from Python Hermes (no hash) is honoured by its command.
    writeFileSync(
      join(home, "shell-hooks-allowlist.json"),
      JSON.stringify({
        approvals: [{ event: "pre_tool_call", command, approved_at: "2026-01-01T00:00:00Z" }],
      }),
    );
    expect(
      consentState(loadApprovals(home), "pre_tool_call", command, scriptFingerprint(command, home)).state,
    ).toBe("approved");
    expect(await revokeCommand(home, command)).toBe(1);
    expect(loadApprovals(home)).toEqual([]);
  });

  it("treats an unreadable file as approving nothing", () => {
    const home = tempHome();
    writeFileSync(join(home, "shell-hooks-allowlist.json"), "{ not json");
    expect(loadApprovals(home)).toEqual([]);
    writeFileSync(
      join(home, "shell-hooks-allowlist.json"),
      JSON.stringify({ approvals: [{ event: 1 }, null] }),
    );
    expect(loadApprovals(home)).toEqual([]);
  });
});

describe("loadShellHooks", () => {
  it("registers approved hooks on the bus: a matching block, a rewrite, a skipped tool", async () => {
    const home = tempHome();
    const seen = join(home, "payload.json");
    const guard = script(
      home,
      "guard.sh",
      `cat > ${seen}\necho '{"action":"block","message":"no terminal today"}'`,
    );
    const rewrite = script(home, "rewrite.sh", `echo '{"action":"modify","args":{"path":"safe.txt"}}'`);
    const bus = new HookBus();
    const report = await loadShellHooks({
      bus,
      home,
      env: { PATH: process.env.PATH, HOME: home },
      acceptHooks: true,
      config: {
        hooks: {
          pre_tool_call: [
            { matcher: "terminal", command: guard },
            { matcher: "write_file", command: rewrite },
          ],
        },
      },
    });
    expect(report.registered).toHaveLength(2);
    expect(bus.sources("pre_tool_call")).toEqual(["shell:pre_tool_call[0]", "shell:pre_tool_call[1]"]);
    expect(await bus.preToolCall({ ...call, cwd: home }, never)).toEqual({
      action: "block",
      reason: "no terminal today",
      source: "shell:pre_tool_call[0]",
    });
    expect(JSON.parse(readFileSync(seen, "utf8")).tool_input).toEqual({ command: "ls" });
    expect(
      await bus.preToolCall(
        { ...call, cwd: home, tool_name: "write_file", args: { path: "/etc/passwd" } },
        never,
      ),
    ).toEqual({ action: "rewrite", args: { path: "safe.txt" } });
    expect(await bus.preToolCall({ ...call, cwd: home, tool_name: "read_file" }, never)).toEqual({
      action: "allow",
    });
  });

  it("asks about an unapproved hook, refuses it when declined, and never registers twice", async () => {
    const home = tempHome();
    const marker = join(home, "ran");
    const hook = script(home, "mark.sh", `touch ${marker}`);
    const config = { hooks: { post_llm_call: [{ command: hook }] } };
    const bus = new HookBus();
    const asked: string[] = [];
    const declined = await loadShellHooks({
      bus,
      home,
      env: { PATH: process.env.PATH },
      config,
      ask: async (request) => {
        asked.push(request.spec.command);
        return false;
      },
    });
    expect(asked).toEqual([hook]);
    expect(declined.refused).toHaveLength(1);
    expect(bus.sources("post_llm_call")).toEqual([]);
    const yes = { bus, home, env: { PATH: process.env.PATH }, config, ask: async () => true };
    expect((await loadShellHooks(yes)).registered).toHaveLength(1);
    expect((await loadShellHooks(yes)).registered).toHaveLength(0);
    expect(bus.sources("post_llm_call")).toHaveLength(1);
    await bus.notify("post_llm_call", {
      ...info,
      cwd: home,
      user_message: "",
      assistant_response: "",
      reason: "completed",
    });
    expect(existsSync(marker)).toBe(true);
    // Remembered: a later process registers it without asking.
    const later = await loadShellHooks({ bus: new HookBus(), home, env: {}, config });
    expect(later.registered).toHaveLength(1);
  });

  it("registers nothing in safe mode", async () => {
    const home = tempHome();
    const report = await loadShellHooks({
      bus: new HookBus(),
      home,
      env: { HERMES_SAFE_MODE: "1" },
      acceptHooks: true,
      config: { hooks: { pre_llm_call: [{ command: "x.sh" }] } },
    });
    expect(report.registered).toEqual([]);
    expect(report.skipped).toContain("HERMES_SAFE_MODE");
  });

  it("kills a hook at its timeout and lets the call run (fail open)", async () => {
    const home = tempHome();
    const hang = script(home, "hang.sh", "sleep 30");
    const bus = new HookBus();
    const warnings: string[] = [];
    await loadShellHooks({
      bus,
      home,
      env: { PATH: process.env.PATH },
      acceptHooks: true,
      config: { hooks: { pre_tool_call: [{ command: hang, timeout: 1 }] } },
      onRunWarning: (m) => warnings.push(m),
    });
    const started = Date.now();
    expect(await bus.preToolCall({ ...call, cwd: home }, never)).toEqual({ action: "allow" });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(warnings.join("\n")).toContain("timed out after 1 s and was killed");
  });
});

describe("the hook environment and options", () => {
  it("drops provider keys and what .env loaded, keeps the rest", () => {
    const home = tempHome();
    writeFileSync(join(home, ".env"), "FROM_DOTENV=1\nDEEPSEEK_API_KEY=sk-dotenv\n");
    const env = hookEnvironment(
      { terminal: { env_passthrough: ["FROM_DOTENV"] } },
      {
        PATH: "/bin",
        OPENROUTER_API_KEY: "sk-or",
        TELEGRAM_BOT_TOKEN: "123:abc",
        FROM_DOTENV: "1",
        DEEPSEEK_API_KEY: "sk-dotenv",
        MINE: "x",
      },
      home,
    );
    expect(env).toEqual({ PATH: "/bin", FROM_DOTENV: "1", MINE: "x", HERMES_HOME: home });
  });

  it("accepts hooks by flag, environment or config, and names the profile", () => {
    expect(acceptsHooks({ env: {}, config: {} })).toBe(false);
    expect(acceptsHooks({ acceptHooks: true, env: {}, config: {} })).toBe(true);
    expect(acceptsHooks({ env: { HERMES_ACCEPT_HOOKS: "yes" }, config: {} })).toBe(true);
    expect(acceptsHooks({ env: { HERMES_ACCEPT_HOOKS: "0" }, config: {} })).toBe(false);
    expect(acceptsHooks({ env: {}, config: { hooks_auto_accept: true } })).toBe(true);
    expect(acceptsHooks({ env: {}, config: { hooks_auto_accept: "no" } })).toBe(false);
    expect(profileName("/home/u/.hermes")).toBe("default");
    expect(profileName("/home/u/.hermes/profiles/work")).toBe("work");
  });
});
