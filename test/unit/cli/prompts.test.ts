import { describe, expect, it } from "vitest";
import {
  askApproval,
  askClarify,
  CLARIFY_CANCELLED,
  parseApprovalAnswer,
  parseClarifyAnswer,
  useTerminalAsker,
} from "../../../src/cli/prompts.js";

describe("approval answers", () => {
  it.each<[string | null, string]>([
    ["o", "once"],
    ["ONCE", "once"],
    ["y", "once"],
    [" s ", "session"],
    ["always", "always"],
    ["a", "always"],
    ["", "deny"],
    ["d", "deny"],
    ["maybe", "deny"],
    [null, "deny"],
  ])("%j → %s", (answer, decision) => {
    expect(parseApprovalAnswer(answer)).toBe(decision);
  });
});

describe("clarify answers", () => {
  it.each<[string | null, string]>([
    ["2", "green"],
    ["1", "red"],
    ["3", "3"],
    ["0", "0"],
    ["  blue ", "blue"],
    [null, CLARIFY_CANCELLED],
  ])("%j → %s", (answer, text) => {
    expect(parseClarifyAnswer(answer, ["red", "green"])).toBe(text);
  });
});

describe("questions go through the registered terminal asker", () => {
  it("asks approval and clarify on the shared input and stops when detached", async () => {
    const asked: Array<{ lines: string[]; prompt: string }> = [];
    const answers = ["a", "1"];
    const detach = useTerminalAsker(async (lines, prompt) => {
      asked.push({ lines, prompt });
      return answers.shift() ?? null;
    });
    try {
      const decision = await askApproval({
        command: "rm -rf /tmp/x",
        reason: "recursive delete",
        patternKey: "k",
      });
      expect(decision).toBe("always");
      expect(asked[0]?.lines.join("\n")).toContain("rm -rf /tmp/x");
      expect(asked[0]?.prompt).toMatch(/once \/ session \/ always \/ Deny/i);
      const answer = await askClarify({ question: "Pick?", choices: ["a", "b", "c", "d", "e"] });
      expect(answer).toBe("a");
      const shown = asked[1]?.lines.join("\n") ?? "";
      expect(shown).toContain("4. d");
      expect(shown).not.toContain("5. e");
      expect(asked[1]?.prompt).toBe("Choose 1-4 or type an answer: ");
    } finally {
      detach();
    }
  });
});
