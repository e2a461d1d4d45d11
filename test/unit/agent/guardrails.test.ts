import { describe, expect, it } from "vitest";
import {
  canonicalResult,
  type GuardedCall,
  isFailure,
  ToolLoopGuard,
} from "../../../src/agent/guardrails.js";
import { defaultConfig } from "../../../src/config/defaults.js";

const counts = (exact: number, same: number, idem: number) => ({
  exact_failure: exact,
  same_tool_failure: same,
  idempotent_no_progress: idem,
});

function guard(hardStop = true) {
  return new ToolLoopGuard({
    warningsEnabled: true,
    hardStopEnabled: hardStop,
    warnAfter: counts(2, 3, 2),
    hardStopAfter: counts(4, 6, 4),
  });
}

/** What the terminal tool hands the guard for `sh -c 'echo FAIL; exit 1'`. */
const failingTest: GuardedCall = {
  name: "terminal",
  args: { command: "npm test" },
  ok: true,
  failed: true,
  result: "FAIL\n[exit code 1]",
  readOnly: false,
};
const passingTest: GuardedCall = { ...failingTest, failed: false, result: "ok\n[exit code 0]" };

describe("isFailure", () => {
  it.each<[string, Pick<GuardedCall, "ok" | "failed" | "result">, boolean]>([
    ["a tool error", { ok: false, result: '{"error":"boom"}' }, true],
    [
      "a command that exited non-zero (failed flag)",
      { ok: true, failed: true, result: "x\n[exit code 1]" },
      true,
    ],
    ["a command that succeeded", { ok: true, failed: false, result: "x\n[exit code 0]" }, false],
    ["a JSON string result with an error key", { ok: true, result: '{"error": "not found"}' }, true],
    [
      "pretty-printed JSON with an error key",
      { ok: true, result: '\n{\n  "status": 1,\n  "error": {"code": 5}\n}\n' },
      true,
    ],
    ["JSON saying there is no error (null)", { ok: true, result: '{"error": null, "data": 1}' }, false],
    ["JSON saying there is no error (false)", { ok: true, result: '{"error": false}' }, false],
    ["JSON without an error key", { ok: true, result: '{"data": "error"}' }, false],
    ["an error key spelt with an escape", { ok: true, result: '{"\\u0065rror": "boom"}' }, true],
    ["an escape elsewhere, no error key", { ok: true, result: '{"note": "caf\\u00e9"}' }, false],
    ["a JSON array", { ok: true, result: '[{"error": "x"}]' }, false],
    ["plain text mentioning error", { ok: true, result: "error: something\n" }, false],
    [
      "text that looks like the exit line but the tool did not report failure",
      { ok: true, result: "[exit code 1]" },
      false,
    ],
  ])("%s → %s", (_label, call, expected) => {
    expect(isFailure(call)).toBe(expected);
  });
});

describe("canonicalResult", () => {
  it("ignores key order and whitespace in JSON, keeps text as is", () => {
    expect(canonicalResult('{"b": 1, "a": [1, 2]}')).toBe(canonicalResult('{\n  "a": [1,2],\n  "b": 1\n}'));
    expect(canonicalResult("a  b")).toBe("a  b");
    expect(canonicalResult("{not json")).toBe("{not json");
  });
});

