import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  createLogger,
  escapeLine,
  formatLogLine,
  homeLogger,
  type LogSinkOptions,
  loggingSettings,
  MAX_VALUE_CHARS,
  parseLogLevel,
} from "../../../src/util/log.js";

const fresh = () => mkdtempSync(join(tmpdir(), "hermes-log-"));
const T = new Date("2026-05-01T12:34:56.789Z");
const read = (dir: string, name: string) =>
  existsSync(join(dir, name)) ? readFileSync(join(dir, name), "utf8") : "";
const lines = (dir: string, name: string) => read(dir, name).split("\n").filter(Boolean);

function logger(options: Partial<LogSinkOptions> = {}) {
  const dir = join(fresh(), "logs");
  const warnings: string[] = [];
  const log = createLogger(
    { dir, now: () => T, onDisabled: (m) => warnings.push(m), ...options },
    "agent",
  ).child({ sessionId: "20260501_123456_abcdef" });
  return { dir: options.dir ?? dir, log, warnings };
}

describe("formatLogLine", () => {
  it("writes time, level, session id, component, message and key=value extras on one line", () => {
    const line = formatLogLine({
      time: T,
      level: "INFO",
      sessionId: "20260501_123456_abcdef",
      component: "agent",
      message: "tool call",
      extras: { tool: "terminal", ms: 12, ok: true, parent: undefined, note: null },
    });
    expect(line).toBe(
      "2026-05-01T12:34:56.789Z INFO 20260501_123456_abcdef agent: tool call tool=terminal ms=12 ok=true note=null\n",
    );
  });

  it("puts - for a missing session id and quotes values with spaces, quotes or =", () => {
    const line = formatLogLine({
      time: T,
      level: "WARNING",
      component: "gateway.telegram",
      message: "x",
      extras: { error: 'bad "token" here', eq: "a=b", empty: "" },
    });
    expect(line).toBe(
      '2026-05-01T12:34:56.789Z WARNING - gateway.telegram: x error="bad \\"token\\" here" eq="a=b" empty=""\n',
    );
  });

  it("keeps a multi-line event on one line and cannot be made to forge another event", () => {
    const forged = "done\n2026-05-01T00:00:00.000Z ERROR - agent: fake\r\u2028\u001b[31mred\ttab";
    const line = formatLogLine({
      time: T,
      level: "ERROR",
      component: "agent",
      message: forged,
      extras: { detail: "a\nb" },
    });
    expect(line.endsWith("\n")).toBe(true);
    expect(line.slice(0, -1)).not.toMatch(/[\n\r\u2028\u001b\t]/);
    expect(line).toContain(
      "done\\n2026-05-01T00:00:00.000Z ERROR - agent: fake\\r\\u2028\\u001b[31mred\\ttab",
    );
    expect(line).toContain('detail="a\\nb"');
  });

  it("redacts the message and every value before capping them, so a cut never splits a secret", () => {
    const secret = "sk-live-0123456789abcdef";
    const redact = (t: string) => t.replaceAll(secret, "***");
    const long = `${"a".repeat(MAX_VALUE_CHARS - 5)}${secret}tail`;
    const line = formatLogLine(
      {
        time: T,
        level: "INFO",
        component: "agent",
        message: `key ${secret}\nsecond line ${secret}`,
        extras: { command: long },
      },
      redact,
    );
    expect(line).not.toContain("sk-live");
    expect(line).toContain("key ***\\nsecond line ***");
    // Redacted first (295 + 3 chars), then cut at the cap: the secret never straddles the cut.
    expect(line).toContain(`${"a".repeat(MAX_VALUE_CHARS - 5)}***ta… [+2 chars]`);
  });

  it("redacts a PEM block spread over lines before the newlines are escaped", () => {
    const pem = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\nkqhkiG9w0B\n-----END PRIVATE KEY-----";
    const redact = (t: string) =>
      t.replace(/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, "[PEM]");
    const line = formatLogLine(
      { time: T, level: "ERROR", component: "agent", message: `got ${pem}` },
      redact,
    );
    expect(line).toContain("got [PEM]");
    expect(line).not.toContain("MIIEvQ");
  });

  it("caps long values with a count of what was left out", () => {
    const line = formatLogLine({
      time: T,
      level: "DEBUG",
      component: "agent",
      message: "tool start",
      extras: { args: "y".repeat(1000) },
    });
    expect(line).toContain(`args="${"y".repeat(MAX_VALUE_CHARS)}… [+${1000 - MAX_VALUE_CHARS} chars]"`);
  });

  it("escapeLine leaves ordinary text, unicode and backslashes alone", () => {
    expect(escapeLine("C:\\path ✓ café")).toBe("C:\\path ✓ café");
  });
});

