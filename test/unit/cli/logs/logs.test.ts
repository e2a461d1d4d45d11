/**
 * `hermes logs`' pure parts and file reading: line heads in both formats, --since and --level,
 * the last N matching lines across rotated copies (tracebacks kept whole), and following a file
 * through a rotation.
 */
import { appendFileSync, mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  LogArgumentError,
  lineFilter,
  parseLevelArgument,
  parseLineHead,
  parseSince,
} from "../../../../src/util/log-filter.js";
import {
  type Follower,
  followFile,
  lastLines,
  reverseLines,
  rotationChain,
} from "../../../../src/util/log-tail.js";

const NOW = Date.parse("2026-11-26T12:00:00Z");
const at = (iso: string, level: string, session: string, component: string, message: string) =>
  `${iso} ${level} ${session} ${component}: ${message}`;

describe("line heads", () => {
  it("reads ours (UTC ISO) and Python Hermes's (local time, optional [session])", () => {
    expect(parseLineHead(at("2026-11-26T07:03:22.123Z", "WARNING", "s1", "gateway.telegram", "x"))).toEqual({
      timeMs: Date.parse("2026-11-26T07:03:22.123Z"),
      level: "WARNING",
      component: "gateway.telegram",
    });
    const py = parseLineHead("2026-04-05 22:35:00,123 CRITICAL [sess_abc] tools.terminal_tool: boom");
    expect(py).toEqual({
      timeMs: new Date("2026-04-05T22:35:00.123").getTime(),
      level: "ERROR",
      component: "tools.terminal_tool",
    });
    expect(parseLineHead("Traceback (most recent call last):")).toBeUndefined();
    expect(parseLineHead('  File "x.py", line 1')).toBeUndefined();
  });
});

describe("--since and --level", () => {
  it.each<[string, number]>([
    ["30m", NOW - 30 * 60_000],
    ["2h", NOW - 2 * 3_600_000],
    ["1d", NOW - 86_400_000],
    ["90s", NOW - 90_000],
    ["1w", NOW - 7 * 86_400_000],
    [" 2H ", NOW - 2 * 3_600_000],
    ["2026-11-26T07:00:00Z", Date.parse("2026-11-26T07:00:00Z")],
    ["2026-11-26", new Date("2026-11-26T00:00").getTime()],
    ["2026-11-26 07:00", new Date("2026-11-26T07:00").getTime()],
  ])("%j", (text, expected) => {
    expect(parseSince(text, NOW)).toBe(expected);
  });

  it.each(["yesterday", "1y", "-1h", "", "2026-13-45", "1h; rm -rf /"])(
    "refuses %j with the forms",
    (text) => {
      expect(() => parseSince(text, NOW)).toThrow(LogArgumentError);
      expect(() => parseSince(text, NOW)).toThrow(/30m, 2h, 1d/);
    },
  );

  it("reads levels in any case; refuses others", () => {
    expect(parseLevelArgument("warn")).toBe("WARNING");
    expect(parseLevelArgument("Error")).toBe("ERROR");
    expect(() => parseLevelArgument("loud")).toThrow(/DEBUG, INFO, WARNING or ERROR/);
  });
});

