import { describe, expect, it } from "vitest";
import {
  analyseCommand,
  detectDangerousCommand,
  isCommandAllowlisted,
  MAX_DEPTH,
} from "../../../../src/tools/approval/index.js";
import { nested, zooContext } from "../../../support/command-zoo.js";

const ctx = zooContext();

describe("analyseCommand: verdict shape", () => {
  it("returns no findings and no reason for a safe command", () => {
    expect(analyseCommand("ls -la", ctx)).toEqual({
      dangerous: false,
      hardline: false,
      protectedPath: false,
      findings: [],
    });
  });

  it("lists every distinct reason, decides by the first, hardline first", () => {
    const v = analyseCommand("git reset --hard && git clean -fd", ctx);
    expect(v.patternKey).toBe("git_reset_hard");
    expect(v.reason).toContain("git clean");
    const h = analyseCommand("git clean -fd; rm -rf ~", ctx);
    expect(h.patternKey).toBe("catastrophic_delete");
    expect(h.findings[0]?.hardline).toBe(true);
  });

  it("marks protected-path findings", () => {
    const v = analyseCommand("echo x >> ~/.hermes/config.yaml", ctx);
    expect(v).toMatchObject({
      dangerous: true,
      hardline: false,
      protectedPath: true,
      patternKey: "protected_write",
    });
    expect(v.reason).toContain("config.yaml");
  });

  it("resolves relative paths against ctx.cwd", () => {
    expect(analyseCommand("echo x > config.yaml", zooContext("/home/zoo/.hermes")).protectedPath).toBe(true);
    expect(analyseCommand("echo x > config.yaml", zooContext("/home/zoo/project")).dangerous).toBe(false);
    expect(analyseCommand("rm -rf *", zooContext("/home/zoo")).hardline).toBe(true);
    expect(analyseCommand("rm -rf *", zooContext("/home/zoo/project")).hardline).toBe(false);
  });

  it("makes the depth limit real: deeper nesting is a finding, never silence", () => {
    const v = analyseCommand(nested(MAX_DEPTH + 3, "ls"), ctx);
    expect(v.dangerous).toBe(true);
    expect(v.findings.map((f) => f.key)).toContain("nesting_depth");
  });

  it("never throws on malformed or large input", () => {
    const junk = [
      "'unterminated",
      '"$(',
      "$((1+",
      "<<",
      "| | ;;",
      "(((",
      "`",
      "a\\",
      "${",
      "$(",
      "<(",
      "case",
      "for",
      "f() {",
      "\u0000\u0001\u0002",
      "{".repeat(5000),
      "$(".repeat(2000),
    ];
    for (const j of junk) expect(() => analyseCommand(j, ctx)).not.toThrow();
    expect(() => analyseCommand(`echo ${"{a,b}".repeat(40)}`, ctx)).not.toThrow();
    expect(analyseCommand(`${"echo ok; ".repeat(20000)}rm -rf ~`, ctx).hardline).toBe(true);
  });

  it("detectDangerousCommand works without a context (this process's cwd and home)", () => {
    expect(detectDangerousCommand("rm -rf /").hardline).toBe(true);
    expect(detectDangerousCommand("ls").dangerous).toBe(false);
  });
});

describe("isCommandAllowlisted", () => {
  it("matches pattern keys and exact commands", () => {
    expect(isCommandAllowlisted("rm -rf build", ["recursive_delete"], ctx)).toBe(true);
    expect(isCommandAllowlisted("rm -rf build", ["git_clean"], ctx)).toBe(false);
    expect(isCommandAllowlisted("  git push -f  ", ["git push -f"], ctx)).toBe(true);
  });

  it("requires every finding to be listed", () => {
    const cmd = "git reset --hard && git clean -fd";
    expect(isCommandAllowlisted(cmd, ["git_reset_hard"], ctx)).toBe(false);
    expect(isCommandAllowlisted(cmd, ["git_reset_hard", "git_clean"], ctx)).toBe(true);
  });

  it("never allowlists hardline commands, even by exact text", () => {
    expect(isCommandAllowlisted("rm -rf /", ["rm -rf /", "catastrophic_delete"], ctx)).toBe(false);
    expect(isCommandAllowlisted("$(echo rm) -rf ~", ["dynamic_command", "catastrophic_delete"], ctx)).toBe(
      false,
    );
  });

  it("never allowlists a protected path: only an explicit answer approves it", () => {
    const cmd = "echo x >> ~/.hermes/config.yaml";
    expect(isCommandAllowlisted(cmd, ["protected_write", cmd], ctx)).toBe(false);
  });

  it("does not approve safe commands through an empty key match", () => {
    expect(isCommandAllowlisted("ls", [], ctx)).toBe(false);
    expect(isCommandAllowlisted("ls", ["ls"], ctx)).toBe(true);
  });
});
