import { describe, expect, it } from "vitest";
import {
  chooseRoute,
  isEmptyQuery,
  likePattern,
  parseSearchQuery,
  toFtsMatch,
  toLikeClause,
  toTrigramMatch,
  trigramEligible,
} from "../../../src/state/fts-query.js";

describe("parseSearchQuery → FTS5 MATCH text", () => {
  it.each([
    ["docker compose", '("docker" AND "compose")', "words"],
    ['"exact phrase" here', '("exact phrase" AND "here")', "words"],
    ['"unbalanced', '("unbalanced")', "words"],
    ['say "hi', '("say" AND "hi")', "words"],
    ["foo*", '("foo"*)', "words"],
    ["-bar", '("bar")', "words"],
    ["a:b", '("a:b")', "words"],
    ["(x", '("x")', "words"],
    ["x)", '("x")', "words"],
    ["AND", '("AND")', "words"],
    ["OR", '("OR")', "words"],
    ["NOT", '("NOT")', "words"],
    ["NOT foo", '("NOT" AND "foo")', "words"],
    ["foo NOT bar", '("foo" NOT "bar")', "words"],
    ["foo OR bar", '("foo") OR ("bar")', "words"],
    ["foo AND bar", '("foo" AND "bar")', "words"],
    ["foo OR", '("foo" AND "OR")', "words"],
    ["a b OR c", '("a" AND "b") OR ("c")', "words"],
    ["foo or bar", '("foo" AND "or" AND "bar")', "words"],
    ["NEAR(", '("NEAR")', "words"],
    ["NEAR(a b)", '("NEAR(a" AND "b")', "words"],
    ["c++", '("c++")', "words"],
    ["what's", '("what\'s")', "words"],
    ["col:term", '("col:term")', "words"],
    ["^start", '("start")', "words"],
    ["{x}", '("x")', "words"],
    ["😀", '("😀")', "like"],
    ["😀 party", '("😀" AND "party")', "like"],
    ["🎉🎉🎉", '("🎉🎉🎉")', "trigram"],
    ["天气", '("天气")', "like"],
    ["今天天气", '("今天天气")', "trigram"],
    ["天气 report", '("天气" AND "report")', "like"],
    ["今天天气 report", '("今天天气" AND "report")', "trigram"],
    ["*", '("*")', "like"],
    ["()", '("()")', "like"],
    ["---", '("---")', "trigram"],
  ])("%j", (input, match, route) => {
    const parsed = parseSearchQuery(input);
    expect(toFtsMatch(parsed)).toBe(match);
    expect(chooseRoute(parsed)).toBe(route);
  });

  it("treats empty and whitespace-only text as empty", () => {
    expect(isEmptyQuery(parseSearchQuery(""))).toBe(true);
    expect(isEmptyQuery(parseSearchQuery("   \n\t "))).toBe(true);
    expect(isEmptyQuery(parseSearchQuery("x"))).toBe(false);
  });

  it("never lets a double quote out of its quoted string", () => {
    for (const input of ['a"b', '"""', '"a" "b', 'x "" y', '"it\'s" "q\\"']) {
      const match = toFtsMatch(parseSearchQuery(input));
      // Every quoted string is closed: outside them only our own operators, brackets and spaces.
      const outside = match.replace(/"(?:[^"]|"")*"\*?/g, "");
      expect(outside).toMatch(/^[()\sANDORT]*$/);
    }
  });

  it("drops the prefix star in trigram queries (a trigram match is already a substring)", () => {
    expect(toTrigramMatch(parseSearchQuery("dock*"))).toBe('("dock")');
  });

  it("needs three characters in every positive term for the trigram index", () => {
    expect(trigramEligible(parseSearchQuery("ockerfi"))).toBe(true);
    expect(trigramEligible(parseSearchQuery("ab"))).toBe(false);
    expect(trigramEligible(parseSearchQuery("abc NOT de"))).toBe(true);
    expect(trigramEligible(parseSearchQuery("ab OR abc"))).toBe(false);
  });
});

describe("LIKE fallback", () => {
  it("escapes wildcards", () => {
    expect(likePattern("50%_off\\")).toBe("%50\\%\\_off\\\\%");
  });

  it("ANDs terms in a group, ORs groups, negates NOT terms, over every column", () => {
    const { sql, params } = toLikeClause(parseSearchQuery("a b OR c NOT d"), ["x", "y"]);
    expect(sql).toBe(
      "(((x LIKE ? ESCAPE '\\' OR y LIKE ? ESCAPE '\\') AND (x LIKE ? ESCAPE '\\' OR y LIKE ? ESCAPE '\\')) OR " +
        "((x LIKE ? ESCAPE '\\' OR y LIKE ? ESCAPE '\\') AND NOT (x LIKE ? ESCAPE '\\' OR y LIKE ? ESCAPE '\\')))",
    );
    expect(params).toEqual(["%a%", "%a%", "%b%", "%b%", "%c%", "%c%", "%d%", "%d%"]);
  });
});
