import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  formatHistoryEntry,
  HISTORY_FILE_NAME,
  HistoryFile,
  parseHistory,
  shouldRemember,
} from "../../../../src/cli/tui/history.js";

const home = () => mkdtempSync(join(tmpdir(), "hermes-history-"));
const when = new Date("2025-01-02T03:04:05.678Z");

// What Python's prompt_toolkit FileHistory writes.
const PYTHON_FILE = "\n# 2025-01-01 10:00:00.000001\n+first\n\n# 2025-01-01 10:00:01.5\n+multi\n+line\n+\n";

describe("history file format", () => {
  it("reads prompt_toolkit's FileHistory format, multi-line entries included", () => {
    expect(parseHistory(PYTHON_FILE)).toEqual(["first", "multi\nline\n"]);
    expect(parseHistory("")).toEqual([]);
    expect(parseHistory("garbage\n+x\r\n")).toEqual(["x"]);
  });

  it("writes entries that read back the same", () => {
    const entries = ["one", "two\nlines", "+plus", "# hash"];
    const text = entries.map((e) => formatHistoryEntry(e, when)).join("");
    expect(text.startsWith("\n# 2025-01-02 03:04:05.678\n+one\n")).toBe(true);
    expect(parseHistory(text)).toEqual(entries);
  });

  it.each<[string, boolean]>([
    ["hello", true],
    ["", false],
    ["   ", false],
    [" secret said with a leading space", false],
    ["use sk-abcdefghijklmnopqrstuvwx please", false],
    ["OPENAI_API_KEY=abcdef123456", false],
    ["token ghp_abcdefghijklmnopqrstuvwxyz0123", false],
    ["what is a token?", true],
  ])("remembers %j: %s", (entry, expected) => {
    expect(shouldRemember(entry)).toBe(expected);
  });
});

describe("HistoryFile", () => {
  it("loads an existing (Python-written) file newest first and appends new entries", () => {
    const dir = home();
    writeFileSync(join(dir, HISTORY_FILE_NAME), PYTHON_FILE);
    const history = new HistoryFile(dir, { now: () => when });
    expect(history.entries).toEqual(["multi\nline\n", "first"]);
    history.add("next one");
    history.add(" private");
    history.add("next one");
    expect(history.entries.slice(0, 3)).toEqual(["next one", " private", "next one"]);
    const text = readFileSync(join(dir, HISTORY_FILE_NAME), "utf8");
    expect(parseHistory(text)).toEqual(["first", "multi\nline\n", "next one", "next one"]);
    expect(text).not.toContain("private");
  });

  it("creates the file readable by the owner only", () => {
    const dir = home();
    new HistoryFile(dir).add("hello");
    expect(statSync(join(dir, HISTORY_FILE_NAME)).mode & 0o777).toBe(0o600);
  });

  it("caps what it loads and compacts a file far over the cap", () => {
    const dir = home();
    const path = join(dir, HISTORY_FILE_NAME);
    writeFileSync(path, Array.from({ length: 25 }, (_, i) => formatHistoryEntry(`e${i}`, when)).join(""));
    const history = new HistoryFile(dir, { limit: 10 });
    expect(history.entries).toHaveLength(10);
    expect(history.entries[0]).toBe("e24");
    expect(parseHistory(readFileSync(path, "utf8"))).toEqual(
      Array.from({ length: 10 }, (_, i) => `e${i + 15}`),
    );
  });

  it("keeps working in memory when the home cannot be written", () => {
    const history = new HistoryFile(join(home(), "missing", "dir"));
    history.add("still here");
    expect(history.entries).toEqual(["still here"]);
  });
});
