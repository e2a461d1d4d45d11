import { describe, expect, it } from "vitest";
import { repairToolArguments } from "../../../src/util/json-repair.js";

describe("repairToolArguments", () => {
  const cases: Array<[string, string | null, Record<string, unknown>, string]> = [
    ["valid", '{"a": 1}', { a: 1 }, "ok"],
    ["empty string", "", {}, "ok"],
    ["null", null, {}, "ok"],
    ["double-encoded", JSON.stringify('{"a":1}'), { a: 1 }, "ok"],
    ["code fence", '```json\n{"a": 1}\n```', { a: 1 }, "fences"],
    ["raw newline in string", '{"content": "line1\nline2"}', { content: "line1\nline2" }, "control-chars"],
    ["raw tab in string", '{"c": "a\tb"}', { c: "a\tb" }, "control-chars"],
    ["trailing comma in object", '{"a": 1, "b": 2,}', { a: 1, b: 2 }, "trailing-commas"],
    ["trailing comma in array", '{"a": [1, 2,]}', { a: [1, 2] }, "trailing-commas"],
    ["comma before a string is kept", '{"a": "x,", "b": 2,}', { a: "x,", b: 2 }, "trailing-commas"],
    ["unclosed brace", '{"a": 1', { a: 1 }, "balance"],
    ["unclosed nested", '{"a": {"b": [1, 2', { a: { b: [1, 2] } }, "balance"],
    ["unclosed string", '{"path": "/tmp/x', { path: "/tmp/x" }, "balance"],
    ["excess closer", '{"a": 1}}', { a: 1 }, "balance"],
    ["braces inside strings untouched", '{"code": "if (x) { y }"', { code: "if (x) { y }" }, "balance"],
  ];
  it.each(cases)("%s", (_name, input, value, pass) => {
    const result = repairToolArguments(input);
    expect(result.value).toEqual(value);
    expect(result.pass).toBe(pass);
    expect(result.gaveUp).toBe(false);
  });

  it.each([["not json at all"], ["[1, 2, 3]"], ["42"]])("gives up with {} on %s", (input) => {
    expect(repairToolArguments(input)).toEqual({ value: {}, pass: "empty", gaveUp: true });
  });
});