describe("reading log files", () => {
  const dir = () => mkdtempSync(join(tmpdir(), "hermes-logs-"));

  it("reads lines backwards across chunk boundaries, multi-byte characters whole, CRLF trimmed", () => {
    const path = join(dir(), "agent.log");
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i} ${"é€😀".repeat(i % 7)}`);
    writeFileSync(path, `${lines.join("\r\n")}\r\n\n`);
    expect([...reverseLines(path)]).toEqual([...lines].reverse());
  });

  it("takes the last N from the current file, then its rotated copies", () => {
    const d = dir();
    const path = join(d, "agent.log");
    writeFileSync(`${path}.2`, "a1\na2\n");
    writeFileSync(`${path}.1`, "b1\nb2\n");
    writeFileSync(path, "c1\n");
    expect(rotationChain(path)).toEqual([path, `${path}.1`, `${path}.2`]);
    expect(lastLines(rotationChain(path), 4, {})).toEqual(["a2", "b1", "b2", "c1"]);
    expect(lastLines(rotationChain(path), 0, {})).toEqual([]);
    expect(lastLines(rotationChain(join(d, "none.log")), 5, {})).toEqual([]);
  });

  it("filters by level, session, time and component; a traceback goes with its event", () => {
    const path = join(dir(), "errors.log");
    writeFileSync(
      path,
      [
        at("2026-11-20T09:00:00.000Z", "ERROR", "old", "agent", "too old"),
        at("2026-11-26T11:30:00.000Z", "INFO", "s1", "cli", "hello"),
        "2026-11-26 11:40:00,000 ERROR [s2] gateway.telegram: send failed",
        "Traceback (most recent call last):",
        '  File "send.py", line 3',
        at("2026-11-26T11:50:00.000Z", "WARNING", "s2", "gateway", "retrying"),
        at("2026-11-26T11:55:00.000Z", "ERROR", "s1", "gatewayish", "not the gateway"),
      ].join("\n"),
    );
    // A date, so the Python line (local time) is after it in any time zone.
    const sinceMs = parseSince("2026-11-25", NOW);
    const chain = [path];
    const tail = (l: string) => l.split(/: |\n/).pop();
    expect(lastLines(chain, 50, { sinceMs, level: "WARNING" }).map(tail)).toEqual([
      "send failed",
      "Traceback (most recent call last):",
      '  File "send.py", line 3',
      "retrying",
      "not the gateway",
    ]);
    expect(lastLines(chain, 50, { component: "gateway" })).toHaveLength(4);
    expect(lastLines(chain, 50, { session: "s1" }).map((l) => l.split(": ")[1])).toEqual([
      "hello",
      "not the gateway",
    ]);
    // -n counts lines: the traceback's lines count, and the cut keeps the newest.
    expect(lastLines(chain, 2, { component: "gateway" })).toEqual([
      '  File "send.py", line 3',
      at("2026-11-26T11:50:00.000Z", "WARNING", "s2", "gateway", "retrying"),
    ]);
  });

  it("a forward filter lets a continuation line follow its event", () => {
    const keep = lineFilter({ level: "ERROR" });
    expect(keep(at("2026-11-26T11:00:00.000Z", "INFO", "-", "a", "x"))).toBe(false);
    expect(keep("  continuation of info")).toBe(false);
    expect(keep(at("2026-11-26T11:00:00.000Z", "ERROR", "-", "a", "y"))).toBe(true);
    expect(keep("  continuation of error")).toBe(true);
  });
});

describe("following a file", () => {
  let follower: Follower | undefined;
  afterEach(() => follower?.stop());

  it("prints appended lines from the end on, through a rotation, and waits for a missing file", () => {
    const d = mkdtempSync(join(tmpdir(), "hermes-follow-"));
    const path = join(d, "agent.log");
    writeFileSync(path, "old line\n");
    const seen: string[] = [];
    follower = followFile(path, {}, (line) => seen.push(line), 60_000);
    appendFileSync(path, "new 1\npart");
    follower.poll();
    expect(seen).toEqual(["new 1"]);
    appendFileSync(path, "ial ✓\n");
    follower.poll();
    expect(seen).toEqual(["new 1", "partial ✓"]);
    // Rotation: the last lines of the old file, then the new file from its start.
    appendFileSync(path, "last of old\n");
    renameSync(path, `${path}.1`);
    writeFileSync(path, "first of new\n");
    follower.poll();
    expect(seen.slice(2)).toEqual(["last of old", "first of new"]);
    follower.stop();

    const later = join(d, "gateway.log");
    const got: string[] = [];
    follower = followFile(later, { level: "WARNING" }, (line) => got.push(line), 60_000);
    follower.poll();
    writeFileSync(
      later,
      `${at("2026-11-26T11:00:00.000Z", "INFO", "-", "g", "quiet")}\n${at("2026-11-26T11:00:00.000Z", "ERROR", "-", "g", "loud")}\n`,
    );
    follower.poll();
    expect(got).toHaveLength(1);
    expect(got[0]).toContain("loud");
  });
});
