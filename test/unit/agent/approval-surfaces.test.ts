/**
 * The approval policy as each surface builds it through `AIAgent` (platform and config.yaml), with
 * the real terminal tool deleting (or not) a directory in a throw-away place.
 */
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AIAgent } from "../../../src/agent/agent.js";
import type { AgentEvent } from "../../../src/agent/events.js";
import { defaultConfig, type HermesConfig } from "../../../src/config/defaults.js";
import { callTools, ScriptedTransport, say } from "../../support/scripted-transport.js";

function place(): { dir: string; victim: string } {
  const dir = mkdtempSync(join(tmpdir(), "hermes-surface-"));
  const victim = join(dir, "build");
  mkdirSync(victim);
  return { dir, victim };
}

async function runDelete(input: {
  platform: string;
  approvals?: Partial<HermesConfig["approvals"]>;
  yolo?: boolean;
  /** Extra scripted replies after the tool call (smart mode's judge shares the transport). */
  judge?: string;
}): Promise<{ deleted: boolean; result: string; events: AgentEvent[]; requests: number }> {
  const { dir, victim } = place();
  const config = defaultConfig();
  config.approvals = { ...config.approvals, ...input.approvals };
  const transport = new ScriptedTransport([
    callTools(["terminal", { command: `rm -rf ${victim}` }]),
    ...(input.judge !== undefined ? [say(input.judge)] : []),
    say("done"),
  ]);
  const agent = new AIAgent({
    transport,
    config,
    home: join(dir, "home"),
    cwd: dir,
    env: { PATH: process.env.PATH },
    toolsets: ["terminal"],
    platform: input.platform,
    ...(input.yolo ? { yolo: true } : {}),
  });
  const events: AgentEvent[] = [];
  agent.on((e) => events.push(e));
  await agent.chat("clean");
  const result = String(agent.messages.find((m) => m.role === "tool")?.content);
  await agent.close();
  return { deleted: !existsSync(victim), result, events, requests: transport.requests.length };
}

describe("approval surfaces through the agent", () => {
  it("cron_mode deny (the default) refuses a cron job's dangerous command and says why", async () => {
    const r = await runDelete({ platform: "cron" });
    expect(r.deleted).toBe(false);
    expect(r.result).toContain("cron_mode: deny");
  });

  it("cron_mode approve runs it", async () => {
    const r = await runDelete({ platform: "cron", approvals: { cron_mode: "approve" } });
    expect(r.deleted).toBe(true);
  });

  it("a webhook run refuses it even with yolo and mode off", async () => {
    const r = await runDelete({ platform: "webhook", yolo: true, approvals: { mode: "off" } });
    expect(r.deleted).toBe(false);
    expect(r.result).toContain("webhook-triggered runs cannot run dangerous commands");
  });

  it("an API server run refuses it even with mode off", async () => {
    const r = await runDelete({ platform: "api_server", approvals: { mode: "off" } });
    expect(r.deleted).toBe(false);
    expect(r.result).toContain("API server");
  });

  it("approvals.mode off runs it in a CLI run with nobody to ask", async () => {
    const r = await runDelete({ platform: "cli", approvals: { mode: "off" } });
    expect(r.deleted).toBe(true);
  });

  it("smart mode asks the session's own model when no auxiliary runtime exists, and follows a DENY", async () => {
    const r = await runDelete({
      platform: "cli",
      approvals: { mode: "smart" },
      judge: "VERDICT: DENY - outside the task",
    });
    expect(r.requests).toBe(3);
    expect(r.deleted).toBe(false);
    expect(r.result).toContain("Denied by the approval model (approvals.mode: smart): outside the task");
  });

  it("smart mode follows an APPROVE", async () => {
    const r = await runDelete({ platform: "cli", approvals: { mode: "smart" }, judge: "VERDICT: APPROVE" });
    expect(r.deleted).toBe(true);
  });

  it("an unknown approvals.mode is a warning, and the session behaves as manual", async () => {
    const r = await runDelete({ platform: "cli", approvals: { mode: "auto" } });
    expect(r.deleted).toBe(false);
    const warnings = r.events
      .filter((e) => e.type === "warning")
      .map((e) => (e as { message: string }).message);
    expect(warnings.some((w) => w.includes('approvals.mode "auto" is not one of manual, smart, off'))).toBe(
      true,
    );
  });
});