describe("ToolLoopGuard", () => {
  it("warns after warn_after failing runs of the same command, then stops at hard_stop_after", () => {
    const g = guard();
    const verdicts = Array.from({ length: 4 }, () => g.record(failingTest));
    expect(verdicts[0]).toEqual({});
    expect(verdicts[1]?.warning).toContain("terminal has failed 2 times with these exact arguments");
    expect(verdicts[2]?.stop).toBeUndefined();
    expect(verdicts[3]?.stop).toContain("exact failure");
  });

  it("a success of the command in between resets its streaks: a flaky test is not a loop", () => {
    const g = guard();
    const sequence = [
      failingTest,
      failingTest,
      failingTest,
      passingTest,
      failingTest,
      failingTest,
      failingTest,
    ];
    const verdicts = sequence.map((c) => g.record(c));
    expect(verdicts.some((v) => v.stop)).toBe(false);
  });

  it("a success of another command ends the same-tool streak but not the exact count", () => {
    const g = guard();
    const ls: GuardedCall = { ...passingTest, args: { command: "ls" } };
    const verdicts = [failingTest, ls, failingTest, ls, failingTest, ls, failingTest].map((c) => g.record(c));
    expect(verdicts.at(-1)?.stop).toContain("exact failure");
  });

  it("varied failing commands trip the same-tool streak", () => {
    const g = guard();
    const verdicts = Array.from({ length: 6 }, (_, i) =>
      g.record({ ...failingTest, args: { command: `npm test -- --shard=${i}` } }),
    );
    expect(verdicts[2]?.warning).toContain("failed 3 times in a row");
    expect(verdicts[5]?.stop).toContain("same tool failure");
  });

  it("counts JSON error results from tools that report ok", () => {
    const g = guard();
    const call: GuardedCall = {
      name: "web_fetch",
      args: { url: "x" },
      ok: true,
      result: '{"error":"404"}',
      readOnly: true,
    };
    g.record(call);
    expect(g.record(call).warning).toContain("failed 2 times");
  });

  it("counts a timed-out command (reported failed) like any failure", () => {
    const g = guard();
    const timeout: GuardedCall = {
      ...failingTest,
      args: { command: "sleep 999" },
      result: "[timed out after 1s and was killed; exit code 124]",
    };
    g.record(timeout);
    expect(g.record(timeout).warning).toContain("failed 2 times");
  });

  it("argument order does not make a repeated failing call new", () => {
    const g = guard();
    g.record({ ...failingTest, args: { command: "npm test", workdir: "/w" } });
    expect(g.record({ ...failingTest, args: { workdir: "/w", command: "npm test" } }).warning).toContain(
      "exact arguments",
    );
  });

  it("sees no progress in JSON results that differ only in key order and spacing", () => {
    const g = guard();
    const read = (result: string): GuardedCall => ({
      name: "search_files",
      args: { q: "x" },
      ok: true,
      result,
      readOnly: true,
    });
    g.record(read('{"matches": [], "total": 0}'));
    const v = g.record(read('{\n  "total": 0,\n  "matches": []\n}'));
    expect(v.warning).toContain("same result 2 times");
  });

  it("a failed read-only call is not counted as no progress, and a changed result restarts it", () => {
    const g = guard();
    const read = (result: string): GuardedCall => ({
      name: "read_file",
      args: { p: "a" },
      ok: true,
      result,
      readOnly: true,
    });
    g.record(read("one"));
    expect(g.record(read("two")).warning).toBeUndefined();
  });

  it("counts no progress the same whether the repeated result is the same string or an equal copy, in any order", () => {
    const g = guard(false);
    const read = (result: string): GuardedCall => ({
      name: "search_files",
      args: { q: "y" },
      ok: true,
      result,
      readOnly: true,
    });
    const same = '{"matches": [], "total": 0}';
    g.record(read(same));
    // The identical string, an equal copy with its keys moved, then the first spelling again.
    expect(g.record(read(same)).warning).toContain("same result 2 times");
    expect(g.record(read('{"total":0,"matches":[]}')).warning).toContain("same result 3 times");
    expect(g.record(read(same)).warning).toContain("same result 4 times");
    // A different result starts over; the same call returning it again counts from there.
    expect(g.record(read('{"matches": ["a"], "total": 1}')).warning).toBeUndefined();
    expect(g.record(read('{"total": 1, "matches": ["a"]}')).warning).toContain("same result 2 times");
  });

  it("startTurn forgets every count", () => {
    const g = guard();
    for (let i = 0; i < 3; i++) g.record(failingTest);
    g.startTurn();
    expect(g.record(failingTest)).toEqual({});
    expect(g.record(failingTest).stop).toBeUndefined();
  });

  it("with hard stop off (the default) it only warns", () => {
    const g = ToolLoopGuard.fromConfig(defaultConfig().tool_loop_guardrails);
    const verdicts = Array.from({ length: 10 }, () => g.record(failingTest));
    expect(verdicts.every((v) => v.stop === undefined)).toBe(true);
    expect(verdicts.at(-1)?.warning).toContain("[guardrail]");
  });
});