describe("levels and settings", () => {
  it("parses logging.level as Python names it", () => {
    expect(parseLogLevel("debug")).toBe("DEBUG");
    expect(parseLogLevel("WARN")).toBe("WARNING");
    expect(parseLogLevel("critical")).toBe("ERROR");
    expect(parseLogLevel("loud")).toBeUndefined();
    expect(parseLogLevel(3)).toBeUndefined();
  });

  it("reads logging.* with defaults, and -v lowers the level to DEBUG", () => {
    expect(loggingSettings(undefined)).toEqual({ level: "INFO", maxBytes: 5 * 1024 * 1024, backupCount: 3 });
    expect(loggingSettings({ level: "WARNING", max_size_mb: 1, backup_count: 5 })).toEqual({
      level: "WARNING",
      maxBytes: 1024 * 1024,
      backupCount: 5,
    });
    expect(loggingSettings({ level: "ERROR" }, { verbose: true }).level).toBe("DEBUG");
    expect(loggingSettings({ level: "nope", max_size_mb: "big", backup_count: -1 })).toEqual({
      level: "INFO",
      maxBytes: 5 * 1024 * 1024,
      backupCount: 3,
    });
  });

  it("INFO (default): INFO+ to agent.log, WARNING+ also to errors.log, DEBUG nowhere", () => {
    const { dir, log } = logger();
    log.debug("hidden");
    log.info("started");
    log.warning("retrying");
    log.error("failed");
    expect(lines(dir, "agent.log").map((l) => l.split(" ").slice(1).join(" "))).toEqual([
      "INFO 20260501_123456_abcdef agent: started",
      "WARNING 20260501_123456_abcdef agent: retrying",
      "ERROR 20260501_123456_abcdef agent: failed",
    ]);
    expect(lines(dir, "errors.log")).toHaveLength(2);
    expect(read(dir, "agent.log")).not.toContain("hidden");
    expect(existsSync(join(dir, "gateway.log"))).toBe(false);
    expect(log.enabled("DEBUG")).toBe(false);
  });

  it("DEBUG writes debug lines; ERROR keeps warnings out of agent.log but still in errors.log", () => {
    const debug = logger({ level: "DEBUG" });
    debug.log.debug("args", { args: "ls" });
    expect(read(debug.dir, "agent.log")).toContain("DEBUG 20260501_123456_abcdef agent: args args=ls");
    expect(read(debug.dir, "errors.log")).toBe("");

    const quiet = logger({ level: "ERROR" });
    quiet.log.info("no");
    quiet.log.warning("careful");
    expect(read(quiet.dir, "agent.log")).toBe("");
    expect(read(quiet.dir, "errors.log")).toContain("WARNING 20260501_123456_abcdef agent: careful");
  });

  it("the gateway's components also go to gateway.log; the agent's never do", () => {
    const { dir, log } = logger();
    log.child({ component: "gateway.telegram", sessionId: undefined }).info("connected");
    log.child({ component: "gateway" }).warning("slow");
    log.info("tool call");
    expect(lines(dir, "gateway.log").map((l) => l.split(" ").slice(3).join(" "))).toEqual([
      "gateway.telegram: connected",
      "gateway: slow",
    ]);
    expect(lines(dir, "agent.log")).toHaveLength(3);
    expect(lines(dir, "errors.log")).toHaveLength(1);
  });
});

describe("files", () => {
  it("opens nothing before the first line, then creates the folder 0700 and files 0600", () => {
    const { dir, log } = logger();
    log.debug("not written");
    expect(existsSync(dir)).toBe(false);
    log.warning("first");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).sort()).toEqual(["agent.log", "errors.log"]);
  });

  it("rotates with logging.max_size_mb and backup_count", () => {
    const { dir, log } = logger({ maxBytes: 400, backupCount: 2 });
    for (let i = 0; i < 40; i++) log.info(`event ${i}`);
    expect(readdirSync(dir).sort()).toEqual(["agent.log", "agent.log.1", "agent.log.2"]);
    expect(read(dir, "agent.log")).toContain("event 39");
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).size).toBeLessThanOrEqual(400);
  });

  it("passes every line it writes through redact", () => {
    const seen: string[] = [];
    const redact = (t: string) => {
      seen.push(t);
      return t.replaceAll("hunter2hunter2", "[REDACTED]");
    };
    const { dir, log } = logger({ redact, level: "DEBUG" });
    log.debug("password hunter2hunter2", { args: "--password=hunter2hunter2" });
    log.info("x", { header: "Bearer hunter2hunter2" });
    log.child({ component: "gateway.slack" }).error("hunter2hunter2\nagain hunter2hunter2");
    for (const name of readdirSync(dir)) {
      expect(read(dir, name)).not.toContain("hunter2");
      expect(read(dir, name)).toContain("[REDACTED]");
    }
    expect(seen.some((t) => t.includes("\n"))).toBe(true); // before escaping
  });

  it("an unwritable folder disables logging with one warning and never throws", () => {
    const base = fresh();
    writeFileSync(join(base, "logs"), "a file where the folder should be");
    const { log, warnings } = logger({ dir: join(base, "logs", "sub") });
    expect(() => {
      log.error("one");
      log.error("two");
      log.info("three");
    }).not.toThrow();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(join(base, "logs", "sub"));
    expect(log.enabled("ERROR")).toBe(false);
  });

  it("a full disk disables logging with one warning and never throws", async () => {
    const dir = join(fresh(), "logs");
    const { log, warnings } = logger({ dir });
    log.info("before");
    // agent.log now points at a device that answers every write with ENOSPC. The writer looks at
    // the path again at most every 500 ms (rotating-file.ts), so the next lines come after that.
    rmSync(join(dir, "agent.log"));
    symlinkSync("/dev/full", join(dir, "agent.log"));
    await new Promise((ok) => setTimeout(ok, 550));
    expect(() => {
      log.info("after");
      log.error("later");
    }).not.toThrow();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/agent\.log: ENOSPC/);
  });

  it("homeLogger writes under <home>/logs with config.yaml's logging section", () => {
    const home = fresh();
    const log = homeLogger(home, { level: "DEBUG" }, { component: "cli" });
    log.debug("hello");
    expect(read(join(home, "logs"), "agent.log")).toMatch(/ DEBUG - cli: hello\n$/);
  });
});
