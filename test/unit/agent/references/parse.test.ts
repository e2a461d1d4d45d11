import { describe, expect, it } from "vitest";
import { formatReferenceValue, parseReferences } from "../../../../src/agent/references/parse.js";

const kinds = (text: string) => parseReferences(text).map((r) => [r.kind, r.target]);

describe("parseReferences", () => {
  it.each([
    ["look at @file:src/a.ts please", [["file", "src/a.ts"]]],
    [
      "@folder:src and @diff and @staged",
      [
        ["folder", "src"],
        ["diff", ""],
        ["staged", ""],
      ],
    ],
    ["the last @git:3 commits", [["git", "3"]]],
    ["read @url:https://example.com/x?y=1", [["url", "https://example.com/x?y=1"]]],
    ['quoted @file:"my notes.md" here', [["file", "my notes.md"]]],
    ["backticks @file:`a b/c.ts`", [["file", "a b/c.ts"]]],
  ])("finds the references in %j", (text, expected) => {
    expect(kinds(text)).toEqual(expected);
  });

  it("reads a line range, quoted or not", () => {
    const [plain] = parseReferences("@file:src/a.ts:3-9");
    expect(plain).toMatchObject({ target: "src/a.ts", lineStart: 3, lineEnd: 9 });
    const [one] = parseReferences("@file:a.ts:12");
    expect(one).toMatchObject({ target: "a.ts", lineStart: 12, lineEnd: 12 });
    const [quoted] = parseReferences('@file:"a b.ts":2-4');
    expect(quoted).toMatchObject({ target: "a b.ts", lineStart: 2, lineEnd: 4 });
  });

  it("leaves the sentence's punctuation and unopened brackets out", () => {
    expect(kinds("see @file:a.ts.")).toEqual([["file", "a.ts"]]);
    expect(kinds("(see @file:a.ts)")).toEqual([["file", "a.ts"]]);
    expect(kinds("is it @file:f(x).ts?")).toEqual([["file", "f(x).ts"]]);
    const [ref] = parseReferences("see @file:a.ts, then");
    expect(ref?.raw).toBe("@file:a.ts");
    expect("see @file:a.ts, then".slice(ref?.start, ref?.end)).toBe("@file:a.ts");
  });

  it.each([
    "mail me@file:x.ts",
    "a/@diff",
    "@diffs are nice",
    "@stagedfiles",
    "@files:x",
    "an @ sign alone",
    "@file: nothing after the colon",
    "no at sign at all",
  ])("finds nothing in the look-alike %j", (text) => {
    expect(parseReferences(text)).toEqual([]);
  });

  it("quotes values so they read back whole", () => {
    for (const value of ["plain/path.ts", "with space.md", 'has "double" and `tick`', "(paren)"]) {
      const [ref] = parseReferences(`@file:${formatReferenceValue(value)}`);
      expect(ref?.target).toBe(value);
    }
  });
});
