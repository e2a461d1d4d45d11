import { describe, expect, it } from "vitest";
import { pathsOverlap, planWaves } from "../../../src/agent/tool-executor.js";
import { repairToolName } from "../../../src/agent/tool-name-repair.js";

const read = (index: number, ...paths: string[]) => ({
  index,
  parallelSafe: true,
  interactive: false,
  ...(paths.length ? { paths } : {}),
});
const write = (index: number, ...paths: string[]) => ({
  index,
  parallelSafe: false,
  interactive: false,
  paths,
});
const shell = (index: number) => ({ index, parallelSafe: false, interactive: false });

describe("planWaves", () => {
  it.each([
    ["reads run together", [read(0), read(1), read(2)], [[0, 1, 2]]],
    ["writes to different files run together", [write(0, "/a/x"), write(1, "/a/y")], [[0, 1]]],
    ["a write and a read of one file are ordered", [write(0, "/a/x"), read(1, "/a/x")], [[0], [1]]],
    ["a write inside a read directory is ordered", [read(0, "/a"), write(1, "/a/b/c")], [[0], [1]]],
    ["a shell command is a barrier", [read(0), shell(1), read(2)], [[0], [1], [2]]],
    [
      "interactive makes all sequential",
      [read(0), { index: 1, parallelSafe: false, interactive: true }, read(2)],
      [[0], [1], [2]],
    ],
  ])("%s", (_name, calls, waves) => {
    expect(planWaves(calls)).toEqual(waves);
  });

  it("caps a wave at the parallel limit", () => {
    const calls = Array.from({ length: 10 }, (_, i) => read(i));
    expect(planWaves(calls, 8).map((w) => w.length)).toEqual([8, 2]);
  });

  it("pathsOverlap compares whole path segments", () => {
    expect(pathsOverlap("/a/b", "/a/b")).toBe(true);
    expect(pathsOverlap("/a", "/a/b")).toBe(true);
    expect(pathsOverlap("/a/b", "/a/bc")).toBe(false);
  });
});

describe("repairToolName", () => {
  const known = ["read_file", "write_file", "search_files", "terminal", "todo"];
  it.each([
    ["read_file", "read_file"],
    ["ReadFile", "read_file"],
    ["read-file", "read_file"],
    ["functions.terminal", "terminal"],
    ["READ_FILE", "read_file"],
    ["terminl", "terminal"],
    ["serch_files", "search_files"],
    ["launch_rocket", null],
    ["file", null],
  ])("%s → %s", (input, expected) => {
    expect(repairToolName(input, known)).toBe(expected);
  });
});
