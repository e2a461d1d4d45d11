import { describe, expect, it } from "vitest";
import {
  approvalQuestion,
  askApproval,
  askClarify,
  CLARIFY_CANCELLED,
  denialNotice,
  parseApprovalAnswer,
  parseClarifyAnswer,
  useTerminalAsker,
} from "../../../src/cli/prompts.js";
import { createStyle } from "../../../src/cli/tui/style.js";
import { ApprovalDeniedError } from "../../../src/tools/approval/denial.js";

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

const PROTECTED = {
  command: "sed -i 's/x/y/' ~/.bashrc",
  reason: "edits a shell start-up file (~/.bashrc)",
  patternKey: "protected_path",
  protectedPath: true,
};

describe("protected-path questions", () => {
  it("offer yes or no only, and say nothing is remembered", () => {
    const { lines, prompt } = approvalQuestion(PROTECTED, createStyle(false), 60);
    expect(lines.join("\n")).toMatch(/Protected path.*bashrc/);
    expect(lines.join("\n")).toMatch(/never remembered/);
    expect(prompt).toBe("Allow once? yes / No (60 s): ");
  });

  it.each<[string | null, string]>([
    ["y", "once"],
    ["yes", "once"],
    ["o", "once"],
    ["a", "deny"],
    ["always", "deny"],
    ["session", "deny"],
    ["", "deny"],
  ])("%j → %s", (answer, decision) => {
    expect(parseApprovalAnswer(answer, PROTECTED)).toBe(decision);
  });
});

describe("the approval prompt fails closed after approvals.timeout", () => {
  it("withdraws the question when the policy's signal aborts and says why", async () => {
    let shown = "";
    const detach = useTerminalAsker(
      (_lines, _prompt, options) =>
        new Promise((resolve) => {
          options?.signal?.addEventListener("abort", () => {
            shown = options.withdrawn?.() ?? "";
            resolve(null);
          });
        }),
    );
    try {
      const controller = new AbortController();
      const pending = askApproval(
        { command: "rm -rf build", reason: "recursive delete", patternKey: "recursive_delete" },
        { signal: controller.signal, timeoutMs: 60_000 },
      );
      controller.abort(new Error("approval timeout"));
      expect(await pending).toBe("deny");
      expect(shown).toBe("⏱ no answer within 60 s: denied (approvals.timeout)");
    } finally {
      detach();
    }
  });

  it("an answer typed after the question was withdrawn does not approve", async () => {
    const detach = useTerminalAsker(async () => "always");
    try {
      const controller = new AbortController();
      controller.abort(new Error("approval timeout"));
      const decision = await askApproval(
        { command: "rm -rf build", reason: "recursive delete", patternKey: "recursive_delete" },
        { signal: controller.signal, timeoutMs: 1000 },
      );
      expect(decision).toBe("deny");
    } finally {
      detach();
    }
  });
});

describe("denialNotice", () => {
  it("is one line with the command, the reason, why, and the hint", () => {
    const denial = new ApprovalDeniedError(
      "no_approver",
      "this run is non-interactive, so nobody can approve it",
      "…",
    );
    const line = denialNotice(
      { command: "rm -rf build\n  && echo done", reason: "recursive delete", patternKey: "recursive_delete" },
      denial,
    );
    expect(line).toBe(
      "hermes: not approved: rm -rf build && echo done (recursive delete): this run is non-interactive, so nobody can approve it. Hint: --yolo approves dangerous commands; protected paths need an interactive session.",
    );
    expect(line).not.toContain("\n");
  });

  it("does not suggest --yolo for a protected path, and shortens long commands", () => {
    const denial = new ApprovalDeniedError("no_approver", "only the user can approve a protected path", "…");
    const line = denialNotice({ ...PROTECTED, command: `echo ${"x".repeat(300)} > ~/.bashrc` }, denial);
    expect(line).not.toContain("--yolo");
    expect(line).toContain("…");
    expect(line.length).toBeLessThan(300);
  });
});
