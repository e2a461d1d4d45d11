import { describe, expect, it } from "vitest";
import { analyseCommand } from "../../../../src/tools/approval/index.js";
import { ZOO, zooContext } from "../../../support/command-zoo.js";

const ctx = zooContext();

describe("command analyser: the zoo", () => {
  for (const [family, entries] of Object.entries(ZOO)) {
    describe(family, () => {
      it.each(entries.map((e) => [JSON.stringify(e[0]).slice(0, 120), ...e] as const))(
        "%s",
        (_label, command, expected, key) => {
          const v = analyseCommand(command, ctx);
          const got = v.hardline ? "hardline" : v.dangerous ? "approve" : "safe";
          expect({ got, reason: v.reason }).toMatchObject({ got: expected });
          if (key) expect(v.findings.map((f) => f.key)).toContain(key);
          if (expected === "hardline" && key) expect(v.patternKey).toBe(key);
          if (expected !== "safe") expect(v.reason).toBeTruthy();
        },
      );
    });
  }

  it("holds at least 300 commands", () => {
    expect(Object.values(ZOO).flat().length).toBeGreaterThanOrEqual(300);
  });
});
