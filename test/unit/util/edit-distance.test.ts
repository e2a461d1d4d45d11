import { describe, expect, it } from "vitest";
import { editDistance } from "../../../src/util/edit-distance.js";

describe("editDistance", () => {
  it.each([
    ["", "", 0],
    ["abc", "", 3],
    ["", "abc", 3],
    ["kitten", "sitting", 3],
    ["config.yaml", "config.yml", 1],
    ["same", "same", 0],
    ["ab", "ba", 2],
  ])("%s → %s = %i", (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });
});
