import { describe, expect, it } from "vitest";
import { fitDescription } from "../../../../src/cli/profiles/auto-describe.js";
import { checkHermesRequires } from "../../../../src/cli/profiles/distribution.js";

describe("fitDescription", () => {
  it.each([
    ["Reviews code.", "Reviews code."],
    ['Description: "Reviews code."', "Reviews code."],
    ["**Reviews\ncode**", "Reviews code"],
    ["  line one\r\n\tline two  ", "line one line two"],
  ])("%j becomes %j", (answer, expected) => {
    expect(fitDescription(answer)).toBe(expected);
  });

  it("cuts an over-long answer at a word within the stored limit", () => {
    const out = fitDescription(`${"word ".repeat(200)}end`);
    expect(out.length).toBeLessThanOrEqual(500);
    expect(out.endsWith("word…")).toBe(true);
  });

  it("refuses an empty answer", () => {
    expect(() => fitDescription(' "" ')).toThrow(/no description/);
  });
});

describe("checkHermesRequires", () => {
  it.each([
    ["", "0.1.0", true],
    [">=0.1.0", "0.1.0", true],
    [">=0.2", "0.1.9", false],
    ["0.1.0", "0.2.0", true],
    ["<1.0.0", "1.0.0", false],
    ["==0.1.0", "v0.1.0-rc1", true],
    ["!=0.1.0", "0.1.0", false],
  ])("%j with %s: %s", (spec, version, ok) => {
    const run = () => checkHermesRequires(spec, version);
    if (ok) expect(run).not.toThrow();
    else expect(run).toThrow(/requires Hermes/);
  });

  it("names a spec that is not a version", () => {
    expect(() => checkHermesRequires(">=banana", "0.1.0")).toThrow(/"banana" is not a version/);
  });
});
