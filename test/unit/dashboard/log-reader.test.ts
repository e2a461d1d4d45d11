/**
 * The Logs page's reader: tails that stop at a byte budget, cursors that survive a rotation and a
 * truncation, partial lines held back until complete, and nothing read twice.
 */
import { appendFileSync, mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { followLog, parseCursor, tailLog } from "../../../src/dashboard/log-reader.js";

function line(level: string, session: string, message: string, second = 0): string {
  return `2026-11-26T10:00:${String(second).padStart(2, "0")}.000Z ${level} ${session} hermes: ${message}\n`;
}

function logFile(text = ""): string {
  const path = join(mkdtempSync(join(tmpdir(), "hermes-logreader-")), "agent.log");
  writeFileSync(path, text);
  return path;
}

const all = { filter: {} };

describe("tailLog", () => {
  it("gives the last lines oldest first and a cursor at the end of the last whole line", () => {
    const text = line("INFO", "a", "one") + line("INFO", "b", "two") + line("ERROR", "c", "three");
    const path = logFile(text);
    const tail = tailLog(path, 2, all);
    expect(tail.lines).toEqual([expect.stringMatching(/two$/), expect.stringMatching(/three$/)]);
    expect(tail.complete).toBe(true);
    const cursor = parseCursor(tail.cursor);
    expect(cursor?.offset).toBe(Buffer.byteLength(text));
  });

  it("leaves a half-written last line to the follower instead of showing it twice", () => {
    const path = logFile(`${line("INFO", "a", "whole")}2026-11-26T10:00:09.000Z INFO a hermes: half`);
    const tail = tailLog(path, 10, all);
    expect(tail.lines).toEqual([expect.stringMatching(/whole$/)]);
    appendFileSync(path, " done\n");
    const next = followLog(path, parseCursor(tail.cursor) ?? { ino: 0, offset: 0 }, all);
    expect(next.lines).toEqual([expect.stringMatching(/half done$/)]);
  });

  it("filters by level, session and text (any case), keeping continuation lines with their event", () => {
    const path = logFile(
      `${line("ERROR", "s1", "Traceback follows")}  File "x.py", line 3\nKeyError: pelican\n${line("INFO", "s2", "fine")}${line("WARNING", "s1", "slow")}`,
    );
    expect(tailLog(path, 10, { filter: { level: "WARNING" } }).lines).toHaveLength(4);
    expect(tailLog(path, 10, { filter: { session: "s2" } }).lines).toEqual([expect.stringMatching(/fine$/)]);
    const found = tailLog(path, 10, { filter: {}, text: "PELICAN" }).lines;
    expect(found).toEqual([expect.stringMatching(/Traceback/), '  File "x.py", line 3', "KeyError: pelican"]);
  });

  it("never matches a search on text the reader hides", () => {
    const path = logFile(line("ERROR", "s1", "key sk-hidden-123 refused"));
    const shown = (text: string) => text.replace(/sk-\S+/, "[REDACTED]");
    expect(tailLog(path, 10, { filter: {}, text: "sk-hidden", shown }).lines).toEqual([]);
    expect(tailLog(path, 10, { filter: {}, text: "refused", shown }).lines).toHaveLength(1);
    // A session filter is a text search too.
    expect(tailLog(path, 10, { filter: { session: "sk-hidden" }, shown }).lines).toEqual([]);
    expect(tailLog(path, 10, { filter: { session: "s1" }, shown }).lines).toHaveLength(1);
    appendFileSync(path, line("ERROR", "s1", "again sk-hidden-123"));
    const follow = followLog(path, { ino: 0, offset: 0 }, { filter: { session: "sk-hidden" }, shown });
    expect(follow.lines).toEqual([]);
  });

  it("reads into rotated copies for enough lines, and stops at the byte budget when a search finds little", () => {
    const path = logFile(line("INFO", "new", "newest"));
    writeFileSync(`${path}.1`, line("INFO", "old", "needle in the old copy") + line("INFO", "old", "older"));
    expect(tailLog(path, 10, { filter: {}, text: "needle" }).lines).toEqual([
      expect.stringMatching(/needle/),
    ]);
    const big = logFile(line("INFO", "x", "needle") + line("INFO", "x", "filler ".repeat(40)).repeat(2000));
    const cut = tailLog(big, 10, { filter: {}, text: "needle" }, 64 * 1024);
    expect(cut.complete).toBe(false);
    expect(cut.lines).toEqual([]);
    expect(tailLog(big, 10, { filter: {}, text: "needle" }).lines).toHaveLength(1);
  });

  it("gives an empty tail and a cursor at the start when the log does not exist yet", () => {
    const path = join(mkdtempSync(join(tmpdir(), "hermes-logreader-")), "gateway.log");
    const tail = tailLog(path, 10, all);
    expect(tail).toEqual({ lines: [], cursor: "0-0", complete: true });
    writeFileSync(path, line("INFO", "g", "first gateway line"));
    expect(followLog(path, { ino: 0, offset: 0 }, all).lines).toEqual([
      expect.stringMatching(/first gateway/),
    ]);
  });
});

describe("followLog", () => {
  it("gives only what was appended, with the level filter, and nothing again", () => {
    const path = logFile(line("INFO", "a", "before"));
    let cursor = parseCursor(tailLog(path, 1, all).cursor);
    appendFileSync(path, line("DEBUG", "a", "quiet") + line("ERROR", "a", "loud"));
    const next = followLog(path, cursor ?? { ino: 0, offset: 0 }, { filter: { level: "INFO" } });
    expect(next.lines).toEqual([expect.stringMatching(/loud$/)]);
    cursor = parseCursor(next.cursor);
    expect(followLog(path, cursor ?? { ino: 0, offset: 0 }, all).lines).toEqual([]);
  });

  it("reads the rest of the rotated file, then the new one from its start", () => {
    const path = logFile(line("INFO", "a", "first"));
    const cursor = parseCursor(tailLog(path, 1, all).cursor) ?? { ino: 0, offset: 0 };
    appendFileSync(path, line("INFO", "a", "last before rotation"));
    renameSync(path, `${path}.1`);
    writeFileSync(path, line("INFO", "a", "first after rotation"));
    const next = followLog(path, cursor, all);
    expect(next.lines).toEqual([
      expect.stringMatching(/last before rotation$/),
      expect.stringMatching(/first after rotation$/),
    ]);
    expect(next.reset).toBeUndefined();
  });

  it("starts over when the file was truncated, and says so", () => {
    const path = logFile(line("INFO", "a", "x".repeat(200)));
    const cursor = parseCursor(tailLog(path, 1, all).cursor) ?? { ino: 0, offset: 0 };
    writeFileSync(path, line("INFO", "a", "short"));
    const next = followLog(path, cursor, all);
    expect(next.reset).toBe("truncated");
    expect(next.lines).toEqual([expect.stringMatching(/short$/)]);
  });

  it("reads at most maxBytes per answer and says there is more", () => {
    const path = logFile("");
    const start = parseCursor(tailLog(path, 1, all).cursor) ?? { ino: 0, offset: 0 };
    appendFileSync(path, Array.from({ length: 100 }, (_, i) => line("INFO", "a", `n${i}`)).join(""));
    const first = followLog(path, start, all, { maxBytes: 1000 });
    expect(first.more).toBe(true);
    expect(first.lines.length).toBeGreaterThan(0);
    let cursor = parseCursor(first.cursor) ?? start;
    const seen = [...first.lines];
    for (let i = 0; i < 50; i++) {
      const next = followLog(path, cursor, all, { maxBytes: 1000 });
      seen.push(...next.lines);
      cursor = parseCursor(next.cursor) ?? cursor;
      if (!next.more) break;
    }
    expect(seen).toHaveLength(100);
    expect(seen[99]).toMatch(/n99$/);
  });

  it("refuses malformed cursors", () => {
    for (const text of ["", "1", "a-b", "1-2-3", "-1-2", `1-${"9".repeat(17)}`]) {
      expect(parseCursor(text), text).toBeUndefined();
    }
    expect(parseCursor("12-34")).toEqual({ ino: 12, offset: 34 });
  });
});
