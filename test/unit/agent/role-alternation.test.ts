import { describe, expect, it } from "vitest";
import { mergeUserRuns } from "../../../src/agent/role-alternation.js";
import type { Message } from "../../../src/ai/types.js";

const u = (content: Message["content"]): Message => ({ role: "user", content });
const a = (content: string): Message => ({ role: "assistant", content });

describe("mergeUserRuns", () => {
  it("returns the same array when roles already alternate", () => {
    const history = [u("a"), a("b"), u("c")];
    expect(mergeUserRuns(history)).toBe(history);
  });
  it.each([
    ["two strings", [u("first"), u("second")], [u("first\n\nsecond")]],
    [
      "three in a row after an answer",
      [u("q"), a("r"), u("x"), u("y"), u("z")],
      [u("q"), a("r"), u("x\n\ny\n\nz")],
    ],
    ["an empty one", [u(""), u("only")], [u("only")]],
    [
      "text and parts",
      [u("look"), u([{ type: "image_url", image_url: { url: "data:x" } }])],
      [
        u([
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url: "data:x" } },
        ]),
      ],
    ],
  ])("merges %s", (_name, input, expected) => {
    expect(mergeUserRuns(input)).toEqual(expected);
    expect(input.length).toBeGreaterThan(expected.length); // the input is not modified
  });
});
