import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { quarantineName, quarantineStamp } from "../../../src/state/quarantine.js";
import { openRecordingEngine } from "../../../src/state/recording-store.js";
import { openSqliteStore } from "../../../src/state/sqlite-store.js";
import { createPythonStateDb } from "../../support/python-state-db.js";
import { useTempStores } from "./helpers.js";

const { dir, track } = useTempStores();

function recording(home: string) {
  const notices: string[] = [];
  const store = track(openRecordingEngine(home, { notify: (m) => notices.push(m) }));
  return { store, notices };
}

function movedAside(home: string): string[] {
  return readdirSync(home)
    .filter((f) => f.startsWith("state.db.corrupt-"))
    .sort();
}

/** A good state.db with `sessions` sessions of 60 long messages each, then some of its pages overwritten. */
function damagedDb(home: string, sessions = 6): { path: string; ids: string[] } {
  const path = join(home, "state.db");
  const store = openSqliteStore(path);
  const ids: string[] = [];
  for (let i = 0; i < sessions; i++) {
    const s = store.createSession({ source: "cli", title: `session ${i}` });
    ids.push(s.id);
    store.appendMessages(
      s.id,
      Array.from({ length: 60 }, (_, j) => ({
        role: "user" as const,
        content: `s${i} m${j} ${"lorem ipsum ".repeat(40)}`,
      })),
    );
  }
  store.close(); // checkpoints the WAL into the file
  const bytes = readFileSync(path);
  // Garbage over every page holding session 3's messages 20-29 (the header page stays good).
  for (let at = bytes.indexOf("s3 m2"); at !== -1; at = bytes.indexOf("s3 m2", at + 1)) {
    const page = Math.floor(at / 4096);
    if (page === 0) continue;
    for (let i = page * 4096; i < (page + 1) * 4096; i++) bytes[i] = (i * 31) % 251;
  }
  writeFileSync(path, bytes);
  return { path, ids };
}

describe("moved-aside names", () => {
  it("are sortable UTC stamps and never reuse a taken name", () => {
    const at = new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678));
    expect(quarantineStamp(at)).toBe("20250102T030405Z");
    const taken = new Set([
      "/h/state.db.corrupt-20250102T030405Z",
      "/h/state.db.corrupt-20250102T030405Z-2-wal",
    ]);
    expect(quarantineName("/h/state.db", at, (p) => taken.has(p))).toBe(
      "/h/state.db.corrupt-20250102T030405Z-3",
    );
  });
});

