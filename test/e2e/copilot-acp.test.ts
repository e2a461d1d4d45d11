/**
 * The copilot-acp provider through the built CLI, against a fake Copilot CLI on PATH as `copilot`
 * that speaks real ACP JSON-RPC on stdio (test/support/fake-copilot-acp.mjs). A one-shot answers;
 * a tool call the agent writes is run by Hermes's own terminal tool under its approval rules (a
 * safe command runs, a dangerous one is refused with nobody to ask); the agent starts without
 * Hermes's secrets; `hermes doctor` and `hermes model` know the CLI; without it the error says
 * what to install.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isAlive } from "../../src/util/process-tree.js";
import { runHermes, tempHome } from "../support/cli.js";
import { type FakeCopilot, fakeCopilot } from "../support/fake-copilot.js";

const CONFIG = "model:\n  provider: copilot-acp\nagent:\n  api_max_retries: 0\n";
const OPENROUTER_KEY = "sk-or-v1-9f8e7d6c5b4a39281706f5e4d3c2b1a0";
const BOT_TOKEN = "7012345678:AAHk2xYz-abcdefghijklmnopqrstuvwxy";

function copilotHome(config = CONFIG): {
  home: string;
  cwd: string;
  fake: FakeCopilot;
  env: Record<string, string>;
} {
  const dirs = tempHome(config);
  const fake = fakeCopilot();
  writeFileSync(
    join(dirs.home, ".env"),
    `OPENROUTER_API_KEY=${OPENROUTER_KEY}\nTELEGRAM_BOT_TOKEN=${BOT_TOKEN}\n`,
    { mode: 0o600 },
  );
  const env = { PATH: fake.path, FAKE_ACP_LOG: fake.logFile, FAKE_ACP_ENV_FILE: fake.envFile };
  return { ...dirs, fake, env };
}

describe("copilot-acp provider (built CLI)", () => {
  it("hermes -z answers through the copilot CLI, which never sees Hermes's keys", async () => {
    const { home, cwd, fake, env } = copilotHome();
    const promptFile = join(cwd, "..", "prompts.txt");
    const result = await runHermes(["-z", `hello, my key is ${OPENROUTER_KEY}`], {
      home,
      cwd,
      env: { ...env, FAKE_ACP_PROMPT_FILE: promptFile },
      timeoutMs: 60_000,
    });
    expect(result.stderr).toBe("");
    // The prompt reached the agent through Hermes's redactor.
    const prompt = readFileSync(promptFile, "utf8");
    expect(prompt).toContain("User:\nhello, my key is");
    expect(prompt).not.toContain(OPENROUTER_KEY);
    expect(result.stdout.trim()).toBe("Hello from fake copilot (model default-model).");
    expect(result.code).toBe(0);
    const child = fake.childEnv();
    expect(child["OPENROUTER_API_KEY"]).toBeUndefined();
    expect(child["TELEGRAM_BOT_TOKEN"]).toBeUndefined();
    expect(JSON.stringify(child)).not.toContain(OPENROUTER_KEY);
    expect(JSON.stringify(child)).not.toContain(BOT_TOKEN);
    expect(child["HOME"]).toBe(home);
    const starts = fake.events().filter((e) => e["event"] === "start");
    expect(starts).toHaveLength(1);
    // The agent does not outlive hermes.
    const pid = Number(starts[0]?.["pid"]);
    await waitFor(() => !isAlive(pid));
  });

  it("an agent that dies mid-answer fails the run with what it printed (exit 1)", async () => {
    const { home, cwd, env } = copilotHome();
    const result = await runHermes(["-z", "SCENARIO:die"], { home, cwd, env, timeoutMs: 60_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("fatal: the fake agent crashed on purpose");
    expect(`${result.stdout}${result.stderr}`).not.toContain(OPENROUTER_KEY);
  });

  it("a tool call from the agent runs through Hermes's terminal tool, and the agent sees the result", async () => {
    const { home, cwd, env } = copilotHome();
    const result = await runHermes(
      ["-z", "SCENARIO:tool COMMAND<<echo acp-ran > marker.txt && echo done-marker>>"],
      {
        home,
        cwd,
        env,
        timeoutMs: 60_000,
      },
    );
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "marker.txt"), "utf8").trim()).toBe("acp-ran");
    expect(result.stdout).toMatch(/^The tool said: .*done-marker/);
    expect(result.stdout).not.toContain("<tool_call>");
  });

  it("a dangerous command the agent asks for goes through Hermes's approval: refused with nobody to ask", async () => {
    const { home, cwd, env } = copilotHome();
    mkdirSync(join(cwd, "victim"));
    writeFileSync(join(cwd, "victim", "keep.txt"), "precious");
    const result = await runHermes(["-z", "SCENARIO:tool COMMAND<<rm -rf victim>>"], {
      home,
      cwd,
      env,
      timeoutMs: 60_000,
    });
    expect(existsSync(join(cwd, "victim", "keep.txt"))).toBe(true);
    expect(result.stderr).toMatch(/not approved: rm -rf victim/);
    expect(result.stdout).toMatch(/^The tool said: .*(denied|not approved|BLOCKED)/i);
  });

  it("the agent's own permission request is refused, not allowed", async () => {
    const { home, cwd, env } = copilotHome();
    const result = await runHermes(["-z", "SCENARIO:permission"], { home, cwd, env, timeoutMs: 60_000 });
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(
      'permission outcome: {"outcome":{"outcome":"selected","optionId":"no"}}',
    );
  });

  it("without the copilot CLI on PATH the run stops with what to install (exit 2)", async () => {
    const { home, cwd } = copilotHome();
    const result = await runHermes(["-z", "hello"], {
      home,
      cwd,
      env: { PATH: "/usr/bin:/bin" },
      timeoutMs: 60_000,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/needs the GitHub Copilot CLI, and "copilot" is not on PATH/);
    expect(result.stderr).toMatch(/npm install -g @github\/copilot/);
  });

  it("a program that quits at once (not an ACP agent) fails the run at once, and doctor says what to check", async () => {
    const { home, cwd } = copilotHome();
    writeFileSync(join(home, ".env"), "HERMES_COPILOT_ACP_COMMAND=false\n");
    const env = { PATH: "/usr/bin:/bin" };
    const run = await runHermes(["-z", "hello"], { home, cwd, env, timeoutMs: 60_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/quit before answering initialize: it exited with code 1/);
    expect(run.stderr).not.toContain("retrying");
    const doctor = await runHermes(["doctor"], { home, cwd, env, timeoutMs: 60_000 });
    const line = doctor.stdout.split("\n").find((l) => l.includes("primary: copilot-acp")) ?? doctor.stdout;
    expect(line).toMatch(/✗ .*quit before answering initialize/);
    expect(doctor.stdout).toContain("Hermes uses the CLI's own login");
  });

  it("HERMES_COPILOT_ACP_COMMAND and _ARGS in .env choose the program and its arguments", async () => {
    const { home, cwd, fake } = copilotHome();
    writeFileSync(
      join(home, ".env"),
      `HERMES_COPILOT_ACP_COMMAND=${fake.command}\nHERMES_COPILOT_ACP_ARGS=--acp --stdio --log-level 'very quiet'\n`,
    );
    const result = await runHermes(["-z", "hello"], {
      home,
      cwd,
      env: { PATH: "/usr/bin:/bin", FAKE_ACP_LOG: fake.logFile },
      timeoutMs: 60_000,
    });
    expect(result.stdout.trim()).toBe("Hello from fake copilot (model default-model).");
    const start = fake.events().find((e) => e["event"] === "start");
    expect(start?.["argv"]).toEqual(["--acp", "--stdio", "--log-level", "very quiet"]);
  });

  it("hermes doctor says the CLI answers ACP; hermes model lists what it offers and selects one", async () => {
    const { home, cwd, env } = copilotHome();
    const withModels = { ...env, FAKE_ACP_MODELS: "gpt-5,claude-sonnet-4.5" };
    const doctor = await runHermes(["doctor"], { home, cwd, env: withModels, timeoutMs: 60_000 });
    const line = doctor.stdout.split("\n").find((l) => l.includes("primary: copilot-acp")) ?? doctor.stdout;
    expect(line).toMatch(
      /✓ .*answers ACP and opens a session \(its own login\), model copilot-acp; it offers 2 models/,
    );

    const list = await runHermes(["model", "--list"], { home, cwd, env: withModels, timeoutMs: 60_000 });
    expect(list.stdout).toMatch(/copilot-acp at acp:\/\/copilot: 3 models/);
    expect(list.stdout).toContain("claude-sonnet-4.5");

    const pick = await runHermes(["model", "copilot-acp:claude-sonnet-4.5"], {
      home,
      cwd,
      env: withModels,
      timeoutMs: 60_000,
    });
    expect(pick.code).toBe(0);
    expect(pick.stdout.trim()).toBe("copilot-acp:claude-sonnet-4.5");
    const answer = await runHermes(["-z", "hello"], { home, cwd, env: withModels, timeoutMs: 60_000 });
    expect(answer.stdout.trim()).toBe("Hello from fake copilot (model claude-sonnet-4.5).");
  });
});

async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}
