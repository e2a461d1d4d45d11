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
    expect(repairToolArguments(input)).toEqual({ value: {}, pass: "empty", gaveUp: true, truncated: false });
  });
});

describe("repairToolArguments: which repairs mean the arguments were cut off", () => {
  // Harmless: the value is what the model meant, so the call may run.
  it.each([
    ["valid", '{"a": 1}'],
    ["code fence", '```json\n{"a": 1}\n```'],
    ["raw newline in string", '{"content": "line1\nline2"}'],
    ["trailing comma before a closer", '{"a": 1, "b": [2,],}'],
    ["excess closer", '{"a": 1}}'],
    ["double-encoded", JSON.stringify('{"a":1}')],
    ["brackets and quotes inside a finished string", '{"code": "x = \\"{[\\""}'],
  ])("harmless: %s", (_name, input) => {
    const result = repairToolArguments(input);
    expect(result.gaveUp).toBe(false);
    expect(result.truncated).toBe(false);
  });

  // Cut off: the last value ends early; acting on it would write or run something shorter.
  it.each([
    ["unterminated string (write_file cut off)", '{"path": "a.txt", "content": "abc'],
    ["unterminated command", '{"command": "git clone ht'],
    ["string ending in an escape", '{"content": "abc\\'],
    ["unclosed object", '{"a": 1'],
    ["unclosed array", '{"paths": ["a", "b"'],
    ["dangling comma at the end", '{"a": 1,'],
    ["dangling colon", '{"a":'],
    ["braces inside an unterminated string", '{"code": "if (x) { y }'],
  ])("truncated: %s", (_name, input) => {
    expect(repairToolArguments(input).truncated).toBe(true);
  });
});
