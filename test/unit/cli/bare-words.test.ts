import { describe, expect, it } from "vitest";
import { isPromptArgument, suggestCommands, unknownCommandMessage } from "../../../src/cli/bare-words.js";

const COMMANDS = [
  "chat",
  "config",
  "sessions",
  "insights",
  "skills",
  "auth",
  "mcp",
  "cron",
  "send",
  "help",
  "version",
];

describe("the bare-word rule", () => {
  it.each([
    ["what is in this folder?", true],
    ["fix the bug", true],
    ["why?", true],
    ["thanks!", true],
    ["Summarise README.md.", true],
    ["hello\tthere", true],
    ["frobnicate", false],
    ["doctor", false],
    ["README.md", false],
    ["./run.sh", false],
    ["config", false],
  ])("%j is a prompt: %s", (arg, expected) => {
    expect(isPromptArgument(arg)).toBe(expected);
  });
});

describe("suggestCommands", () => {
  it.each([
    ["confg", ["config"]],
    ["sesions", ["sessions"]],
    ["sess", ["sessions"]],
    ["skill", ["skills"]],
    ["Config", ["config"]],
    ["crn", ["cron"]],
    ["frobnicate", []],
    ["doctr", []],
    ["x", []],
  ])("%s → %j", (word, expected) => {
    expect(suggestCommands(word, COMMANDS)).toEqual(expected);
  });

  it("suggests doctor once doctor is a command", () => {
    expect(suggestCommands("doctr", [...COMMANDS, "doctor"])).toEqual(["doctor"]);
  });

  it("orders by closeness", () => {
    expect(suggestCommands("chet", ["cheat", "chart", "chat"])).toEqual(["chat", "cheat"]);
  });
});

describe("unknownCommandMessage", () => {
  it("names the word, the suggestions, the commands and how to send it as a prompt", () => {
    const message = unknownCommandMessage(["confg", "show"], COMMANDS);
    expect(message).toContain('"confg" is not a command');
    expect(message).toContain("Did you mean: config?");
    expect(message).toContain("Commands: auth, chat, config,");
    expect(message).toContain("hermes -q 'confg show'");
    expect(message).toContain("contains a space or ends in ?, ! or .");
  });

  it("has no did-you-mean line when nothing is close", () => {
    expect(unknownCommandMessage(["frobnicate"], COMMANDS)).not.toContain("Did you mean");
  });

  it("quotes shell metacharacters in the suggested -q command", () => {
    expect(unknownCommandMessage(["rm", "$(x)", "it's"], COMMANDS)).toContain(`hermes -q 'rm $(x) it'\\''s'`);
  });
});
