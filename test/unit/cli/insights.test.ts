import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderInsights, runInsightsCommand } from "../../../src/cli/commands/insights.js";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import type { Insights, ModelUsage } from "../../../src/state/types.js";

const model = (name: string, costUsd: number | null, unpricedSessions: number): ModelUsage => ({
  model: name,
  sessions: 1,
  apiCalls: 1,
  inputTokens: 1000,
  outputTokens: 100,
  cacheReadTokens: 0,
  reasoningTokens: 0,
  costUsd,
  unpricedSessions,
});

function insights(overrides: Partial<Insights>): Insights {
  return {
    since: 1_760_000_000 - 86_400,
    until: 1_760_000_000,
    sessions: 3,
    messages: 6,
    userMessages: 3,
    toolCalls: 0,
    tools: [],
    costUsd: null,
    unpricedSessions: 0,
    byModel: [],
    bySource: [],
    perDay: [],
    ...overrides,
  };
}

describe("renderInsights cost", () => {
  it("shows the estimated total, per-model and per-source costs", () => {
    const text = renderInsights(
      insights({
        costUsd: 1.25,
        byModel: [model("claude-sonnet-4", 1.25, 0), model("llama3.1:8b", 0, 0)],
        bySource: [
          {
            source: "cli",
            sessions: 2,
            messages: 4,
            inputTokens: 2000,
            outputTokens: 200,
            costUsd: 1.25,
            unpricedSessions: 0,
          },
        ],
      }),
      { days: 1, color: false },
    );
    expect(text).toMatch(/Cost\s+\$1\.25 \(estimated\)/);
    expect(text).toMatch(/claude-sonnet-4 .*\$1\.25$/m);
    expect(text).toMatch(/llama3\.1:8b .*\$0\.0000$/m);
    expect(text).toMatch(/cli .*\$1\.25$/m);
    expect(text).not.toContain("pricing:");
  });

  it("marks totals that leave out unpriced usage and says how to price it", () => {
    const text = renderInsights(
      insights({
        costUsd: 0.5,
        unpricedSessions: 2,
        byModel: [model("claude-sonnet-4", 0.5, 1), model("house-model", null, 1)],
        bySource: [
          {
            source: "cli",
            sessions: 3,
            messages: 6,
            inputTokens: 3000,
            outputTokens: 300,
            costUsd: 0.5,
            unpricedSessions: 2,
          },
        ],
      }),
      { days: 1, color: false },
    );
    expect(text).toMatch(/Cost\s+\$0\.5000\+ \(estimated; 2 sessions unpriced\)/);
    expect(text).toMatch(/claude-sonnet-4 .*\$0\.5000\+$/m);
    expect(text).toMatch(/house-model .*—$/m);
    expect(text).toMatch(/cli .*\$0\.5000\+$/m);
    expect(text).toContain("2 sessions used a model with no known price");
    expect(text).toContain("`pricing:` in config.yaml");
  });

  it("says unknown when nothing is priced", () => {
    const text = renderInsights(insights({ unpricedSessions: 1, byModel: [model("house-model", null, 1)] }), {
      days: 1,
      color: false,
    });
    expect(text).toMatch(/Cost\s+unknown \(1 session unpriced\)/);
  });
});

describe("hermes insights --json cost", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it("includes the total, the unpriced count and per-model and per-source costs", async () => {
    const root = mkdtempSync(join(tmpdir(), "hermes-insights-cost-"));
    const home = join(root, "home");
    mkdirSync(home);
    const store = openSqliteStore(join(home, "state.db"));
    const s = store.createSession({ source: "cli", model: "claude-sonnet-4" });
    store.recordUsage(s.id, { inputTokens: 10, outputTokens: 1, costUsd: 0.125, costStatus: "estimated" });
    const u = store.createSession({ source: "cli", model: "house-model" });
    store.recordUsage(u.id, { inputTokens: 10, outputTokens: 1, costStatus: "unknown" });
    store.close();
    // The command finds the home the way the CLI does: from the process environment.
    vi.stubEnv("HERMES_HOME", home);

    const stdout = new PassThrough();
    let out = "";
    stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const code = await runInsightsCommand({
      json: true,
      days: "7",
      env: { HERMES_HOME: home },
      stdout,
      stderr: new PassThrough(),
    });
    expect(code).toBe(0);
    const json = JSON.parse(out) as Insights;
    expect(json.costUsd).toBe(0.125);
    expect(json.unpricedSessions).toBe(1);
    expect(json.byModel.find((m) => m.model === "claude-sonnet-4")).toMatchObject({
      costUsd: 0.125,
      unpricedSessions: 0,
    });
    expect(json.byModel.find((m) => m.model === "house-model")).toMatchObject({
      costUsd: null,
      unpricedSessions: 1,
    });
    expect(json.bySource).toEqual([
      expect.objectContaining({ source: "cli", costUsd: 0.125, unpricedSessions: 1 }),
    ]);
  });
});
