/**
 * copilot-acp on a terminal and under an interrupt, through the built CLI with the fake Copilot CLI
 * (test/support/fake-copilot-acp.mjs) on PATH: `hermes setup model` says the CLI and its own login
 * are what it uses, lists the models an ACP session offers and tests the choice; without the CLI it
 * says what to install and lets the user pick another provider; Ctrl+C during an answer ends the
 * agent and everything it started.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { isAlive } from "../../src/util/process-tree.js";
import { spawnHermes, tempHome } from "../support/cli.js";
import { fakeCopilot } from "../support/fake-copilot.js";
import { hasTmux, Terminal } from "../support/terminal.js";

type Config = { model: Record<string, unknown> };
const config = (home: string): Config => parse(readFileSync(join(home, "config.yaml"), "utf8")) as Config;

describe.skipIf(!hasTmux)("hermes setup model with copilot-acp", () => {
  it("names the CLI's own login, lists the session's models, tests the choice and saves it", async () => {
    const { home, cwd } = tempHome();
    const fake = fakeCopilot();
    const term = Terminal.start({
      home,
      cwd,
      args: ["setup", "model"],
      env: { PATH: fake.path, FAKE_ACP_LOG: fake.logFile, FAKE_ACP_MODELS: "gpt-5,claude-sonnet-4.5" },
    });
    try {
      await term.waitFor("Provider (number or name)");
      term.type("copilot-acp");
      term.keys("Enter");
      await term.waitFor("uses its own login");
      await term.waitFor(/claude-sonnet-4\.5/);
      term.type("claude-sonnet");
      term.keys("Enter");
      await term.waitFor("✓ claude-sonnet-4.5 answered");
      await term.waitFor("[exit 0]");
    } finally {
      term.kill();
    }
    expect(config(home).model).toMatchObject({ provider: "copilot-acp", default: "claude-sonnet-4.5" });
    expect(config(home).model["base_url"] ?? "").toBe("");
    const prompts = fake.events().filter((e) => e["event"] === "prompt");
    expect(prompts.at(-1)?.["model"]).toBe("claude-sonnet-4.5");
  });

  it("without the CLI on PATH it says what to install and asks for another provider", async () => {
    const { home, cwd } = tempHome();
    const term = Terminal.start({ home, cwd, args: ["setup", "model"], env: { PATH: "/usr/bin:/bin" } });
    try {
      await term.waitFor("Provider (number or name)");
      term.type("copilot-acp");
      term.keys("Enter");
      await term.waitFor("needs the GitHub Copilot CLI");
      await term.waitFor("Pick another provider");
      await term.waitFor(/Provider \(number or name\).*\n?.*$/);
      term.keys("C-c");
      await term.waitFor(/\[exit \d+\]/);
    } finally {
      term.kill();
    }
  });
});

describe("an interrupt during a copilot-acp answer", () => {
  it("ends the agent and what it started, however it ignores the cancel", async () => {
    const { home, cwd } = tempHome("model:\n  provider: copilot-acp\nagent:\n  api_max_retries: 0\n");
    const fake = fakeCopilot();
    const run = spawnHermes(["-z", "SCENARIO:deaf"], {
      home,
      cwd,
      env: { PATH: fake.path, FAKE_ACP_LOG: fake.logFile },
    });
    const event = (name: string) => fake.events().find((e) => e["event"] === name);
    await waitFor(() => event("grandchild") !== undefined && event("waiting") !== undefined);
    const agent = Number(event("start")?.["pid"]);
    const grandchild = Number(event("grandchild")?.["pid"]);
    expect(isAlive(agent) && isAlive(grandchild)).toBe(true);
    run.child.kill("SIGINT");
    const result = await run.exited;
    expect(result.code).not.toBe(0);
    await waitFor(() => !isAlive(agent) && !isAlive(grandchild));
  });
});

async function waitFor(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}
