import { describe, expect, it } from "vitest";
import {
  approvalDecision,
  approvalOptions,
  approvalToolCall,
  clarifyAnswer,
  clarifyOptions,
} from "../../../src/acp/permissions.js";

const dangerous = { command: "rm -rf build", reason: "recursive delete", patternKey: "recursive_delete" };
const protectedPath = { ...dangerous, command: "echo x > ~/.hermes/config.yaml", protectedPath: true };

describe("approval permission requests", () => {
  it("offers once, session, always and deny for a dangerous command", () => {
    expect(approvalOptions(dangerous).map((o) => [o.optionId, o.kind])).toEqual([
      ["allow_once", "allow_once"],
      ["allow_session", "allow_always"],
      ["allow_always", "allow_always"],
      ["deny", "reject_once"],
    ]);
  });

  it("offers only once and deny for a protected path (Hermes never remembers those)", () => {
    expect(approvalOptions(protectedPath).map((o) => o.optionId)).toEqual(["allow_once", "deny"]);
  });

  it.each([
    ["allow_once", "once"],
    ["allow_session", "session"],
    ["allow_always", "always"],
    ["deny", "deny"],
  ] as const)("maps the selected %s to %s", (optionId, decision) => {
    const offered = approvalOptions(dangerous);
    expect(approvalDecision({ outcome: "selected", optionId }, offered)).toBe(decision);
  });

  it("fails closed: a cancelled request, an option that was not offered, an unknown id", () => {
    const offered = approvalOptions(protectedPath);
    expect(approvalDecision({ outcome: "cancelled" }, offered)).toBe("deny");
    // An editor (or an injected reply) claiming a scope that was not offered for a protected path.
    expect(approvalDecision({ outcome: "selected", optionId: "allow_always" }, offered)).toBe("deny");
    expect(approvalDecision({ outcome: "selected", optionId: "allow_session" }, offered)).toBe("deny");
    expect(approvalDecision({ outcome: "selected", optionId: "ALLOW_ONCE" }, offered)).toBe("deny");
    expect(approvalDecision({ outcome: "selected", optionId: "__proto__" }, approvalOptions(dangerous))).toBe(
      "deny",
    );
    expect(approvalDecision({ outcome: "selected", optionId: "toString" }, approvalOptions(dangerous))).toBe(
      "deny",
    );
  });

  it("shows the command and the reason in the request", () => {
    const call = approvalToolCall("perm-1", dangerous);
    expect(call.title).toBe("recursive delete: rm -rf build");
    expect(JSON.stringify(call.content)).toContain("$ rm -rf build");
    expect(call.kind).toBe("execute");
  });
});

describe("clarify as a permission request", () => {
  const choices = ["red", "green"];

  it("offers each choice and a way to skip", () => {
    expect(clarifyOptions(choices).map((o) => o.name)).toEqual(["red", "green", "Skip the question"]);
  });

  it("returns the chosen answer", () => {
    expect(clarifyAnswer({ outcome: "selected", optionId: "choice-1" }, choices)).toBe("green");
  });

  it("treats anything else as a skipped question", () => {
    for (const optionId of ["skip", "choice-2", "choice--1", "choice-x", "choice-"]) {
      expect(clarifyAnswer({ outcome: "selected", optionId }, choices)).toContain("skipped");
    }
    expect(clarifyAnswer({ outcome: "cancelled" }, choices)).toContain("skipped");
  });
});
