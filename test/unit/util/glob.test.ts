import { describe, expect, it } from "vitest";
import { globMatcher, globToRegExp, matchesGlob } from "../../../src/util/glob.js";

describe("globToRegExp", () => {
  it.each([
    ["*.ts", "a.ts", true],
    ["*.ts", "a.tsx", false],
    ["*.ts", "dir/a.ts", false],
    ["**/*.ts", "a.ts", true],
    ["**/*.ts", "x/y/a.ts", true],
    ["src/**", "src/a/b.js", true],
    ["src/**", "lib/a.js", false],
    ["src/**/test_*.py", "src/test_a.py", true],
    ["src/**/test_*.py", "src/x/y/test_a.py", true],
    ["a?c", "abc", true],
    ["a?c", "a/c", false],
    ["*.{js,ts}", "x.js", true],
    ["*.{js,ts}", "x.ts", true],
    ["*.{js,ts}", "x.py", false],
    ["[abc].txt", "b.txt", true],
    ["[!abc].txt", "b.txt", false],
    ["[!abc].txt", "d.txt", true],
    ["file(1).txt", "file(1).txt", true],
    ["a+b.txt", "a+b.txt", true],
    ["\\*.txt", "*.txt", true],
    ["\\*.txt", "a.txt", false],
    ["[unclosed", "[unclosed", true],
    ["{a,b", "a", true],
  ])("%s vs %s → %s", (glob, path, expected) => {
    expect(globToRegExp(glob).test(path)).toBe(expected);
  });
});

describe("matchesGlob", () => {
  it("matches a slash-free glob against the file name at any depth", () => {
    expect(matchesGlob("*.md", "docs/guide/intro.md")).toBe(true);
    expect(matchesGlob("intro.md", "docs/intro.md")).toBe(true);
  });

  it("matches a glob with a slash against the whole relative path", () => {
    expect(matchesGlob("docs/*.md", "docs/intro.md")).toBe(true);
    expect(matchesGlob("docs/*.md", "other/docs/intro.md")).toBe(false);
    expect(matchesGlob("./docs/*.md", "docs/intro.md")).toBe(true);
  });

  it("can ignore case", () => {
    expect(globMatcher("*.MD", { caseInsensitive: true })("a.md")).toBe(true);
    expect(globMatcher("*.MD")("a.md")).toBe(false);
  });
});
