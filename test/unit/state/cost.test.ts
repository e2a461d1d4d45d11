import { describe, expect, it } from "vitest";
import { sessionCost } from "../../../src/state/insights.js";
import { mergeCostStatus } from "../../../src/state/sqlite-store.js";
import type { SessionCostStatus } from "../../../src/state/types.js";
import { rawDb, useTempStores } from "./helpers.js";

const { open } = useTempStores();

describe("recordUsage cost columns", () => {
  it("adds cost, merges the status and keeps the latest source and pricing version", () => {
    const store = open();
    const s = store.createSession({ source: "cli", model: "claude-sonnet-4" });
    store.recordUsage(s.id, {
      inputTokens: 100,
      outputTokens: 10,
      costUsd: 0.01,
      costStatus: "estimated",
      costSource: "official_docs_snapshot",
      pricingVersion: "v1",
    });
    store.recordUsage(s.id, {
      inputTokens: 100,
      outputTokens: 10,
      costUsd: 0.02,
      costStatus: "estimated",
      costSource: "user_override",
      pricingVersion: "user-override",
    });
    expect(store.getSession(s.id)).toMatchObject({
      costStatus: "estimated",
      costSource: "user_override",
      pricingVersion: "user-override",
    });
    expect(store.getSession(s.id)?.estimatedCostUsd).toBeCloseTo(0.03, 12);

    // An unpriced call: the total stays, the status says it is incomplete, source and version stay.
    store.recordUsage(s.id, { inputTokens: 5, outputTokens: 5, costStatus: "unknown" });
    const row = store.getSession(s.id);
    expect(row).toMatchObject({
      costStatus: "unknown",
      costSource: "user_override",
      pricingVersion: "user-override",
    });
    expect(row?.estimatedCostUsd).toBeCloseTo(0.03, 12);
    // Later priced usage adds to the total but cannot make it complete again.
    store.recordUsage(s.id, { inputTokens: 1, outputTokens: 1, costUsd: 0.5, costStatus: "estimated" });
    expect(store.getSession(s.id)?.costStatus).toBe("unknown");
    expect(store.getSession(s.id)?.estimatedCostUsd).toBeCloseTo(0.53, 12);
  });

  it("leaves every cost column alone when the delta carries no cost information", () => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    store.recordUsage(s.id, { inputTokens: 1, outputTokens: 1 });
    expect(store.getSession(s.id)).toMatchObject({
      estimatedCostUsd: null,
      costStatus: null,
      costSource: null,
      pricingVersion: null,
    });
  });

  it("writes the columns Python Hermes reads", () => {
    const store = open();
    const s = store.createSession({ source: "cli" });
    store.recordUsage(s.id, {
      inputTokens: 1,
      outputTokens: 1,
      costUsd: 0.25,
      costStatus: "estimated",
      costSource: "official_docs_snapshot",
      pricingVersion: "hermes-ts-test",
    });
    const db = rawDb(store.path, { readonly: true });
    try {
      expect(
        db
          .prepare(
            "SELECT estimated_cost_usd, cost_status, cost_source, pricing_version FROM sessions WHERE id = ?",
          )
          .get(s.id),
      ).toEqual({
        estimated_cost_usd: 0.25,
        cost_status: "estimated",
        cost_source: "official_docs_snapshot",
        pricing_version: "hermes-ts-test",
      });
    } finally {
      db.close();
    }
  });
});

describe("mergeCostStatus", () => {
  it.each<[string | null, SessionCostStatus | undefined, string | null]>([
    [null, undefined, null],
    [null, "estimated", "estimated"],
    ["estimated", undefined, "estimated"],
    ["included", "estimated", "estimated"],
    ["estimated", "included", "estimated"],
    ["actual", "estimated", "estimated"],
    ["estimated", "actual", "estimated"],
    ["estimated", "unknown", "unknown"],
    ["unknown", "estimated", "unknown"],
    ["unknown", "included", "unknown"],
    ["something-else", "included", "included"],
    ["toString", "included", "included"],
  ])("%j + %j → %j", (stored, next, merged) => {
    expect(mergeCostStatus(stored, next)).toBe(merged);
  });
});

