import { describe, expect, it } from "vitest";
import {
  formatBanner,
  formatCost,
  formatRecap,
  formatSessionCost,
  formatSessionList,
  formatUsage,
  relativeTime,
} from "../../../../src/cli/tui/info.js";
import { createStyle } from "../../../../src/cli/tui/style.js";
import type { SessionSummary } from "../../../../src/state/types.js";

const plain = createStyle(false);

describe("info formatting", () => {
  it.each<[number, string]>([
    [0, "just now"],
    [59, "just now"],
    [300, "5m ago"],
    [7200, "2h ago"],
    [3 * 86_400, "3d ago"],
  ])("relativeTime %i s ago → %s", (ago, text) => {
    expect(relativeTime(1_000_000 - ago, 1_000_000)).toBe(text);
  });

  it.each<[number | null, string]>([
    [null, "unknown"],
    [0, "$0.00"],
    [0.01234, "$0.0123"],
    [1.5, "$1.50"],
  ])("formatCost(%j) = %s", (usd, text) => {
    expect(formatCost(usd)).toBe(text);
  });

  it("reports usage with cache, reasoning and context fill", () => {
    const lines = formatUsage(
      {
        model: "m",
        usage: { inputTokens: 12_345, outputTokens: 678, cacheReadTokens: 10_000, reasoningTokens: 50 },
        apiCalls: 3,
        costUsd: null,
        contextTokens: 20_000,
        contextLength: 200_000,
      },
      plain,
    ).join("\n");
    expect(lines).toContain("12,345 (cache read 10,000)");
    expect(lines).toContain("678 (reasoning 50)");
    expect(lines).toMatch(/API calls\s+3/);
    expect(lines).toMatch(/Cost\s+cost unknown for m$/m);
    expect(lines).toContain("20,000 / 200,000 tokens (10%)");
  });

  it.each<
    [number | null, "actual" | "estimated" | "included" | "unknown" | null | undefined, number, string]
  >([
    [0.01234, "estimated", 100, "$0.0123 (estimated)"],
    [1.5, "estimated", 100, "$1.50 (estimated)"],
    [0, "included", 100, "$0.00 (included)"],
    [null, "included", 100, "$0.00 (included)"],
    [0.4, "actual", 100, "$0.40 (actual)"],
    [null, "unknown", 100, "cost unknown for claude-x"],
    [0, "unknown", 100, "cost unknown for claude-x"],
    [0.05, "unknown", 100, "$0.0500+ (some usage has no known price)"],
    [null, null, 0, "$0.00"],
    [null, undefined, 100, "cost unknown for claude-x"],
    [0.02, undefined, 100, "$0.0200 (estimated)"],
  ])("formatSessionCost(%j, %j, %i tokens) = %s", (costUsd, costStatus, tokens, text) => {
    expect(
      formatSessionCost({
        model: "claude-x",
        costUsd,
        costStatus,
        usage: { inputTokens: tokens, outputTokens: 0 },
      }),
    ).toBe(text);
  });

  it("says when the context length is unknown", () => {
    const text = formatUsage(
      {
        model: "m",
        usage: { inputTokens: 0, outputTokens: 0 },
        apiCalls: 0,
        costUsd: 0,
        contextTokens: 5,
        contextLength: null,
      },
      plain,
    ).join("\n");
    expect(text).toContain("5 tokens (context length unknown)");
  });

  it("lists sessions numbered, newest first, marking the current one", () => {
    const row = (id: string, title: string | null, preview: string): SessionSummary =>
      ({ id, title, preview, lastActiveAt: 990, messageCount: 4 }) as SessionSummary;
    const lines = formatSessionList(
      [row("a1", "work", ""), row("b2", null, "hello there")],
      "b2",
      1000,
      plain,
    );
    expect(lines[0]).toMatch(/^ {2}1\. work {2}just now · 4 msgs · a1$/);
    expect(lines[1]).toMatch(/^● 2\. “hello there” {2}just now/);
    expect(formatSessionList([], "x", 0, plain)).toEqual(["No recorded sessions yet."]);
  });

  it("banner names the model and the session, or what was resumed", () => {
    const base = {
      version: "1.2.3",
      model: "m",
      provider: "p",
      sessionId: "s1",
      resumed: false,
      title: null,
      messages: 0,
    };
    expect(formatBanner(base, plain)).toEqual([
      "⚕ Hermes 1.2.3 · m (p) · session s1",
      "/help for commands, Ctrl+C to interrupt, Ctrl+D to exit",
    ]);
    expect(formatBanner({ ...base, resumed: true, title: "work", messages: 8 }, plain)[0]).toBe(
      "⚕ Hermes 1.2.3 · m (p) · resumed “work” · 8 messages",
    );
  });

  it("recaps the last exchanges of a resumed conversation", () => {
    const recap = formatRecap(
      [
        { role: "user", content: "first question" },
        { role: "assistant", content: "first answer" },
        { role: "user", content: "second\nquestion" },
        { role: "assistant", content: null, tool_calls: [] },
        { role: "tool", content: "{}", tool_call_id: "c" },
        { role: "assistant", content: "l1\nl2\nl3\nl4\nl5" },
        { role: "user", content: [{ type: "text", text: "third" }] },
      ],
      plain,
    );
    expect(recap).toEqual([
      "─── earlier in this session ───",
      "❯ second question",
      "  l1",
      "  l2",
      "  l3",
      "  … 2 more lines",
      "❯ third",
      "───",
    ]);
    expect(formatRecap([], plain)).toEqual([]);
  });
});
