import { describe, expect, it } from "vitest";
import { fuzzyReplace, reindent } from "../../../../src/tools/file/fuzzy-match.js";

describe("fuzzyReplace", () => {
  it("replaces an exact match", () => {
    expect(fuzzyReplace("a b c", "b", "B", false)).toEqual({
      ok: true,
      content: "a B c",
      count: 1,
      strategy: "exact",
    });
  });

  it("reports how many exact matches make it ambiguous, or replaces all", () => {
    expect(fuzzyReplace("x x x", "x", "y", false)).toEqual({
      ok: false,
      reason: "ambiguous",
      count: 3,
      strategy: "exact",
    });
    expect(fuzzyReplace("x x x", "x", "y", true)).toMatchObject({ ok: true, content: "y y y", count: 3 });
  });

  it("matches LF text in a CRLF file and keeps CRLF", () => {
    const out = fuzzyReplace("one\r\ntwo\r\nthree\r\n", "one\ntwo\n", "ONE\nTWO\n", false);
    expect(out).toEqual({
      ok: true,
      content: "ONE\r\nTWO\r\nthree\r\n",
      count: 1,
      strategy: "line-ending-insensitive",
    });
  });

  it("ignores trailing whitespace", () => {
    const out = fuzzyReplace("if (x) {   \n  go();\n}\n", "if (x) {\n  go();", "if (y) {\n  go();", false);
    expect(out).toMatchObject({
      ok: true,
      content: "if (y) {\n  go();\n}\n",
      strategy: "trailing-whitespace-insensitive",
    });
  });

  it("ignores indentation and re-indents the replacement to the file's level", () => {
    const file = "class A {\n    run() {\n        step();\n    }\n}\n";
    const out = fuzzyReplace(file, "run() {\n    step();\n}", "run() {\n    step();\n    more();\n}", false);
    expect(out).toMatchObject({
      ok: true,
      strategy: "indentation-insensitive",
      content: "class A {\n    run() {\n        step();\n        more();\n    }\n}\n",
    });
  });

  it("collapses runs of spaces and normalises typographic punctuation", () => {
    expect(fuzzyReplace("let  a =   1;\n", "let a = 1;", "let a = 2;", false)).toMatchObject({
      ok: true,
      content: "let a = 2;\n",
      strategy: "whitespace-insensitive",
    });
    expect(fuzzyReplace('say("hi") - ok\n', "say(“hi”) – ok", 'say("bye")', false)).toMatchObject({
      ok: true,
      content: 'say("bye")\n',
      strategy: "unicode-punctuation-insensitive",
    });
  });

  it("counts fuzzy matches for ambiguity too", () => {
    const out = fuzzyReplace("  a();\n  b();\n    a();\n    b();\n", "a();\nb();", "c();", false);
    expect(out).toEqual({ ok: false, reason: "ambiguous", count: 2, strategy: "indentation-insensitive" });
  });

  it("deletes whole lines when new_string is empty", () => {
    expect(fuzzyReplace("keep\n  drop  \nkeep2\n", "drop\n", "", false)).toMatchObject({
      ok: true,
      content: "keep\nkeep2\n",
    });
  });

  it("explains a miss when the first line exists but the rest differs, or line numbers were pasted", () => {
    const miss = fuzzyReplace("alpha\nbeta\ngamma\n", "beta\ndelta", "x", false);
    expect(miss).toMatchObject({ ok: false, reason: "not_found" });
    expect(miss.ok === false && miss.reason === "not_found" && miss.hint).toMatch(/line 2/);
    const pasted = fuzzyReplace("alpha\nbeta\n", "     1|alpha\n     2|beta", "x", false);
    expect(pasted.ok === false && pasted.reason === "not_found" && pasted.hint).toMatch(
      /line-number prefixes/,
    );
  });
});

describe("reindent", () => {
  it("shifts lines by the indentation difference of the first non-blank line", () => {
    expect(reindent(["a", "  b", ""], ["", "a"], ["", "    a"])).toEqual(["    a", "      b", ""]);
    expect(reindent(["    a"], ["    a"], ["  a"])).toEqual(["  a"]);
  });
});