describe("sessionCost (insights)", () => {
  it.each<[Parameters<typeof sessionCost>[0], { usd: number | null; unpriced: boolean }]>([
    [
      { actual: null, estimated: 0.5, status: "estimated", tokens: 10 },
      { usd: 0.5, unpriced: false },
    ],
    [
      { actual: 0.4, estimated: 0.5, status: "actual", tokens: 10 },
      { usd: 0.4, unpriced: false },
    ],
    [
      { actual: null, estimated: 0, status: "included", tokens: 10 },
      { usd: 0, unpriced: false },
    ],
    // Python Hermes stores 0 for an unknown cost: that is no price.
    [
      { actual: null, estimated: 0, status: "unknown", tokens: 10 },
      { usd: null, unpriced: true },
    ],
    [
      { actual: null, estimated: 0.2, status: "unknown", tokens: 10 },
      { usd: 0.2, unpriced: true },
    ],
    // Older rows: tokens and no cost at all.
    [
      { actual: null, estimated: null, status: null, tokens: 10 },
      { usd: null, unpriced: true },
    ],
    [
      { actual: null, estimated: null, status: null, tokens: 0 },
      { usd: null, unpriced: false },
    ],
    [
      { actual: "", estimated: "garbage", status: null, tokens: 1 },
      { usd: null, unpriced: true },
    ],
  ])("%j → %j", (row, expected) => {
    expect(sessionCost(row)).toEqual(expected);
  });
});

describe("insights cost", () => {
  it("totals known costs by model and source and counts sessions without a price", () => {
    const store = open();
    const a = store.createSession({ source: "cli", model: "claude-sonnet-4" });
    store.recordUsage(a.id, { inputTokens: 10, outputTokens: 1, costUsd: 0.25, costStatus: "estimated" });
    const b = store.createSession({ source: "cli", model: "claude-sonnet-4" });
    store.recordUsage(b.id, { inputTokens: 10, outputTokens: 1, costUsd: 0.5, costStatus: "estimated" });
    store.recordUsage(b.id, { inputTokens: 10, outputTokens: 1, costStatus: "unknown" });
    const c = store.createSession({ source: "telegram", model: "house-model" });
    store.recordUsage(c.id, { inputTokens: 10, outputTokens: 1, costStatus: "unknown" });
    const d = store.createSession({ source: "telegram", model: "llama3.1:8b" });
    store.recordUsage(d.id, { inputTokens: 10, outputTokens: 1, costUsd: 0, costStatus: "included" });

    const ins = store.insights({ days: 1 });
    expect(ins.costUsd).toBeCloseTo(0.75, 12);
    expect(ins.unpricedSessions).toBe(2);
    const byModel = Object.fromEntries(ins.byModel.map((m) => [m.model, m]));
    expect(byModel["claude-sonnet-4"]).toMatchObject({ sessions: 2, unpricedSessions: 1 });
    expect(byModel["claude-sonnet-4"]?.costUsd).toBeCloseTo(0.75, 12);
    expect(byModel["house-model"]).toMatchObject({ costUsd: null, unpricedSessions: 1 });
    expect(byModel["llama3.1:8b"]).toMatchObject({ costUsd: 0, unpricedSessions: 0 });
    const bySource = Object.fromEntries(ins.bySource.map((s) => [s.source, s]));
    expect(bySource["cli"]?.costUsd).toBeCloseTo(0.75, 12);
    expect(bySource["telegram"]).toMatchObject({ costUsd: 0, unpricedSessions: 1 });
  });

  it("is null with nothing priced", () => {
    const store = open();
    store.createSession({ source: "cli" });
    expect(store.insights({ days: 1 })).toMatchObject({ costUsd: null, unpricedSessions: 0 });
  });
});