describe("opening an unreadable state.db for a session", () => {
  it("moves a 0-byte file aside and starts a new one", () => {
    const home = dir();
    const path = join(home, "state.db");
    writeFileSync(path, "");
    utimesSync(path, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const { store, notices } = recording(home);
    const moved = movedAside(home);
    expect(moved).toHaveLength(1);
    expect(readFileSync(join(home, moved[0]!)).length).toBe(0);
    expect(notices[0]).toContain("empty (0 bytes)");
    expect(notices[0]).toContain(`hermes sessions repair --from ${join(home, moved[0]!)}`);
    expect(store.createSession({ source: "cli" }).id).toBeTruthy();
  });

  it("leaves a 0-byte file just created (another process is about to open it) to SQLite", () => {
    const home = dir();
    writeFileSync(join(home, "state.db"), "");
    const { notices } = recording(home);
    expect(movedAside(home)).toEqual([]);
    expect(notices).toEqual([]);
  });

  it("moves a file that is not SQLite aside with its -wal and -shm, bytes intact", () => {
    const home = dir();
    const path = join(home, "state.db");
    const junk = Buffer.from("not a database\n".repeat(300));
    writeFileSync(path, junk);
    writeFileSync(`${path}-wal`, "wal bytes");
    writeFileSync(`${path}-shm`, "shm bytes");
    const { store, notices } = recording(home);
    const [main, ...side] = movedAside(home);
    expect(readFileSync(join(home, main!)).equals(junk)).toBe(true);
    expect(side).toEqual([`${main}-shm`, `${main}-wal`]);
    expect(notices[0]).toMatch(
      /not a SQLite database.*moved aside to .*state\.db\.corrupt-\d{8}T\d{6}Z \(with its -wal\/-shm\)/,
    );
    expect(store.listSessions()).toEqual([]);
  });

  it("moves aside a file whose header is fine but whose pages are damaged (found by the first queries)", () => {
    const home = dir();
    const { path } = damagedDb(home);
    const before = readFileSync(path);
    const { store, notices } = recording(home);
    const moved = movedAside(home);
    expect(moved).toHaveLength(1);
    expect(readFileSync(join(home, moved[0]!)).equals(before)).toBe(true);
    expect(notices[0]).toContain("damaged");
    expect(store.listSessions()).toEqual([]);
  });
});

describe("repair --from", () => {
  it("recovers the readable sessions and messages of a damaged file, skipping what is already here", () => {
    const home = dir();
    const { path, ids } = damagedDb(home);
    recording(home).store.close();
    const old = join(home, movedAside(home)[0]!);
    const target = track(openSqliteStore(path));
    // One session id is already in the new file: it is left alone.
    target.createSession({ id: ids[0]!, source: "telegram" });
    const report = target.recoverFrom(old);
    expect(report.kind).toBe("sqlite");
    expect(report.readable).toBe(true);
    expect(report.sessions.skipped).toBe(1);
    expect(report.messages.recovered).toBeGreaterThan(200);
    expect(report.messages.recovered).toBeLessThan(360);
    expect(report.messages.unreadable).toBeGreaterThan(0);
    expect(target.getSession(ids[0]!)?.source).toBe("telegram");
    expect(target.getMessages(ids[0]!)).toEqual([]);
    // Counters match the rows that came back, and search finds them.
    for (const s of target.listSessions({ limit: 100 })) {
      if (s.id === ids[0]) continue;
      expect(s.messageCount).toBe(target.getMessages(s.id).length);
    }
    const last = ids.at(-1)!;
    expect(target.search({ query: `s${ids.length - 1} m3` }).some((h) => h.sessionId === last)).toBe(true);
    // The damaged file itself is never written.
    expect(existsSync(`${old}-wal`)).toBe(false);
  });

  it("recovers every session of a Python Hermes file, and none twice", () => {
    const home = dir();
    const py = join(home, "python.db");
    const { sessionIds } = createPythonStateDb(py);
    const target = track(openSqliteStore(join(home, "state.db")));
    const first = target.recoverFrom(py);
    expect(first.sessions).toEqual({ recovered: 4, skipped: 0, unreadable: 0 });
    expect(first.messages.unreadable).toBe(0);
    expect(target.getSession(sessionIds[1]!)?.parentSessionId).toBe(sessionIds[0]);
    expect(target.getSession(sessionIds[0]!)?.title).toBe("Refactor the parser");
    expect(target.search({ query: "今天天气很好" }).length).toBeGreaterThan(0);
    const second = target.recoverFrom(py);
    expect(second.sessions).toEqual({ recovered: 0, skipped: 4, unreadable: 0 });
    expect(second.messages.recovered).toBe(0);
  });

  it("reports nothing recoverable from a 0-byte or non-SQLite file", () => {
    const home = dir();
    const target = track(openSqliteStore(join(home, "state.db")));
    writeFileSync(join(home, "empty.db"), "");
    writeFileSync(join(home, "notes.txt"), "hello");
    expect(target.recoverFrom(join(home, "empty.db"))).toMatchObject({
      readable: false,
      reason: expect.stringContaining("0 bytes"),
    });
    expect(target.recoverFrom(join(home, "notes.txt"))).toMatchObject({ readable: false, kind: "none" });
    expect(() => target.recoverFrom(join(home, "missing.db"))).toThrow(/does not exist/);
  });
});

describe("read-only commands", () => {
  it("report a 0-byte state.db and leave it where it is", () => {
    const home = dir();
    const path = join(home, "state.db");
    writeFileSync(path, "");
    expect(() => openSqliteStore(path, { readonly: true })).toThrow(/empty \(0 bytes\).*nothing was changed/);
    expect(readdirSync(home)).toEqual(["state.db"]);
  });
});
