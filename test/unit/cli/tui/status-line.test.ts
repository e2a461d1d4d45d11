import { describe, expect, it } from "vitest";
import {
  compactCount,
  DEFAULT_STATUS_FIELDS,
  formatStatusLine,
  homeRelative,
  type StatusFacts,
  statusFields,
} from "../../../../src/cli/tui/status-line.js";
import { createStyle } from "../../../../src/cli/tui/style.js";
import { displayWidth } from "../../../../src/cli/tui/text-width.js";

const plain = createStyle(false);
const facts: StatusFacts = {
  model: "openai/gpt-5.4",
  provider: "openrouter",
  contextTokens: 24_000,
  contextLength: 200_000,
  totalTokens: 3_456,
  costUsd: 0.0123,
  cwd: "/home/ada/src/project",
  home: "/home/ada",
};

describe("status line", () => {
  it("shows model, context %, tokens, cost and cwd by default, vendor prefix and home shortened", () => {
    expect(formatStatusLine(facts, DEFAULT_STATUS_FIELDS, 120, plain)).toBe(
      "gpt-5.4 · 12% · 3.5k tokens · $0.0123 · ~/src/project",
    );
  });

  it("follows display.runtime_footer.fields: order, unknown names ignored, provider available", () => {
    const fields = statusFields({ enabled: false, fields: ["cwd", "bogus", "model", "provider", "model"] });
    expect(fields).toEqual(["cwd", "model", "provider"]);
    expect(formatStatusLine(facts, fields, 120, plain)).toBe("~/src/project · gpt-5.4 · openrouter");
  });

  it.each([
    [undefined],
    [null],
    ["model"],
    [{ fields: "model" }],
    [{ fields: [] }],
    [{ fields: ["nope", 3] }],
  ])("falls back to the default fields for %j", (value) => {
    expect(statusFields(value)).toEqual([...DEFAULT_STATUS_FIELDS]);
  });

  it("leaves out what is unknown instead of showing ?: no context window, no price", () => {
    const line = formatStatusLine(
      { ...facts, contextLength: null, costUsd: null },
      DEFAULT_STATUS_FIELDS,
      120,
      plain,
    );
    expect(line).toBe("gpt-5.4 · 3.5k tokens · ~/src/project");
  });

  it("says included for usage not billed per token, and clamps the percentage", () => {
    const line = formatStatusLine(
      { ...facts, costIncluded: true, contextTokens: 999_999 },
      ["context_pct", "cost"],
      80,
      plain,
    );
    expect(line).toBe("100% · included");
  });

  it("returns null when no field has data", () => {
    expect(formatStatusLine({ ...facts, cwd: "", model: "" }, ["model", "cwd"], 80, plain)).toBeNull();
  });

  it("fits a narrow terminal: the cwd is cut from the left first, then the line at the right", () => {
    const deep = { ...facts, cwd: "/home/ada/work/clients/acme/backend/services/billing" };
    const line = formatStatusLine(deep, DEFAULT_STATUS_FIELDS, 60, plain) ?? "";
    expect(displayWidth(line)).toBeLessThanOrEqual(60);
    expect(line).toMatch(/^gpt-5\.4 · 12% · 3\.5k tokens · \$0\.0123 · …\/.*billing$/);
    const tiny = formatStatusLine(deep, DEFAULT_STATUS_FIELDS, 20, plain) ?? "";
    expect(displayWidth(tiny)).toBeLessThanOrEqual(20);
    expect(tiny.startsWith("gpt-5.4")).toBe(true);
  });

  it("dims the line on a colour terminal without changing its text", () => {
    const line = formatStatusLine(facts, ["model"], 80, createStyle(true)) ?? "";
    expect(line).toContain("\x1b[2m");
    expect(line.replace(/\x1b\[\d+m/g, "")).toBe("gpt-5.4");
  });

  it.each([
    [0, "0"],
    [999, "999"],
    [1000, "1k"],
    [3456, "3.5k"],
    [12_345, "12k"],
    [1_000_000, "1M"],
    [2_345_678, "2.3M"],
  ])("compactCount(%i) = %s", (n, text) => {
    expect(compactCount(n)).toBe(text);
  });

  it("only a real home prefix becomes ~ (not /home/adam for /home/ada)", () => {
    expect(homeRelative("/home/ada", "/home/ada")).toBe("~");
    expect(homeRelative("/home/adam/x", "/home/ada")).toBe("/home/adam/x");
    expect(homeRelative("/tmp", undefined)).toBe("/tmp");
  });
});
